"""The probe behind `grader.checks._jaxpr`: a student's function traced to a jaxpr in the
sandbox, walked all the way down (every nested jaxpr JAX exposes:
`jax.extend.core.jaxprs_in_params`), its primitives counted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from jax.extend import core as jex

from grader.probes import _bound, _calls
from grader.sandbox.probes import probe

MAX_TEXT_CHARS = 20_000


@probe
def summarize(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    static_argnames: Sequence[str],
) -> Any:
    """In the sandbox: trace `fn` to a jaxpr and count its primitives."""
    dynamic_fn, dynamic_args = _calls.split_static(fn, args, kwargs, static_argnames)
    closed = _calls.attempt(lambda: _bound.make_jaxpr(dynamic_fn)(*dynamic_args))
    if not hasattr(closed, "jaxpr"):
        return closed  # the error
    return {"counts": dict(primitive_counts(closed)), "text": str(closed)[:MAX_TEXT_CHARS]}


def equations(jaxpr: Any) -> Iterator[Any]:
    """Every equation of `jaxpr` and of all jaxprs nested in its equations' params."""
    inner = getattr(jaxpr, "jaxpr", jaxpr)  # ClosedJaxpr -> Jaxpr
    for eqn in inner.eqns:
        yield eqn
        for sub in jex.jaxprs_in_params(eqn.params):
            yield from equations(sub)


def primitive_counts(jaxpr: Any) -> Counter[str]:
    """How many equations of each primitive `jaxpr` holds, nested jaxprs included."""
    return Counter(eqn.primitive.name for eqn in equations(jaxpr))
