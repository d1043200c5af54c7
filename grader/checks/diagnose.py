"""Verified causes: a failure names a likely cause only when the numbers confirm it.

A wrong guess misleads more than no guess, so every diagnostic here tests one known
mistake against what was observed and returns a `Cause` only when the observed values
are what that mistake produces:

    cause = diagnose.first(got, expected, diagnose.sample_std(n), diagnose.transposed)
    values.assert_close(got, expected, what=..., cause=cause)

- `returned_none`    the function returned None: its body is not written yet (`pass`)
- `sample_std(n)`    every value is sqrt(n / (n - 1)) (or its inverse) times the expected:
                     a sample standard deviation (`ddof=1`)
- `batch_scale(b)`   every value is b or 1 / b times the expected: a sum where a mean is
                     wanted, or a division by the batch size too many
- `negated`          every value is minus the expected: a flipped sign
- `update_sign(p0)`  the step from `p0` is minus the expected step: the update's sign
- `transposed`       the values are the expected matrix transposed
- `other_axis(...)`  the values are the reference taken along another axis
- `shifted`          the values are the expected shifted by one place (an off-by-one)
- `skipped_first_step` per-step records whose step 0 is 0.0 and whose later steps come one
                     entry late: a training loop that never ran step 0
- `matches(alt, ..)` the values are those of a mistake the suite computes itself
- `loss_rises(...)`  a training loss that rises: the update goes uphill
- `factor(...)`      (built in, tried by `across` after the suite's diagnostics) every value
                     is c times the expected, c one constant on inputs of every size or one
                     function (d, 1/d, sqrt(d), 1/sqrt(d), n * m, n/d) of argument sizes
                     that follows them: a stray constant, a mean where a sum belongs

Structure comes before numbers: `find` first tries `swapped_outputs` (a tuple or list
whose outputs, put in another order, are the reference's), and a ratio is only ever taken
between arrays of the same shape. `shape_cause` says what two differing shapes show and
nothing more.

A cause is a guess about the computation, so it is named only once confirmed: the mistake,
applied to the reference, must reproduce the student's result on every failing input held
to it, inputs of two different sizes among them (`across` for a search, `confirmed` for a
check's own fixed inputs). One ratio or one match on one input can be a coincidence: a
(B, 1) minus (B,) residual averages to 1/3 of the right loss at one B, and x[index] * value
is "x unchanged" wherever x[index] is 0. Only a returned None (`ON_ONE_INPUT`) is named from
one input. docs/causes.md lists the causes and the fixtures that prove each.

`first` runs diagnostics in order and returns the first confirmed cause's text, or ""
when none matches: the failure then says only that the values differ and shows the
first differing element (`values.difference`), with no guessed cause.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from grader.checks import ref_mutants, transformed
from grader.checks._causes import (  # re-exported: the suites and the tiers build with them
    _ORDINALS as _ORDINALS,
)
from grader.checks._causes import ATOL as ATOL
from grader.checks._causes import RTOL as RTOL
from grader.checks._causes import Cause as Cause
from grader.checks._causes import Diagnostic as Diagnostic
from grader.checks._causes import Input as Input
from grader.checks._causes import _argument as _argument
from grader.checks._causes import _close as _close
from grader.checks._causes import _leaves as _leaves
from grader.checks._causes import _Matches as _Matches
from grader.checks._causes import _pairs as _pairs
from grader.checks._causes import matches as matches

# a training loss that ends this many times higher than it started has risen (a flat run's
# batch noise is a few percent; an update of the wrong sign multiplies the loss)
RISE = 1.25


NOT_WRITTEN = (
    "the function returned None: its body is not written yet (a `pass`), or it computes "
    "the result without a `return`"
)


def first(actual: Any, expected: Any, *diagnostics: Diagnostic) -> str:
    """The text of the first diagnostic that confirms a cause, or "" if none does.
    `returned_none` is always tried first."""
    found = find(actual, expected, *diagnostics)
    return found.text if found is not None else ""


def find(actual: Any, expected: Any, *diagnostics: Diagnostic) -> Cause | None:
    for diagnostic in (returned_none, swapped_outputs, *diagnostics):
        try:
            found = diagnostic(actual, expected)
        except (TypeError, ValueError, IndexError, KeyError):  # values of another shape or kind
            found = None
        if found is not None:
            return found
    return None


# -- helpers -----------------------------------------------------------------------------


def ratio(actual: Any, expected: Any) -> float | None:
    """The one factor every value of `actual` is of `expected` (over the elements whose
    expected value is not ~0, at least one of them), or None when there is no such factor."""
    pair = _pairs(actual, expected)
    if pair is None:
        return None
    a, e = pair
    if not (np.isfinite(a).all() and np.isfinite(e).all()):
        return None
    scale = np.abs(e).max(initial=0.0)
    big = np.abs(e) > 1e-3 * scale
    if scale == 0.0 or not big.any():
        return None
    factor = float(np.median(a[big] / e[big]))
    # every element, the small ones included, must fit the factor
    if not np.allclose(a, factor * e, rtol=RTOL, atol=ATOL + RTOL * abs(factor) * scale):
        return None
    return factor


def _is(factor: float | None, want: float) -> bool:
    return factor is not None and bool(np.isclose(factor, want, rtol=RTOL, atol=0.0))


# causes seen in the result's structure itself, on any one input: every other cause is a
# guess about the computation, named only when it is confirmed on two inputs of different sizes
ON_ONE_INPUT = frozenset({"none"})
# the failing inputs held to a cause (each must confirm it)
CHECKED = 60


def across(
    smallest: Input,
    others: Iterable[Input],
    diagnostics: Callable[[Any], Sequence[Diagnostic]],
    more: Callable[[], Iterable[Input]] | None = None,
    names: Sequence[str] = (),
    reference: Callable[..., Any] | None = None,
) -> str:
    """The cause the diagnostics confirm on the `smallest` failing input, or "". Unless its
    kind is in ON_ONE_INPUT, the cause is named only if the same mistake, applied to the
    reference, reproduces the student's result on EVERY one of `others` (the other failing
    inputs, up to CHECKED of them), one of which at least has other argument shapes; when
    `others` holds no input of other shapes, the inputs `more()` gives are held to the same
    rule. A mistake the student made reproduces on every input where it shows; a look-alike
    only where the inputs happen not to tell them apart (x[index] * value is x[index] where
    x[index] is 0 or value is 1, a dropped update elsewhere too).

    Where several mistakes give the smallest input's result (params + lr * grads and
    grads - lr * params agree when params is 0 and lr 1), each is held to the other inputs,
    and a cause is named only when exactly one of them holds on all. Where none of them is
    confirmed, the built-in `factor` is held to the same inputs (`names`: the arguments'
    names, for its text), and after it the `general` mistakes any function can make (with
    the `reference`, the right function of the arguments, those in how the arguments are
    used as well), then the reference's own mutants (`ref_mutants`: its source with one
    small edit each), and last the reference on transformed inputs or its output
    transformed (`transformed`)."""
    held = list(others)
    extra: list[Input] | None = None

    def more_inputs() -> list[Input]:
        nonlocal extra
        if extra is None:
            extra = list(more()) if more is not None else []
        return extra

    found = _tier(smallest, held, diagnostics, more_inputs)
    if found is not None:
        return found
    text = factor(smallest, held, more_inputs if more is not None else None, names)
    if text:
        return text
    found = _tier(smallest, held, general(names, reference), more_inputs)
    if found is not None or reference is None:
        return found or ""
    budget = ref_mutants.Budget()
    found = _tier(smallest, held, _mutated(reference, budget), more_inputs)
    if budget.refused or found is not None:  # over its time: a text may stand alone
        return "" if budget.refused else found or ""
    return transformed_named(smallest, held, reference, names, more_inputs)


def transformed_named(
    smallest: Input,
    held: list[Input],
    reference: Callable[..., Any],
    names: Sequence[str],
    more: Callable[[], list[Input]],
) -> str:
    """The last tier, the reference on transformed inputs or its output transformed
    (`transformed`): the one text it confirms on `smallest` and the other failing inputs, or
    "" (none holds, two hold, or its time ran out)."""
    budget = ref_mutants.Budget(transformed.BUDGET_S)
    found = _tier(smallest, held, transformed.offered(reference, names, budget), more)
    return "" if budget.refused else found or ""


def _tier(
    smallest: Input,
    held: list[Input],
    diagnostics: Callable[[Any], Sequence[Diagnostic]],
    more: Callable[[], list[Input]],
) -> str | None:
    """`across`'s rule for one set of diagnostics: the text of the one cause confirmed, ""
    when two are (no cause may be named), None when none is (the next set is tried)."""
    args, actual, expected = smallest
    candidates = _candidates(actual, expected, diagnostics(args))
    if not candidates:
        return None
    if candidates[0].kind in ON_ONE_INPUT:
        return candidates[0].text
    sizes = _shapes(args)
    named = []
    for found in candidates:
        verdict = _holds(found.kind, sizes, held, diagnostics)
        if verdict is None:
            verdict = _holds(found.kind, sizes, more(), diagnostics)
        if verdict:
            named.append(found)
    if named:  # two confirmed mistakes (two texts: one mistake may be found twice): no cause
        return named[0].text if len({found.text for found in named}) == 1 else ""
    return None


def _candidates(actual: Any, expected: Any, diagnostics: Sequence[Diagnostic]) -> list[Cause]:
    """Every cause (one per kind, in `find`'s order) that a diagnostic confirms on these values."""
    found: dict[str, Cause] = {}
    for diagnostic in (returned_none, swapped_outputs, *diagnostics):
        try:
            cause = diagnostic(actual, expected)
        except (TypeError, ValueError, IndexError, KeyError):  # values of another shape or kind
            cause = None
        if cause is not None and cause.kind not in found:
            found[cause.kind] = cause
    return list(found.values())


def _holds(
    kind: str,
    sizes: tuple[tuple[int, ...], ...],
    inputs: Iterable[Input],
    diagnostics: Callable[[Any], Sequence[Diagnostic]],
) -> bool | None:
    """False if one of `inputs` (the first CHECKED) does not confirm `kind`; else True if one
    of them has argument shapes other than `sizes`, None if none has."""
    other_size = False
    for count, (other_args, other_actual, other_expected) in enumerate(inputs):
        if count >= CHECKED:
            break
        if _same_values(other_actual, other_expected):
            continue  # an input on which the student's result is right: nothing to reproduce
        verdict = _confirms(kind, other_actual, other_expected, diagnostics(other_args))
        if verdict is None:
            continue  # this input cannot tell: it neither confirms nor contradicts
        if not verdict:
            return False
        other_size = other_size or _shapes(other_args) != sizes
    return True if other_size else None


def _confirms(
    kind: str, actual: Any, expected: Any, diagnostics: Sequence[Diagnostic]
) -> bool | None:
    """Some diagnostic, not only the first that matches, confirms `kind` on these values:
    on another input two mistakes can give the same numbers (1/10 is a class mean and, on 10
    rows, a batch divided by twice). None when no diagnostic offered for this input can
    confirm `kind` (a `matches` the suite left out where the input cannot tell)."""
    offered = [d for d in diagnostics if kind in getattr(d, "kinds", (kind,))]
    if not offered and kind not in ("none", "order"):
        return None
    for diagnostic in (returned_none, swapped_outputs, *offered):
        try:
            found = diagnostic(actual, expected)
        except (TypeError, ValueError, IndexError, KeyError):
            found = None
        if found is not None and found.kind == kind:
            return True
    return False


def confirmed(
    inputs: Sequence[Input],
    diagnostics: Callable[[Any], Sequence[Diagnostic]],
    names: Sequence[str] = (),
    reference: Callable[..., Any] | None = None,
) -> str:
    """`across` for a check that runs a few fixed inputs itself: the cause the first input
    with a wrong result confirms, named only when every other wrong result confirms it too
    and one of them comes from an input of another size (inputs whose result is right are
    passed over). `names` are the arguments' names ("w", "x", "y"), for the factor's text."""
    wrong = [one for one in inputs if not _same_values(one[1], one[2])]
    if not wrong:
        return ""
    return across(wrong[0], wrong[1:], diagnostics, names=names, reference=reference)


# -- the built-in factor cause ---------------------------------------------------------------
#
# Where no diagnostic the suite offers is confirmed, `across` holds one more guess to the same
# rule: every value of the smallest failing input is c times the expected, and c is either the
# same on every failing input tried (a constant factor) or the same function of one argument
# size on every one of them (1/d: a mean over an axis of size d where a sum belongs). Sizes
# that are equal on every input tried (x's columns and w's length) are one size, named by
# every place it shows; two different sizes or functions that fit alike name nothing.

# a factor this close to 1 is no factor (the values only differ by rounding), nor one this small
NEAR_ONE, TINY = 1e-3, 1e-6


@dataclass(frozen=True)
class _Place:
    """One axis of one argument: `argument` as the student knows it ("x", "params['w']", or
    "the first argument" where the names are not known), with its number of axes."""

    argument: str
    axis: int
    ndim: int

    @property
    def noun(self) -> str:
        """ "rows", "columns", "entries" (of a vector) or "entries along axis 2"."""
        if self.ndim == 1:
            return "entries"
        if self.ndim == 2:
            return ("rows", "columns")[self.axis]
        return f"entries along axis {self.axis}"


@dataclass(frozen=True)
class _Size:
    """A size that is the same on every input tried at each of `places` (the argument of
    most axes first), with its value on each input (the smallest failing input first)."""

    places: tuple[_Place, ...]
    values: tuple[int, ...]

    @property
    def place(self) -> _Place:
        return self.places[0]

    def _same_argument(self) -> list[_Place]:
        """The other axes of the first place's argument that have this size everywhere: the
        inputs cannot tell which of them a mistake runs over (a square x)."""
        return [p for p in self.places[1:] if p.argument == self.place.argument]

    def nouns(self) -> str:
        """ "rows" or, where x is square on every input, "rows or columns"."""
        return " or ".join([self.place.noun, *(p.noun for p in self._same_argument())])

    def over(self, before: _Size | None = None) -> str:
        """ "the columns of x" ("its columns" after a size of the same argument)."""
        if before is not None and before.place.argument == self.place.argument:
            return f"its {self.nouns()}"
        return f"the {self.nouns()} of {self.place.argument}"

    def clause(self, symbol: str, value: int, before: _Size | None = None) -> str:
        """ "d = 3 columns of x", "d = 2 of its columns" after a size of x, or "d = 3 rows of
        x (as many as its columns)" where x is square on every input."""
        if before is not None and before.place.argument == self.place.argument:
            text = f"{symbol} = {value} of its {self.place.noun}"
        else:
            text = f"{symbol} = {value} {self.place.noun} of {self.place.argument}"
        alike = self._same_argument()
        if alike:
            text += f" (as many as its {' and '.join(p.noun for p in alike)})"
        return text


def factor(
    smallest: Input,
    others: Iterable[Input],
    more: Callable[[], Iterable[Input]] | None = None,
    names: Sequence[str] = (),
) -> str:
    """The built-in factor cause, or "": every value of the smallest failing input is c times
    the expected, and on every other failing input (up to CHECKED of them, one at least of
    other argument shapes, from `more()` when `others` has none) c is the same constant, or
    the same function (d, 1/d, sqrt(d), 1/sqrt(d), n * m, 1 / (n * m), n / d) of the same
    argument sizes, sizes that differ between the inputs. A factor that fits more than one
    reading names nothing, except a constant that is also one size fixed on every input tried:
    both readings are then named together. `names` are the arguments' names, for the text
    ("n = 3 rows of x"); without them an argument is "the first argument"."""
    try:
        return _factor(smallest, others, more, names)
    except (TypeError, ValueError, IndexError, KeyError):  # values of another shape or kind
        return ""


def _factor(
    smallest: Input,
    others: Iterable[Input],
    more: Callable[[], Iterable[Input]] | None,
    names: Sequence[str],
) -> str:
    args, actual, expected = smallest
    first_factor = ratio(actual, expected)
    if first_factor is None or not np.isfinite(first_factor):
        return ""
    if abs(first_factor) < TINY or np.isclose(first_factor, 1.0, rtol=NEAR_ONE, atol=0.0):
        return ""
    sizes = _shapes(args)
    wrong = [one for one in list(others)[:CHECKED] if not _same_values(one[1], one[2])]
    if all(_shapes(one[0]) == sizes for one in wrong) and more is not None:
        wrong += [one for one in list(more())[:CHECKED] if not _same_values(one[1], one[2])]
    if all(_shapes(one[0]) == sizes for one in wrong):
        return ""  # no input of other shapes: one size cannot confirm a factor
    factors = [first_factor]
    for _, other_actual, other_expected in wrong:
        found = ratio(other_actual, other_expected)
        if found is None:
            return ""  # a failing input whose values are no multiple of the expected
        factors.append(found)
    inputs = [args, *(one[0] for one in wrong)]
    readings = _size_readings(factors, _sizes(inputs, names))
    constant = all(_is(f, first_factor) for f in factors)
    if constant and not readings:
        return _constant_text(first_factor)
    if len(readings) != 1:
        return ""  # no reading, or several that fit alike
    if constant:
        return _constant_or_size_text(first_factor, readings[0])
    return readings[0].text


def _sizes(inputs: Sequence[Any], names: Sequence[str]) -> list[_Size]:
    """The argument sizes of `inputs` (each an argument tuple), places with the same size on
    every input merged into one; sizes that are 0 anywhere or 1 everywhere are left out."""
    columns: dict[tuple[int, ...], list[tuple[int, int, _Place]]] = {}
    paths = None
    per_input = []
    for args in inputs:
        flat = dict(
            (jax.tree_util.keystr(path), np.shape(leaf))
            for path, leaf in jax.tree_util.tree_flatten_with_path(args)[0]
        )
        per_input.append(flat)
        paths = [p for p in (paths if paths is not None else flat) if p in flat]
    first_args = inputs[0]
    for order, path in enumerate(paths or []):
        shapes = [flat[path] for flat in per_input]
        if any(len(s) != len(shapes[0]) for s in shapes):
            continue
        for axis in range(len(shapes[0])):
            values = tuple(int(s[axis]) for s in shapes)
            if 0 in values or set(values) == {1}:
                continue
            place = _Place(_argument(path, first_args, names), axis, len(shapes[0]))
            columns.setdefault(values, []).append((-len(shapes[0]), order, place))
    # a size is named where it shows on the argument of most axes (x's columns before w's
    # length): the place an axis is reduced over
    return [
        _Size(tuple(place for _, _, place in sorted(places, key=lambda p: p[:2])), values)
        for values, places in columns.items()
    ]


@dataclass(frozen=True)
class _Reading:
    """A function of one or two sizes that gives every factor: the values are `times`
    (e.g. "1/d of the expected"), `where` says what the sizes are, `cause` what gives it."""

    times: str
    where: str
    cause: str

    @property
    def text(self) -> str:
        return f"every value is {self.times} {self.where}: {self.cause}"


def _where(*named: tuple[_Size, str]) -> str:
    """ "(d = 3 columns of x here, 5 on another input)" or, for two sizes, "(n = 3 rows of x,
    d = 2 of its columns here; 5 and 1 on another input)": one clause per size, their values
    on the smallest failing input and on one other input where they differ."""
    first = tuple(size.values[0] for size, _ in named)
    clauses = []
    before = None
    for size, symbol in named:
        clauses.append(size.clause(symbol, size.values[0], before))
        before = size
    said = ", ".join(clauses)
    for k in range(1, len(named[0][0].values)):
        other = tuple(size.values[k] for size, _ in named)
        if other != first:
            return f"({said} here; {' and '.join(str(v) for v in other)} on another input)"
    return f"({said} on every input tried)"


def _size_readings(factors: Sequence[float], sizes: Sequence[_Size]) -> list[_Reading]:
    """Each function of one size, or of two, that gives every factor."""
    found = []
    for size in sizes:
        for name, fn in _ONE_SIZE:
            if _fits(factors, [fn(v) for v in size.values]):
                times, cause = _ONE_SIZE_TEXT[name]
                found.append(_Reading(times, _where((size, "d")), cause(size)))
    for i, one in enumerate(sizes):
        for j, two in enumerate(sizes):
            if i == j:
                continue
            products = [float(a * b) for a, b in zip(one.values, two.values, strict=True)]
            both = _where((one, "n"), (two, "m"))
            if i < j and _fits(factors, products):
                found.append(
                    _Reading(
                        "n * m times the expected",
                        both,
                        f"summed over {one.over()} and {two.over(one)} where their mean belongs",
                    )
                )
            if i < j and _fits(factors, [1.0 / p for p in products]):
                found.append(
                    _Reading(
                        "1/(n * m) of the expected",
                        both,
                        f"a mean over {one.over()} and {two.over(one)} where a sum belongs, "
                        "or a division by n * m that does not belong",
                    )
                )
            if _fits(factors, [a / b for a, b in zip(one.values, two.values, strict=True)]):
                found.append(
                    _Reading(
                        "n/d times the expected",
                        _where((one, "n"), (two, "d")),
                        f"a division by the number of {two.nouns()} of {two.place.argument} "
                        f"where the mean over {one.over(two)} belongs",
                    )
                )
    return found


def _fits(factors: Sequence[float], wanted: Sequence[float]) -> bool:
    return all(_is(f, w) for f, w in zip(factors, wanted, strict=True))


_ONE_SIZE: tuple[tuple[str, Callable[[int], float]], ...] = (
    ("d", float),
    ("1/d", lambda d: 1.0 / d),
    ("sqrt(d)", lambda d: float(np.sqrt(d))),
    ("1/sqrt(d)", lambda d: 1.0 / float(np.sqrt(d))),
)

_ONE_SIZE_TEXT: dict[str, tuple[str, Callable[[_Size], str]]] = {
    "d": (
        "d times the expected",
        lambda size: f"summed over {size.over()} where their mean belongs (not divided by d)",
    ),
    "1/d": (
        "1/d of the expected",
        lambda size: (
            f"a mean over {size.over()} where a sum belongs, or a division by d "
            "that does not belong"
        ),
    ),
    "sqrt(d)": (
        "sqrt(d) times the expected",
        lambda size: "divided by sqrt(d) where the division is by d, or a factor sqrt(d) too many",
    ),
    "1/sqrt(d)": (
        "1/sqrt(d) of the expected",
        lambda size: (
            "divided by d where the division is by sqrt(d) (a square root missing "
            "around a division by d), or a division by sqrt(d) that does not belong"
        ),
    ),
}


def _times(value: float) -> str:
    """ "1/3 of the expected", "0.5 times the expected", "128 times the expected"."""
    k = round(1.0 / value)
    if k not in (0, 1, -1) and abs(k) < 10_000 and _is(1.0 / value, float(k)):
        return f"1/{k} of the expected"
    k = round(value)
    if k != 0 and abs(k) < 10_000 and _is(value, float(k)):
        return f"{k} times the expected"
    return f"{value:.6g} times the expected"


def _constant_text(value: float) -> str:
    if _is(value, -1.0):
        return (
            "every value is minus the expected one, on inputs of every size tried: a sign is "
            "flipped"
        )
    return (
        f"every value is {_times(value)}, on inputs of every size tried: a constant factor "
        "(e.g. a stray 0.5 or 2) in the computation"
    )


def _constant_or_size_text(value: float, reading: _Reading) -> str:
    """A constant factor that one size, the same on every input tried, also gives."""
    return (
        f"every value is {_times(value)} on every input tried {reading.where}: "
        f"{reading.cause}; or a constant factor (e.g. a stray 0.5 or 2) in the computation"
    )


def _shapes(args: Any) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(np.shape(leaf)) for leaf in jax.tree.leaves(args))


