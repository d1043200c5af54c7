"""Does the program grow with the data? A Python loop over a traced array unrolls
into one copy of its body per iteration, so its compiled program grows with the input;
`scan`, `fori_loop` and `vmap` keep it the same size.

    growth.assert_no_growth(student.running_sum, lambda n: (jnp.arange(n, dtype=jnp.float32),),
                            what="running_sum(xs)", fix="carry the sum with jax.lax.scan",
                            reference=_ref_running_sum)

Operations are counted over every function of the compiled program, which the judge
runs itself at each size (`grader.checks.exported`: against `reference` where given).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from grader.checks import _loops, calls, exported
from grader.checks.failure import fail
from grader.checks.primitives import is_loop_line, lesson_name


def equation_counts(
    fn: Callable[..., Any],
    make_args: Callable[[int], Sequence[Any]],
    sizes: Sequence[int] = (4, 32),
    *,
    static_argnames: Iterable[str] = (),
    what: str = "",
    reference: Callable[..., Any] | None = None,
) -> dict[int, Counter[str]]:
    """The operation counts of the compiled program of `fn(*make_args(n))` for each n in
    `sizes`, each program checked by the judge first (`exported.checked`)."""
    __tracebackhide__ = True
    programs = _programs(fn, make_args, sizes, static_argnames, what, reference)
    return {n: Counter(p.ops) for n, p in programs.items()}


def _programs(
    fn: Callable[..., Any],
    make_args: Callable[[int], Sequence[Any]],
    sizes: Sequence[int],
    static_argnames: Iterable[str],
    what: str,
    reference: Callable[..., Any] | None,
) -> dict[int, exported.Program]:
    __tracebackhide__ = True
    static = tuple(static_argnames)
    return {
        n: exported.checked(
            fn,
            make_args(n),
            None,
            static,
            what=what or calls.name_of(fn),
            reference=reference,
        )
        for n in sizes
    }


def assert_no_growth(
    fn: Callable[..., Any],
    make_args: Callable[[int], Sequence[Any]],
    sizes: Sequence[int] = (4, 32),
    *,
    what: str,
    cause: str = "",
    fix: str = "",
    static_argnames: Iterable[str] = (),
    reference: Callable[..., Any] | None = None,
) -> dict[int, int]:
    """The operation count of the compiled program is the same for every size in `sizes`
    (`make_args(n)` builds the arguments for size n). Returns {size: operations}.
    `reference(*make_args(n))`: the judge's value, which each program must compute.
    A program that grows fails pointing at the student's loop that unrolled."""
    __tracebackhide__ = True
    programs = _programs(fn, make_args, sizes, static_argnames, what, reference)
    counts = {n: Counter(p.ops) for n, p in programs.items()}
    totals = {n: sum(c.values()) for n, c in counts.items()}
    small, large = min(sizes), max(sizes)
    if totals[large] <= totals[small]:
        return totals
    grown = counts[large] - counts[small]
    top = ", ".join(
        f"`{lesson_name(p)}` x{counts[small][p]} -> x{counts[large][p]}"
        for p, _ in sorted(grown.items(), key=lambda kv: (-kv[1], kv[0]))[:4]
    )
    per_step = (totals[large] - totals[small]) / (large - small)
    shown = ", ".join(f"{totals[n]} operations at n={n}" for n in sorted(totals))
    # read from the larger program, where the repeated operations outnumber the others most
    where = _loops.unrolled(fn, programs[large], set(grown))
    raise fail(
        f"the size of the traced program of {what} as the input grows "
        "(read from its compiled program)",
        expected=f"the same number of operations for every n in {tuple(sorted(sizes))}",
        observed=f"it grows with the input ({shown}; about {per_step:.3g} more per step); "
        f"grew most: {top}",
        cause=cause or unrolled_cause(where),
        fix=fix
        or "express the loop with a JAX primitive that keeps one body: `jax.lax.scan` / "
        "`jax.lax.fori_loop` for sequential steps, `jax.vmap` for independent examples",
        where=where,
    )


def unrolled_cause(where: _loops.Line | None) -> str:
    """Why a program repeats its operations: the student's loop (at `where`) unrolled."""
    if where is None:
        return (
            "your loop unrolled: the program holds one copy of the repeated operations per "
            "step, recorded while tracing"
        )
    if not is_loop_line(where[2]):
        return (
            f"your loop unrolled: line {where[1]} records its operations once per step while "
            "tracing, so the program holds one copy of them per step"
        )
    return (
        f"your loop unrolled: the Python loop at line {where[1]} runs while "
        "tracing and records one copy of its body per iteration"
    )
