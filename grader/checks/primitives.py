"""What the function is built from: the operations of the program it compiles to,
counted over every function of the module (nested jits, cond branches, loop bodies,
shard_map bodies).

    primitives.assert_contains(student.piecewise, (1.5,), "cond", what="piecewise(x)",
                               fix="branch with jax.lax.cond", reference=_ref_piecewise)

This is how a check sees whether an exercise used the tool it asks for, without
reading the source: `jax.lax.cond`/`switch` compile to `stablehlo.case`, `lax.scan`,
`fori_loop` and `while_loop` to `stablehlo.while`, `psum`/`pmean` across devices to
`stablehlo.all_reduce`. The program is checked in the judge (`grader.checks.exported`):
run on inputs the judge draws and compared with `reference` (the judge's own values),
or, without one, with what the student's function answers (an observation, credited
only where nothing in the module can tamper with it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from grader.checks import calls, exported
from grader.checks.failure import fail
from grader.probes import _format

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
    reference: Callable[..., Any] | None = None,
    inputs: Callable[[np.random.Generator], Sequence[Any]] | None = None,
) -> Counter[str]:
    """How often each operation occurs in the compiled program of `fn(*args)` (StableHLO op
    names without their dialect: `case`, `while`, `all_reduce`, `add`, ...), once the judge
    has run the program against `reference` (see `exported.checked`)."""
    __tracebackhide__ = True
    program = exported.checked(
        fn,
        args,
        kwargs,
        static_argnames,
        what=what or calls.name_of(fn),
        reference=reference,
        inputs=inputs,
    )
    return Counter(program.ops)


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
    reference: Callable[..., Any] | None = None,
    inputs: Callable[[np.random.Generator], Sequence[Any]] | None = None,
) -> Counter[str]:
    """At least one of `names` occurs somewhere in the compiled program. Returns the counts.
    `reference(*args, **kwargs)`: the judge's value of the function, which the program
    must compute on inputs the judge draws (`inputs(rng)`, or the arguments rescaled)."""
    __tracebackhide__ = True
    wanted = _names(names)
    counts = primitives_of(
        fn,
        args,
        kwargs,
        static_argnames=static_argnames,
        what=what,
        reference=reference,
        inputs=inputs,
    )
    if any(exported.matching(counts, n) for n in wanted):
        return counts
    raise fail(
        f"the compiled program of {what} contains {_quoted(wanted)}",
        expected=f"{_ops_of(wanted)} (at any depth)",
        observed=f"none; the program has {sum(counts.values())} operations: "
        f"{_format.counts(counts)}",
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
    reference: Callable[..., Any] | None = None,
    inputs: Callable[[np.random.Generator], Sequence[Any]] | None = None,
) -> Counter[str]:
    """None of `names` occurs anywhere in the compiled program. Returns the counts."""
    __tracebackhide__ = True
    unwanted = _names(names)
    counts = primitives_of(
        fn,
        args,
        kwargs,
        static_argnames=static_argnames,
        what=what,
        reference=reference,
        inputs=inputs,
    )
    present = {n: exported.matching(counts, n) for n in unwanted if exported.matching(counts, n)}
    if not present:
        return counts
    raise fail(
        f"the compiled program of {what} has no {_quoted(unwanted)}",
        expected=f"no {_ops_of(unwanted)}",
        observed=", ".join(f"`{n}` x{k}" for n, k in present.items()) + " in the program",
        cause=cause,
        fix=fix,
    )


def _ops_of(names: tuple[str, ...]) -> str:
    ops = sorted({op for n in names for op in exported.ops_for(n)})
    return " or ".join(f"`stablehlo.{op}`" for op in ops) + f" (what {_quoted(names)} compiles to)"


def _default_cause(wanted: tuple[str, ...], counts: Counter[str]) -> str:
    repeated = max(counts.values(), default=0)
    if "cond" in wanted and exported.matching(counts, "select_n"):
        return (
            "the function selects with `jnp.where`/`lax.select` (`select`), which computes "
            "BOTH branches and picks element-wise; the exercise asks for a real branch"
        )
    if {"scan", "while"} & set(wanted) and repeated >= 4:
        return (
            f"a Python loop unrolled while tracing: the same operations repeat (up to x{repeated}) "
            "instead of one loop primitive (`stablehlo.while`)"
        )
    if {"scan", "while"} & set(wanted):
        return "the loop is written without a JAX loop primitive (a Python loop, or a closed-form jnp op)"
    return "the function does not use the JAX construct that produces this primitive"