def _same_layout(actual: Any, expected: Any) -> bool:
    """Same tree structure, and every leaf of the same shape and dtype kind."""
    if jax.tree.structure(actual) != jax.tree.structure(expected):  # type: ignore[operator]
        return False
    for a_leaf, e_leaf in zip(jax.tree.leaves(actual), jax.tree.leaves(expected), strict=True):
        a, e = np.asarray(a_leaf), np.asarray(e_leaf)
        if a.shape != e.shape or (a.dtype.kind == "b") != (e.dtype.kind == "b"):
            return False
    return True


def _same_values(actual: Any, expected: Any) -> bool:
    pair = _pairs(actual, expected)
    return pair is not None and _close(*pair)


def swapped_outputs(actual: Any, expected: Any) -> Cause | None:
    """A tuple or list of outputs of the expected length that is the reference's once two of
    its outputs trade places: by layout (shapes, dtypes) where the given order does not fit
    the reference's, or by value where the layouts cannot tell the outputs apart; or a dict
    of the expected keys whose values under two keys trade places."""
    if isinstance(actual, dict) and isinstance(expected, dict):
        try:
            return _swapped_values(actual, expected)
        except (TypeError, ValueError):
            return None
    if not (isinstance(actual, tuple | list) and isinstance(expected, tuple | list)):
        return None
    n = len(expected)
    if len(actual) != n or n < 2 or n > 8:
        return None
    try:
        return _swap_of(list(actual), list(expected))
    except (TypeError, ValueError):  # leaves that are not arrays: no order to tell
        return None


