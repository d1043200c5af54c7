"""Hidden checks for 01_arrays.py: jax.numpy and immutability."""

from typing import Any

import jax
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.authoring import check
from grader.checks import diagnose, jit, purity, values
from grader.checks.failure import CheckFailure
from grader.sandbox.client import Remote, StudentError
from grader.suites._shared import FLOAT32, Tolerance, compiled, no_trace_effects, with_cause

LESSON = "01_arrays"
TITLE = "jax.numpy and immutability"

_F32 = st.floats(-100, 100, width=32, allow_nan=False, allow_infinity=False)
# Multiples of 1/4: sums of a few of them are exact in float32, so a column of
# equal values has std exactly 0 and the reference is not at the mercy of rounding.
_QUARTERS = st.integers(-40, 40).map(lambda k: k / 4)
# Looser than FLOAT32: a column whose std (5e-8) is next to the 1e-8 epsilon, where float32
# rounding of values near 1e-7 weighs more; a wrong epsilon is off by 14% or more.
_NEXT_TO_EPSILON: Tolerance = {"rtol": 1e-3, "atol": 1e-5}


# -- references (written here, independently of solutions/) ----------------------


def _ref_set_element(x: Any, index: Any, value: Any) -> Any:
    out = np.array(x, dtype=np.float64)
    out[index] = value
    return out


def _ref_add_at(x: Any, indices: Any, values_: Any) -> Any:
    out = np.array(x, dtype=np.float64)
    np.add.at(out, np.asarray(indices), np.asarray(values_, dtype=np.float64))
    return out


def _ref_standardize(x: Any, axis: int = 0, ddof: int = 0, keepdims: bool = True) -> Any:
    """ddof=1 and keepdims=False give what those two mistakes compute (for diagnoses)."""
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=axis, keepdims=keepdims)
    return (x - mean) / (x.std(axis=axis, ddof=ddof, keepdims=keepdims) + 1e-8)


def _standardize_diagnostics(x: Any, axis: int = 0) -> Any:
    """The mistakes standardize(x, axis) can be confirmed to have made on x."""
    x = np.asarray(x)
    found = [
        diagnose.sample_std(x.shape[axis]),
        diagnose.other_axis(lambda a: _ref_standardize(x, a), axis, x.ndim),
        *_statistics_diagnostics(x, axis),
    ]
    try:
        flat = _ref_standardize(x, axis, keepdims=False)  # the reduced stats broadcast as they fall
    except ValueError:
        return found  # they do not broadcast: that mistake raises instead
    found.append(
        diagnose.matches(
            flat,
            "the values are what the statistics give without `keepdims=True`: reduced to "
            f"shape {np.delete(np.array(x.shape), axis).tolist()}, they broadcast against the "
            "wrong axis of x",
            kind="keepdims",
        )
    )
    return found


def _statistics_diagnostics(x: Any, axis: int) -> Any:
    """Other statistics than the mean and std along `axis`, each applied to the reference: the
    std (or the mean) of the whole array, the variance, the range or the root mean square where
    the std belongs, no mean subtracted."""
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=axis, keepdims=True)
    std = x.std(axis=axis, keepdims=True)
    return (
        diagnose.matches(
            (x - mean) / (x.std() + 1e-8),
            f"the values are divided by the std of the whole array (`jnp.std(x)` with no "
            f"`axis`), not by the std along axis {axis}: the mean and the std are taken over "
            "different elements",
            kind="std_whole",
        ),
        diagnose.matches(
            (x - x.mean()) / (std + 1e-8),
            f"the mean subtracted is the mean of the whole array (`jnp.mean(x)` with no "
            f"`axis`), not the mean along axis {axis}: the mean and the std are taken over "
            "different elements",
            kind="mean_whole",
        ),
        diagnose.matches(
            (x - x.mean()) / (x.std() + 1e-8),
            f"the values are standardized with the mean and std of the whole array (no "
            f"`axis`), not along axis {axis}",
            kind="stats_whole",
        ),
        diagnose.matches(
            (x - mean) / (x.var(axis=axis, keepdims=True) + 1e-8),
            "the values are divided by the variance (`jnp.var`), not by the standard "
            "deviation, its square root",
            kind="variance",
        ),
        diagnose.matches(
            (x - mean) / (np.ptp(x, axis=axis, keepdims=True) + 1e-8),
            "the values are divided by the range (max - min along the axis), not by the "
            "standard deviation",
            kind="range",
        ),
        diagnose.matches(
            x / (std + 1e-8),
            "the mean is never subtracted: the values are x divided by the std, where "
            "(x - mean) is divided by it",
            kind="not_centred",
        ),
        diagnose.matches(
            (x - mean) / (np.sqrt((x * x).mean(axis=axis, keepdims=True)) + 1e-8),
            "the values are divided by the root mean square of x, sqrt(mean(x ** 2)), not by "
            "the standard deviation: the std is the root mean square of x - mean",
            kind="rms",
        ),
    )


