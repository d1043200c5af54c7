"""Does the function compile under `jax.jit`, and does the compiled version compute
what the eager one does?

    jit.assert_jittable(student.newton_sqrt, (2.0,), {"n_iters": 20},
                        static_argnames=("n_iters",), what="newton_sqrt(a, n_iters)")

A failure while tracing (a Python `if` on a traced value, NumPy on a tracer, a
traced loop bound) is translated into its JAX cause and fix by `grader.explain`
and points at the student's line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from grader.checks import calls, values
from grader.checks.failure import explainable
from grader.probes import _format
from grader.probes.jit import eager_and_jitted
from grader.sandbox import client


@explainable
def assert_jittable(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None = None,
    *,
    static_argnames: Iterable[str] = (),
    what: str,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    cause: str = "",
    fix: str = "",
) -> Any:
    """Run `fn` eagerly and as `jax.jit(fn, static_argnames=...)`; both must succeed and agree.
    Returns the jitted output. A stub's NotImplementedError propagates unchanged; any
    other exception (eager or jitted) becomes a CheckFailure naming the call and the line."""
    __tracebackhide__ = True
    kwargs = dict(kwargs or {})
    static = tuple(static_argnames)
    name = calls.name_of(fn)
    seen = client.probe(eager_and_jitted, client.handle(fn), tuple(args), kwargs, static)
    eager = calls.observed(
        seen["eager"],
        checked=f"{what} called eagerly (before trying jax.jit)",
        attempted=_format.call(name, args, kwargs),
        expected="the function runs",
    )
    call = _format.call(
        f"jax.jit({name}" + (f", static_argnames={static!r})" if static else ")"), args, kwargs
    )
    jitted = calls.observed(
        seen["jitted"],
        checked=f"{what} under jax.jit",
        attempted=call,
        expected="the function traces and compiles: every value-dependent branch or loop "
        "uses jax.lax, every shape and Python loop bound is static",
    )
    values.assert_close(
        jitted,
        eager,
        what=f"{call} against the eager call",
        rtol=rtol,
        atol=atol,
        cause="the compiled function computes something different from the eager one on the "
        "same inputs",
        fix="look for what the function reads besides its arguments (a global, a NumPy or "
        "Python RNG) or decides in Python while tracing: under jax.jit that happens once, at "
        "trace time",
    )
    return jitted
