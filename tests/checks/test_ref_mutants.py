"""The last tier of `diagnose.across`: mutants of the reference (`ref_mutants`). A mistake
particular to one function (an index one off, a suffix sum, a sum where a mean belongs, an
axis changed, `<=` for `<`) is the reference with one small edit; it is named by a real
Hypothesis search (`values.assert_matches_reference`) only when the edited reference
reproduces the student's values on inputs of two sizes, and only when one text remains.
Silent on one size, where two different edits reproduce the values, and where the student's
mistake is no edit of the reference."""

import functools
import time

import numpy as np
import pytest
from hypothesis import strategies as st

from grader.checks import diagnose, ref_mutants, values
from grader.checks.failure import CheckFailure

START = "your values equal the right computation's with "


def _vectors(*lengths, low=-9.0, high=9.0):
    return st.sampled_from(lengths).flatmap(
        lambda n: st.lists(st.floats(low, high, width=32), min_size=n, max_size=n).map(
            lambda v: (np.asarray(v, np.float32),)
        )
    )


def _matrices(*shapes):
    return st.sampled_from(shapes).flatmap(
        lambda shape: st.lists(
            st.floats(0.5, 9.0, width=32),
            min_size=shape[0] * shape[1],
            max_size=shape[0] * shape[1],
        ).map(lambda v: (np.asarray(v, np.float32).reshape(shape),))
    )


def _grid(*lengths, step=0.5):
    """Vectors of multiples of `step` in [-3, 3]: a comparison's bound is hit exactly."""
    points = [k * step for k in range(int(-3 / step), int(3 / step) + 1)]
    return st.sampled_from(lengths).flatmap(
        lambda n: st.lists(st.sampled_from(points), min_size=n, max_size=n).map(
            lambda v: (np.asarray(v, np.float32),)
        )
    )


def _cause(fn, reference, strategy, what="f(xs)"):
    with pytest.raises(CheckFailure) as failure:
        values.assert_matches_reference(fn, reference, strategy, what=what, rtol=1e-5, atol=1e-5)
    return failure.value.finding.cause


# -- references: module functions, whose source the tier reads ---------------------------------


def _running_total(xs):
    partial = np.cumsum(np.asarray(xs, np.float64))
    return partial[-1], partial


def _prefix_sums(xs):
    return np.cumsum(np.asarray(xs, np.float64))


def _loop_prefix(xs):
    xs = np.asarray(xs, np.float64)
    out = np.zeros(len(xs))
    for i in range(len(xs)):
        out[i] = np.sum(xs[: i + 1])
    return out


def _centred(xs):
    xs = np.asarray(xs, np.float64)
    return xs - np.mean(xs)


def _row_energy(x):
    x = np.asarray(x, np.float64)
    return np.sum(x**2, axis=1) + np.abs(x[:, 0])


def _column_shares(x):
    x = np.asarray(x, np.float64)
    return x / x.sum(axis=0, keepdims=True)


def _piecewise(xs):
    xs = np.asarray(xs, np.float64)
    return np.where(xs < 1, -xs, xs * xs)


def _shifted_twice(xs):
    return np.asarray(xs, np.float64) + 0.5 + 0.5


def _student_suffix(xs):
    return np.cumsum(np.asarray(xs, np.float64)[::-1])[::-1]


CASES = [
    # (the student's function, the reference, the inputs of two sizes, words of the cause)
    (
        lambda xs: (np.sum(xs[:-1]), np.cumsum(xs)),  # the total one element short
        _running_total,
        _vectors(3, 5),
        START + "an index one less (-2 where it takes -1)",
    ),
    (
        _student_suffix,
        _prefix_sums,
        _vectors(3, 5),
        START + "its cumulative sum taken from the end",
    ),
    (  # each partial sum one element too far: a loop's slice bound one past
        lambda xs: np.concatenate([np.cumsum(xs)[1:], [np.sum(xs)]]),
        _loop_prefix,
        _vectors(3, 5),
        START + "a slice bound one more (i + 2 where it has i + 1)",
    ),
    (
        lambda xs: xs - np.sum(xs),
        _centred,
        _vectors(3, 5),
        START + "a sum in place of its mean",
    ),
    (  # a mean where the sum belongs, inside a formula (no factor of the whole)
        lambda x: np.mean(x**2, axis=1) + np.abs(x[:, 0]),
        _row_energy,
        _matrices((3, 4), (5, 2)),
        START + "a mean in place of its sum",
    ),
    (
        lambda x: x / x.sum(axis=1, keepdims=True),
        _column_shares,
        _matrices((3, 4), (5, 2)),
        START + "the operation along axis 1 where it goes along axis 0",
    ),
    (
        lambda xs: np.where(xs <= 1, -xs, xs * xs),
        _piecewise,
        _grid(3, 5),
        START + "`<=` in place of its `<`",
    ),
    (  # one edit found at two places (either 0.5 halved) is one cause, not two
        lambda xs: xs + np.float32(0.75),
        _shifted_twice,
        _vectors(3, 5),
        START + "its constant 0.5 halved (0.25)",
    ),
]