def _set_element_diagnostics(args: Any) -> Any:
    """set_element's confirmable mistake: x comes back unchanged (the copy `.at[...].set`
    returns is dropped)."""
    return (
        diagnose.matches(
            np.asarray(args[0]),
            "x came back unchanged: the updated copy that `x.at[index].set(value)` returns "
            "was never used (JAX arrays are immutable: `.at[...].set` changes nothing in x "
            "itself, it returns a new array)",
            kind="update_dropped",
        ),
        diagnose.matches(
            _ref_set_element(args[0], args[1], _added(args[0], args[1], args[2])),
            "x[index] holds x[index] + value: the value is added to the element "
            "(`.at[index].add(value)`) where `.at[index].set(value)` replaces it",
            kind="set_added",
        ),
    )


def _added(x: Any, index: Any, value: Any) -> Any:
    """x[index] + value in float32, rounded as the student's float32 sum is."""
    return np.float32(np.asarray(x)[index]) + np.float32(value)


def _add_at_diagnostics(args: Any) -> Any:
    """add_at's confirmable mistakes: x added once more to the scatter-add; the values
    replacing x[indices] (`.at[indices].set`), offered only where the indices are all
    different: which of two writes to one index a scatter-set keeps is not defined, and such
    an input cannot tell."""
    x, indices, vals = (np.asarray(a) for a in args)
    twice = diagnose.matches(
        np.asarray(_ref_add_at(x, indices, vals), np.float64) + x,
        "x is counted twice: the result is x plus the scatter-add, and the scatter-add "
        "`x.at[indices].add(values)` already starts from x",
        kind="x_twice",
    )
    if len(np.unique(indices)) != len(indices):
        return (twice,)
    replaced = np.array(x, dtype=np.float64)
    replaced[indices] = vals
    return (
        twice,
        diagnose.matches(
            replaced,
            "x[indices] holds the values themselves, not x[indices] + values: they replace the "
            "elements (`.at[indices].set(values)`) where `.at[indices].add(values)` adds them",
            kind="add_set",
        ),
    )


# -- generated inputs -------------------------------------------------------------


# Shapes come from a few fixed sets (the smallest first, as Hypothesis shrinks towards it):
# each new shape costs the student's function a compile in the sandbox, so a few shapes
# let one compiled program serve many examples. Arrays go to the device with
# `jax.device_put`: `jnp.asarray` compiles a program of its own per shape in the judge.


@st.composite
def _set_element_args(draw: Any) -> Any:
    n = draw(st.sampled_from((1, 3, 8)))
    x = draw(hnp.arrays(np.float32, n, elements=_F32))
    index = draw(st.integers(-n, n - 1))
    return jax.device_put(x), index, draw(_F32)


@st.composite
def _add_at_args(draw: Any) -> Any:
    n, k = draw(st.sampled_from(((1, 1), (1, 4), (3, 6), (6, 8))))  # (len(x), len(indices))
    x = draw(hnp.arrays(np.float32, n, elements=_QUARTERS))
    indices = draw(hnp.arrays(np.int32, k, elements=st.integers(0, n - 1)))
    vals = draw(hnp.arrays(np.float32, k, elements=_QUARTERS))
    return jax.device_put(x), jax.device_put(indices), jax.device_put(vals)


def _matrices() -> Any:
    shapes = st.sampled_from(((2, 1), (3, 4), (6, 3)))  # two rows at least: a std to divide by
    return shapes.flatmap(lambda s: hnp.arrays(np.float32, s, elements=_QUARTERS))


# -- set_element --------------------------------------------------------------------