def _swap_of(actual: list[Any], expected: list[Any]) -> Cause | None:
    pair = _swapped_pair(actual, expected)
    if pair is None:
        return None
    i, j = pair
    return Cause(
        "order",
        f"the outputs are in the wrong order: output {i} holds what belongs at {j} and "
        f"output {j} what belongs at {i} (return them in the order the spec gives)",
    )


def _swapped_pair(actual: list[Any], expected: list[Any]) -> tuple[int, int] | None:
    """(i, j): `actual` is `expected` once its items i and j trade places, by layout where
    the given order does not fit the expected one, or by value where the layouts are alike."""
    n = len(expected)
    in_order = _same_layout(tuple(actual), tuple(expected))
    for i in range(n):
        for j in range(i + 1, n):
            swapped = list(actual)
            swapped[i], swapped[j] = swapped[j], swapped[i]
            if not _same_layout(tuple(swapped), tuple(expected)):
                continue
            by_layout = not in_order
            by_value = _same_values(tuple(swapped), tuple(expected)) and not _same_values(
                tuple(actual), tuple(expected)
            )
            if by_layout or by_value:
                return i, j
    return None


def _swapped_values(actual: dict[Any, Any], expected: dict[Any, Any]) -> Cause | None:
    """A dict of the expected keys whose values under two keys trade places."""
    keys = list(expected)
    if set(actual) != set(keys) or not 2 <= len(keys) <= 12:
        return None
    pair = _swapped_pair([actual[k] for k in keys], [expected[k] for k in keys])
    if pair is None:
        return None
    a, b = keys[pair[0]], keys[pair[1]]
    return Cause(
        "order",
        f"the values under {a!r} and {b!r} are in each other's place: each key holds what "
        "belongs under the other",
    )