@pytest.mark.parametrize(("student", "reference", "strategy", "words"), CASES)
def test_an_edit_of_the_reference_is_named_on_two_sizes(student, reference, strategy, words):
    assert words in _cause(student, reference, strategy)


@pytest.mark.parametrize(("student", "reference", "strategy", "words"), CASES)
def test_one_size_names_no_edit(student, reference, strategy, words):
    # every input of the one size shows the mistake; none of another size holds it
    one_size = {
        _column_shares: _matrices((3, 4)),
        _row_energy: _matrices((3, 4)),
        _piecewise: _grid(4),
    }.get(reference)
    assert _cause(student, reference, _vectors(4) if one_size is None else one_size) == ""


@pytest.mark.parametrize(
    ("student", "reference", "strategy"),
    [
        # another formula: centred on the median, not on a sum
        (lambda xs: xs - np.median(xs), _centred, _vectors(3, 5)),
        # the suffix sums and a stray constant: no one edit gives both
        (lambda xs: _student_suffix(xs) + 1.0, _prefix_sums, _vectors(3, 5)),
        # the total two elements short: an index two off is no edit
        (lambda xs: (np.sum(xs[:-2]), np.cumsum(xs)), _running_total, _vectors(3, 5)),
        # the other axis and a square: no edit
        (
            lambda x: (x / x.sum(axis=1, keepdims=True)) ** 2,
            _column_shares,
            _matrices((3, 4), (5, 2)),
        ),
    ],
)
def test_a_mistake_that_is_no_edit_of_the_reference_is_not_named(student, reference, strategy):
    assert START not in _cause(student, reference, strategy)


def test_two_edits_that_both_reproduce_the_values_name_nothing():
    # on whole numbers `xs <= 1` is `xs < 2`: the comparison and its bound fit alike
    student = lambda xs: np.where(xs <= 1, -xs, xs * xs)  # noqa: E731
    assert _cause(student, _piecewise, _grid(3, 5, step=1.0)) == ""
    # with halves between them, only the comparison fits
    assert "`<=` in place of its `<`" in _cause(student, _piecewise, _grid(3, 5))


def test_an_earlier_tier_comes_first():
    # a mean where the sum belongs is also every value times 1/n: the factor says so first
    cause = _cause(lambda xs: np.cumsum(xs) / len(xs), _prefix_sums, _vectors(3, 5))
    assert cause and START not in cause


def test_the_tier_is_silent_without_a_source():
    assert ref_mutants.mutants(np.sum) == ()  # a builtin of NumPy
    assert ref_mutants.mutants(np.sqrt) == ()  # a ufunc
    assert ref_mutants.mutants(lambda xs: np.cumsum(xs)) == ()  # a lambda
    namespace: dict[str, object] = {"np": np}
    exec("def made(xs):\n    return np.cumsum(xs)\n", namespace)  # no file to read
    assert ref_mutants.mutants(namespace["made"]) == ()
    # and a search with such a reference names no mutant (the last tier, `transformed`, names
    # the suffix sum as the reference on xs reversed and put back in order)
    assert START not in _cause(_student_suffix, lambda xs: np.cumsum(xs), _vectors(3, 5))


def _scaled_prefix(scale):
    def reference(xs):
        return scale * np.cumsum(np.asarray(xs, np.float64))

    return reference


def test_a_closure_is_rebuilt_with_its_values():
    reference = _scaled_prefix(3.0)
    student = lambda xs: 3.0 * _student_suffix(xs)  # noqa: E731
    assert START + "its cumulative sum taken from the end" in _cause(
        student, reference, _vectors(3, 5)
    )


def _weighted_prefix(scale, xs):
    return scale * np.cumsum(np.asarray(xs, np.float64))


def test_a_partial_is_mutated_in_its_function():
    reference = functools.partial(_weighted_prefix, 2.0)
    student = lambda xs: 2.0 * _student_suffix(xs)  # noqa: E731
    assert START + "its cumulative sum taken from the end" in _cause(
        student, reference, _vectors(3, 5)
    )