@check(
    "set_element returns x with x[index] = value",
    points=2,
    hint="JAX arrays cannot be assigned to: which property of an array builds a copy with one element changed?",
    nudge="JAX arrays are immutable: their `.at[...]` property returns an updated copy instead of writing in place.",
    spec="`set_element(x, index, value)` -> new array with `x[index] = value` ... Checks: values",
)
def test_set_element_values(student: Remote, seed: int) -> None:
    values.assert_matches_reference(
        compiled(student.set_element),
        _ref_set_element,
        _set_element_args(),
        what="set_element(x, index, value)",
        max_examples=20,
        seed=seed,
        diagnostics=_set_element_diagnostics,
        fix="return `jnp.asarray(x).at[index].set(value)`",
    )


@check(
    "set_element is pure: its input unchanged, no trace-time side effects",
    points=2,
    requires=("test_set_element_values",),
    hint="If x is a NumPy array, does `x[index] = value` change the caller's array? What does `.at[...]` do instead?",
    nudge="A NumPy argument is mutable, so turn it into a JAX array first and update the copy functionally; a print belongs in `jax.debug.print`.",
    spec="`set_element(x, index, value)` -> new array with `x[index] = value`; `x` unchanged ... `x`, `indices` and `values` may be NumPy or JAX arrays (not Python lists); a NumPy `x` is not changed either ... input not mutated ... no mutation of arguments or module state ... no Python side effects that only happen at trace time",
)
def test_set_element_pure(student: Remote) -> None:
    x = np.arange(5, dtype=np.float32)
    _numpy_input(
        lambda: purity.assert_pure(
            student.set_element,
            (x, 2, 9.0),
            what="set_element(x, 2, 9.0) on a NumPy x",
            module=student,
        )
    )
    no_trace_effects(
        student.set_element,
        (jax.device_put(x), 2, 9.0),
        what="set_element(x, index, value)",
        module=student,
    )
    values.assert_close(
        student.set_element(x, 2, 9.0),
        np.array([0.0, 1.0, 9.0, 3.0, 4.0]),
        what="set_element(np.arange(5.), 2, 9.0)",
    )


def _numpy_input(run: Any) -> None:
    """Run a purity check with NumPy inputs; explain the one failure a correct `.at` user hits."""
    try:
        run()
    except CheckFailure as failure:
        if "'numpy.ndarray' object has no attribute 'at'" not in failure.finding.observed:
            raise
        raise with_cause(
            failure,
            cause="NumPy arrays have no `.at` property, only JAX arrays do: the NumPy x was "
            "used as it came, and the docstring allows NumPy inputs",
            fix="convert first: `jnp.asarray(x).at[...]`",
        ) from None


# -- add_at ------------------------------------------------------------------------


@check(
    "add_at adds values at the indices",
    points=2,
    hint="Which `.at[...]` method adds instead of overwriting?",
    nudge="`.at[...]` has a method for each kind of scatter: one replaces, another adds.",
    spec="`add_at(x, indices, values)` -> new array where each `values[k]` is added at `indices[k]` ... Checks: values",
)
def test_add_at_values(student: Remote, seed: int) -> None:
    add_at = compiled(student.add_at)
    try:
        values.assert_matches_reference(
            add_at,
            _ref_add_at,
            _add_at_args(),
            what="add_at(x, indices, values)",
            max_examples=25,
            seed=seed,
            diagnostics=_add_at_diagnostics,
            fix="return `jnp.asarray(x).at[indices].add(values)`",
        )
    except CheckFailure as failure:
        # Most generated inputs repeat an index, where a replacing scatter cannot be told:
        # two inputs of different sizes with distinct indices are held to the diagnostics.
        # An add_at right on those but keeping one write per repeated index: the failure is
        # the duplicates check's, named there.
        cause = _add_at_probe_cause(add_at) or _repeated_writes_lost(add_at)
        if not cause:
            raise
        raise with_cause(failure, cause=cause, fix=failure.finding.fix) from failure.__cause__


def _add_at_probes(add_at: Any) -> list[diagnose.Input]:
    """add_at on two inputs of different sizes with distinct indices (StudentError raised)."""
    seen = []
    for x, indices in (([1.0, -2.0, 0.5], [2, 0]), ([0.5, 1.0, -1.5, 2.0, 3.0, -0.25], [5, 1, 3])):
        args = (
            np.array(x, np.float32),
            np.array(indices, np.int32),
            np.arange(1, len(indices) + 1, dtype=np.float32) * 1.25,
        )
        seen.append((args, add_at(*jax.device_put(args)), _ref_add_at(*args)))
    return seen