def extra_outputs(actual: Any, expected: Any) -> str:
    """A tuple or list returned where one result (not a tuple of that length) is expected,
    an element of which is the expected result, its layout and values: the other outputs do
    not belong (several such elements: which one is not told); or ""."""
    if not isinstance(actual, tuple | list) or len(actual) < 2:
        return ""
    if isinstance(expected, tuple | list) and len(expected) == len(actual):
        return ""
    try:
        hits = [
            i
            for i, piece in enumerate(actual)
            if _same_layout(piece, expected) and _same_values(piece, expected)
        ]
    except (TypeError, ValueError):
        return ""
    if not hits:
        return ""
    n, container = len(actual), type(actual).__name__
    shown = f"a {container} of {n} outputs was returned where one result is expected"
    if len(hits) > 1:  # equal on this input (a = 1: sqrt(a) = a): which one belongs is not told
        listed = ", ".join(map(str, hits[:-1])) + f" and {hits[-1]}"
        return (
            f"{shown}: outputs {listed} of it each equal the expected result on this input; "
            f"return the one result, not a {container}"
        )
    others = "the other outputs do not" if n > 2 else "the other output does not"
    return f"{shown}: output {hits[0]} of it is the expected result, and {others} belong (return that one alone)"


def missing_outputs(actual: Any, expected: Any) -> str:
    """One result returned where a tuple or list of outputs is expected, and that result is
    one of the expected outputs, its layout and values (the others not returned); several
    such outputs: which one is not told; or ""."""
    if actual is None or isinstance(actual, tuple | list | dict):
        return ""
    if not isinstance(expected, tuple | list) or len(expected) < 2:
        return ""
    try:
        hits = [
            i
            for i, piece in enumerate(expected)
            if _same_layout(actual, piece) and _same_values(actual, piece)
        ]
    except (TypeError, ValueError):
        return ""
    if not hits:
        return ""
    n, container = len(expected), type(expected).__name__
    shown = f"one result was returned where a {container} of {n} outputs is expected"
    if len(hits) > 1:
        listed = ", ".join(map(str, hits[:-1])) + f" and {hits[-1]}"
        return f"{shown}: it equals outputs {listed} of it on this input; return all {n}"
    others = "the other outputs are" if n > 2 else "the other output is"
    return (
        f"{shown}: it is output {hits[0]} of that {container} (counting from 0), and {others} "
        f"not returned"
    )


