"""Explicit PRNG keys used the JAX way: every key consumed once, the same key giving
the same numbers, different keys different numbers, and raw `PRNGKey`s accepted.

    keys.assert_no_key_reuse(student.forward_with_dropout, (params, x, jax.random.key(0)),
                             static_argnames=("rate", "train"), what="forward_with_dropout")

Reuse is found by JAX's own checker (`jax.debug_key_reuse(True)`), which follows typed
keys (`jax.random.key(s)`) eagerly and under `jit`; it cannot see raw uint32 keys,
so pass typed keys in `args` (each call here gets fresh copies of them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import jax
import numpy as np

from grader.checks import calls, values
from grader.checks.failure import CheckFailure, explainable, fail
from grader.probes import _format
from grader.probes.keys import observe_global_rng as observe_global_rng  # the suites use it
from grader.probes.keys import observe_key_use
from grader.sandbox import client
from grader.sandbox.client import StudentError

_SPLIT_FIX = (
    "split before each use: `key, subkey = jax.random.split(key)` (or "
    "`k1, k2 = jax.random.split(key)`) and hand every draw its own key; never pass "
    "one key to two random functions"
)


def _is_key(leaf: Any) -> bool:
    return bool(_format.is_key(leaf))


@explainable
def assert_no_key_reuse(
    fn: Callable[..., Any],
    args: Sequence[Any],
    *,
    what: str,
    static_argnames: Iterable[str] = (),
    jit: bool = True,
    eager: bool = True,
    kwargs: dict[str, Any] | None = None,
    cause: str = "",
    fix: str = "",
) -> Any:
    """No PRNG key is consumed twice by `fn(*args)`, eagerly (if `eager`) and (if `jit`)
    under `jax.jit(fn, static_argnames=...)`. Returns the first output."""
    __tracebackhide__ = True
    if not any(_is_key(leaf) for leaf in jax.tree.leaves(args)):
        raise ValueError("assert_no_key_reuse needs typed keys (jax.random.key) in args")
    kwargs = dict(kwargs or {})
    name = calls.name_of(fn)
    modes = (("eagerly",) if eager else ()) + (("under jax.jit",) if jit else ())
    seen = client.probe(
        observe_key_use, client.handle(fn), tuple(args), kwargs, tuple(static_argnames), modes
    )
    out = None
    for mode, result in zip(modes, seen, strict=True):
        if isinstance(result, StudentError) and result.is_a("KeyReuseError"):
            where = calls.student_line(result)
            raise CheckFailure(
                f"key use of {what} ({mode}, jax.debug_key_reuse(True))",
                expected="every PRNG key consumed by at most one random function",
                observed="the key was reused: JAX's key-reuse checker saw one key consumed twice "
                f"({calls.first_line(result)})" + (f"\n    at {where}" if where else ""),
                cause="the same key was passed to two random calls (e.g. both dropout layers got "
                "`key`), or a key was used again after being split; the two draws are then "
                "correlated (identical masks)",
                fix=_SPLIT_FIX,
            ) from result
        result = calls.observed(
            result,
            checked=f"key use of {what} ({mode})",
            attempted=f"{name}(...) {mode} with typed keys (jax.random.key)",
            expected="the function runs with typed keys",
        )
        if out is None:
            out = result
    return out


def _run(fn: Callable[..., Any], args: Sequence[Any], what: str, how: str) -> Any:
    __tracebackhide__ = True
    try:
        return calls.ready(fn(*args))
    except calls.PASS_THROUGH:
        raise
    except Exception as exc:
        raise calls.translate(
            exc,
            checked=f"{what} called with {how}",
            attempted=f"{calls.name_of(fn)}(...) with {how}",
            expected="the function runs",
        ) from exc


def _key(seed: int) -> Any:
    return jax.random.key(seed)


@explainable
def assert_deterministic(
    fn: Callable[..., Any],
    make_args: Callable[[Any], Sequence[Any]],
    *,
    what: str,
    cause: str = "",
    fix: str = "",
) -> Any:
    """The same key (two separate `jax.random.key(0)`) gives exactly the same output."""
    __tracebackhide__ = True
    first = _run(fn, make_args(_key(0)), what, "jax.random.key(0)")
    second = _run(fn, make_args(_key(0)), what, "jax.random.key(0) again")
    values.assert_close(
        second,
        first,
        what=f"{what}: two calls with the same key",
        rtol=0.0,
        atol=0.0,
        cause="the output depends on something besides the key: NumPy's or Python's global RNG "
        "(`np.random`, `random`), the time, or state kept between calls",
        fix="draw every random number from `jax.random` with the key you are given",
    )
    return first


@explainable
def assert_varies_with_key(
    fn: Callable[..., Any],
    make_args: Callable[[Any], Sequence[Any]],
    *,
    what: str,
    cause: str = "",
    fix: str = "",
) -> tuple[Any, Any]:
    """Keys 0 and 1 give different outputs (at least one leaf differs)."""
    __tracebackhide__ = True
    a = _run(fn, make_args(_key(0)), what, "jax.random.key(0)")
    b = _run(fn, make_args(_key(1)), what, "jax.random.key(1)")
    leaves_a, leaves_b = jax.tree.leaves(a), jax.tree.leaves(b)
    differs = len(leaves_a) != len(leaves_b) or any(
        np.shape(x) != np.shape(y) or not np.array_equal(np.asarray(x), np.asarray(y))
        for x, y in zip(leaves_a, leaves_b, strict=False)
    )
    if not differs:
        raise fail(
            f"{what} changes with the key",
            expected="different outputs for jax.random.key(0) and jax.random.key(1)",
            observed=f"identical outputs: {_format.show(a)}",
            cause="the key argument is ignored: a fixed key inside the function "
            "(`jax.random.PRNGKey(0)`), or randomness from elsewhere",
            fix="derive every random draw from the key argument (split it as needed)",
        )
    return a, b


@explainable
def assert_accepts_raw_keys(
    fn: Callable[..., Any],
    make_args: Callable[[Any], Sequence[Any]],
    *,
    what: str,
    cause: str = "",
    fix: str = "",
) -> Any:
    """The function also works with a raw `jax.random.PRNGKey(0)` (uint32[2]) key and gives
    a result of the same structure and shapes as with a typed key."""
    __tracebackhide__ = True
    typed = _run(fn, make_args(_key(0)), what, "jax.random.key(0)")
    try:
        raw = calls.ready(fn(*make_args(jax.random.PRNGKey(0))))
    except calls.PASS_THROUGH:
        raise
    except Exception as exc:
        where = calls.student_line(exc)
        kind = exc.info.type if isinstance(exc, StudentError) else type(exc).__name__
        raise CheckFailure(
            f"{what} with a raw key jax.random.PRNGKey(0)",
            expected="the function works with raw uint32[2] keys as well as typed keys",
            observed=f"it raised {kind}: {calls.first_line(exc)}"
            + (f"\n    at {where}" if where else ""),
            cause="the code assumes one key style (e.g. `key.dtype`, `jax.random.key_data`, "
            "indexing `key[0]` or a shape check on the key)",
            fix="use only `jax.random` functions on keys (`split`, `fold_in`, `normal`, ...): "
            "they accept both kinds",
        ) from exc
    found = values.structure_difference(raw, typed)
    shapes = [np.shape(x) for x in jax.tree.leaves(raw)] == [
        np.shape(x) for x in jax.tree.leaves(typed)
    ]
    if found is not None or not shapes:
        raise fail(
            f"{what} with a raw key jax.random.PRNGKey(0)",
            expected=f"the same structure and shapes as with a typed key: {_format.show(values._skeleton(typed))}",
            observed=_format.show(values._skeleton(raw)),
            cause="the code branches on the kind of key, or derives a shape from the key",
        )
    return raw


# -- determinism under a moved global RNG -------------------------------------------------

_GLOBAL_RNG_SEEDS = (20_231, 7)


@explainable
def assert_ignores_global_rng(
    fn: Callable[..., Any],
    args: Sequence[Any],
    *,
    what: str,
    static_argnames: Iterable[str] = (),
    kwargs: dict[str, Any] | None = None,
    jit: bool = True,
    cause: str = "",
    fix: str = "",
) -> Any:
    """The same key gives the same output after NumPy's (`np.random`) and Python's (`random`)
    global RNGs were moved between two calls: eagerly, and (if `jit`) under a fresh
    `jax.jit(fn, static_argnames=...)` traced anew for each call, which also shows a global
    draw made at trace time (baked into the compiled function as a constant). An error under
    jit is left to the jit check. Returns the first eager output (keys as their raw data)."""
    __tracebackhide__ = True
    kwargs = dict(kwargs or {})
    name = calls.name_of(fn)
    seen = client.probe(
        observe_global_rng,
        client.handle(fn),
        tuple(args),
        kwargs,
        tuple(static_argnames),
        _GLOBAL_RNG_SEEDS,
        jit,
    )
    checked = f"{what}: the same key after NumPy's global RNG moved"
    first, second = (
        calls.observed(
            out,
            checked=checked,
            attempted=f"{name}(...) with the same key twice",
            expected="the function runs",
        )
        for out in seen["eagerly"]
    )
    seeds = f"np.random.seed({_GLOBAL_RNG_SEEDS[0]}), then np.random.seed({_GLOBAL_RNG_SEEDS[1]})"
    _assert_same(
        second, first, f"{checked} (eagerly: {seeds} between two calls with the same key)", _EAGER
    )
    traced = seen.get("under jax.jit", [])
    if jit and not any(isinstance(out, StudentError) for out in traced):
        _assert_same(
            traced[1],
            traced[0],
            f"{checked} (under jax.jit, traced anew after each np.random.seed)",
            _AT_TRACE_TIME,
        )
    return first


# (cause, fix) of an output that moved with the global RNGs: eagerly, or under a fresh jit.
_EAGER = (
    "the result depends on NumPy's or Python's global RNG (`np.random`, `random`) as "
    "well as on the key: the same key no longer reproduces it, and no key controls that part",
    "draw every random number with `jax.random` from the key you are given (split it "
    "for more draws)",
)
_AT_TRACE_TIME = (
    "a global RNG (`np.random`, `random`) is drawn from while jit traces the "
    "function: the draw is baked into the compiled function as a constant, the same on "
    "every call and for every key, and different each time the function is traced",
    "draw every random number with `jax.random` from the key you are given",
)


def _assert_same(second: Any, first: Any, what: str, why: tuple[str, str]) -> None:
    """The two outputs are exactly equal; else the check fails with `why`'s cause and fix."""
    __tracebackhide__ = True
    cause, fix = why
    values.assert_close(second, first, what=what, rtol=0.0, atol=0.0, cause=cause, fix=fix)