def _add_at_probe_cause(add_at: Any) -> str:
    try:
        seen = _add_at_probes(add_at)
    except StudentError:  # the student's error, which the failure already shows
        return ""
    return diagnose.confirmed(seen, _add_at_diagnostics, reference=_ref_add_at)


REPEATED_WRITES_LOST = (
    "where an index repeats, its writes overwrite each other instead of accumulating (see the "
    "check 'add_at accumulates repeated indices'); where the indices are all different "
    "add_at is right"
)


def _repeated_writes_lost(add_at: Any) -> str:
    """REPEATED_WRITES_LOST when add_at is right on the two distinct-index probes and the
    duplicates check's two inputs (4 and 6 elements) confirm one write kept per index;
    else ""."""
    try:
        distinct = _add_at_probes(add_at)
        repeated = _duplicate_inputs(add_at)
    except StudentError:
        return ""
    if any(values.difference(got, want) is not None for _, got, want in distinct):
        return ""
    found = diagnose.confirmed(repeated, lambda args: (_one_write_per_index(*args),))
    return REPEATED_WRITES_LOST if found else ""


@check(
    "add_at accumulates repeated indices",
    points=2,
    hint="When the same index appears twice, should the second value replace the first or be added to it?",
    nudge="A scatter-add applies every update, so two values aimed at one index both land there; gathering, adding and writing back keeps only one.",
    spec="repeated indices accumulate (scatter-add semantics) ... duplicates in `add_at` accumulate",
)
def test_add_at_duplicates(student: Remote) -> None:
    seen = _duplicate_inputs(student.add_at)
    # named only when both inputs (4 and 6 elements) show one write kept per index
    cause = diagnose.confirmed(seen, lambda args: (_one_write_per_index(*args),))
    for (x_, indices_, vals_), got, expected in seen:
        what = (
            "add_at(zeros(4), [0, 0, 2, 2, 2], [1., 1., 1., 2., 3.])"
            if len(x_) == 4
            else f"add_at({x_.tolist()}, {indices_.tolist()}, {vals_.tolist()})"
        )
        values.assert_close(
            got,
            expected,
            what=what,
            cause=cause,
            fix="`.at[indices].add(values)` is a scatter-add: every value is added, duplicates "
            "included",
        )


def _duplicate_inputs(add_at: Any) -> list[diagnose.Input]:
    """add_at on two inputs (4 and 6 elements) whose indices repeat."""
    cases = (
        (np.zeros(4), [0, 0, 2, 2, 2], [1.0, 1.0, 1.0, 2.0, 3.0]),
        ([0.5, -1.0, 2.0, 0.25, 1.0, -0.5], [5, 1, 5, 3, 1, 1], [1.0, 2.0, 0.5, 4.0, -1.0, 3.0]),
    )
    seen = []
    for x, indices, vals in cases:
        args = (
            np.asarray(x, np.float32),
            np.asarray(indices, np.int32),
            np.asarray(vals, np.float32),
        )
        seen.append((args, add_at(*jax.device_put(args)), _ref_add_at(*args)))
    return seen


def _one_write_per_index(x: Any, indices: Any, vals: Any) -> diagnose.Diagnostic:
    """Every written index holds what ONE of its writes gives (x[i] + v, or v alone where
    the values replace x), every other element x's, and a repeated index lost a write: the
    writes to one index overwrite each other."""

    def diagnostic(actual: Any, expected: Any) -> diagnose.Cause | None:
        got = np.asarray(actual, np.float64)
        if got.shape != np.shape(expected):
            return None
        repeated = False
        for i in range(len(x)):
            writes = [float(v) for k, v in zip(indices, vals, strict=True) if k == i]
            kept = [float(x[i]) + v for v in writes] + writes if writes else [float(x[i])]
            if not np.isclose(kept, got[i], rtol=diagnose.RTOL, atol=diagnose.ATOL).any():
                return None
            repeated = repeated or (
                len(writes) > 1
                and not np.isclose(got[i], expected[i], rtol=diagnose.RTOL, atol=diagnose.ATOL)
            )
        if not repeated:
            return None
        return diagnose.Cause(
            "one_write",
            "repeated indices overwrite each other instead of accumulating: each repeated "
            "index holds one of its writes (`.at[i].set(...)`, or a fancy-indexed `x[indices] "
            "+ values`, keeps only one of the writes to the same index)",
        )

    return diagnostic


