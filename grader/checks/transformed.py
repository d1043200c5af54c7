"""The reference on transformed inputs, or its output transformed: one more tier of
`diagnose.across`, after the reference's mutants (`ref_mutants`).

Some mistakes leave the computation right and change what it is applied to or what is
returned: a running result recorded before its update (the output one place late), a
sequence walked from its end, a loop one element short, a learning rate doubled or an input
of the wrong sign. Each is a diagnostic whose alternative is computed from that input's own
arguments (the reference called on them transformed) or from the expected values themselves,
so `across` holds it to its usual rule: named only when it reproduces the student's values on
every failing input tried, one of them of other argument sizes, and only when one text
remains.

    text = diagnose.transformed_named(smallest, held, reference, names, more)  # "" if none

The tier runs only for a check that failed with no cause confirmed by an earlier tier, and
stops quietly after BUDGET_S of wall time on one failing check: a candidate not run confirms
nothing, so an exhausted budget names nothing. Each text says what the judge confirmed,
about the student's values.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from grader.checks import _causes, ref_mutants

# seconds of wall time for the whole tier on one failing check
BUDGET_S = 1.5

_START = "your values equal the right ones "

TEXTS = {
    "reversed_in": _START + "computed on {name} in reverse order along its first axis",
    "reversed_back": _START + "computed on {name} in reverse order along its first axis, then "
    "put back in order: each entry is computed from the last element towards the first, where "
    "it runs from the first towards the last",
    "no_first": _START + "computed on {name} without its first element along its first axis "
    "({name}[1:]): {name}[0] never enters the result",
    "no_last": _START + "computed on {name} without its last element along its first axis "
    "({name}[:-1]): {name}[-1] never enters the result",
    "doubled": _START + "computed with {name} doubled (2 * {name} where {name} belongs)",
    "halved": _START + "computed with {name} halved ({name} / 2 where {name} belongs)",
    "negated": _START + "computed with {name} negated (-{name} where {name} belongs)",
}


def offered(
    reference: Callable[..., Any], names: Sequence[str], budget: ref_mutants.Budget
) -> Callable[[Any], Sequence[_causes.Diagnostic]]:
    """The tier's diagnostics for one input's arguments."""
    run = _bounded(reference, budget)

    def diagnostics(args: Any) -> Sequence[_causes.Diagnostic]:
        if not isinstance(args, tuple | list):
            return ()
        args = tuple(args)
        found: list[_causes.Diagnostic] = [_Shift(*axis) for axis in _shiftable(run, args)]
        found.extend(_input_mistakes(run, args, names))
        return found

    return diagnostics


def _bounded(reference: Callable[..., Any], budget: ref_mutants.Budget) -> Callable[..., Any]:
    """The reference, refused once the budget is spent; warnings raised as errors (a
    candidate that warns fits nothing), NumPy's floating-point ones silenced."""

    def run(*args: Any) -> Any:
        if budget.spent():
            raise ref_mutants.OverBudget
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("error")
            return reference(*args)

    return run


# -- the output shifted ------------------------------------------------------------------------


def _one_array(tree: Any) -> np.ndarray[Any, Any] | None:
    leaves = jax.tree.leaves(tree)
    if len(leaves) != 1:
        return None
    values = np.asarray(leaves[0])
    if values.dtype.kind not in "fiu" or values.ndim == 0:
        return None
    return values.astype(np.float64)


