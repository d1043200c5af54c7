"""diagnose: each diagnostic confirms its cause on the numbers a real mistake gives, and
stays silent on the right values and on a difference it does not explain."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.checks import diagnose, values
from grader.checks.failure import CheckFailure

RNG = np.random.default_rng(0)
X = RNG.normal(size=(6, 4)).astype(np.float32)  # 6 rows: n = 6 along axis 0


def _standardize(x, axis=0, ddof=0):
    return (x - jnp.mean(x, axis=axis, keepdims=True)) / (
        jnp.std(x, axis=axis, keepdims=True, ddof=ddof) + 1e-8
    )


def _kind(actual, expected, *diagnostics):
    found = diagnose.find(actual, expected, *diagnostics)
    return found.kind if found is not None else None


def _unrelated(expected):
    """A wrong result no diagnostic explains: one element off by 0.3."""
    out = np.array(expected, np.float32, copy=True)
    out.flat[1] += 0.3
    return out


# -- each diagnostic: the mistake it names, the right values, an unrelated difference ----------

STD = np.asarray(jnp.std(X, axis=0))
CASES = [
    # (name, diagnostic, what the mistake gives, the right values, kind named)
    (
        "ddof=1 in a standardization",
        diagnose.sample_std(6),
        np.asarray(_standardize(X, ddof=1)),
        np.asarray(_standardize(X)),
        "ddof",
    ),
    (
        "ddof=1 in a std",
        diagnose.sample_std(6),
        np.asarray(jnp.std(X, axis=0, ddof=1)),
        STD,
        "ddof",
    ),
    (
        "a sum over the batch",
        diagnose.batch_scale(6),
        X.sum(axis=0),
        X.mean(axis=0),
        "batch_sum",
    ),
    (
        "a mean taken twice",
        diagnose.batch_scale(6),
        X.mean(axis=0) / 6,
        X.mean(axis=0),
        "batch_mean",
    ),
    ("a flipped sign", diagnose.negated, -X, X, "sign"),
    ("a transposed matrix", diagnose.transposed, X.T, X, "transposed"),
    (
        "a transposed square matrix",
        diagnose.transposed,
        X[:4].T,
        X[:4],
        "transposed",
    ),
    (
        "statistics along axis 1",
        diagnose.other_axis(lambda a: np.asarray(_standardize(X[:4, :4], a)), 0, 2),
        np.asarray(_standardize(X[:4, :4], 1)),
        np.asarray(_standardize(X[:4, :4], 0)),
        "axis",
    ),
    (
        "an exclusive running sum",
        diagnose.shifted,
        np.concatenate([[0.0], np.cumsum(X[:, 0])[:-1]]),
        np.cumsum(X[:, 0]),
        "shift",
    ),
    (
        "a sum one element short",
        diagnose.shifted,
        np.append(np.cumsum(X[:, 0])[1:], 0.0),
        np.cumsum(X[:, 0]),
        "shift",
    ),
    (
        "a mistake the suite computes",
        diagnose.matches(X * 2.5, "the x2.5 mistake", kind="x2.5"),
        X * 2.5,
        X,
        "x2.5",
    ),
]


@pytest.mark.parametrize(
    ("diagnostic", "mistake", "right", "kind"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_names_the_mistake_it_confirms(diagnostic, mistake, right, kind):
    assert _kind(mistake, right, diagnostic) == kind


@pytest.mark.parametrize(
    ("diagnostic", "right"), [(c[1], c[3]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_silent_on_the_right_values_and_an_unrelated_difference(diagnostic, right):
    assert _kind(np.asarray(right), right, diagnostic) is None
    assert _kind(_unrelated(right), right, diagnostic) is None


def test_a_ratio_near_but_not_at_the_candidate_is_not_confirmed():
    right = np.asarray(_standardize(X))
    assert _kind(right * 0.99, right, diagnose.sample_std(6)) is None  # sqrt(5/6) is 0.913
    assert _kind(right * 5.9, right, diagnose.batch_scale(6)) is None
    assert _kind(right * -0.5, right, diagnose.negated) is None


def test_none_means_not_written_yet():
    assert _kind(None, X) == "none"
    assert "not written yet" in diagnose.first(None, X)
    assert _kind(X, X) is None


def test_an_update_with_the_wrong_sign():
    params = {"w": X, "b": np.zeros(4, np.float32)}
    grads = {"w": np.ones_like(X), "b": np.full(4, 0.5, np.float32)}
    tx = optax.adam(1e-3)
    updates, _ = tx.update(grads, tx.init(params), params)
    right = optax.apply_updates(params, updates)
    uphill = jax.tree.map(lambda p, u: p - u, params, updates)  # subtracted: climbs the loss
    assert _kind(uphill, right, diagnose.update_sign(params)) == "update_sign"
    assert _kind(right, right, diagnose.update_sign(params)) is None
    twice = jax.tree.map(lambda p, u: p + 2 * u, params, updates)  # another step size
    assert _kind(twice, right, diagnose.update_sign(params)) is None
    assert _kind(params, right, diagnose.update_sign(params)) is None  # not updated at all


def test_a_rising_loss():
    # plain gradient descent and ascent on a quadratic bowl
    def run(sign):
        w, losses = np.array([2.0, -1.0]), []
        for _ in range(8):
            losses.append(float(np.sum(w**2)))
            w = w - sign * 0.1 * 2 * w
        return losses

    found = diagnose.loss_rises(run(-1))
    assert found is not None and found.kind == "loss_rises"
    assert "rose from 5 to" in found.text
    assert diagnose.loss_rises(run(+1)) is None  # descending
    assert diagnose.loss_rises([2.3, 2.4, 2.29, 2.5, 2.45, 2.6]) is None  # wanders: not confirmed
    assert diagnose.loss_rises([2.3, float("nan"), 9.0]) is None


def test_values_diagnose_a_failure_and_show_only_the_difference_otherwise():
    right = np.asarray(_standardize(X))
    with pytest.raises(CheckFailure) as wrong_ddof:
        values.assert_close(
            _standardize(X, ddof=1), right, what="standardize(x)", rtol=1e-4, atol=1e-6,
            diagnostics=(diagnose.sample_std(6),),
        )  # fmt: skip
    assert "ddof=1" in wrong_ddof.value.finding.cause
    with pytest.raises(CheckFailure) as unmatched:
        values.assert_close(
            _unrelated(right), right, what="standardize(x)", rtol=1e-4, atol=1e-6,
            diagnostics=(diagnose.sample_std(6),),
        )  # fmt: skip
    assert unmatched.value.finding.cause == ""
    assert "values differ; first at index (0, 1)" in unmatched.value.finding.observed


def test_none_is_not_explained_as_a_container():
    found = values.difference(None, (X, X))
    assert found is not None and found.cause == diagnose.NOT_WRITTEN


def test_the_search_diagnoses_its_smallest_input():
    matrices = st.sampled_from([(2, 1), (3, 2)]).map(
        lambda s: (np.arange(np.prod(s), dtype=np.float32).reshape(s) ** 2,)
    )

    def reference(x):
        return np.asarray(_standardize(x))

    with pytest.raises(CheckFailure) as failure:
        values.assert_matches_reference(
            lambda x: _standardize(x, ddof=1),
            reference,
            matrices,
            what="standardize(x)",
            rtol=1e-4,
            diagnostics=lambda args: (diagnose.sample_std(args[0].shape[0]),),
        )
    assert "sqrt(2/1)" in failure.value.finding.cause  # the (2, 1) input, shrunk to


@pytest.mark.parametrize(
    ("got", "wanted", "cause"),
    [
        ((4, 3), (3, 4), "the axes are in the reverse order of the expected shape"),
        ((4,), (None, 4), "one axis too few"),
        (
            (2, 3, 1),
            (2, 3),
            "one axis too many, of length 1, at position 2 (what a reduction "
            "with keepdims=True, an indexing with None, or a (n, 1) operand in a product leaves)",
        ),
        ((2, 3, 4), (2, 3), "one axis too many"),  # not of length 1: no more is said
        ((1, 1), (1,), "one axis too many"),  # which of the two is the extra one is not told
        ((2, 3), (3, 3), ""),  # a size differs: the shapes show no more than that
    ],
)
def test_a_wrong_shape_names_only_what_the_shapes_show(got, wanted, cause):
    with pytest.raises(CheckFailure) as failure:
        values.assert_shape(np.zeros(got), wanted, what="out")
    assert failure.value.finding.cause == cause


# -- structure before numbers ----------------------------------------------------------------


def _ref_mse(w, x, y):
    return jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)


def _regressions(sizes):
    @st.composite
    def draw(draw):
        n, d = draw(st.sampled_from(sizes))
        quarters = st.integers(-8, 8).map(lambda k: k / 4)
        return (
            draw(hnp.arrays(np.float32, d, elements=quarters)),
            draw(hnp.arrays(np.float32, (n, d), elements=quarters)),
            draw(hnp.arrays(np.float32, n, elements=quarters)),
        )

    return draw()


def _mse_diagnostics(args):
    rows = diagnose.batch_scale(int(np.shape(args[2])[0]), what="the rows of x")
    return (rows, lambda g, w: rows(g[0], w[0]), lambda g, w: rows(g[1], w[1]))


LOSS, GRAD = np.float32(0.75), np.arange(4, dtype=np.float32)


@pytest.mark.parametrize(
    ("got", "wanted"),
    [
        ((GRAD, LOSS), (LOSS, GRAD)),  # (loss, grad) returned as (grad, loss): shapes tell
        ([GRAD, LOSS], [LOSS, GRAD]),
        ((X[0], X[1]), (X[1], X[0])),  # two outputs of one shape: the values tell
        ((LOSS, X, GRAD), (LOSS, GRAD, X)),  # three outputs, the last two swapped
    ],
    ids=["loss-grad", "list", "same-shape", "three"],
)
def test_swapped_outputs_are_named_as_their_order(got, wanted):
    assert _kind(got, wanted, diagnose.batch_scale(3)) == "order"
    found = values.difference(got, wanted)
    assert found is not None and "wrong order" in found.cause
    assert "dimension" not in found.cause and "keepdims" not in found.cause
    with pytest.raises(CheckFailure) as failure:
        values.assert_close(got, wanted, what="f(x)", diagnostics=(diagnose.batch_scale(3),))
    assert "the outputs are in the wrong order" in failure.value.finding.cause


def test_outputs_in_order_or_wrong_otherwise_name_no_order():
    assert diagnose.swapped_outputs((LOSS, GRAD), (LOSS, GRAD)) is None
    assert diagnose.swapped_outputs((LOSS, GRAD + 1), (LOSS, GRAD)) is None  # a wrong value
    assert diagnose.swapped_outputs((X[0] + 1, X[1]), (X[1], X[0])) is None  # not a swap
    assert diagnose.swapped_outputs((GRAD,), (GRAD,)) is None  # one output: no order
    found = values.difference((LOSS, GRAD[:3]), (LOSS, GRAD))
    assert found is not None and "wrong order" not in found.cause
    # what the values show: GRAD without its last element (no order, no guess beyond it)
    assert "the expected without its last element" in found.cause


def test_a_dict_whose_values_trade_places_names_the_two_keys():
    wanted = {"eager_s": 0.04, "jit_s": 0.001, "speedup": 40.0}
    got = {"eager_s": 0.001, "jit_s": 0.04, "speedup": 40.0}
    found = diagnose.swapped_outputs(got, wanted)
    assert found is not None and found.kind == "order"
    assert "under 'eager_s' and 'jit_s' are in each other's place" in found.text
    # by layout: a (3, 2) weight and its (2,) bias filed under each other's key
    w, b = np.ones((3, 2), np.float32), np.zeros(2, np.float32)
    found = diagnose.swapped_outputs({"w": b, "b": w}, {"w": w, "b": b})
    assert found is not None and "'w' and 'b'" in found.text


def test_dicts_in_order_or_of_other_keys_name_no_swap():
    wanted = {"eager_s": 0.04, "jit_s": 0.001, "speedup": 40.0}
    assert diagnose.swapped_outputs(dict(wanted), wanted) is None
    assert diagnose.swapped_outputs({**wanted, "jit_s": 0.002}, wanted) is None  # one wrong
    assert diagnose.swapped_outputs({"eager": 0.001, "jit": 0.04}, wanted) is None  # other keys
    # two values wrong, neither where the other belongs
    assert diagnose.swapped_outputs({**wanted, "eager_s": 0.5, "jit_s": 0.7}, wanted) is None


def test_the_search_names_swapped_outputs():
    def swapped(w, x, y):
        loss, grad = _ref_mse(w, x, y)
        return grad, loss

    with pytest.raises(CheckFailure) as failure:
        values.assert_matches_reference(
            swapped, _ref_mse, _regressions(((3, 2), (4, 3))), what="mse(w, x, y)",
            diagnostics=_mse_diagnostics,
        )  # fmt: skip
    assert "wrong order" in failure.value.finding.cause


def test_a_broadcast_residual_names_no_ratio():
    """(B, 1) predictions minus (B,) targets: a (B, B) residual. On the search's smallest
    input its gradient happens to be 1/3 of the right one; on other sizes it is not, so no
    "divided by 3" is claimed."""

    def broadcast(w, x, y):
        return jax.value_and_grad(lambda w: jnp.mean(((x @ w)[:, None] - y) ** 2))(w)

    sizes = ((1, 1), (3, 2), (4, 3), (5, 1))
    with pytest.raises(CheckFailure) as failure:
        values.assert_matches_reference(
            broadcast, _ref_mse, _regressions(sizes), what="mse(w, x, y)",
            diagnostics=_mse_diagnostics, max_examples=25,
        )  # fmt: skip
    assert failure.value.finding.cause == ""
    assert "values differ" in failure.value.finding.observed
    # the coincidence: on one input alone the ratio would have been claimed
    args = tuple(
        np.array(a, np.float32) for a in ([0, 0], [[0, 0], [0, 0], [0, 0.25]], [0, 0, 0.25])
    )
    assert _kind(broadcast(*args), _ref_mse(*args), *_mse_diagnostics(args)) == "batch_mean"
    assert diagnose.across((args, broadcast(*args), _ref_mse(*args)), [], _mse_diagnostics) == ""
    # and the residual itself, returned, is named by its shapes: a broadcast
    residual = values.difference(np.zeros((3, 3)), np.zeros(3))
    assert residual is not None and "shape (3, 3) where (3,) is expected" in residual.cause
    assert "broadcasting" in residual.cause and "(3, 1)" in residual.cause


def test_a_true_divide_by_n_on_two_sizes_is_named():
    def twice(w, x, y):
        loss, grad = _ref_mse(w, x, y)
        return loss / y.shape[0], grad / y.shape[0]  # a mean taken twice

    with pytest.raises(CheckFailure) as failure:
        values.assert_matches_reference(
            twice, _ref_mse, _regressions(((3, 2), (4, 3), (5, 1))), what="mse(w, x, y)",
            diagnostics=_mse_diagnostics,
        )  # fmt: skip
    assert "once too often" in failure.value.finding.cause
    # confirmed by across() only with an input of another size
    one = tuple(np.ones(s, np.float32) for s in ((2,), (3, 2), (3,)))
    other = tuple(np.ones(s, np.float32) for s in ((2,), (4, 2), (4,)))
    seen = [(a, twice(*a), _ref_mse(*a)) for a in (one, other)]
    assert "1/3" in diagnose.across(seen[0], seen[1:], _mse_diagnostics)
    assert diagnose.across(seen[0], [seen[0]], _mse_diagnostics) == ""


def test_a_wrong_number_of_outputs_is_named_by_its_arity():
    found = values.difference((LOSS, GRAD, GRAD), (LOSS, GRAD))
    assert found is not None and found.cause.startswith("3 outputs returned where 2")
    assert "1 output too many in the returned tuple" in found.cause
    found = values.difference([LOSS], (LOSS, GRAD))
    assert found is not None and found.cause.startswith("1 outputs returned where 2")
    assert "1 output missing from the returned tuple" in found.cause
    assert " or " not in found.cause
    assert diagnose.arity_cause((LOSS, GRAD), [LOSS, GRAD]) == ""  # same length
    assert diagnose.arity_cause(GRAD, (LOSS, GRAD)) == ""  # not a tuple: no arity
    found = values.difference([LOSS, GRAD], (LOSS, GRAD))
    assert found is not None and found.cause == "a list was returned where a tuple is expected"


# -- a cause is confirmed by the mistake applied to the reference, on two sizes ---------------


def _set_element(x, index, value):
    out = np.array(x, np.float64)
    out[index] = value
    return out


def _dropped(args):
    return (diagnose.matches(np.asarray(args[0]), "the update was dropped", kind="dropped"),)


def _set_args():
    @st.composite
    def draw(draw):
        n = draw(st.sampled_from((1, 3, 8)))
        x = draw(hnp.arrays(np.float32, n, elements=st.integers(-4, 4).map(float)))
        return x, draw(st.integers(0, n - 1)), draw(st.integers(-4, 4).map(float))

    return draw()


def test_a_dropped_update_is_named_and_a_multiplied_one_is_not():
    def dropped(x, index, value):
        return np.array(x, np.float64)  # the .at[...].set copy thrown away

    def multiplied(x, index, value):  # on x[index] = 0 or value = 1 it looks the same
        out = np.array(x, np.float64)
        out[index] *= value
        return out

    found = {}
    for name, fn in (("dropped", dropped), ("multiplied", multiplied)):
        with pytest.raises(CheckFailure) as failure:
            values.assert_matches_reference(
                fn, _set_element, _set_args(), what="set_element", diagnostics=_dropped
            )
        found[name] = failure.value.finding
    assert found["dropped"].cause == "the update was dropped"
    assert found["multiplied"].cause == ""
    assert "values differ" in found["multiplied"].observed
    # the coincidence the rule guards against: on x = [0.], value 1.0 both are "x unchanged"
    args = (np.zeros(1, np.float32), 0, 1.0)
    assert _kind(multiplied(*args), _set_element(*args), *_dropped(args)) == "dropped"


def test_a_cause_on_one_size_only_is_not_named():
    one = (np.zeros(3, np.float32) + 2, 1, 5.0)
    other = (np.zeros(8, np.float32) + 2, 4, 5.0)
    seen = [(a, np.array(a[0], np.float64), _set_element(*a)) for a in (one, other)]
    assert diagnose.confirmed(seen, _dropped) == "the update was dropped"
    assert diagnose.confirmed(seen[:1], _dropped) == ""  # one size: not confirmed
    assert diagnose.confirmed([seen[0], seen[0]], _dropped) == ""
    # an input whose result is right (the mistake does not show there) is passed over
    right = (one, _set_element(*one), _set_element(*one))
    assert diagnose.confirmed([right, *seen], _dropped) == "the update was dropped"
    assert diagnose.confirmed([right, seen[0]], _dropped) == ""
    # an input of the other size that the mistake does not reproduce: not confirmed
    wrong = (other, np.array(other[0], np.float64) + 1, _set_element(*other))
    assert diagnose.confirmed([seen[0], wrong], _dropped) == ""
    # the smallest is not enough: more() brings inputs of other sizes when none were seen
    assert diagnose.across(seen[0], [seen[0]], _dropped, more=lambda: seen[1:]) != ""
    assert diagnose.across(seen[0], [seen[0]], _dropped, more=lambda: [wrong]) == ""


def test_a_mistake_of_another_shape_is_matched():
    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    right = x.reshape(4, 2, 3)
    merged = diagnose.matches(right.reshape(4, -1), "merged", kind="merged_axes")
    assert _kind(x.reshape(4, -1), right, merged) == "merged_axes"
    fortran = np.reshape(x, (4, -1), order="F")  # the same shape, other values
    assert _kind(fortran, right, merged) is None
    assert _kind(right, right, merged) is None


def test_a_step_0_that_never_ran():
    ref = np.stack([np.linspace(2.3, 1.0, 6), np.linspace(0.9, 0.2, 6)], axis=1)
    late = np.vstack([np.zeros((1, 2)), ref[:-1]])
    assert _kind(late, ref, diagnose.skipped_first_step) == "step0"
    zero_first = np.vstack([np.zeros((1, 2)), ref[1:]])  # step 0 run, recorded as 0.0
    assert _kind(zero_first, ref, diagnose.skipped_first_step) is None
    assert _kind(ref, ref, diagnose.skipped_first_step) is None
    assert _kind(ref[:-1], ref, diagnose.skipped_first_step) is None  # a length apart


def test_more_failing_inputs_of_other_sizes_are_searched_for():
    def dropped(x, index, value):
        return np.array(x, np.float64)

    smallest = (np.zeros(1, np.float32), 0, 1.0)
    search = values._more_failures(dropped, _set_element, _set_args(), smallest, 1e-5, 1e-6, None)
    found = search()
    assert 1 <= len(found) <= values.MORE_FAILURES
    assert all(len(args[0]) != 1 for args, _, _ in found)  # other sizes only
    assert all(values.difference(got, want) is not None for _, got, want in found)
    assert (
        values._more_failures(_set_element, _set_element, _set_args(), smallest, 1e-5, 1e-6, 0)()
        == []
    )


def test_an_input_that_cannot_tell_is_passed_over():
    """A suite leaves a `matches` out where its input cannot tell that mistake from another
    (04's norms on pairs differing in one coordinate): such an input neither confirms nor
    contradicts the cause."""
    one = (np.zeros(3, np.float32) + 2, 1, 5.0)
    other = (np.zeros(8, np.float32) + 2, 4, 5.0)
    blind = (np.zeros(4, np.float32) + 2, 0, 5.0)
    seen = [(a, np.array(a[0], np.float64), _set_element(*a)) for a in (one, blind, other)]

    def offered(args):
        return () if len(args[0]) == 4 else _dropped(args)

    assert diagnose.confirmed(seen, offered) == "the update was dropped"
    # the blind input is no second size for the suite's cause; the general tier, offered on
    # every input, holds it as one and names what the values are: x itself
    alone = diagnose.confirmed(seen[:2], offered)
    assert "the update was dropped" not in alone
    assert alone.startswith("the result is the first argument itself, unchanged")
    # an input on which the diagnostic is offered and does not hold still contradicts it
    wrong = (other, np.array(other[0], np.float64) + 1, _set_element(*other))
    assert diagnose.confirmed([*seen, wrong], offered) == ""


_SUMS = np.cumsum(np.arange(1.0, 7.0))


@pytest.mark.parametrize(
    ("got", "words"),
    [
        (_SUMS[1:], "the expected without its first element"),
        (_SUMS[:-1], "the expected without its last element"),
        (np.r_[0.0, _SUMS], "one element more before the first"),
        (np.r_[_SUMS, 99.0], "one element more after the last"),
    ],
)
def test_an_array_one_element_off_at_one_end_is_named(got, words):
    found = values.difference(got, _SUMS)
    assert found is not None and words in found.cause, found


@pytest.mark.parametrize(
    ("got", "wanted"),
    [
        (2.0 * _SUMS[:-1], _SUMS),  # one short, other values
        (np.ones(3), np.ones(4)),  # constant: which end is not told
        (np.arange(4.0), np.arange(6.0)),  # two short
        (np.ones(1), np.ones(2)),  # one value: nothing to compare
    ],
)
def test_other_lengths_get_no_end_cause(got, wanted):
    found = values.difference(got, wanted)
    assert found is not None and "element" not in found.cause, found
