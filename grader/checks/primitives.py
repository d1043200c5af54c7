"""What the function is built from: the primitives in its jaxpr, counted through
every nested jaxpr (jit, cond branches, scan/while bodies, custom_jvp/vjp, shard_map).

    primitives.assert_contains(student.piecewise, (1.5,), "cond", what="piecewise(x)",
                               fix="branch with jax.lax.cond")

This is how a check sees whether an exercise used the tool it asks for, without
reading the source: `jax.lax.cond` leaves a `cond`, `lax.scan` a `scan`,
`fori_loop` a `scan` (static bounds) or a `while` (traced bounds), `pmean` a `psum`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from grader.checks import _calls, _format, _jaxpr
from grader.checks.failure import fail

# The usual way to get each primitive, for default fixes.
TOOLS: dict[str, str] = {
    "cond": "`jax.lax.cond` (or `jax.lax.switch`)",
    "scan": "`jax.lax.scan` (or `jax.lax.fori_loop` with Python-int bounds)",
    "while": "`jax.lax.while_loop` (or `jax.lax.fori_loop`)",
    "psum": "`jax.lax.psum` or `jax.lax.pmean` inside `pmap`/`shard_map`",
    "dot_general": "`jnp.dot`, `@` or `jnp.einsum`",
    "select_n": "`jnp.where`",
    "custom_jvp_call": "a `jax.custom_jvp` function",
}


def _names(names: str | Sequence[str]) -> tuple[str, ...]:
    return (names,) if isinstance(names, str) else tuple(names)


def _quoted(names: tuple[str, ...]) -> str:
    return " or ".join(f"`{n}`" for n in names)


def primitives_of(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None = None,
    *,
    static_argnames: Iterable[str] = (),
    what: str = "",
) -> Counter[str]:
    """How often each primitive occurs in the jaxpr of `fn(*args)`, nested jaxprs included."""
    __tracebackhide__ = True
    jaxpr = _jaxpr.trace(fn, args, kwargs, static_argnames, what=what or _calls.name_of(fn))
    return _jaxpr.primitive_counts(jaxpr)


def assert_contains(
    fn: Callable[..., Any],
    args: Sequence[Any],
    names: str | Sequence[str],
    *,
    what: str,
    cause: str = "",
    fix: str = "",
    static_argnames: Iterable[str] = (),
    kwargs: Mapping[str, Any] | None = None,
) -> Counter[str]:
    """At least one of `names` occurs somewhere in the jaxpr. Returns the counts."""
    __tracebackhide__ = True
    wanted = _names(names)
    counts = primitives_of(fn, args, kwargs, static_argnames=static_argnames, what=what)
    if any(_jaxpr.matching(counts, n) for n in wanted):
        return counts
    raise fail(
        f"the jaxpr of {what} contains {_quoted(wanted)}",
        expected=f"a {_quoted(wanted)} equation (at any depth)",
        observed=f"none; the jaxpr has {sum(counts.values())} equations: {_format.counts(counts)}",
        cause=cause or _default_cause(wanted, counts),
        fix=fix
        or "use "
        + " or ".join(TOOLS.get(n, f"the JAX construct that gives `{n}`") for n in wanted),
    )


def assert_lacks(
    fn: Callable[..., Any],
    args: Sequence[Any],
    names: str | Sequence[str],
    *,
    what: str,
    cause: str = "",
    fix: str = "",
    static_argnames: Iterable[str] = (),
    kwargs: Mapping[str, Any] | None = None,
) -> Counter[str]:
    """None of `names` occurs anywhere in the jaxpr. Returns the counts."""
    __tracebackhide__ = True
    unwanted = _names(names)
    counts = primitives_of(fn, args, kwargs, static_argnames=static_argnames, what=what)
    present = {n: _jaxpr.matching(counts, n) for n in unwanted if _jaxpr.matching(counts, n)}
    if not present:
        return counts
    raise fail(
        f"the jaxpr of {what} has no {_quoted(unwanted)}",
        expected=f"no {_quoted(unwanted)} equation",
        observed=", ".join(f"`{n}` x{k}" for n, k in present.items()) + " in the jaxpr",
        cause=cause,
        fix=fix,
    )


def _default_cause(wanted: tuple[str, ...], counts: Counter[str]) -> str:
    repeated = max(counts.values(), default=0)
    if "cond" in wanted and _jaxpr.matching(counts, "select_n"):
        return (
            "the function selects with `jnp.where`/`lax.select` (`select_n`), which computes "
            "BOTH branches and picks element-wise; the exercise asks for a real branch"
        )
    if {"scan", "while"} & set(wanted) and repeated >= 4:
        return (
            f"a Python loop unrolled while tracing: the same operations repeat (up to x{repeated}) "
            "instead of one loop primitive"
        )
    if {"scan", "while"} & set(wanted):
        return "the loop is written without a JAX loop primitive (a Python loop, or a closed-form jnp op)"
    return "the function does not use the JAX construct that produces this primitive"