@check(
    "add_at is pure: its inputs unchanged, no trace-time side effects",
    points=1,
    requires=("test_add_at_values",),
    hint="Does your function write into x (or into a NumPy copy that is really a view of it)?",
    nudge="Build the result from a JAX copy of x (`.at[...]`), never by writing into the caller's array, and keep prints out of the traced code.",
    spec="`add_at(x, indices, values)` -> new array ... `x`, `indices` and `values` may be NumPy or JAX arrays (not Python lists); a NumPy `x` is not changed either ... input not mutated ... no mutation of arguments or module state ... no Python side effects that only happen at trace time",
)
def test_add_at_pure(student: Remote) -> None:
    x = np.zeros(4, dtype=np.float32)
    indices = np.array([1, 1, 3])
    vals = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    _numpy_input(
        lambda: purity.assert_pure(
            student.add_at,
            (x, indices, vals),
            what="add_at(x, indices, values) on NumPy inputs",
            module=student,
        )
    )
    no_trace_effects(
        student.add_at,
        tuple(map(jax.device_put, (x, indices.astype(np.int32), vals))),
        what="add_at(x, indices, values)",
        module=student,
    )


# -- standardize ---------------------------------------------------------------------


@check(
    "standardize gives zero mean and unit std along axis 0",
    points=2,
    hint="Which statistics do you subtract and divide by, and along which axis are they taken?",
    nudge="Take the mean and the population std (the default, dividing by n) along the given axis, kept as a size-1 axis so they broadcast back over x.",
    spec="`standardize(x, axis=0)` -> `(x - mean) / (std + 1e-8)` along `axis` via broadcasting ... Checks: values",
)
def test_standardize_values(student: Remote, seed: int) -> None:
    try:
        values.assert_matches_reference(
            compiled(student.standardize),
            _ref_standardize,
            st.tuples(_matrices().map(jax.device_put)),
            what="standardize(x) (axis=0)",
            **FLOAT32,
            max_examples=20,
            seed=seed,
            diagnostics=lambda args: _standardize_diagnostics(args[0]),
            fix="`(x - jnp.mean(x, axis=axis, keepdims=True)) / (jnp.std(x, axis=axis, keepdims=True) + 1e-8)`",
        )
    except CheckFailure as failure:
        # called without an axis: where standardize(x, axis=0) is right, the default is wrong
        cause = _default_axis_cause(student)
        if not cause:
            raise
        raise with_cause(failure, cause=cause, fix=failure.finding.fix) from failure.__cause__


# two matrices of other shapes, neither square, on which the default axis is held to axis=0
_DEFAULT_AXIS_PROBES = (
    np.array([[1, 4, -2, 0], [3, 0, 2, 1], [-1, 2, 2, 5]], np.float32) / 4,
    np.array([[2, -1], [0, 3], [1, 1], [-3, 2], [4, 0]], np.float32) / 4,
)


def _default_axis_cause(student: Remote) -> str:
    """DEFAULT_AXIS when, on both probes, standardize(x) is wrong and standardize(x, axis=0)
    is right; else "" (the student's error included)."""
    for x in _DEFAULT_AXIS_PROBES:
        expected = _ref_standardize(x)
        try:
            default = student.standardize(jax.device_put(x))
            given = student.standardize(jax.device_put(x), axis=0)
        except StudentError:
            return ""
        if values.difference(default, expected, **FLOAT32) is None:
            return ""
        if values.difference(given, expected, **FLOAT32) is not None:
            return ""
    return DEFAULT_AXIS


DEFAULT_AXIS = (
    "standardize(x) is wrong where standardize(x, axis=0) is right (on x of shapes (3, 4) and "
    "(5, 2)): the default axis is not 0, as the signature `standardize(x, axis=0)` says"
)


