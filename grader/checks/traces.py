"""Is the function traced (and compiled) once for repeated same-shaped calls?

    traces.assert_traced_once(student.newton_sqrt, [(2.0, 20), (3.0, 20), (10.0, 20)],
                              static_argnames=("n_iters",), what="newton_sqrt(a, n_iters)")
    traces.assert_compiles_once(student.train_step, [(params, opt_state, x, y)] * 3,
                                what="train_step", feed=lambda out, args: (*out[:2], *args[2:]))

A function the student jitted is called as given and its compilation cache is
watched (a value marked static compiles again for every new value); any other
function is jitted here around a counting wrapper.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import jax

from grader.checks import calls
from grader.checks.failure import explainable, fail
from grader.probes import _format
from grader.probes.traces import compile_state as compile_state  # the suites use it
from grader.probes.traces import counted, trace_log
from grader.probes.traces import is_jitted as is_jitted  # the suites use it
from grader.sandbox import client


def _call(fn: Callable[..., Any], args: tuple[Any, ...], *, what: str, attempted: str) -> Any:
    __tracebackhide__ = True
    try:
        return calls.ready(fn(*args))
    except calls.PASS_THROUGH:
        raise
    except Exception as exc:
        raise calls.translate(
            exc,
            checked=f"repeated calls of {what}",
            attempted=attempted,
            expected="every call runs (and the first one traces)",
        ) from exc


def _changing_arguments(arg_sets: Sequence[tuple[Any, ...]]) -> list[int]:
    """Indices of the arguments whose Python value differs between calls."""
    first = arg_sets[0]
    changing = []
    for i, value in enumerate(first):
        for other in arg_sets[1:]:
            try:
                same = bool(other[i] == value) if not hasattr(value, "shape") else True
            except Exception:  # an exotic __eq__ means "cannot tell"
                same = True
            if not same:
                changing.append(i)
                break
    return changing


def _state(fn: Any) -> dict[str, Any]:
    seen = client.probe(compile_state, client.handle(fn))
    if not (
        isinstance(seen, dict)
        and all(isinstance(seen.get(k), int) for k in ("cache_size", "traces"))
    ):
        raise TypeError("the sandbox sent a malformed compile state")
    return seen


@explainable
def assert_traced_once(
    fn: Callable[..., Any],
    arg_sets: Sequence[Sequence[Any]],
    *,
    static_argnames: Iterable[str] = (),
    what: str,
    cause: str = "",
    fix: str = "",
) -> int:
    """`fn` called with each argument tuple (same shapes and dtypes, static values equal)
    is traced exactly once. Returns the number of traces (1)."""
    __tracebackhide__ = True
    sets = [tuple(a) for a in arg_sets]
    name = calls.name_of(fn)
    first_state = _state(fn)
    if first_state["jitted"]:
        before = first_state["cache_size"]
        for args in sets:
            _call(fn, args, what=what, attempted=_format.call(name, args))
        added = _state(fn)["cache_size"] - before
        if added <= 1:
            return 1
        changing = _changing_arguments(sets)
        which = ", ".join(
            f"argument {i} ({_format.show(sets[0][i])} -> {_format.show(sets[-1][i])})"
            for i in changing
        )
        raise fail(
            f"{what} is traced once for {len(sets)} calls with same-shaped inputs",
            expected="1 compilation (the first call), then cache hits",
            observed=f"{added} new compilations for {len(sets)} calls of your jitted `{name}`"
            + (f"; the calls differ only in the values of {which}" if which else ""),
            cause=(
                "a value that changes between calls is marked static (`static_argnums`/"
                "`static_argnames` of your `jax.jit`): JAX compiles again for every new static "
                "value"
            )
            if which
            else "",
            fix="mark static only what must be a Python value (a loop count, a flag, a shape); "
            "leave array inputs such as data traced",
        )
    jitted = client.probe(counted, client.handle(fn), tuple(static_argnames))
    traced: list[str] = []
    for k, args in enumerate(sets):
        _call(jitted, args, what=what, attempted=_format.call(f"jax.jit({name})", args))
        before, traced = len(traced), [str(t) for t in client.probe(trace_log, jitted)]
        if k and len(traced) > before:
            raise fail(
                f"{what} is traced once for {len(sets)} calls with same-shaped inputs",
                expected="1 trace (the first call), then cache hits",
                observed=f"call {k + 1} traced again: first traced with ({traced[0]}), "
                f"then with ({traced[-1]})",
                fix="keep argument shapes and dtypes fixed across calls; pass data as arrays",
            )
    return len(traced)


def _changed_leaf(seen: Sequence[tuple[Any, ...]]) -> str:
    """The first argument leaf whose shape, dtype or weak type changed from one call to the
    next (jit compiles again for each new one); "" where every call's leaves are alike."""
    for k in range(1, len(seen)):
        before, after = jax.tree.leaves(seen[k - 1]), jax.tree.leaves(seen[k])
        if len(before) != len(after):
            return (
                f"call {k + 1} got {len(after)} argument leaves where call {k} got "
                f"{len(before)}: jit compiles again for every new structure"
            )
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            if _format.aval(b) != _format.aval(a):
                return (
                    f"argument leaf {i} is {_format.aval(b)} in call {k} and {_format.aval(a)} "
                    f"in call {k + 1}: jit compiles again for every new shape, dtype or weak type"
                )
    return ""