def test_mutants_come_in_one_order_every_time():
    first = [m.text for m in ref_mutants.mutants(_running_total)]
    ref_mutants._cached.cache_clear()
    again = [m.text for m in ref_mutants.mutants(_running_total)]
    assert first == again
    assert first[0].startswith(START + "its cumulative sum")


def test_a_mutant_over_the_budget_or_warning_is_not_run():
    mutant = ref_mutants.mutants(_prefix_sums)[0]
    with pytest.raises(ref_mutants.OverBudget):
        mutant.bound(ref_mutants.Budget(0.0))(np.ones(3))
    warns = ref_mutants.Mutant(lambda x: np.log(x) + _warn(), "text", "kind")
    with pytest.raises(UserWarning):
        warns.bound(ref_mutants.Budget())(np.ones(3))
    # NumPy's floating-point warnings are silenced, not raised: log(0) is -inf
    silent = ref_mutants.Mutant(np.log, "text", "kind").bound(ref_mutants.Budget())
    assert silent(np.zeros(2))[0] == -np.inf


def _warn():
    import warnings

    warnings.warn("a warning", UserWarning, stacklevel=1)
    return 0.0


def test_a_tier_over_its_budget_names_nothing(monkeypatch):
    # a mutant not held to every input could leave one text standing where two hold
    monkeypatch.setattr(ref_mutants, "BUDGET_S", 0.0)
    assert _cause(_student_suffix, _prefix_sums, _vectors(3, 5)) == ""


def test_arguments_holding_student_code_get_no_mutant():
    assert ref_mutants.judge_side((np.ones(3), 2))
    assert not ref_mutants.judge_side((lambda x: x, np.ones(3)))  # a function of the tests


def _many_points(x):
    x = np.asarray(x, np.float64)
    return (
        1.5 * x
        + 2.5 * x**2
        - 3.5 * x**3
        + 4.5 * x**4
        - 5.5 * np.sqrt(np.abs(x))
        + 6.5 * np.exp(-x)
        - 7.5 * x**5
        + 8.5 * np.mean(x)
        - 9.5 * np.max(x)
        + 10.5 * np.cumsum(x)
        - 11.5 * x[::-1]
        + 12.5 * x**6
        - 13.5 * np.std(x)
        + 14.5 * x[1:].sum()
    )


def test_the_mutants_of_a_reference_are_capped():
    # _many_points has more than 60 mutation points; the first MAX_MUTANTS are kept
    assert len(ref_mutants.mutants(_many_points)) == ref_mutants.MAX_MUTANTS


def test_a_failing_search_over_many_mutants_stays_quiet_and_bounded():
    # no edit reproduces a student's result that is off everywhere: every mutant is tried
    # on the smallest input, within the budget (the time is printed for the report)
    start = time.monotonic()
    cause = _cause(lambda x: _many_points(x) + 0.1, _many_points, _vectors(3, 5, low=0.5))
    print(f"search with {ref_mutants.MAX_MUTANTS} mutants: {time.monotonic() - start:.2f} s")
    assert START not in cause


def test_confirmed_holds_mutants_of_its_reference():
    seen = [
        ((xs,), _student_suffix(xs), _prefix_sums(xs))
        for xs in (np.arange(1.0, 4.0), np.array([2.0, -1.0, 0.5, 4.0, 3.0]))
    ]
    texts = diagnose.confirmed(seen, lambda args: (), reference=_prefix_sums)
    assert texts.startswith(START + "its cumulative sum taken from the end")
    assert diagnose.confirmed(seen[:1], lambda args: (), reference=_prefix_sums) == ""
    assert diagnose.confirmed(seen, lambda args: ()) == ""  # no reference: no tier


# -- one level into the reference's `_ref_*` helpers, and the newer operators ------------------


def _ref_log_norm(xs):  # a module-level helper, named `_ref_*`
    xs = np.asarray(xs, np.float64)
    return np.log(np.sum(xs * xs))


def _norm_through_helper(xs):
    return 0.5 * _ref_log_norm(xs)


def _inner_log_norm(xs):  # a helper not named `_ref_*`: not mutated
    xs = np.asarray(xs, np.float64)
    return np.log(np.sum(xs * xs))


def _norm_through_plain(xs):
    return 0.5 * _inner_log_norm(xs)


def _ref_two_levels(xs):  # calls the helper above: its edits are two levels deep here
    return 2.0 * _ref_log_norm(xs)


def _through_two_levels(xs):
    return _ref_two_levels(xs) + 1.0