def arity_cause(actual: Any, expected: Any) -> str:
    """A tuple or list of outputs whose length is not the reference's, or ""."""
    both = isinstance(actual, tuple | list) and isinstance(expected, tuple | list)
    if both and len(actual) != len(expected):
        gap = abs(len(actual) - len(expected))
        outputs = "output" if gap == 1 else "outputs"
        which = "missing from" if len(actual) < len(expected) else "too many in"
        return (
            f"{len(actual)} outputs returned where {len(expected)} are expected: {gap} "
            f"{outputs} {which} the returned tuple"
        )
    return ""


def end_cause(actual: Any, expected: Any) -> str:
    """An array one element short or long along its first axis whose values are the
    expected's without its first or last element, or with one more at either end (the rest
    equal): which end, or "". A single element more or fewer with nothing else to compare
    (lengths 1 and 2) tells nothing."""
    try:
        a, e = np.asarray(actual), np.asarray(expected)
    except (TypeError, ValueError):
        return ""
    if a.ndim != e.ndim or a.ndim == 0 or a.shape[1:] != e.shape[1:]:
        return ""
    if a.dtype.kind not in "fiub" or e.dtype.kind not in "fiub":
        return ""
    short, long_ = (a, e) if a.shape[0] < e.shape[0] else (e, a)
    if long_.shape[0] - short.shape[0] != 1 or short.shape[0] < 2:
        return ""
    first = _close(short.astype(np.float64), long_[1:].astype(np.float64))
    last = _close(short.astype(np.float64), long_[:-1].astype(np.float64))
    if first == last:  # neither, or both (a constant array): which end is not told
        return ""
    n, m = a.shape[0], e.shape[0]
    shown = f"{n} elements along the first axis where {m} are expected"
    if a.shape[0] < e.shape[0]:
        end = "first" if first else "last"
        return (
            f"{shown}: the values are the expected without its {end} element (a loop, scan or "
            f"slice that {'starts one step late' if first else 'stops one step early'})"
        )
    end = "before the first" if first else "after the last"
    return (
        f"{shown}: the values are the expected with one element more {end} (a loop, scan or "
        f"slice that {'starts one step early' if first else 'runs one step too far'})"
    )


def unit_axis(actual: tuple[int, ...], expected: tuple[int | None, ...]) -> str:
    """ ", of length 1, at position p (...)" where `actual` is `expected` with one more axis of
    length 1 (at one place only), else ""."""
    places = [
        p
        for p in range(len(actual))
        if actual[p] == 1
        and all(
            w is None or w == g for w, g in zip(expected, actual[:p] + actual[p + 1 :], strict=True)
        )
    ]
    if len(places) != 1 or len(actual) != len(expected) + 1:
        return ""
    return (
        f", of length 1, at position {places[0]} (what a reduction with keepdims=True, an "
        "indexing with None, or a (n, 1) operand in a product leaves)"
    )


def shape_cause(actual: tuple[int, ...], expected: tuple[int, ...]) -> str:
    """What two differing shapes themselves show, both named; nothing guessed beyond them."""
    shown = f"shape {tuple(actual)} where {tuple(expected)} is expected"
    if len(expected) == 1 and tuple(actual) == (expected[0], expected[0]) and expected[0] > 1:
        b = expected[0]
        return (
            f"{shown}: a ({b}, {b}) result is what broadcasting gives when a ({b}, 1) array "
            f"meets a ({b},) one (e.g. predictions of shape ({b}, 1) minus targets of shape "
            f"({b},)); make both operands the same shape"
        )
    if len(actual) == len(expected) + 1:
        return f"{shown}: one axis too many{unit_axis(tuple(actual), tuple(expected))}"
    if len(actual) + 1 == len(expected):
        return f"{shown}: one axis too few"
    if int(np.prod(actual)) == int(np.prod(expected)):
        return (
            f"{shown}: the same number of elements in another layout (an axis order or a reshape)"
        )
    return shown


# -- the diagnostics -------------------------------------------------------------------------


def returned_none(actual: Any, expected: Any = None) -> Cause | None:
    if actual is None and expected is not None:
        return Cause("none", NOT_WRITTEN)
    return None


