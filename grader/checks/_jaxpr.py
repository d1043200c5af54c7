"""Jaxprs of a student's function, walked all the way down.

A `scan` inside a jitted helper, a `cond` inside a `custom_jvp` rule or a
`psum` inside the `shard_map` that `pmap` lowers to all sit in nested jaxprs;
a check that looks only at the top level misses them. `equations` walks every
nested jaxpr that JAX itself exposes (`jax.extend.core.jaxprs_in_params`:
jit, cond branches, scan/while bodies, custom_jvp/custom_vjp, shard_map, ...);
the probe that traces the function in the sandbox is `grader.probes.jaxpr`.

Private to the check kinds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grader.checks import calls
from grader.probes import jaxpr as jaxpr_probes
from grader.probes.jaxpr import MAX_TEXT_CHARS, summarize
from grader.sandbox import client

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
    seen = calls.observed(
        seen,
        checked=f"tracing {what} to a jaxpr",
        attempted=f"jax.make_jaxpr({calls.name_of(fn)})",
        expected="the function traces with abstract (traced) inputs",
    )
    counts = seen.get("counts") if isinstance(seen, dict) else None
    if not isinstance(counts, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and v >= 0 for k, v in counts.items()
    ):
        raise TypeError("the sandbox sent a malformed jaxpr summary")
    return Summary(Counter(counts), str(seen.get("text", ""))[:MAX_TEXT_CHARS])


def primitive_counts(jaxpr: Any) -> Counter[str]:
    if isinstance(jaxpr, Summary):
        return jaxpr.counts
    return jaxpr_probes.primitive_counts(jaxpr)


def equation_count(jaxpr: Any) -> int:
    if isinstance(jaxpr, Summary):
        return jaxpr.equations
    return sum(1 for _ in jaxpr_probes.equations(jaxpr))


def matching(counts: Mapping[str, int], name: str) -> int:
    """How many equations of primitive `name` (or one of its aliases) `counts` holds."""
    return sum(counts.get(alias, 0) for alias in ALIASES.get(name, frozenset({name})))