@explainable
def assert_compiles_once(
    jitted_fn: Callable[..., Any],
    arg_sets: Sequence[Sequence[Any]],
    *,
    what: str,
    feed: Callable[[Any, tuple[Any, ...]], Sequence[Any]] | None = None,
    n_calls: int = 5,
    cause: str = "",
    fix: str = "",
) -> int:
    """A function the student jitted (e.g. `train_step`) compiles on its first call only.

    Without `feed`, it is called with each tuple of `arg_sets`. With `feed`, it is
    called `n_calls` times, starting from `arg_sets[0]`, each next call's arguments being
    `feed(previous_output, previous_args)` (e.g. the new params and optimizer state).
    Returns the number of compilations seen (1, or 0 when it was already compiled)."""
    __tracebackhide__ = True
    name = calls.name_of(jitted_fn)
    state = _state(jitted_fn)
    if not state["jitted"]:
        raise fail(
            f"{what} is a jitted function",
            expected=f"`{name}` wrapped by `jax.jit` (so it compiles once and reuses the program)",
            observed=f"a plain Python {calls.type_name(jitted_fn)}: every call re-dispatches "
            "each operation from Python",
            fix=f"decorate `{name}` with `@jax.jit` (or assign `{name} = jax.jit(...)`)",
        )
    seen: list[tuple[Any, ...]] = []
    args = tuple(arg_sets[0])
    total = n_calls if feed is not None else len(arg_sets)
    before = state["cache_size"]
    after_first = state
    for k in range(total):
        if feed is None:
            args = tuple(arg_sets[k])
        seen.append(args)
        out = _call(jitted_fn, args, what=what, attempted=_format.call(name, args))
        if k == 0:
            after_first = _state(jitted_fn)
        if feed is not None:
            args = tuple(feed(out, args))
    last = _state(jitted_fn)
    added = last["cache_size"] - after_first["cache_size"]
    retraces = max(added, last["traces"] - after_first["traces"])
    if retraces == 0:
        return int(after_first["cache_size"] - before)
    first = ", ".join(_format.aval(a) for a in jax.tree.leaves(seen[0]))
    final = ", ".join(_format.aval(a) for a in jax.tree.leaves(seen[-1]))
    raise fail(
        f"{what} compiles once across {total} calls",
        expected="1 compilation on the first call, none after",
        observed=f"{retraces} more trace(s)/compilation(s) after the first call"
        + (f"; argument leaves went from ({first}) to ({final})" if first != final else ""),
        cause=_changed_leaf(seen),
        fix="jit once at module level; feed back arrays of fixed shape and dtype (drop or pad a "
        "ragged last batch)",
    )
