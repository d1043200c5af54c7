"""diagnose's general tier: mistakes any function can make (an argument returned unchanged,
a ReLU on a result that has none), named by a
real Hypothesis search (`values.assert_matches_reference`) only when inputs of two sizes
confirm them, and silent on look-alikes: a mistake that gives the same numbers on one size
only, or a different mistake with a similar symptom."""

import numpy as np
import pytest
from hypothesis import strategies as st

from grader.checks import diagnose, values
from grader.checks.failure import CheckFailure


def _vectors(*lengths, positive=False):
    def draw(n):
        low = 0.5 if positive else -9.0
        return st.lists(st.floats(low, 9.0, width=32), min_size=n, max_size=n)

    return st.sampled_from(lengths).flatmap(
        lambda n: st.tuples(draw(n), draw(n)).map(
            lambda pair: (np.asarray(pair[0], np.float32), np.asarray(pair[1], np.float32))
        )
    )


def _cause(fn, reference, strategy, what="combine(x, y)"):
    with pytest.raises(CheckFailure) as failure:
        values.assert_matches_reference(fn, reference, strategy, what=what, rtol=1e-5, atol=1e-5)
    return failure.value.finding.cause


def _affine(x, y):  # the reference: a result that has negative values, never x or y itself
    return 2.0 * x - y + 0.25


CASES = [
    # (the student's function, words its cause must hold)
    (lambda x, y: x, "the result is x itself, unchanged"),
    (lambda x, y: y, "the result is y itself, unchanged"),
    (lambda x, y: np.maximum(_affine(x, y), 0.0), "negative values cut to 0: a ReLU"),
    (lambda x, y: x - y + 0.25, "every value is the expected minus x: x itself never enters"),
    (lambda x, y: 2.0 * x - 2.0 * y + 0.25, "every value is the expected minus y"),
    (lambda x, y: _log_softmax(_affine(x, y)), "the log_softmax of the expected along its last"),
    (lambda x, y: np.exp(_log_softmax(_affine(x, y))), "the softmax of the expected along its"),
    (lambda x, y: np.abs(_affine(x, y)), "every value is the absolute value of the expected"),
    (lambda x, y: _affine(x, y) ** 2, "every value is the square of the expected"),
    (lambda x, y: _affine(x, y)[::-1], "the values are the expected in reverse order"),
    (lambda x, y: _affine(y, x), "with x and y in each other's place: the two are swapped"),
]


def _log_softmax(v):
    shifted = v - np.max(v)
    return shifted - np.log(np.sum(np.exp(shifted)))


@pytest.mark.parametrize(("student", "words"), CASES)
def test_a_general_mistake_is_named_on_two_sizes(student, words):
    assert words in _cause(student, _affine, _vectors(3, 5))


@pytest.mark.parametrize(("student", "words"), CASES)
def test_one_size_confirms_no_general_mistake(student, words):
    # every input of the one size shows the mistake, but no input of another size holds it
    assert _cause(student, _affine, _vectors(4)) == ""


GENERAL_WORDS = (
    "unchanged",
    "ReLU",
    "never enters",
    "softmax",
    "absolute value",
    "square",
    "reverse order",
    "each other's place",
    "never used",
)


@pytest.mark.parametrize(
    "student",
    [
        lambda x, y: _affine(x, y) + x,  # x counted twice: the result is not x
        lambda x, y: np.roll(_affine(x, y), 1),  # rotated, not reversed
        lambda x, y: _affine(x, y) ** 2 + 0.01,  # squared, and a stray constant
        lambda x, y: 2.0 * y - x,  # the arguments swapped, and the constant missing
        lambda x, y: np.abs(_affine(x, y)) + 0.5,  # an absolute value shifted
        lambda x, y: (
            x.at[0].set(0.0) if hasattr(x, "at") else np.where(np.arange(x.size) == 0, 0, x)
        ),
        lambda x, y: _affine(x, y) + 0.5,  # a stray constant
        lambda x, y: np.maximum(_affine(x, y), 1.0),  # a clip at 1, not at 0
        lambda x, y: x + y,  # another formula
        lambda x, y: _affine(x, y) - 0.5 * x,  # half of x missing, not x
        lambda x, y: _affine(x, y) - np.max(_affine(x, y)),  # shifted, never normalized
        lambda x, y: np.exp(_affine(x, y)) / 10.0,  # exponentiated, not by their sum
    ],
)
def test_look_alikes_get_no_general_cause(student):
    # (an absolute value is not a ReLU, nor the arguments swapped a missing argument: each is
    # a case above, named by its own words)
    cause = _cause(student, _affine, _vectors(3, 5))
    for words in GENERAL_WORDS:
        assert words not in cause


