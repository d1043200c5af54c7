"""Is the function pure, as `jit`, `grad` and `vmap` assume? Same inputs give the same
outputs; arguments are not mutated; module state and the global NumPy/`random` RNGs
are left alone; and nothing happens only while tracing (a `print` or a
`list.append` that runs once, at trace time, and never again).

    purity.assert_pure(student.add_at, (np.zeros(3), np.array([0, 0]), np.ones(2)),
                       what="add_at(x, indices, values)", module=student)
    purity.assert_no_trace_side_effects(student.running_sum, (xs,), what="running_sum(xs)")
"""

from __future__ import annotations

import functools
import inspect
import io
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from grader.checks import _bound, _calls, _format, values
from grader.checks.failure import fail
from grader.protocol.values import ErrorInfo
from grader.sandbox import client
from grader.sandbox.probes import probe

_SKIPPED_GLOBALS = (types.ModuleType, types.FunctionType, type, types.BuiltinFunctionType)


# -- snapshots ---------------------------------------------------------------


def _snapshot(value: Any, depth: int = 0) -> Any:
    """A copy of `value` to compare against later; a container holding something that
    cannot be copied (a leaked tracer) is copied item by item, so its growth still shows."""
    try:
        return _bound.deepcopy(value)
    except Exception:  # an uncopyable object is compared by identity only
        if depth < _SNAPSHOT_DEPTH and type(value) in (list, tuple):
            return type(value)(_snapshot(item, depth + 1) for item in value)
        if depth < _SNAPSHOT_DEPTH and type(value) is dict:
            return {k: _snapshot(v, depth + 1) for k, v in value.items()}
        return _Opaque(value)


_SNAPSHOT_DEPTH = 8


class _Opaque:
    def __init__(self, value: Any) -> None:
        self.id = id(value)


def _change(before: Any, after: Any, path: str) -> str | None:
    """Where and how `after` differs from the snapshot `before`; None if it does not."""
    if isinstance(before, _Opaque):
        return None if before.id == id(after) else f"{path} was replaced"
    if isinstance(before, np.ndarray) and isinstance(after, np.ndarray):
        if before.shape != after.shape:
            return f"{path} changed shape from {before.shape} to {after.shape}"
        differ = ~((before == after) | (_isnan(before) & _isnan(after)))
        if differ.any():
            idx = tuple(int(i) for i in np.argwhere(differ)[0]) if differ.ndim else ()
            return (
                f"{path} was modified in place: at index {idx} it went from "
                f"{_format.show(before[idx])} to {_format.show(after[idx])}"
            )
        return None
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        if set(before) != set(after):
            added = sorted(map(repr, set(after) - set(before)))
            removed = sorted(map(repr, set(before) - set(after)))
            return f"{path} changed keys (added {added or 'none'}, removed {removed or 'none'})"
        for k in before:
            found = _change(before[k], after[k], f"{path}[{k!r}]")
            if found:
                return found
        return None
    if isinstance(before, list | tuple) and isinstance(after, list | tuple):
        if len(before) != len(after):
            verb = "grew" if len(after) > len(before) else "shrank"
            return f"{path} {verb} from {len(before)} to {len(after)} items"
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            found = _change(b, a, f"{path}[{i}]")
            if found:
                return found
        return None
    if hasattr(before, "__dict__") and hasattr(after, "__dict__") and not hasattr(before, "shape"):
        return _change(vars(before), vars(after), path)
    if hasattr(before, "shape") or hasattr(after, "shape"):  # jax arrays: immutable
        return None
    try:
        same = bool(before == after)
    except Exception:
        same = True
    return None if same else f"{path} changed from {_format.show(before)} to {_format.show(after)}"