class _Shift:
    """The expected (one array) shifted by one position along `axis`: one place later with
    the first set to 0, or one place earlier with the last dropped or repeated. (An
    exclusive running sum is the expected minus its argument: the general tier names it.)"""

    def __init__(self, axis: int, constant: bool) -> None:
        self.axis = axis
        shown = ("earlier_drop",) if constant else ("later", "earlier_drop", "earlier_repeat")
        self.kinds = frozenset(f"{what}{axis}" for what in shown)

    def __call__(self, actual: Any, expected: Any) -> _causes.Cause | None:
        a, e = _one_array(actual), _one_array(expected)
        axis = self.axis
        if a is None or e is None or a.ndim != e.ndim or axis >= e.ndim or e.shape[axis] < 2:
            return None
        if not np.isfinite(a).all() or not np.isfinite(e).all():
            return None
        n = e.shape[axis]
        head, tail = _take(e, axis, 0, n - 1), _take(e, axis, 1, n)
        shorter = list(e.shape)
        shorter[axis] -= 1
        if a.shape == tuple(shorter):  # one fewer: the mistake shows whatever the values
            return self._found("earlier_drop") if _causes._close(a, tail) else None
        if a.shape != e.shape or _causes._close(a, e) or f"later{axis}" not in self.kinds:
            return None  # the expected constant along the axis: a shift cannot show
        if _causes._close(_take(a, axis, 1, n), head) and _zero(_take(a, axis, 0, 1)):
            return self._found("later")
        last = _take(e, axis, n - 1, n)
        if _causes._close(_take(a, axis, 0, n - 1), tail) and _causes._close(
            _take(a, axis, n - 1, n), last
        ):
            return self._found("earlier_repeat")
        return None

    def _found(self, what: str) -> _causes.Cause:
        axis = self.axis
        if what == "later":
            text = (
                "your values equal the right ones shifted one position later along axis "
                f"{axis}, the first set to 0: out[i] is the expected out[i-1]"
            )
        elif what == "earlier_drop":
            text = (
                "your values equal the right ones shifted one position earlier along axis "
                f"{axis}, one fewer: out[i] is the expected out[i+1], and the expected out[0] "
                "is missing"
            )
        else:
            text = (
                "your values equal the right ones shifted one position earlier along axis "
                f"{axis}, the last repeated: out[i] is the expected out[i+1]"
            )
        return _causes.Cause(f"{what}{axis}", text)


def _shiftable(run: Callable[..., Any], args: tuple[Any, ...]) -> list[tuple[int, bool]]:
    """The axes of size 2 or more of the reference's output on `args` (one array), each with
    whether the output is constant along it: a shift that keeps the shape cannot show there,
    so it is not offered (an input that cannot tell neither confirms nor contradicts it)."""
    try:
        e = _one_array(run(*args))
    except Exception:  # the budget is spent, or the reference fails on these arguments
        return []
    if e is None or not np.isfinite(e).all():
        return []
    return [
        (axis, _causes._close(_take(e, axis, 0, e.shape[axis] - 1), _take(e, axis, 1, None)))
        for axis in range(e.ndim)
        if e.shape[axis] >= 2
    ]


def _take(values: np.ndarray[Any, Any], axis: int, start: int, stop: int | None) -> Any:
    end = values.shape[axis] if stop is None else stop
    return np.take(values, np.arange(start, end), axis=axis)


def _zero(values: Any) -> bool:
    return bool(np.all(np.abs(values) <= _causes.ATOL))


# -- the reference on transformed arguments ------------------------------------------------------


def _input_mistakes(
    run: Callable[..., Any], args: tuple[Any, ...], names: Sequence[str]
) -> list[_causes.Diagnostic]:
    """The reference on one array argument reversed along its first axis (its output as it
    comes, and reversed back), without its first or its last element along that axis, and
    with one floating-point argument (a number, an array or a tree of arrays) doubled,
    halved or negated."""
    found: list[_causes.Diagnostic] = []
    for i, name, values in _arrays(args, names):
        if values.ndim == 0 or values.shape[0] < 2:
            continue
        edits = (
            ("reversed_in", values[::-1], None),
            ("reversed_back", values[::-1], _flip_first),
            ("no_first", values[1:], None),
            ("no_last", values[:-1], None),
        )
        for what, changed, after in edits:
            call = _with(args, i, _like(args[i], changed))
            text = TEXTS[what].format(name=name)
            found.append(_Computed(run, call, after, text, f"{what}{i}"))
    for i, name in _scalable(args, names):
        for what, factor in (("doubled", 2.0), ("halved", 0.5), ("negated", -1.0)):
            call = _with(args, i, _scaled(args[i], factor))
            found.append(_Computed(run, call, None, TEXTS[what].format(name=name), f"{what}{i}"))
    return found


