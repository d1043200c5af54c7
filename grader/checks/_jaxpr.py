"""Jaxprs of a student's function, walked all the way down.

A `scan` inside a jitted helper, a `cond` inside a `custom_jvp` rule or a
`psum` inside the `shard_map` that `pmap` lowers to all sit in nested jaxprs;
a check that looks only at the top level misses them. `equations` walks every
nested jaxpr that JAX itself exposes (`jax.extend.core.jaxprs_in_params`:
jit, cond branches, scan/while bodies, custom_jvp/custom_vjp, shard_map, ...).

Private to the check kinds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import jax
from jax.extend import core as jex

from grader.checks import _calls

# The same primitive under the names different JAX versions give it.
ALIASES: dict[str, frozenset[str]] = {
    "jit": frozenset({"jit", "pjit"}),
    "pjit": frozenset({"jit", "pjit"}),
    "while": frozenset({"while"}),
    "shard_map": frozenset({"shard_map", "shmap"}),
}


def trace(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None = None,
    static_argnames: Iterable[str] = (),
    *,
    what: str,
) -> Any:
    """The closed jaxpr of `fn(*args, **kwargs)` with `static_argnames` bound as Python
    values. JAX errors while tracing become CheckFailures that explain them."""
    __tracebackhide__ = True
    dynamic_fn, dynamic_args = _calls.split_static(fn, args, kwargs, static_argnames)
    try:
        return jax.make_jaxpr(dynamic_fn)(*dynamic_args)
    except _calls.PASS_THROUGH:
        raise
    except Exception as exc:
        raise _calls.translate(
            exc,
            checked=f"tracing {what} to a jaxpr",
            attempted=f"jax.make_jaxpr({_calls.name_of(fn)})",
            expected="the function traces with abstract (traced) inputs",
        ) from exc


def equations(jaxpr: Any) -> Iterator[Any]:
    """Every equation of `jaxpr` and of all jaxprs nested in its equations' params."""
    inner = getattr(jaxpr, "jaxpr", jaxpr)  # ClosedJaxpr -> Jaxpr
    for eqn in inner.eqns:
        yield eqn
        for sub in jex.jaxprs_in_params(eqn.params):
            yield from equations(sub)


def primitive_counts(jaxpr: Any) -> Counter[str]:
    return Counter(eqn.primitive.name for eqn in equations(jaxpr))


def equation_count(jaxpr: Any) -> int:
    return sum(1 for _ in equations(jaxpr))


def matching(counts: Mapping[str, int], name: str) -> int:
    """How many equations of primitive `name` (or one of its aliases) `counts` holds."""
    return sum(counts.get(alias, 0) for alias in ALIASES.get(name, frozenset({name})))
