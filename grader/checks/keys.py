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
                cause="a key already consumed (by a random draw, or by jax.random.split) was "
                "consumed again: the numbers drawn from one key are not independent of each other",
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
        cause="the output depends on something besides the key: two calls with "
        "jax.random.key(0) and the same other arguments gave different results",
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
            cause="the result does not change with the key: jax.random.key(0) and jax.random.key(1) give "
            "the same result",
            fix="derive every random draw from the key argument (split it as needed), not from "
            "a key made inside the function",
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
            cause="it runs with a typed key (jax.random.key(0)) and raises with a raw one: "
            "something in it works only on typed keys",
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
            cause="the result's structure or shapes change with the kind of key: a raw key "
            "gives other ones than a typed key",
        )
    return raw


# -- determinism under a moved global RNG -------------------------------------------------

_GLOBAL_RNG_SEEDS = (20_231, 7, 20_231)
"""Each call's seed for NumPy's and Python's global RNGs: the first two calls are compared
(the verdict); the third, with the first call's seed again, tells an output that follows the
global seed from one that changes on every call (the cause)."""


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
    eager = seen["eagerly"]
    first, second = (
        calls.observed(
            out,
            checked=checked,
            attempted=f"{name}(...) with the same key twice",
            expected="the function runs",
        )
        for out in eager[:2]
    )
    seeds = f"np.random.seed({_GLOBAL_RNG_SEEDS[0]}), then np.random.seed({_GLOBAL_RNG_SEEDS[1]})"
    _assert_same(
        second,
        first,
        f"{checked} (eagerly: {seeds} between two calls with the same key)",
        _EAGER if _repeats(eager[2], first) else _EVERY_CALL,
    )
    traced = seen.get("under jax.jit", [])
    if jit and not any(isinstance(out, StudentError) for out in traced[:2]):
        _assert_same(
            traced[1],
            traced[0],
            f"{checked} (under jax.jit, traced anew after each np.random.seed)",
            _AT_TRACE_TIME if _repeats(traced[2], traced[0]) else _EVERY_CALL,
        )
    return first


def _repeats(third: Any, first: Any) -> bool:
    """The third call (the first call's global seed again) gave exactly the first's output."""
    if isinstance(third, StudentError):
        return False
    return values.difference(third, first, rtol=0.0, atol=0.0) is None


# (cause, fix) of an output that moved with the global RNGs' seed (the third call, with the
# first call's seed, gave the first call's output): eagerly, or under a fresh jit; and of one
# that the third call did not reproduce either.
_EAGER = (
    "the result depends on NumPy's or Python's global RNG (`np.random`, `random`) as "
    f"well as on the key: a third call after np.random.seed({_GLOBAL_RNG_SEEDS[0]}) again "
    "gives the first call's result, so the global seed decides it and no key controls that part",
    "draw every random number with `jax.random` from the key you are given (split it "
    "for more draws)",
)
_AT_TRACE_TIME = (
    "a global RNG (`np.random`, `random`) is drawn from while jit traces the "
    "function: the draw is baked into the compiled function as a constant, the one the "
    f"global seed gave at trace time (traced a third time after np.random.seed("
    f"{_GLOBAL_RNG_SEEDS[0]}) again, it gives the first result)",
    "draw every random number with `jax.random` from the key you are given",
)
_EVERY_CALL = (
    "the result changes from call to call with the same key: a third call, after the first "
    "call's global seed again, reproduces neither result, so something besides the key and "
    "the global RNGs' seeds changes it",
    "compute the result from the key and the other arguments only",
)


def _assert_same(second: Any, first: Any, what: str, why: tuple[str, str]) -> None:
    """The two outputs are exactly equal; else the check fails with `why`'s cause and fix."""
    __tracebackhide__ = True
    cause, fix = why
    values.assert_close(second, first, what=what, rtol=0.0, atol=0.0, cause=cause, fix=fix)
