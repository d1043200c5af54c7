"""The last tier of `diagnose.across`: the reference on transformed inputs, or its output
transformed (`transformed`). A running result one place late, a sequence walked from its
end, a loop one element short, an argument doubled, halved or negated: each is named by a
real Hypothesis search (`values.assert_matches_reference`) only when it reproduces the
student's values on inputs of two sizes, and only when one text remains. Silent where the student's mistake is another formula, where the mistake holds on
one size only, and where two candidates reproduce the values alike."""

import time

import numpy as np
import pytest
from hypothesis import strategies as st

from grader.checks import diagnose, transformed, values
from grader.checks.failure import CheckFailure

START = "your values equal the right ones "


def _floats(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(low, high, width=32)


def _vectors(*lengths, low=-9.0, high=9.0):
    return st.sampled_from(lengths).flatmap(
        lambda n: st.lists(_floats(low, high), min_size=n, max_size=n).map(
            lambda v: (np.asarray(v, np.float32),)
        )
    )


def _matrices(*shapes):
    return st.sampled_from(shapes).flatmap(
        lambda shape: st.lists(
            _floats(-9.0, 9.0), min_size=shape[0] * shape[1], max_size=shape[0] * shape[1]
        ).map(lambda v: (np.asarray(v, np.float32).reshape(shape),))
    )


def _constant_vectors(*lengths):
    """Vectors whose elements are all one value: a shift along them cannot be told."""
    return st.tuples(st.sampled_from(lengths), _floats(0.5, 9.0)).map(
        lambda nc: (np.full(nc[0], nc[1], np.float32),)
    )


def _steps(*lengths):
    """(params, grads, lr): an update's arguments, lr a Python float."""
    return st.sampled_from(lengths).flatmap(
        lambda n: st.tuples(
            st.lists(_floats(-9.0, 9.0), min_size=n, max_size=n),
            st.lists(_floats(-9.0, 9.0), min_size=n, max_size=n),
            st.sampled_from([0.1, 0.25, 0.5, 1.0]),
        ).map(lambda t: (np.asarray(t[0], np.float32), np.asarray(t[1], np.float32), t[2]))
    )


def _cause(fn, reference, strategy, what="f(xs)"):
    with pytest.raises(CheckFailure) as failure:
        values.assert_matches_reference(fn, reference, strategy, what=what, rtol=1e-5, atol=1e-5)
    return failure.value.finding.cause


# -- references: module functions (the mutant tier reads their source first) ------------------


def _running_squares(xs):
    return np.cumsum(np.asarray(xs, np.float64) ** 2)


def _row_running_squares(x):
    return np.cumsum(np.asarray(x, np.float64) ** 2, axis=1)


def _prefix_sums(xs):
    return np.cumsum(np.asarray(xs, np.float64))


def _running_max(xs):
    return np.maximum.accumulate(np.asarray(xs, np.float64))


def _mean(xs):
    return np.mean(np.asarray(xs, np.float64))


def _total(xs):
    return np.sum(np.asarray(xs, np.float64))


def _sum_of_squares(xs):
    total = 0.0
    for x in np.asarray(xs, np.float64):
        total += x * x
    return np.float64(total)


def _squash(x):
    return np.tanh(np.asarray(x, np.float64))


def _softplus(x):
    return np.log1p(np.exp(np.asarray(x, np.float64)))


def _bump(x):
    return np.exp(np.asarray(x, np.float64))


def _damped_step(params, grads, lr):
    grads = np.asarray(grads, np.float64)
    return np.asarray(params, np.float64) - lr * grads / (np.abs(grads) + 1)


def _twice(xs):
    return 2.0 * np.asarray(xs, np.float64)


def _exclusive(xs):
    squares = np.asarray(xs, np.float64) ** 2
    return np.concatenate([[0.0], np.cumsum(squares)[:-1]])


CASES = [
    # (the student's function, the reference, inputs of two sizes, words of the cause)
    (
        _exclusive,
        _running_squares,
        _vectors(3, 5),
        START + "shifted one position later along axis 0, the first set to 0: out[i] is "
        "the expected out[i-1]",
    ),
    (
        lambda x: np.concatenate(
            [np.zeros((x.shape[0], 1)), np.cumsum(np.asarray(x, np.float64) ** 2, 1)[:, :-1]],
            axis=1,
        ),
        _row_running_squares,
        _matrices((2, 3), (3, 4)),
        START + "shifted one position later along axis 1",
    ),
    (
        lambda xs: np.cumsum(np.asarray(xs, np.float64))[1:],
        _prefix_sums,
        _vectors(3, 5),
        START + "shifted one position earlier along axis 0, one fewer",
    ),
    (
        lambda xs: np.append(np.cumsum(xs[1:] ** 2) + xs[0] ** 2, np.sum(xs**2)),
        _running_squares,
        _vectors(3, 5),
        START + "shifted one position earlier along axis 0, the last repeated",
    ),
    (
        lambda xs: np.maximum.accumulate(xs[::-1]),
        _running_max,
        _vectors(3, 5),
        START + "computed on xs in reverse order along its first axis",
    ),
    (
        lambda xs: np.maximum.accumulate(xs[::-1])[::-1],
        _running_max,
        _vectors(3, 5),
        START + "computed on xs in reverse order along its first axis, then put back in order",
    ),
    (
        lambda xs: np.mean(xs[1:]),
        _mean,
        _vectors(3, 5),
        START + "computed on xs without its first element along its first axis (xs[1:])",
    ),
    (
        lambda xs: np.sum(np.asarray(xs[:-1], np.float64) ** 2),
        _sum_of_squares,
        _vectors(3, 5),
        START + "computed on xs without its last element along its first axis (xs[:-1])",
    ),
    (
        lambda x: np.tanh(2 * x),
        _squash,
        _vectors(3, 5, low=-1.0, high=1.0),
        START + "computed with x doubled (2 * x where x belongs)",
    ),
    (
        lambda x: np.log1p(np.exp(x / 2)),
        _softplus,
        _vectors(3, 5, low=-3.0, high=3.0),
        START + "computed with x halved (x / 2 where x belongs)",
    ),
    (
        lambda x: np.exp(-x),
        _bump,
        _vectors(3, 5, low=-3.0, high=3.0),
        START + "computed with x negated (-x where x belongs)",
    ),
    (
        lambda p, g, lr: p - 2 * lr * g / (np.abs(g) + 1),
        _damped_step,
        _steps(3, 5),
        START + "computed with lr doubled",
    ),
]

# the call each check names (its arguments' names are the texts'); "f(xs)" otherwise
WHAT = {
    _damped_step: "step(p, g, lr)",
    _squash: "f(x)",
    _softplus: "f(x)",
    _bump: "f(x)",
    _row_running_squares: "f(x)",
}


@pytest.mark.parametrize(("fn", "reference", "strategy", "words"), CASES)
def test_named_on_two_sizes(fn, reference, strategy, words):
    assert words in _cause(fn, reference, strategy, WHAT.get(reference, "f(xs)"))


def test_every_text_is_one_of_the_tier():
    """Each case's cause is a text of this tier, named in full: no "or" guesses in it."""
    for what, text in transformed.TEXTS.items():
        assert text.startswith(START), what
        assert " or " not in text and "?" not in text, what


# -- silent: another formula, one size only, two candidates alike ------------------------------


def test_silent_for_another_formula():
    assert _cause(lambda xs: np.cumsum(xs) + xs**2, _prefix_sums, _vectors(3, 5)) == ""


def test_silent_for_a_mistake_on_one_size_only():
    """Walked from its end on length 3, a stray term on length 5: one size confirms nothing."""

    def student(xs):
        if xs.shape[0] == 3:
            return np.maximum.accumulate(xs[::-1])
        return np.maximum.accumulate(xs) + 1.0

    assert _cause(student, _running_max, _vectors(3, 5)) == ""


def test_silent_where_the_first_and_the_last_element_alike_are_left_out():
    """On vectors of one value, the sum without the first element is the sum without the
    last: the values reproduce two texts, so neither is named."""
    assert _cause(lambda xs: np.sum(xs[1:]), _total, _constant_vectors(3, 5)) == ""
    # on vectors of many values, the same student is named
    assert START + "computed on xs without its first element" in _cause(
        lambda xs: np.sum(xs[1:]), _total, _vectors(3, 5)
    )


def test_silent_where_two_arguments_doubled_alike_reproduce_the_values():
    """tanh(2 * x @ w): x doubled and w doubled give the same values: no text."""

    def reference(x, w):
        return np.tanh(np.asarray(x, np.float64) @ np.asarray(w, np.float64))

    strategy = st.sampled_from([2, 3]).flatmap(
        lambda n: st.tuples(
            st.lists(_floats(-1.0, 1.0), min_size=n, max_size=n),
            st.lists(_floats(-1.0, 1.0), min_size=n, max_size=n),
        ).map(lambda t: (np.asarray(t[0], np.float32), np.asarray(t[1], np.float32)))
    )
    cause = _cause(lambda x, w: np.tanh(2 * (x @ w)), reference, strategy, "f(x, w)")
    assert START not in cause


def test_silent_where_a_shift_and_the_identity_agree():
    """On vectors of one value, 2 * xs with its first entry 0 is the right values shifted
    one place later; the shift cannot be told from the right values there, so it is not
    named (the student's mistake is a first entry never written)."""
    assert (
        _cause(lambda xs: np.concatenate([[0.0], 2 * xs[1:]]), _twice, _constant_vectors(3, 5))
        == ""
    )


def test_an_earlier_tier_comes_first():
    """An exclusive running sum is the expected minus xs: the general tier names it, in its
    own words, before this tier is tried."""
    cause = _cause(
        lambda xs: np.concatenate([[0.0], np.cumsum(xs)[:-1]]), _prefix_sums, _vectors(3, 5)
    )
    assert cause.startswith("every value is the expected minus xs")


def test_needs_the_reference():
    """Without a reference (a check that passes none) the tier is not tried."""
    inputs = []
    for xs in (np.array([1.0, -2.0, 3.0]), np.array([-1.0, 4.0, 2.0, 0.0, 3.0])):
        inputs.append(((xs,), np.maximum.accumulate(xs[::-1]), _running_max(xs)))
    assert diagnose.confirmed(inputs, lambda args: ()) == ""
    assert START in diagnose.confirmed(inputs, lambda args: (), ("xs",), _running_max)


def test_silent_once_its_budget_is_spent(monkeypatch):
    """A reference too slow for the budget: candidates not run confirm nothing, and the tier
    names nothing rather than a text that stood alone only because the others never ran."""
    monkeypatch.setattr(transformed, "BUDGET_S", 0.05)

    def slow_max(xs):
        time.sleep(0.03)
        return np.maximum.accumulate(np.asarray(xs, np.float64))

    inputs = []
    for n in (3, 4, 5, 6):
        xs = np.arange(1.0, n + 1.0) * np.where(np.arange(n) % 2, 1.0, -1.0)
        inputs.append(((xs,), np.maximum.accumulate(xs[::-1]), slow_max(xs)))
    assert diagnose.transformed_named(inputs[0], inputs[1:], slow_max, ("xs",), list) == ""


def test_cost_on_a_failing_check():
    """The tier's time on one failing search stays within its budget (and the search)."""
    start = time.monotonic()
    _cause(lambda xs: np.cumsum(xs) + xs**2, _prefix_sums, _vectors(3, 5))
    assert time.monotonic() - start < 10 * transformed.BUDGET_S


def _tree_sgd(params, grads, lr):
    return {
        k: np.asarray(params[k], np.float64) - lr * np.asarray(grads[k], np.float64) for k in params
    }


def test_silent_where_lr_doubled_is_grads_doubled():
    """p - 2 * lr * g over a dict of parameters: lr doubled and the grads tree doubled (scaled
    whole) give the same values, so neither is named."""
    strategy = st.sampled_from([2, 4]).flatmap(
        lambda n: st.tuples(
            st.lists(_floats(-9.0, 9.0), min_size=n, max_size=n),
            st.lists(_floats(-9.0, 9.0), min_size=n, max_size=n),
            st.sampled_from([0.1, 0.5]),
        ).map(
            lambda t: (
                {"w": np.asarray(t[0], np.float32)},
                {"w": np.asarray(t[1], np.float32)},
                t[2],
            )
        )
    )

    def student(params, grads, lr):
        return {k: params[k] - 2 * lr * grads[k] for k in params}

    cause = _cause(student, _tree_sgd, strategy, "tree_sgd(params, grads, lr)")
    assert "doubled" not in cause
