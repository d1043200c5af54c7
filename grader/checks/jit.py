"""Does the function compile under `jax.jit`, and does the compiled version compute
what the eager one does?

    jit.assert_jittable(student.newton_sqrt, (2.0,), {"n_iters": 20},
                        static_argnames=("n_iters",), what="newton_sqrt(a, n_iters)")

A failure while tracing (a Python `if` on a traced value, NumPy on a tracer, a
traced loop bound) is translated into its JAX cause and fix by `grader.explain`
and points at the student's line.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import jax

from grader.checks import _calls, _format, values


def assert_jittable(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None = None,
    *,
    static_argnames: Iterable[str] = (),
    what: str,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> Any:
    """Run `fn` eagerly and as `jax.jit(fn, static_argnames=...)`; both must succeed and agree.
    Returns the jitted output. A stub's NotImplementedError propagates unchanged; any
    other exception (eager or jitted) becomes a CheckFailure naming the call and the line."""
    __tracebackhide__ = True
    kwargs = dict(kwargs or {})
    static = tuple(static_argnames)
    name = _calls.name_of(fn)
    # Each call gets its own copy: a function that mutates its arguments must not make the
    # jitted call see different inputs (its mutation is purity's finding, not jit's).
    eager_args, eager_kwargs = copy.deepcopy((tuple(args), kwargs))
    try:
        eager = _calls.ready(fn(*eager_args, **eager_kwargs))
    except _calls.PASS_THROUGH:
        raise
    except Exception as exc:
        raise _calls.translate(
            exc, checked=f"{what} called eagerly (before trying jax.jit)",
            attempted=_format.call(name, args, kwargs), expected="the function runs",
        ) from exc
    call = _format.call(f"jax.jit({name}"
                        + (f", static_argnames={static!r})" if static else ")"), args, kwargs)
    try:
        jit_args, jit_kwargs = copy.deepcopy((tuple(args), kwargs))
        jitted = _calls.ready(jax.jit(fn, static_argnames=static)(*jit_args, **jit_kwargs))
    except _calls.PASS_THROUGH:
        raise
    except Exception as exc:
        raise _calls.translate(
            exc,
            checked=f"{what} under jax.jit",
            attempted=call,
            expected="the function traces and compiles: every value-dependent branch or loop "
            "uses jax.lax, every shape and Python loop bound is static",
        ) from exc
    values.assert_close(
        jitted, eager, what=f"{call} against the eager call", rtol=rtol, atol=atol,
        cause="the compiled function computes something different from the eager one: a "
        "Python side effect or global read at trace time, or a value baked in while tracing",
        fix="keep the function pure: everything it uses should come in through its arguments",
    )
    return jitted
