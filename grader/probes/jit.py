"""The probe of `grader.checks.jit`: the function called eagerly and under `jax.jit`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grader.probes import _bound, _calls
from grader.sandbox.probes import probe


@probe
def eager_and_jitted(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    static_argnames: tuple[str, ...],
) -> dict[str, Any]:
    """In the sandbox: `fn` called eagerly and under `jax.jit`, each on its own copy of the
    arguments (a function that mutates them must not change what the other call sees)."""
    eager_args, eager_kwargs = _bound.deepcopy((args, kwargs))
    eager = _calls.attempt(lambda: fn(*eager_args, **eager_kwargs))
    jit_args, jit_kwargs = _bound.deepcopy((args, kwargs))
    jitted = _calls.attempt(
        lambda: _bound.jit(fn, static_argnames=static_argnames)(*jit_args, **jit_kwargs)
    )
    return {"eager": eager, "jitted": jitted}