@check(
    "standardize works along axis=1 and on 3-D arrays",
    points=1,
    hidden=True,
    hint="After `jnp.mean(x, axis=1)` the reduced axis is gone: does the result still line up with x when you subtract it?",
    nudge="Reductions with `keepdims=True` keep the reduced axis with size 1, so the statistics line up with x whatever the axis.",
    spec="`standardize(x, axis=0)` -> `(x - mean) / (std + 1e-8)` along `axis` via broadcasting",
)
def test_standardize_other_axes(student: Remote) -> None:
    cases = [
        (np.arange(12, dtype=np.float32).reshape(3, 4) ** 2, 1),
        (
            np.arange(9, dtype=np.float32).reshape(3, 3) ** 2,
            1,
        ),  # square: a broadcasting slip is silent
        (np.arange(24, dtype=np.float32).reshape(2, 3, 4) ** 1.5, 1),
    ]
    standardize = compiled(student.standardize, static_argnames=("axis",))
    seen = []  # every case first: a cause is named only when the cases of each size show it
    for x, axis in cases:
        what = f"standardize(x, axis={axis}) for x of shape {x.shape}"
        try:
            got = standardize(jax.device_put(x), axis=axis)
        except (TypeError, ValueError) as exc:
            kind = exc.info.type if isinstance(exc, StudentError) else type(exc).__name__
            raise CheckFailure(
                what,
                expected=f"an array of shape {x.shape}",
                observed=f"{kind}: {exc}",
                cause=_unbroadcast_cause(str(exc), x.shape, axis),
                fix="reduce with `keepdims=True` so the mean and std keep a size-1 axis",
            ) from None
        seen.append(((x, axis), got, _ref_standardize(x, axis)))
    cause = diagnose.confirmed(
        seen, lambda args: _standardize_diagnostics(*args), reference=_ref_standardize
    )
    for (x, axis), got, expected in seen:
        values.assert_close(
            got,
            expected,
            what=f"standardize(x, axis={axis}) for x of shape {x.shape}",
            **FLOAT32,
            cause=cause,
            fix="`(x - jnp.mean(x, axis=axis, keepdims=True)) / (jnp.std(x, axis=axis, "
            "keepdims=True) + 1e-8)`",
        )


def _unbroadcast_cause(error: str, shape: tuple[int, ...], axis: int) -> str:
    """The cause an error of standardize(x, axis) shows in its own words: the shapes it could
    not broadcast are x's and x's without `axis` (what a reduction without keepdims leaves),
    else "" (another error: the observed line shows it)."""
    reduced = tuple(int(n) for n in np.delete(np.array(shape), axis))
    if "broadcast" not in error or str(tuple(shape)) not in error or str(reduced) not in error:
        return ""
    return (
        f"the error is about broadcasting x's shape {tuple(shape)} against {reduced}, x's shape "
        f"without axis {axis}: statistics reduced along axis {axis} lose that axis and no "
        "longer line up with x"
    )


@check(
    "standardize maps a constant column to 0, not NaN (1e-8 added to the std)",
    points=2,
    hint="What is 0 / 0 in floating point, and what does the `+ 1e-8` in the formula protect against?",
    nudge="The epsilon is added to the standard deviation itself, after the square root, exactly as the formula writes it.",
    spec="`(x - mean) / (std + 1e-8)` ... (a constant column gives 0, never NaN/inf)",
)
def test_standardize_constant_column(student: Remote) -> None:
    x = jax.device_put(np.array([[3.0, 1.0], [3.0, 2.0], [3.0, 6.0]], np.float32))
    got = student.standardize(x)
    values.assert_finite(
        got,
        what="standardize(x) with a constant first column",
        cause="the std of a constant column is 0, and the result there is not finite: "
        "(x - mean) / std is 0 / 0 = NaN unless something nonzero is added to the std",
        fix="divide by `std + 1e-8`, as the formula says",
    )
    # A column whose spread (5e-8) is close to the epsilon: only `std + 1e-8` gives +-0.8333
    # (`std + 2e-8` gives 0.714, `std - 1e-8` 1.25, `sqrt(var + 1e-8)` 0.0005).
    tiny = jax.device_put(np.array([[3.0, 0.0], [3.0, 1e-7], [3.0, 0.0], [3.0, 1e-7]], np.float32))
    got_tiny = student.standardize(tiny)
    # the two inputs (3 and 4 rows) confirm a mistake in the statistics, if any, together
    seen = [((x,), got, _ref_standardize(x)), ((tiny,), got_tiny, _ref_standardize(tiny))]
    cause = ""
    if values.difference(got, _ref_standardize(x), **FLOAT32) is not None:
        cause = _default_axis_cause(student) or diagnose.confirmed(
            seen, lambda args: _standardize_diagnostics(args[0])
        )
    values.assert_close(
        got,
        _ref_standardize(x),
        what="standardize(x) with a constant first column",
        **FLOAT32,
        cause=cause,
    )
    cause = ""
    if values.difference(got_tiny, _ref_standardize(tiny), **_NEXT_TO_EPSILON) is not None:
        # a second such column, of 6 rows: a mistake in the denominator or the statistics is
        # named when both show it; another epsilon only where the one epsilon that gives the
        # 4 rows' values gives the 6 rows' too
        tiny6 = np.array([[3.0, 0.0], [3.0, 2e-7], [3.0, 1e-7]] * 2, np.float32)
        near = [
            ((tiny,), got_tiny, _ref_standardize(tiny)),
            ((tiny6,), student.standardize(jax.device_put(tiny6)), _ref_standardize(tiny6)),
        ]
        epsilon = _fitted_epsilon(tiny, got_tiny)
        cause = diagnose.confirmed(
            near,
            lambda args: (
                *_epsilon_diagnostics(args[0]),
                *_statistics_diagnostics(args[0], 0),
                *(() if epsilon is None else (_other_epsilon(args[0], epsilon),)),
            ),
        )
    values.assert_close(
        got_tiny,
        _ref_standardize(tiny),
        what="standardize(x) with a column of spread 1e-7 (std 5e-8, next to the 1e-8)",
        **_NEXT_TO_EPSILON,
        cause=cause,
        fix="`(x - jnp.mean(x, axis=axis, keepdims=True)) / (jnp.std(x, axis=axis, "
        "keepdims=True) + 1e-8)`",
    )


