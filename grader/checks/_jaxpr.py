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
from dataclasses import dataclass
from typing import Any

from jax.extend import core as jex

from grader.checks import _bound, _calls
from grader.sandbox import client
from grader.sandbox.probes import probe

MAX_TEXT_CHARS = 20_000

# The same primitive under the names different JAX versions give it.
ALIASES: dict[str, frozenset[str]] = {
    "jit": frozenset({"jit", "pjit"}),
    "pjit": frozenset({"jit", "pjit"}),
    "while": frozenset({"while"}),
    "shard_map": frozenset({"shard_map", "shmap"}),
}


@dataclass(frozen=True)
class Summary:
    """What the judge learns of a jaxpr: primitive counts (nested jaxprs included) and its text."""

    counts: Counter[str]
    text: str

    @property
    def equations(self) -> int:
        return sum(self.counts.values())


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


def trace(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None = None,
    static_argnames: Iterable[str] = (),
    *,
    what: str,
) -> Summary:
    """The jaxpr summary of `fn(*args, **kwargs)` with `static_argnames` bound as Python
    values, traced in `fn`'s sandbox. JAX errors while tracing become CheckFailures that
    explain them."""
    __tracebackhide__ = True
    seen = client.probe(
        summarize, client.handle(fn), tuple(args), dict(kwargs or {}), tuple(static_argnames)
    )
    seen = _calls.observed(
        seen,
        checked=f"tracing {what} to a jaxpr",
        attempted=f"jax.make_jaxpr({_calls.name_of(fn)})",
        expected="the function traces with abstract (traced) inputs",
    )
    counts = seen.get("counts") if isinstance(seen, dict) else None
    if not isinstance(counts, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and v >= 0 for k, v in counts.items()
    ):
        raise TypeError("the sandbox sent a malformed jaxpr summary")
    return Summary(Counter(counts), str(seen.get("text", ""))[:MAX_TEXT_CHARS])


def equations(jaxpr: Any) -> Iterator[Any]:
    """Every equation of `jaxpr` and of all jaxprs nested in its equations' params."""
    inner = getattr(jaxpr, "jaxpr", jaxpr)  # ClosedJaxpr -> Jaxpr
    for eqn in inner.eqns:
        yield eqn
        for sub in jex.jaxprs_in_params(eqn.params):
            yield from equations(sub)


def primitive_counts(jaxpr: Any) -> Counter[str]:
    if isinstance(jaxpr, Summary):
        return jaxpr.counts
    return Counter(eqn.primitive.name for eqn in equations(jaxpr))


def equation_count(jaxpr: Any) -> int:
    if isinstance(jaxpr, Summary):
        return jaxpr.equations
    return sum(1 for _ in equations(jaxpr))


def matching(counts: Mapping[str, int], name: str) -> int:
    """How many equations of primitive `name` (or one of its aliases) `counts` holds."""
    return sum(counts.get(alias, 0) for alias in ALIASES.get(name, frozenset({name})))
