"""The probes of `grader.checks.traces`: a student's function under a jit that logs its
traces, and the compilation state JAX reports in the sandbox."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from grader.probes import _bound, _format
from grader.sandbox.probes import probe

_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


def is_jitted(fn: Any) -> bool:
    """True for what `jax.jit` returns (it has a compilation cache and `.lower`)."""
    return callable(getattr(fn, "_cache_size", None)) and hasattr(fn, "lower")


class _Counted:
    """A jitted wrapper around a student's function that logs the avals of every trace."""

    def __init__(self, fn: Callable[..., Any], static_argnames: tuple[str, ...]) -> None:
        self.log: list[str] = []

        @functools.wraps(fn)
        def counting(*args: Any, **kwargs: Any) -> Any:
            self.log.append(", ".join(_format.aval(a) for a in args))
            return fn(*args, **kwargs)

        self.jitted = _bound.jit(counting, static_argnames=static_argnames)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.jitted(*args, **kwargs)


@probe
def counted(fn: Callable[..., Any], static_argnames: tuple[str, ...]) -> _Counted:
    """In the sandbox: `fn` under a fresh `jax.jit` that logs its traces (returns a handle)."""
    return _Counted(fn, tuple(static_argnames))


@probe
def trace_log(fn: _Counted) -> list[str]:
    return list(fn.log)


_EVENTS: dict[str, int] = {}


@probe
def compile_state(fn: Callable[..., Any]) -> dict[str, Any]:
    """In the sandbox: whether `fn` is jitted, its compilation cache size, and how many traces
    and compilations JAX has reported in this process so far."""
    if not _EVENTS:
        _EVENTS.update({_TRACE_EVENT: 0, _COMPILE_EVENT: 0, "listening": 1})

        def listener(event: str, duration_secs: float, **kwargs: str | int) -> None:
            if event in _EVENTS:
                _EVENTS[event] += 1

        _bound.register_event_duration_listener(listener)
    jitted = is_jitted(fn)
    return {
        "jitted": jitted,
        "cache_size": int(fn._cache_size()) if jitted else 0,  # type: ignore[attr-defined]
        "traces": _EVENTS[_TRACE_EVENT],
        "compiles": _EVENTS[_COMPILE_EVENT],
    }