def _epsilon_diagnostics(x: Any) -> Any:
    """The epsilon's confirmable misplacement, applied to the reference along axis 0: inside
    the square root (sqrt(var + 1e-8))."""
    x = np.asarray(x, np.float64)
    centred = x - x.mean(axis=0, keepdims=True)
    var = x.var(axis=0, keepdims=True)
    return (
        diagnose.matches(
            centred / np.sqrt(var + 1e-8),
            "the epsilon is inside a square root: the values are (x - mean) / sqrt(var + 1e-8), "
            "where the formula adds 1e-8 to the std itself, after its square root",
            kind="epsilon_in_sqrt",
        ),
    )


# `std + e` held to the student's values element by element, relative: float32 leaves a few
# parts in 10 million, while sqrt(var + 1e-8) is 3 parts in 10,000 away from the `std + e`
# that fits it on 4 rows when it comes to the 6 (there diagnose's atol would let it pass)
_EPSILON_RTOL = 1e-5


def _fitted_epsilon(x: Any, got: Any) -> float | None:
    """The e for which standardize's values on x are (x - mean) / (std + e) along axis 0 (e
    read from the values where x is off its column's mean, and held to them all); None where
    no one e gives them (values not finite, of another shape, or of another formula)."""
    x = np.asarray(x, np.float64)
    values_ = np.asarray(got, np.float64)
    if values_.shape != x.shape or not np.isfinite(values_).all():
        return None
    centred = x - x.mean(axis=0, keepdims=True)
    std = np.broadcast_to(x.std(axis=0, keepdims=True), x.shape)
    off = (centred != 0) & (values_ != 0)
    if not off.any():
        return None
    epsilon = float(np.median(centred[off] / values_[off] - std[off]))
    return epsilon if _other_epsilon(x, epsilon)(values_, None) is not None else None