def sample_std(n: int) -> Diagnostic:
    """Values sqrt(n / (n - 1)) or sqrt((n - 1) / n) times the expected: the standard
    deviation divides by n - 1 (`ddof=1`, NumPy's and JAX's default is 0). The first is a
    std itself, the second something divided by it."""

    def diagnostic(actual: Any, expected: Any) -> Cause | None:
        if n < 2:
            return None
        factor = ratio(actual, expected)
        up = np.sqrt(n / (n - 1))
        if _is(factor, up) or _is(factor, 1.0 / up):
            return Cause(
                "ddof",
                f"every value is {factor:.6g} x the expected, sqrt({n}/{n - 1}) "
                f"{'' if _is(factor, up) else 'inverted '}for {n} values: the standard "
                "deviation divides by n - 1 (a sample std, `ddof=1`) instead of by n "
                "(`jnp.std`'s default, ddof=0)",
            )
        return None

    return diagnostic


def batch_scale(b: int, *, what: str = "the batch") -> Diagnostic:
    """Values b or 1 / b times the expected: summed over `what` instead of averaged, or
    divided by its size once too often."""

    def diagnostic(actual: Any, expected: Any) -> Cause | None:
        if b < 2:
            return None
        factor = ratio(actual, expected)
        if _is(factor, float(b)):
            return Cause(
                "batch_sum",
                f"every value is {b} x the expected, the size of {what} ({b}): summed over "
                f"{what} where the mean is wanted (not divided by {b})",
            )
        if _is(factor, 1.0 / b):
            return Cause(
                "batch_mean",
                f"every value is 1/{b} of the expected, {b} the size of {what}: divided by "
                f"{b} once too often (a mean taken where none belongs, or taken twice)",
            )
        return None

    return diagnostic


def negated(actual: Any, expected: Any) -> Cause | None:
    if _is(ratio(actual, expected), -1.0):
        return Cause("sign", "every value is minus the expected one: a sign is flipped")
    return None


def update_sign(before: Any) -> Diagnostic:
    """The step actual - before is minus the expected step expected - before: the update
    was subtracted where it is added (or added where subtracted)."""

    def diagnostic(actual: Any, expected: Any) -> Cause | None:
        moved = jax.tree.map(lambda a, p: np.asarray(a, np.float64) - np.asarray(p), actual, before)
        wanted = jax.tree.map(
            lambda e, p: np.asarray(e, np.float64) - np.asarray(p), expected, before
        )
        if _is(ratio(moved, wanted), -1.0):
            return Cause(
                "update_sign",
                "the parameters moved by exactly minus the expected step: the update has the "
                "wrong sign (optax's updates already point downhill, so they are added: "
                "`optax.apply_updates(params, updates)`, or `params - lr * grads` by hand)",
            )
        return None

    return diagnostic


def transposed(actual: Any, expected: Any) -> Cause | None:
    a, e = np.asarray(actual), np.asarray(expected)
    if a.ndim != 2 or e.ndim != 2 or a.shape != e.shape[::-1]:
        return None
    if a.shape == e.shape and _close(a, e):
        return None
    if _close(a, e.T):
        return Cause(
            "transposed",
            f"the result is the expected {e.shape[0]}x{e.shape[1]} matrix transposed: "
            "the two axes (or the two arguments) are swapped",
        )
    return None


def other_axis(reference: Callable[[int], Any], axis: int, ndim: int) -> Diagnostic:
    """`reference(a)` is the right result along axis `a`: the values match it for another
    axis than `axis`."""

    def diagnostic(actual: Any, expected: Any) -> Cause | None:
        for other in range(ndim):
            if other == axis:
                continue
            alternative = np.asarray(reference(other))
            if np.shape(actual) == alternative.shape and _close(actual, alternative):
                return Cause(
                    "axis",
                    f"the values are those along axis {other}: the computation runs along "
                    f"axis {other} where axis {axis} is wanted",
                )
        return None

    return diagnostic


def shifted(actual: Any, expected: Any) -> Cause | None:
    """Along the first axis, element i holds what belongs at i - 1 or at i + 1."""
    a, e = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    if a.shape != e.shape or a.ndim == 0 or a.shape[0] < 3 or _close(a, e):
        return None
    if _close(a[1:], e[:-1]):
        return Cause(
            "shift",
            "the values are shifted one place later: element i holds the expected element "
            "i - 1 (an off-by-one: an exclusive sum, or a value recorded before it is updated)",
        )
    if _close(a[:-1], e[1:]):
        return Cause(
            "shift",
            "the values are shifted one place earlier: element i holds the expected element "
            "i + 1 (an off-by-one in an index or a loop bound)",
        )
    return None


def skipped_first_step(actual: Any, expected: Any) -> Cause | None:
    """Per-step records (the step on the first axis) whose step 0 holds zeros and whose step
    i holds what step i - 1 should record: the loop never ran step 0 (it starts at 1 and
    step 0's entry is left at its initial 0.0), so every step comes one entry late."""
    a, e = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    if a.shape != e.shape or a.ndim == 0 or a.shape[0] < 2 or _close(a, e):
        return None
    if np.all(a[0] == 0.0) and not np.all(e[0] == 0.0) and _close(a[1:], e[:-1]):
        return Cause(
            "step0",
            "step 0 was not run: its entry is 0.0 and each later entry is what the step "
            "before it records (the loop starts at step 1, and step 0's entry keeps the 0.0 "
            "the list was filled with)",
        )
    return None