def test_an_edit_inside_a_ref_helper_is_named_on_two_sizes():
    # the mean of squares where the helper sums them: the log shifts by -log(n), no factor
    student = lambda xs: 0.5 * np.log(np.mean(xs * xs))  # noqa: E731
    strategy = _vectors(3, 5, low=0.5)
    assert START + "a mean in place of its sum" in _cause(student, _norm_through_helper, strategy)
    assert _cause(student, _norm_through_helper, _vectors(4, low=0.5)) == ""  # one size
    # a helper not named `_ref_*`, and one two levels deep, are not mutated
    assert START not in _cause(student, _norm_through_plain, strategy)
    two = lambda xs: 2.0 * np.log(np.mean(xs * xs)) + 1.0  # noqa: E731
    assert START not in _cause(two, _through_two_levels, strategy)
    # the reference's own edits come first, then the helper's
    texts = [m.text for m in ref_mutants.mutants(_norm_through_helper)]
    assert texts.index(START + "its constant 0.5 doubled (1.0)") < texts.index(
        START + "a mean in place of its sum"
    )


def test_an_edit_inside_a_helper_that_is_no_edit_is_not_named():
    # the sum of absolute values: no one edit of the helper gives it
    student = lambda xs: 0.5 * np.log(np.sum(np.abs(xs)))  # noqa: E731
    assert START not in _cause(student, _norm_through_helper, _vectors(3, 5, low=0.5))


def _total_of(xs):
    return np.asarray(xs, np.float64).sum()


def _hidden_mask(xs):
    xs = np.asarray(xs, np.float64)
    index = np.arange(len(xs))
    return np.where(index < len(xs) - 1, np.maximum(xs, 0.0), xs)


def _below(xs):
    xs = np.asarray(xs, np.float64)
    index = np.arange(len(xs))
    return np.where(index < len(xs), xs, 0.0) + np.where(index < 2, 1.0, 0.0)


@pytest.mark.parametrize(
    ("student", "reference", "strategy", "words"),
    [
        (  # a product where the sum belongs
            lambda xs: np.prod(np.asarray(xs, np.float64)),
            _total_of,
            _vectors(3, 5, low=0.5, high=3.0),
            START + "a product in place of its sum",
        ),
        (  # a running product where the running sum belongs
            lambda xs: np.cumprod(np.asarray(xs, np.float64)),
            _prefix_sums,
            _vectors(3, 5, low=0.5, high=3.0),
            START + "a cumulative product in place of its cumulative sum",
        ),
        (  # `i < n - 2` where `i < n - 1`: the ReLU misses the last hidden entry too
            lambda xs: np.where(np.arange(len(xs)) < len(xs) - 2, np.maximum(xs, 0.0), xs),
            _hidden_mask,
            _vectors(3, 5),
            START + "the bound of a comparison one less (len(xs) - 2 where it compares with "
            "len(xs) - 1)",
        ),
        (  # a bound that is an expression, one less
            lambda xs: (
                np.where(np.arange(len(xs)) < len(xs) - 1, xs, 0.0)
                + np.where(np.arange(len(xs)) < 2, 1.0, 0.0)
            ),
            _below,
            _vectors(3, 5),
            START + "the bound of a comparison one less (len(xs) - 1 where it compares with "
            "len(xs))",
        ),
    ],
)
def test_a_product_a_running_product_and_a_bound_expression_are_named(
    student, reference, strategy, words
):
    assert words in _cause(student, reference, strategy)
    low = 0.5 if reference in (_total_of, _prefix_sums) else -9.0  # (products stay small)
    assert _cause(student, reference, _vectors(4, low=low, high=3.0)) == ""  # one size


def test_the_left_side_of_a_comparison_is_not_its_bound():
    texts = [m.text for m in ref_mutants.mutants(_hidden_mask)]
    assert (
        START + "the bound of a comparison one more (len(xs) where it compares with "
        "len(xs) - 1)" in texts
    )
    assert not any("index + 1" in text for text in texts)  # `index` is what is compared


def _scaled_log_norm(scale, xs):
    return scale * _ref_log_norm(xs)


def test_a_partial_whose_function_calls_a_helper_is_mutated_in_the_helper():
    # as 08's loss_fn check holds a partial of _ref_loss, whose helper holds the sum
    reference = functools.partial(_scaled_log_norm, 3.0)
    student = lambda xs: 3.0 * np.log(np.mean(xs * xs))  # noqa: E731
    seen = [
        ((xs,), student(xs), reference(xs))
        for xs in (np.array([1.0, 2.0, 0.5]), np.array([2.0, 1.5, 0.5, 3.0, 1.0]))
    ]
    assert diagnose.confirmed(seen, lambda args: (), reference=reference) == (
        START + "a mean in place of its sum"
    )
    assert diagnose.confirmed(seen[:1], lambda args: (), reference=reference) == ""
