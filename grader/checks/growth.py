"""Does the program grow with the data? A Python loop over a traced array unrolls
into one copy of its body per iteration, so its jaxpr grows with the input; `scan`,
`fori_loop` and `vmap` keep it the same size.

    growth.assert_no_growth(student.running_sum, lambda n: (jnp.arange(n, dtype=jnp.float32),),
                            what="running_sum(xs)", fix="carry the sum with jax.lax.scan")

Equations are counted through every nested jaxpr.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from grader.checks import _calls, _jaxpr
from grader.checks.failure import fail


def equation_counts(
    fn: Callable[..., Any],
    make_args: Callable[[int], Sequence[Any]],
    sizes: Sequence[int] = (4, 32),
    *,
    static_argnames: Iterable[str] = (),
    what: str = "",
) -> dict[int, Counter[str]]:
    """The primitive counts of the jaxpr of `fn(*make_args(n))` for each n in `sizes`."""
    __tracebackhide__ = True
    static = tuple(static_argnames)
    return {
        n: _jaxpr.primitive_counts(
            _jaxpr.trace(fn, make_args(n), None, static, what=what or _calls.name_of(fn))
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
) -> dict[int, int]:
    """The recursive equation count of the jaxpr is the same for every size in `sizes`
    (`make_args(n)` builds the arguments for size n). Returns {size: equations}."""
    __tracebackhide__ = True
    counts = equation_counts(fn, make_args, sizes, static_argnames=static_argnames, what=what)
    totals = {n: sum(c.values()) for n, c in counts.items()}
    small, large = min(sizes), max(sizes)
    if totals[large] <= totals[small]:
        return totals
    grown = counts[large] - counts[small]
    top = ", ".join(
        f"`{p}` x{counts[small][p]} -> x{counts[large][p]}"
        for p, _ in sorted(grown.items(), key=lambda kv: (-kv[1], kv[0]))[:4]
    )
    per_step = (totals[large] - totals[small]) / (large - small)
    shown = ", ".join(f"{totals[n]} equations at n={n}" for n in sorted(totals))
    raise fail(
        f"the size of the jaxpr of {what} as the input grows",
        expected=f"the same number of equations for every n in {tuple(sorted(sizes))}",
        observed=f"it grows with the input ({shown}; about {per_step:.3g} more per step); "
        f"grew most: {top}",
        cause=cause
        or "your loop unrolled: a Python `for` loop (or comprehension) over the "
        "input runs while tracing and records one copy of its body per iteration",
        fix=fix
        or "express the loop with a JAX primitive that keeps one body: `jax.lax.scan` / "
        "`jax.lax.fori_loop` for sequential steps, `jax.vmap` for independent examples",
    )