def _isnan(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return np.isnan(a) if a.dtype.kind in "fc" else np.zeros(a.shape, bool)


def _module_of(fn: Callable[..., Any]) -> types.ModuleType | None:
    inner = inspect.unwrap(fn)
    while hasattr(inner, "func"):
        inner = inner.func
    return inspect.getmodule(inner)


def _globals_snapshot(module: types.ModuleType | None) -> dict[str, tuple[int, Any]]:
    if module is None:
        return {}
    return {
        name: (id(value), _snapshot(value))
        for name, value in vars(module).items()
        if not name.startswith("__")
        and not isinstance(value, _SKIPPED_GLOBALS)
        and not callable(value)
    }


def _globals_change(
    module: types.ModuleType | None, before: dict[str, tuple[int, Any]]
) -> str | None:
    if module is None:
        return None
    now = _globals_snapshot(module)
    for name in sorted(set(now) - set(before)):
        return f"a new global `{name}` appeared ({_format.show(vars(module)[name])})"
    for name, (ident, snap) in before.items():
        if name not in now:
            return f"the global `{name}` was deleted"
        current = vars(module)[name]
        found = _change(snap, current, f"the global `{name}`")
        if found:
            return found
        if ident != id(current) and not isinstance(snap, int | float | str | bool | bytes):
            return f"the global `{name}` was rebound to a new object"
    return None


def _rng_states() -> tuple[Any, Any]:
    return _bound.np_get_state(), _bound.py_getstate()


def _rng_change(before: tuple[Any, Any]) -> str | None:
    np_before, py_before = before
    np_now, py_now = _rng_states()
    if not (
        np_before[0] == np_now[0]
        and np.array_equal(np_before[1], np_now[1])
        and tuple(np_before[2:]) == tuple(np_now[2:])
    ):
        return "NumPy's global RNG (`np.random`) was drawn from or reseeded"
    if py_before != py_now:
        return "Python's global RNG (`random`) was drawn from or reseeded"
    return None


# -- observations (in the sandbox) ---------------------------------------------


@probe
def observe_calls(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    module: types.ModuleType | None,
) -> dict[str, Any]:
    """In the sandbox: call `fn` twice on the same inputs and note what else changed: the
    arguments (deep snapshot), the global NumPy/`random` RNGs, `module`'s globals."""
    module = module if module is not None else _module_of(fn)
    inputs = (tuple(args), kwargs)
    inputs_before = _snapshot(inputs)
    globals_before = _globals_snapshot(module)
    rng_before = _rng_states()
    first = _calls.attempt(lambda: fn(*args, **kwargs))
    seen: dict[str, Any] = {"first": first, "names": _parameter_names(fn, len(args))}
    seen["mutated"] = _change(inputs_before, inputs, "the input")
    seen["rng"] = _rng_change(rng_before)
    seen["globals"] = _globals_change(module, globals_before)
    seen["second"] = _calls.attempt(lambda: fn(*args, **kwargs))
    return seen


@probe
def observe_tracing(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    static_argnames: tuple[str, ...],
    module: types.ModuleType | None,
) -> dict[str, Any]:
    """In the sandbox: run `fn` twice under a jit JAX has never seen (so the first call traces)
    and note what each call printed and changed in `module`, and any leaked tracer."""
    module = module if module is not None else _module_of(fn)
    target = getattr(fn, "__wrapped__", fn) if callable(getattr(fn, "lower", None)) else fn

    @functools.wraps(target)
    def fresh(*a: Any, **k: Any) -> Any:
        return target(*a, **k)

    jitted = _bound.jit(fresh, static_argnames=tuple(static_argnames))
    seen: dict[str, Any] = {"outputs": [], "changes": [], "leak": None, "out": None}
    for _ in range(2):
        before = _globals_snapshot(module)
        buffer = io.StringIO()

        def run(buffer: io.StringIO = buffer) -> Any:
            with _bound.redirect_stdout(buffer), _bound.checking_leaks():
                out = _calls.ready(jitted(*args))
                _bound.effects_barrier()  # type: ignore[no-untyped-call]
            return out

        out = _calls.attempt(run)
        if isinstance(out, ErrorInfo):
            if "Leaked trace" in out.message or out.type == "UnexpectedTracerError":
                seen["leak"] = (
                    out.message.strip().splitlines()[0][:300] if out.message.strip() else out.type
                )
            else:
                seen["out"] = out
            return seen
        seen["out"] = out
        seen["outputs"].append(buffer.getvalue()[:2000])
        seen["changes"].append(_globals_change(module, before))
    return seen


# -- checks (in the judge) ------------------------------------------------------


def assert_pure(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None = None,
    *,
    what: str,
    module: Any = None,
) -> Any:
    """Two calls with the same inputs agree exactly; `args`/`kwargs` are not mutated
    (deep snapshot: NumPy arrays, lists, dicts, objects); `module`'s globals (default: the
    module that defines `fn`) and the global NumPy and `random` RNG states are unchanged.
    Returns the first output."""
    __tracebackhide__ = True
    kwargs = dict(kwargs or {})
    seen = client.probe(observe_calls, client.handle(fn), tuple(args), kwargs, module)
    checked = f"purity of {what}"
    attempted = _format.call(_calls.name_of(fn), args, kwargs)
    first = _calls.observed(
        seen["first"], checked=checked, attempted=attempted, expected="the function runs"
    )
    _require_no_side_effect(seen, checked)
    second = _calls.observed(
        seen["second"], checked=checked, attempted=attempted, expected="the function runs"
    )
    values.assert_close(
        second,
        first,
        what=f"{what}: a second call with the same inputs",
        rtol=0.0,
        atol=0.0,
        cause="the output depends on something besides the arguments (global state, time, a "
        "fresh unseeded RNG)",
        fix="compute the result from the arguments only",
    )
    return first


# The side effects `observe_calls` reports, in the order they are checked:
# (its key, what was expected, the likely cause, the fix).
_SIDE_EFFECTS: tuple[tuple[str, str, str, str], ...] = (
    (
        "mutated",
        "the arguments are left exactly as they were passed",
        "the function writes into an argument (`x[i] = v` on a NumPy array, "
        "`list.append`, `dict[k] = v`) instead of building a new value",
        "build and return a new value: `x.at[i].set(v)` for arrays, a new list or dict "
        "for containers (`jnp.asarray(x)` first if the input may be NumPy)",
    ),
    (
        "rng",
        "the global NumPy and Python RNGs are untouched",
        "hidden randomness: `np.random.*` or `random.*` draws from global state that "
        "jit bakes in at trace time and that no key controls",
        "take a `jax.random` key as an argument and draw with `jax.random.*`",
    ),
    (
        "globals",
        "module-level state unchanged by a call",
        "the function keeps state in a global (a counter, a cache, a history list); "
        "under jit such writes happen once, at trace time",
        "pass state in as an argument and return its new value",
    ),
)


def _require_no_side_effect(seen: Mapping[str, Any], checked: str) -> None:
    """Fails the check on the first side effect `observe_calls` saw (`seen`): a mutated
    argument (named as the function names it), a global RNG used, a global changed."""
    __tracebackhide__ = True
    for key, expected, cause, fix in _SIDE_EFFECTS:
        found = seen[key]
        if found:
            observed = str(found)
            if key == "mutated":
                observed = _rename(observed, [str(n) for n in seen["names"]])
            raise fail(checked, expected=expected, observed=observed, cause=cause, fix=fix)


def _parameter_names(fn: Callable[..., Any], n: int) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []
    return params[:n]


def _rename(text: str, names: list[str]) -> str:
    """`the input[0][0][2]` -> `argument `x`[2]`."""
    for i, name in enumerate(names):
        prefix = f"the input[0][{i}]"
        if text.startswith(prefix):
            return f"argument `{name}`" + text[len(prefix) :]
    return text.replace("the input[1]", "keyword arguments")


def assert_no_trace_side_effects(
    fn: Callable[..., Any],
    args: Sequence[Any],
    *,
    what: str,
    static_argnames: Iterable[str] = (),
    module: Any = None,
) -> Any:
    """Under `jax.jit`, the first call (which traces) and the second (which does not) have
    the same Python-visible effects: the same printed text and the same module globals; and
    no traced value leaks out of the function (`jax.checking_leaks`). Returns the output.

    JAX caches the trace of a Python function (even across `jax.jit` wrappers), so an
    earlier check would hide a trace-time effect: the function (unwrapped, if the student
    jitted it) is traced in the sandbox through a new wrapper, which JAX has never seen."""
    __tracebackhide__ = True
    name = _calls.name_of(fn)
    checked = f"side effects of {what} under jax.jit"
    seen = client.probe(
        observe_tracing, client.handle(fn), tuple(args), tuple(static_argnames), module
    )
    if seen["leak"]:
        raise fail(
            checked,
            expected="no traced value outlives the trace",
            observed=f"a traced value was stored outside the function while tracing "
            f"(jax.checking_leaks: {seen['leak']})",
            cause="`list.append(x)`, a global assignment or an attribute set on an "
            "object during tracing: under jit it runs once, with a tracer, not a value",
            fix="return the value instead of storing it; for logging use "
            "`jax.debug.print` / `jax.debug.callback`",
        )
    out = _calls.observed(
        seen["out"],
        checked=checked,
        attempted=f"jax.jit({name})(...)",
        expected="the function runs under jit",
    )
    outputs, changes = [str(o) for o in seen["outputs"]], list(seen["changes"])
    if len(outputs) == 2 and outputs[0] != outputs[1]:
        raise fail(
            checked,
            expected="the same printed output on every call",
            observed=f"the first (tracing) call printed {outputs[0][:120]!r}, the second "
            f"printed {outputs[1][:120]!r}",
            cause="a Python `print` runs only while jit traces the function (and shows tracers, "
            "not values); later calls skip it",
            fix="use `jax.debug.print('x = {}', x)` to print values on every call, or remove it",
        )
    if len(changes) == 2 and changes[0] and not changes[1]:
        raise fail(
            checked,
            expected="the same effect on module state on every call",
            observed=f"during the first (tracing) call {changes[0]}; the second call changed nothing",
            cause="a Python side effect (a list append, a counter) runs only at trace time, so "
            "under jit it happens once instead of once per call",
            fix="return what you want to keep; for logging use `jax.debug.callback`",
        )
    return out
