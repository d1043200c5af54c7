"""The probes of `grader.checks.purity`: a student's function called twice, eagerly and
under a fresh `jax.jit`, and what else changed meanwhile (its arguments, its module's
globals, the global NumPy and `random` RNGs, what it printed, a leaked tracer)."""

from __future__ import annotations

import functools
import inspect
import io
import types
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from grader.probes import _bound, _calls, _format
from grader.protocol.value_codec import ErrorInfo
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


def _change(before: Any, after: Any, path: str, _seen: frozenset[int] = frozenset()) -> str | None:
    """Where and how `after` differs from the snapshot `before`; None if it does not.
    A snapshot part met again below itself (a cycle: a module's `logging.getLogger`, whose
    manager holds every logger) is compared once."""
    if id(before) in _seen:
        return None
    _seen = _seen | {id(before)}
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
            found = _change(before[k], after[k], f"{path}[{k!r}]", _seen)
            if found:
                return found
        return None
    if isinstance(before, list | tuple) and isinstance(after, list | tuple):
        if len(before) != len(after):
            verb = "grew" if len(after) > len(before) else "shrank"
            return f"{path} {verb} from {len(before)} to {len(after)} items"
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            found = _change(b, a, f"{path}[{i}]", _seen)
            if found:
                return found
        return None
    if hasattr(before, "__dict__") and hasattr(after, "__dict__") and not hasattr(before, "shape"):
        return _change(vars(before), vars(after), path, _seen)
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


def _parameter_names(fn: Callable[..., Any], n: int) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []
    return params[:n]


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