class _Computed:
    """The values are the reference on the changed arguments (then `after`), computed only
    when asked: a call that raises, warns or runs past the budget matches nothing."""

    def __init__(
        self,
        run: Callable[..., Any],
        args: tuple[Any, ...],
        after: Callable[[Any], Any] | None,
        text: str,
        kind: str,
    ) -> None:
        self.run, self.args, self.after, self.text = run, args, after, text
        self.kinds = frozenset({kind})
        self._diagnostic: _causes.Diagnostic | None = None
        self._failed = False

    def __call__(self, actual: Any, expected: Any) -> _causes.Cause | None:
        if self._diagnostic is None and not self._failed:
            try:
                alternative = self.run(*self.args)
                if self.after is not None:
                    alternative = self.after(alternative)
            except Exception:  # the changed arguments do not fit the reference
                self._failed = True
            else:
                self._diagnostic = _causes.matches(alternative, self.text, next(iter(self.kinds)))
        return None if self._diagnostic is None else self._diagnostic(actual, expected)


def _flip_first(tree: Any) -> Any:
    """Every array of the output reversed along its first axis (a total beside them, a
    scalar, stays as it is); an error where no leaf has an axis."""
    leaves = jax.tree.leaves(tree)
    if not any(np.ndim(leaf) >= 1 for leaf in leaves):
        raise ValueError("no array to reverse")
    return jax.tree.map(lambda leaf: np.flip(leaf, 0) if np.ndim(leaf) >= 1 else leaf, tree)


def _arrays(args: tuple[Any, ...], names: Sequence[str]) -> list[tuple[int, str, Any]]:
    """(index, name, the argument as a NumPy array) of each numeric array argument."""
    found = []
    for i, arg in enumerate(args):
        if not isinstance(arg, np.ndarray | jax.Array):
            continue
        values = np.asarray(arg)
        if values.dtype.kind in "fiu" and values.size >= 2:
            found.append((i, _causes._argument(f"[{i}]", args, names), values))
    return found


def _scalable(args: tuple[Any, ...], names: Sequence[str]) -> list[tuple[int, str]]:
    """(index, name) of each floating-point argument not all zeros: a number, an array, or
    a tree of arrays (a dict of parameters: scaled whole, so that a step whose values are
    2 * lr * grads is seen as grads doubled as well as lr doubled, and named neither)."""
    found = []
    for i, arg in enumerate(args):
        if isinstance(arg, bool):
            continue
        if isinstance(arg, float):
            if arg != 0.0:
                found.append((i, _causes._argument(f"[{i}]", args, names)))
            continue
        leaves = jax.tree.leaves(arg)
        if not leaves or not all(isinstance(v, np.ndarray | jax.Array) for v in leaves):
            continue
        arrays = [np.asarray(v) for v in leaves]
        if all(v.dtype.kind == "f" for v in arrays) and any(np.any(v != 0) for v in arrays):
            found.append((i, _causes._argument(f"[{i}]", args, names)))
    return found


def _scaled(arg: Any, factor: float) -> Any:
    if isinstance(arg, float):
        return arg * factor
    return jax.tree.map(
        lambda leaf: _like(leaf, np.asarray(leaf) * np.asarray(factor, np.asarray(leaf).dtype)),
        arg,
    )


def _like(original: Any, values: Any) -> Any:
    """`values` as the kind of array `original` is (a JAX array stays one)."""
    if isinstance(original, jax.Array):
        return jnp.asarray(values, dtype=original.dtype)
    return np.ascontiguousarray(values, dtype=np.asarray(original).dtype)


def _with(args: tuple[Any, ...], i: int, value: Any) -> tuple[Any, ...]:
    changed = list(args)
    changed[i] = value
    return tuple(changed)