def _other_epsilon(x: Any, epsilon: float) -> diagnose.Diagnostic:
    """The reference along axis 0 with `std + epsilon` where the formula has `std + 1e-8`: 0
    where x is its column's mean (as any epsilon but 0 gives, and a guard against 0 / 0)."""
    x = np.asarray(x, np.float64)
    centred = x - x.mean(axis=0, keepdims=True)
    std = x.std(axis=0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        alternative = np.where(centred == 0, 0.0, centred / (std + epsilon))
    sign = "-" if epsilon < 0 else "+"
    formula, added = (
        ("(x - mean) / std", "nothing is added to the std")
        if abs(epsilon) < 1e-12
        else (
            f"(x - mean) / (std {sign} {abs(epsilon):.2g})",
            f"the epsilon added to the std is {epsilon:.2g}",
        )
    )
    text = (
        f"the values are {formula} on both columns whose std is next to the 1e-8 (5e-8 over "
        f"4 rows, 8.2e-8 over 6): {added}, where the formula adds 1e-8"
    )

    def diagnostic(actual: Any, expected: Any) -> diagnose.Cause | None:
        got = np.asarray(actual, np.float64)
        if got.shape != alternative.shape or not np.isfinite(got).all():
            return None
        zero = centred == 0
        if not np.allclose(got[zero], 0.0, rtol=0.0, atol=diagnose.ATOL):
            return None
        if not np.allclose(got[~zero], alternative[~zero], rtol=_EPSILON_RTOL, atol=0.0):
            return None
        if expected is not None and np.allclose(got, expected, rtol=_EPSILON_RTOL, atol=0.0):
            return None  # the epsilon does not show on this x
        return diagnose.Cause("epsilon_other", text)

    return diagnostic


@check(
    "standardize is pure: its input unchanged, no trace-time side effects",
    points=1,
    requires=("test_standardize_values",),
    hint="Does `x -= mean` on a NumPy array change the caller's array?",
    nudge="Compute new arrays from x with jax.numpy instead of updating x in place, and keep prints out of the traced code.",
    spec="`x`, `indices` and `values` may be NumPy or JAX arrays (not Python lists); a NumPy `x` is not changed either ... input not mutated ... no mutation of arguments or module state ... no Python side effects that only happen at trace time",
)
def test_standardize_pure(student: Remote) -> None:
    x = np.array([[1.0, 2.0], [3.0, 5.0], [4.0, 9.0]], dtype=np.float32)
    purity.assert_pure(
        student.standardize, (x,), what="standardize(x) on a NumPy x", module=student
    )
    no_trace_effects(
        student.standardize, (jax.device_put(x),), what="standardize(x)", module=student
    )


# -- jit --------------------------------------------------------------------------


@check(
    "set_element compiles under jax.jit",
    points=1,
    requires=("test_set_element_values",),
    hint="Under jit, x is a tracer: does your code call NumPy on it or assign into it?",
    nudge="Under jit every array argument is an abstract tracer, so only jax.numpy operations (no NumPy conversion, no item assignment) can work on it.",
    spec="Checks: values; input not mutated; duplicates in `add_at` accumulate; jittable ... Every function that is meant to be jittable is checked both eagerly and under `jax.jit`",
)
def test_set_element_jit(student: Remote) -> None:
    jit.assert_jittable(
        student.set_element,
        (jax.device_put(np.arange(4, dtype=np.float32)), 1, 7.0),
        what="set_element(x, index, value)",
    )


@check(
    "add_at compiles under jax.jit",
    points=1,
    requires=("test_add_at_values",),
    hint="Under jit, indices and values are tracers: can Python loop over them or NumPy read them?",
    nudge="A scatter-add over traced indices stays one JAX operation; a Python loop or a NumPy call needs concrete values that jit does not have.",
    spec="Checks: values; input not mutated; duplicates in `add_at` accumulate; jittable ... Every function that is meant to be jittable is checked both eagerly and under `jax.jit`",
)
def test_add_at_jit(student: Remote) -> None:
    jit.assert_jittable(
        student.add_at,
        tuple(
            map(
                jax.device_put,
                (
                    np.zeros(3, np.float32),
                    np.array([0, 2, 0], np.int32),
                    np.array([1.0, 2.0, 3.0], np.float32),
                ),
            )
        ),
        what="add_at(x, indices, values)",
    )


@check(
    "standardize compiles under jax.jit (axis static)",
    points=1,
    requires=("test_standardize_values",),
    hint="Under jit, x is a tracer: are all the operations from jax.numpy?",
    nudge="Under jit only the axis is a Python value; every statistic must come from jax.numpy on the traced x.",
    spec="Checks: values; input not mutated; duplicates in `add_at` accumulate; jittable ... Every function that is meant to be jittable is checked both eagerly and under `jax.jit`",
)
def test_standardize_jit(student: Remote) -> None:
    x = jax.device_put(np.array([[1.0, 4.0, 2.0], [3.0, 0.0, 2.0]], np.float32))
    jit.assert_jittable(
        student.standardize,
        (x,),
        {"axis": 1},
        static_argnames=("axis",),
        what="standardize(x, axis=1)",
        **FLOAT32,
    )