def loss_rises(losses: Sequence[float], *, window: int = 3) -> Cause | None:
    """The mean of the last `window` losses is RISE times the mean of the first `window` or
    more, and most steps went up: training climbs the loss, so the update has the wrong
    sign. A loss that only wanders (noise of the batches) confirms nothing."""
    values = np.asarray(list(losses), np.float64)
    if values.size < 2 or not np.isfinite(values).all():
        return None
    window = max(1, min(window, values.size // 2))
    start, end = values[:window].mean(), values[-window:].mean()
    ups = int(np.sum(np.diff(values) > 0))
    if start > 0 and end > RISE * start and ups * 2 > values.size - 1:
        return Cause(
            "loss_rises",
            f"the loss rose from {values[0]:.4g} to {values[-1]:.4g} ({ups} of "
            f"{values.size - 1} steps went up): the update climbs the loss, so its sign is "
            "wrong (params + lr * grads, or optax's updates subtracted from the params)",
        )
    return None


# -- the general tier --------------------------------------------------------------------------
#
# Where neither the suite's diagnostics nor the built-in factor confirm a cause, `across` holds
# mistakes any function can make to the same rule (every failing input tried, two argument
# sizes among them): one of the arguments returned unchanged or missing from the result, or
# the expected with its negative values cut to 0. Each says what the values are, then what commonly gives them.


def general(
    names: Sequence[str] = (), reference: Callable[..., Any] | None = None
) -> Callable[[Any], Sequence[Diagnostic]]:
    """The general tier's diagnostics for one input's arguments (`names`: their names, for
    the text; "the first argument" where they are not known). With the `reference` (the
    right function, called with the arguments), the mistakes in how the arguments are used
    are held too: two of them in each other's place, one left at its default, or a whole
    number one off."""

    def offered(args: Any) -> Sequence[Diagnostic]:
        # one `matches` per argument, so that where two arguments are equal on the smallest
        # input (both zeros) each is a candidate for `across` to hold
        arguments = _array_arguments(args, names)
        kept = [matches(v, _KEPT.format(name=name), f"kept{i}") for i, name, v in arguments]
        without = [
            _Without(v, _WITHOUT.format(name=name), f"without{i}") for i, name, v in arguments
        ]
        used = _argument_mistakes(reference, args, names) if reference is not None else []
        return (
            *kept,
            *without,
            *used,
            cut_at_zero,
            absolute,
            squared,
            square_root,
            reversed_order,
            log_softmax_applied,
            softmax_applied,
        )

    return offered


_KEPT = (
    "the result is {name} itself, unchanged: what is computed from it is never used (a JAX "
    "array is immutable: `.at[...]` updates and jnp functions return a new array, which must "
    "be assigned or returned)"
)


_WITHOUT = (
    "every value is the expected minus {name}: {name} itself never enters the result (an "
    "update or sum that starts from zeros where it starts from {name}, or {name} left out "
    "of a sum)"
)


class _Without:
    """The values plus one argument (an array of the result's shape, not all zeros) are the
    expected: that argument is missing from the result."""

    def __init__(self, argument: Any, text: str, kind: str) -> None:
        self.argument, self.text, self.kinds = argument, text, frozenset({kind})

    def __call__(self, actual: Any, expected: Any) -> Cause | None:
        pair = _pairs(actual, expected)
        if pair is None:
            return None
        a, e = pair
        term = np.ravel(self.argument)
        if term.shape != a.shape or _close(term, np.zeros_like(term)):
            return None
        if not np.isfinite(a).all() or _close(a, e) or not _close(a + term, e):
            return None
        return Cause(next(iter(self.kinds)), self.text)


def _array_arguments(args: Any, names: Sequence[str]) -> list[tuple[int, str, Any]]:
    """(index, name, values as float64) of each argument that is one numeric array of two
    values or more."""
    if not isinstance(args, tuple | list):
        return []
    found = []
    for i, arg in enumerate(args):
        if not isinstance(arg, np.ndarray | jax.Array | np.generic):
            continue
        values = np.asarray(arg)
        if values.dtype.kind not in "fiu" or values.size < 2:
            continue
        found.append((i, _argument(f"[{i}]", args, names), values.astype(np.float64)))
    return found


def _finite_pair(actual: Any, expected: Any) -> tuple[Any, Any] | None:
    """Both flattened (`_pairs`: one structure, one shape per leaf), finite, the student's
    wrong; else None."""
    pair = _pairs(actual, expected)
    if pair is None or _close(*pair):
        return None
    a, e = pair
    if not (np.isfinite(a).all() and np.isfinite(e).all()):
        return None
    return a, e


def _elementwise(actual: Any, expected: Any) -> tuple[Any, Any] | None:
    """`_finite_pair`, with at least one negative expected value; else None."""
    pair = _finite_pair(actual, expected)
    if pair is None or not (pair[1] < -RTOL * max(float(np.abs(pair[1]).max()), 1e-30)).any():
        return None
    return pair


def _last_axis_applied(actual: Any, expected: Any, transform: Callable[[Any], Any]) -> bool:
    """The student's values (wrong) are `transform` of the expected, one array with a last
    axis of two or more finite values."""
    pair = _pairs(actual, expected)
    leaves = jax.tree.leaves(expected)
    if pair is None or _close(*pair) or len(leaves) != 1:
        return False
    e = np.asarray(leaves[0], np.float64)
    if e.ndim < 1 or e.shape[-1] < 2 or not np.isfinite(e).all():
        return False
    return _close(pair[0], np.ravel(transform(e)))


def _log_softmax(e: Any) -> Any:
    shifted = e - e.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def log_softmax_applied(actual: Any, expected: Any) -> Cause | None:
    """Every value is log_softmax of the expected along its last axis."""
    if not _last_axis_applied(actual, expected, _log_softmax):
        return None
    return Cause(
        "log_softmax",
        "every value is the log_softmax of the expected along its last axis: log-probabilities "
        "come back where the raw values (logits) are expected (a `jax.nn.log_softmax` at the end)",
    )


def softmax_applied(actual: Any, expected: Any) -> Cause | None:
    """Every value is the softmax of the expected along its last axis."""
    if not _last_axis_applied(actual, expected, lambda e: np.exp(_log_softmax(e))):
        return None
    return Cause(
        "softmax",
        "every value is the softmax of the expected along its last axis: probabilities come "
        "back where the raw values (logits) are expected (a `jax.nn.softmax` at the end)",
    )


def cut_at_zero(actual: Any, expected: Any) -> Cause | None:
    """Every value is max(expected, 0): a ReLU (or a clip at 0) applied to a result that has
    none."""
    pair = _elementwise(actual, expected)
    if pair is None or not _close(pair[0], np.maximum(pair[1], 0.0)):
        return None
    return Cause(
        "relu",
        "every value is the expected with its negative values cut to 0: a ReLU (or a "
        "`max(..., 0)`, a clip at 0) is applied where the result has none",
    )


def absolute(actual: Any, expected: Any) -> Cause | None:
    """Every value is the absolute value of the expected (which has negative values)."""
    pair = _elementwise(actual, expected)
    if pair is None or not _close(pair[0], np.abs(pair[1])):
        return None
    return Cause(
        "abs",
        "every value is the absolute value of the expected: the signs are lost (an `abs`, "
        "a norm, or the square root of a square, where signed values are expected)",
    )


def squared(actual: Any, expected: Any) -> Cause | None:
    """Every value is the square of the expected (some of which are not 0 or 1)."""
    pair = _finite_pair(actual, expected)
    if pair is None or _close(pair[1] ** 2, pair[1]) or not _close(pair[0], pair[1] ** 2):
        return None
    return Cause(
        "squared",
        "every value is the square of the expected: a square root is missing (a norm or a "
        "standard deviation is the square root of a sum or a mean of squares), or a value is "
        "squared where it is not",
    )


def square_root(actual: Any, expected: Any) -> Cause | None:
    """Every value is the square root of the expected (all >= 0, not all 0 or 1)."""
    pair = _finite_pair(actual, expected)
    if pair is None or (pair[1] < 0).any():
        return None
    a, e = pair
    if _close(np.sqrt(e), e) or not _close(a, np.sqrt(e)):
        return None
    return Cause(
        "sqrt",
        "every value is the square root of the expected: a square root is taken where none "
        "belongs (a squared norm, a variance or a mean of squares is wanted), or a `** 2` is "
        "missing",
    )


def reversed_order(actual: Any, expected: Any) -> Cause | None:
    """One array whose first (or last) axis holds the expected's entries in reverse order."""
    leaves, expected_leaves = jax.tree.leaves(actual), jax.tree.leaves(expected)
    if len(leaves) != 1 or len(expected_leaves) != 1:
        return None
    a, e = np.asarray(leaves[0]), np.asarray(expected_leaves[0])
    if a.shape != e.shape or a.ndim == 0 or a.dtype.kind not in "fiub":
        return None
    a, e = a.astype(np.float64), e.astype(np.float64)
    if _close(a, e):
        return None
    for axis in sorted({0, a.ndim - 1}):
        flipped = np.flip(e, axis=axis)
        if e.shape[axis] >= 2 and not _close(flipped, e) and _close(a, flipped):
            where = "" if a.ndim == 1 else f" along axis {axis}"
            return Cause(
                "reversed",
                f"the values are the expected in reverse order{where} (the first comes last): "
                "a sort or ranking in ascending order where descending is wanted (or the "
                "other way round), or a sequence walked from its end",
            )
    return None


_SWAPPED = (
    "the values are what the function gives with {a} and {b} in each other's place: the two "
    "are swapped (in the call, or where they are passed on inside the function)"
)

_DEFAULTED = (
    "the values are those for {name}={value!r}, whatever {name} is given: the {name} "
    "passed is never used (a hard-coded value, or the default passed on where the argument "
    "belongs)"
)


class _Alternative:
    """The values are `reference(*args)`, computed only when asked (an alternative call of
    the reference that raises matches nothing)."""

    def __init__(self, reference: Callable[..., Any], args: tuple[Any, ...], text: str, kind: str):
        self.reference, self.args, self.text = reference, args, text
        self.kinds = frozenset({kind})
        self._diagnostic: _Matches | None = None
        self._failed = False

    def __call__(self, actual: Any, expected: Any) -> Cause | None:
        if self._diagnostic is None and not self._failed:
            try:
                alternative = self.reference(*self.args)
            except Exception:  # the mistake's arguments do not fit the reference
                self._failed = True
            else:
                self._diagnostic = _Matches(alternative, self.text, next(iter(self.kinds)))
        return None if self._diagnostic is None else self._diagnostic(actual, expected)


def _mutated(
    reference: Callable[..., Any], budget: ref_mutants.Budget
) -> Callable[[Any], Sequence[Diagnostic]]:
    """The last tier: the reference with one small edit each (`ref_mutants`), computed on
    each input's arguments within one budget of wall time for the failing check."""
    found = ref_mutants.mutants(reference)

    def offered(args: Any) -> Sequence[Diagnostic]:
        if not found or not isinstance(args, tuple | list) or not ref_mutants.judge_side(args):
            return ()
        return [_Alternative(m.bound(budget), tuple(args), m.text, m.kind) for m in found]

    return offered


def _argument_mistakes(
    reference: Callable[..., Any], args: Any, names: Sequence[str]
) -> list[Diagnostic]:
    """The reference called with two arguments in each other's place (two arrays or trees
    of one shape, or two plain numbers), with one number argument at the reference's
    default, and with one whole-number argument one less or one more."""
    if not isinstance(args, tuple | list):
        return []
    args = tuple(args)
    found: list[Diagnostic] = []
    for i, j in itertools.combinations(range(len(args)), 2):
        if not _swappable(args[i], args[j]):
            continue
        swapped = list(args)
        swapped[i], swapped[j] = args[j], args[i]
        text = _SWAPPED.format(
            a=_argument(f"[{i}]", args, names), b=_argument(f"[{j}]", args, names)
        )
        found.append(_Alternative(reference, tuple(swapped), text, f"swapped{i}{j}"))
    for i, default in _defaults(reference, len(args)):
        if not (_number(args[i]) and _number(default)) or args[i] == default:
            continue
        changed = list(args)
        changed[i] = default
        name = _argument(f"[{i}]", args, names)
        text = _DEFAULTED.format(name=name, value=default)
        found.append(_Alternative(reference, tuple(changed), text, f"default{i}"))
    for i, value in enumerate(args):
        if not _whole(value):
            continue
        for step, sign in ((-1, "-"), (1, "+")):
            changed = list(args)
            changed[i] = value + step
            name = _argument(f"[{i}]", args, names)
            text = _OFF_BY_ONE.format(name=name, sign=sign)
            found.append(_Alternative(reference, tuple(changed), text, f"off{sign}{i}"))
    return found


_OFF_BY_ONE = (
    "the values are those for {name} {sign} 1, whatever {name} is given: an off-by-one in how "
    "{name} is used (an index or a count taken from 1 where it is taken from 0, the other way "
    "round, or a bound one past or one short)"
)


def _whole(value: Any) -> bool:
    """A Python int (not a bool) or a NumPy integer scalar: an index, a count, a step."""
    if isinstance(value, bool | np.bool_):
        return False
    return isinstance(value, int | np.integer)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _swappable(a: Any, b: Any) -> bool:
    """Two plain numbers that differ, or two arrays (or trees of arrays: two parameter
    dicts) of one structure and shape whose numeric values differ."""
    if _number(a) and _number(b):
        return bool(a != b)
    if isinstance(a, bool | str | int | float) or isinstance(b, bool | str | int | float):
        return False
    try:
        if jax.tree.structure(a) != jax.tree.structure(b):  # type: ignore[operator]
            return False
        x, y = jax.tree.leaves(a), jax.tree.leaves(b)
    except Exception:  # not a tree of arrays
        return False
    if not x or not all(isinstance(v, np.ndarray | jax.Array) for v in (*x, *y)):
        return False
    arrays = [np.asarray(v) for v in (*x, *y)]
    if any(v.dtype.kind not in "fiu" for v in arrays):
        return False
    if any(u.shape != v.shape for u, v in zip(arrays[: len(x)], arrays[len(x) :], strict=True)):
        return False
    return not _same_values(a, b)


def _defaults(reference: Callable[..., Any], count: int) -> list[tuple[int, Any]]:
    """(position, default) of the reference's positional parameters with a default, among
    the first `count`."""
    try:
        parameters = list(inspect.signature(reference).parameters.values())
    except (TypeError, ValueError):
        return []
    return [
        (i, p.default)
        for i, p in enumerate(parameters[:count])
        if p.default is not inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