def test_a_suite_diagnostic_comes_before_the_general_tier():
    # the result is also the expected with a ReLU; the suite's own cause is named first
    suite_says = diagnose.matches
    student = lambda x, y: np.maximum(_affine(x, y), 0.0)  # noqa: E731
    with pytest.raises(CheckFailure) as failure:
        values.assert_matches_reference(
            student,
            _affine,
            _vectors(3, 5),
            what="combine(x, y)",
            diagnostics=lambda args: (
                suite_says(np.maximum(_affine(*args), 0.0), "the suite's words", "suite"),
            ),
        )
    assert failure.value.finding.cause == "the suite's words"


def _norm_squared(x, y):  # a reference whose values are all positive
    return x**2 + y**2 + 0.5


def _weighted(x, y, k=2.0):  # a reference with a number argument that has a default
    return k * x - y


def _weighted_inputs(*lengths):
    return _vectors(*lengths).flatmap(
        lambda pair: st.sampled_from([0.5, 3.0, -1.5]).map(lambda k: (*pair, k))
    )


@pytest.mark.parametrize(
    ("student", "reference", "strategy", "words"),
    [
        (
            lambda x, y: np.sqrt(_norm_squared(x, y)),
            _norm_squared,
            _vectors,
            "every value is the square root of the expected",
        ),
        (
            lambda x, y, k=2.0: 2.0 * x - y,
            _weighted,
            _weighted_inputs,
            "the values are those for k=2.0, whatever k is given: the k passed is never used",
        ),
    ],
)
def test_an_argument_or_root_mistake_is_named_on_two_sizes_only(
    student, reference, strategy, words
):
    what = "combine(x, y, k)" if reference is _weighted else "combine(x, y)"
    assert words in _cause(student, reference, strategy(3, 5), what=what)
    assert _cause(student, reference, strategy(4), what=what) == ""


@pytest.mark.parametrize(
    "student",
    [
        lambda x, y, k=2.0: 2.5 * x - y,  # a constant hard-coded, not the default
        lambda x, y, k=2.0: k * y - x,  # k used, x and y swapped (named as such, not k)
    ],
)
def test_an_unused_argument_is_not_named_on_look_alikes(student):
    cause = _cause(student, _weighted, _weighted_inputs(3, 5), what="combine(x, y, k)")
    assert "never used" not in cause


def _tree_step(params, grads):  # a reference over two trees of one structure
    return {k: params[k] - 0.5 * grads[k] for k in params}


def _trees(n, seed):
    rng = np.random.default_rng(seed)
    tree = lambda: {"w": rng.normal(size=(n, 2)), "b": rng.normal(size=n)}  # noqa: E731
    return tree(), tree()


@pytest.mark.parametrize(
    ("student", "named"),
    [
        (lambda p, g: _tree_step(g, p), True),  # the two trees in each other's place
        (lambda p, g: {k: g[k] - 0.5 * p[k] + 0.1 for k in p}, False),  # and a stray constant
        (lambda p, g: {k: p[k] + 0.5 * g[k] for k in p}, False),  # another mistake
    ],
)
def test_two_trees_in_each_others_place_are_named_on_two_sizes(student, named):
    seen = [((p, g), student(p, g), _tree_step(p, g)) for p, g in (_trees(3, 0), _trees(5, 1))]
    cause = diagnose.confirmed(
        seen, lambda args: (), names=("params", "grads"), reference=_tree_step
    )
    assert ("with params and grads in each other's place" in cause) is named
    # one size alone confirms nothing
    assert diagnose.confirmed(seen[:1], lambda args: (), reference=_tree_step) == ""


def _power(x, k):  # a reference with a whole-number argument
    return x**k


def _powers(*lengths):
    return _vectors(*lengths, positive=True).flatmap(
        lambda pair: st.sampled_from([2, 3, 4]).map(lambda k: (pair[0], k))
    )


@pytest.mark.parametrize(
    ("student", "words"),
    [
        (lambda x, k: x ** (k + 1), "the values are those for k + 1, whatever k is given"),
        (lambda x, k: x ** (k - 1), "the values are those for k - 1, whatever k is given"),
    ],
)
def test_a_whole_number_one_off_is_named_on_two_sizes_only(student, words):
    assert words in _cause(student, _power, _powers(3, 5), what="power(x, k)")
    assert _cause(student, _power, _powers(4), what="power(x, k)") == ""


@pytest.mark.parametrize(
    "student",
    [
        lambda x, k: x**k + 1,  # one added to the result, not to k
        lambda x, k: x ** (2 * k),  # k doubled: k + 1 only where k is 1
        lambda x, k: x ** (k + 2),  # two off
    ],
)
def test_a_whole_number_one_off_is_not_named_on_look_alikes(student):
    assert "off-by-one" not in _cause(student, _power, _powers(3, 5), what="power(x, k)")
