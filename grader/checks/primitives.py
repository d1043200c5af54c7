"""What the function is built from: the lesson's primitives (`cond`, `scan`, `while`,
`psum`, ...) in the program it compiles to, counted over every function of the module
(nested jits, cond branches, loop bodies, shard_map bodies).

    primitives.assert_contains(student.piecewise, (1.5,), "cond", what="piecewise(x)",
                               fix="branch with jax.lax.cond", reference=_ref_piecewise)

This is how a check sees whether an exercise used the tool it asks for, without
reading the source. The grader reads it from the compiled program (StableHLO, where
`jax.lax.cond`/`switch` is a `case`, `scan`, `fori_loop` and `while_loop` are each a
`while`, `psum`/`pmean` an `all_reduce`), but the student reads the lesson's words: the
jaxpr's primitive names (`lesson_name`), and the compiled program named only as where
the grader read them. The program is checked in the judge (`grader.checks.exported`):
run on inputs the judge draws and compared with `reference` (the judge's own values),
or, without one, with what the student's function answers (an observation, credited
only where nothing in the module can tamper with it). A loop that unrolled is shown at
the student's line (`grader.checks._loops`).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from grader.checks import _loops, calls, exported
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


# The jaxpr's name of each operation of a compiled program whose name differs (the
# lesson's words); the others (`add`, `slice`, `reshape`, ...) are the same in both.
LESSON_NAMES: dict[str, str] = {
    "case": "cond",
    "if": "cond",
    "all_reduce": "psum",
    "select": "select_n",
    "dot": "dot_general",
    "call": "jit",
    "multiply": "mul",
    "subtract": "sub",
    "divide": "div",
    "negate": "neg",
    "maximum": "max",
    "minimum": "min",
    "power": "pow",
    "exponential": "exp",
    "exponential_minus_one": "expm1",
    "log_plus_one": "log1p",
    "sine": "sin",
    "cosine": "cos",
    "remainder": "rem",
    "convert": "convert_element_type",
    "round_nearest_even": "round",
}

# What the lesson calls each primitive a check asks for, as the compiled program shows it:
# a program has one `while` for all three loops, so a check cannot (and does not) tell them apart.
WANTED: dict[str, str] = {
    "cond": "a `cond` (from `jax.lax.cond` or `jax.lax.switch`)",
    "switch": "a `cond` (from `jax.lax.cond` or `jax.lax.switch`)",
    "scan": "a loop primitive (`scan`, or `fori_loop`/`while_loop`: the compiled program "
    "has one loop for all three)",
    "while": "a loop primitive (`while`, from `jax.lax.fori_loop` or `jax.lax.while_loop`, "
    "or `scan`: the compiled program has one loop for all three)",
    "fori_loop": "a loop primitive (`fori_loop`, `while_loop` or `scan`: the compiled program "
    "has one loop for all three)",
    "psum": "a collective (`psum` or `pmean` across devices)",
    "pmean": "a collective (`psum` or `pmean` across devices)",
}


def lesson_name(op: str) -> str:
    """The jaxpr's name of the compiled program's operation `op` (`case` -> `cond`)."""
    return LESSON_NAMES.get(op, op)


def _counts(ops: Counter[str], limit: int = 10) -> str:
    """`add x8, slice x8, cond x1` in the lesson's names, most frequent first."""
    named: Counter[str] = Counter()
    for op, n in ops.items():
        named[lesson_name(op)] += n
    items = sorted(named.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{k} x{v}" for k, v in items[:limit])
    if len(items) > limit:
        text += f", ... ({len(items) - limit} more kinds)"
    return text or "no operations"


def _names(names: str | Sequence[str]) -> tuple[str, ...]:
    return (names,) if isinstance(names, str) else tuple(names)


def _quoted(names: tuple[str, ...]) -> str:
    return " or ".join(f"`{n}`" for n in names)


def _wanted(names: tuple[str, ...]) -> str:
    """What the lesson calls the primitives `names` (each description once)."""
    return " or ".join(dict.fromkeys(WANTED.get(n, f"`{n}`") for n in names))


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
    """How often each operation occurs in the compiled program of `fn(*args)` (its op
    names without their dialect: `case`, `while`, `all_reduce`, `add`, ...), once the judge
    has run the program against `reference` (see `exported.checked`)."""
    __tracebackhide__ = True
    return Counter(_program(fn, args, kwargs, static_argnames, what, reference, inputs).ops)


def _program(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None,
    static_argnames: Iterable[str],
    what: str,
    reference: Callable[..., Any] | None,
    inputs: Callable[[np.random.Generator], Sequence[Any]] | None,
) -> exported.Program:
    __tracebackhide__ = True
    return exported.checked(
        fn,
        args,
        kwargs,
        static_argnames,
        what=what or calls.name_of(fn),
        reference=reference,
        inputs=inputs,
    )


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
    program = _program(fn, args, kwargs, static_argnames, what, reference, inputs)
    counts = Counter(program.ops)
    if any(exported.matching(counts, n) for n in wanted):
        return counts
    repeated = max(counts.values(), default=0)
    loops = {"scan", "while", "fori_loop"} & set(wanted)
    where = None
    if loops and repeated >= REPEATED:
        where = _loops.unrolled(fn, program, {op for op, k in counts.items() if k == repeated})
    raise fail(
        f"{what} uses {_quoted(wanted)} (read from its compiled program)",
        expected=f"{_wanted(wanted)} somewhere in the traced program, at any depth",
        observed=f"none; the program has {sum(counts.values())} operations: {_counts(counts)}",
        cause=cause or _default_cause(wanted, counts, where),
        fix=fix
        or "use "
        + " or ".join(TOOLS.get(n, f"the JAX construct that gives `{n}`") for n in wanted),
        where=where,
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
        f"{what} has no {_quoted(unwanted)} (read from its compiled program)",
        expected=f"no {_wanted(unwanted)}",
        observed=", ".join(f"`{n}` x{k}" for n, k in present.items()) + " in the program",
        cause=cause,
        fix=fix,
    )


REPEATED = 4
"""Operations repeated this often in a program without a loop primitive: a loop unrolled."""


def _default_cause(
    wanted: tuple[str, ...], counts: Counter[str], where: tuple[str, int, str] | None
) -> str:
    """What the program shows about the missing primitive: a select where a `cond` is asked
    for, a Python loop of the student's (found at `where`) whose operations repeat where a
    loop primitive is asked for; nothing where it shows neither."""
    repeated = max(counts.values(), default=0)
    if "cond" in wanted and exported.matching(counts, "select_n"):
        return (
            "the program selects element-wise (`select_n`, what `jnp.where`/`lax.select` give) "
            "and has no `cond`: a select takes BOTH branches' values, computed, and picks one "
            "per element; the exercise asks for a real branch"
        )
    loops = {"scan", "while", "fori_loop"} & set(wanted)
    if loops:
        if repeated >= REPEATED and where is not None and is_loop_line(where[2]):
            # its code: the report's "in your code:"
            return (
                f"your Python loop at line {where[1]} unrolled while tracing: the operations "
                f"it records repeat (up to x{repeated}) instead of one loop primitive"
            )
        return ""
    return "the function does not use the JAX construct that produces this primitive"


def is_loop_line(text: str) -> bool:
    """The student's line `text` starts a loop (`for`, `while`) or holds a comprehension (the
    first line of the loop `grader.checks._loops` found; a line cut short says nothing)."""
    code = text.strip()
    if re.match(r"(async\s+)?(for|while)\b", code):
        return True
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    comprehensions = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    return any(isinstance(node, comprehensions) for node in ast.walk(tree))
