"""diagnose's built-in factor cause: where no diagnostic the suite offers is confirmed, a
result that is an exact multiple of the reference's on every failing input is named, as a
constant or as a function of one argument size that follows the size, and only when no
other reading fits as well."""

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.checks import diagnose, values
from grader.checks.failure import CheckFailure

RNG = np.random.default_rng(3)


def _nothing(args):
    return ()


def _inputs(fn, reference, shapes):
    """(args, fn's result, the reference's result) for random arguments of each shape tuple."""
    out = []
    for arg_shapes in shapes:
        args = tuple(RNG.normal(size=s).astype(np.float32) for s in arg_shapes)
        out.append((args, np.asarray(fn(*args)), np.asarray(reference(*args))))
    return out


def _cause(fn, reference, shapes):
    return diagnose.confirmed(_inputs(fn, reference, shapes), _nothing)


# -- the functions, right and wrong ----------------------------------------------------------


def _mse(pred, y):
    return jnp.mean((pred - y) ** 2)


def _half_mse(pred, y):
    return 0.5 * jnp.mean((pred - y) ** 2)


def _pairwise(a, b):
    return jax.vmap(lambda p: jax.vmap(lambda q: jnp.sum((p - q) ** 2))(b))(a)


def _pairwise_mean(a, b):
    return jax.vmap(lambda p: jax.vmap(lambda q: jnp.mean((p - q) ** 2))(b))(a)


def _summed_mse(pred, y):
    return jnp.sum((pred - y) ** 2)


def _he_scale(w):
    return w * jnp.sqrt(2.0 / w.shape[0])


def _he_scale_wrong(w):
    return w * jnp.sqrt(2.0) / w.shape[0]


def _regression_loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


def _loss_over_features(w, x, y):
    return jnp.sum((x @ w - y) ** 2) / x.shape[1]


# -- named -----------------------------------------------------------------------------------


def test_a_constant_half_is_named_on_every_size():
    text = _cause(_half_mse, _mse, [((3,), (3,)), ((7,), (7,)), ((12,), (12,))])
    assert text.startswith("every value is 1/2 of the expected, on inputs of every size tried")
    assert "a constant factor" in text


def test_a_mean_over_d_follows_d():
    text = _cause(_pairwise_mean, _pairwise, [((4, 3), (2, 3)), ((3, 5), (6, 5))])
    assert text.startswith(
        "every value is 1/d of the expected (d = 3 columns of the first argument here; "
        "5 on another input)"
    )
    assert "second argument" not in text  # b's columns are the same d: one clause per size
    assert "a mean over the columns of the first argument where a sum belongs" in text


def test_a_sum_over_the_batch_is_the_batch_size():
    text = _cause(_summed_mse, _mse, [((128,), (128,)), ((32,), (32,))])
    assert text.startswith(
        "every value is d times the expected (d = 128 entries of the first argument here; "
        "32 on another input)"
    )
    assert "summed over the entries of the first argument where their mean belongs" in text


def test_he_init_without_its_square_root_is_one_over_sqrt_fan_in():
    text = _cause(_he_scale_wrong, _he_scale, [((16, 4),), ((9, 4),), ((25, 3),)])
    assert text.startswith(
        "every value is 1/sqrt(d) of the expected (d = 16 rows of the first argument here; "
        "9 on another input)"
    )
    assert "square root missing" in text


def test_a_sum_divided_by_the_features_is_n_over_d():
    shapes = [((2,), (3, 2), (3,)), ((3,), (4, 3), (4,)), ((1,), (5, 1), (5,))]
    text = _cause(_loss_over_features, _regression_loss, shapes)
    assert text.startswith(
        "every value is n/d times the expected (n = 3 rows of the second argument, d = 2 of "
        "its columns here; 4 and 3 on another input)"
    )
    assert "a division by the number of columns of the second argument where the mean " in text
    assert "over its rows belongs" in text
    # with the arguments' names, as a suite gives them
    named = diagnose.confirmed(
        _inputs(_loss_over_features, _regression_loss, shapes), _nothing, names=("w", "x", "y")
    )
    assert named == (
        "every value is n/d times the expected (n = 3 rows of x, d = 2 of its columns here; "
        "4 and 3 on another input): a division by the number of columns of x where the mean "
        "over its rows belongs"
    )


def test_a_flipped_sign_on_every_size():
    text = _cause(lambda a, b: -_mse(a, b), _mse, [((3,), (3,)), ((8,), (8,))])
    assert "minus the expected" in text and "a sign is flipped" in text


def test_a_search_names_the_factor_without_diagnostics():
    """`values.assert_matches_reference` with no diagnostics: the factor is confirmed on
    failing inputs of other sizes (the search's own, or a short search for them)."""
    floats = st.floats(-4, 4, width=32).filter(lambda v: abs(v) > 0.25)
    points = st.tuples(st.integers(2, 6), st.integers(2, 6), st.integers(1, 4)).flatmap(
        lambda s: st.tuples(
            hnp.arrays(np.float32, (s[0], s[2]), elements=floats),
            hnp.arrays(np.float32, (s[1], s[2]), elements=floats),
        )
    )
    try:
        values.assert_matches_reference(
            _pairwise_mean, _pairwise, points, what="pairwise(a, b)", max_examples=30
        )
    except CheckFailure as failure:
        text = str(failure)
    else:
        raise AssertionError("the wrong pairwise passed")
    # the 1/d reading is named, alone where the inputs tried had several d, beside the
    # constant 1/d where the failing inputs the search kept all had one d (seen in CI)
    assert "1/d" in text or "d = " in text or "division by d" in text, text
    assert "where a sum belongs" in text, text


# -- silent ------------------------------------------------------------------------------------


def _broadcast_mse(pred, y):
    """(B, 1) predictions minus (B,) targets: the mean of a (B, B) residual."""
    return jnp.mean((pred[:, None] - y[None, :]) ** 2)


def test_a_broadcast_residual_is_no_factor():
    """At one B the ratio can be anything; across inputs it follows no size."""
    assert _cause(_broadcast_mse, _mse, [((3,), (3,)), ((5,), (5,)), ((8,), (8,))]) == ""


def test_a_factor_on_one_size_only_is_not_named():
    def half_at_three(pred, y):
        loss = _mse(pred, y)
        return 0.5 * loss if pred.shape[0] == 3 else loss + 0.1

    assert _cause(half_at_three, _mse, [((3,), (3,)), ((5,), (5,))]) == ""


def test_one_input_size_confirms_nothing():
    assert _cause(_half_mse, _mse, [((3,), (3,)), ((3,), (3,))]) == ""


def test_two_sizes_that_fit_alike_name_nothing():
    """1/n where x is (n, n * n): the mean over axis 0 (1/n) and 1/sqrt of axis 1 fit alike."""

    def mean_rows(x):
        return jnp.mean(x, axis=0)

    def sum_rows(x):
        return jnp.sum(x, axis=0)

    assert _cause(mean_rows, sum_rows, [((2, 4),), ((3, 9),), ((4, 16),)]) == ""


def test_a_constant_that_a_fixed_size_also_gives_names_both():
    """d = 3 on every input: a mean over d and a constant 1/3 fit alike, and both are said."""
    text = _cause(_pairwise_mean, _pairwise, [((4, 3), (2, 3)), ((2, 3), (4, 3))])
    assert text.startswith(
        "every value is 1/3 of the expected on every input tried (d = 3 columns of the first "
        "argument on every input tried): a mean over the columns"
    )
    assert "or a constant factor" in text


def test_a_suite_cause_comes_first():
    """A diagnostic the suite offers and the inputs confirm is named, not the factor."""
    inputs = _inputs(_summed_mse, _mse, [((4,), (4,)), ((6,), (6,))])
    text = diagnose.confirmed(
        inputs, lambda args: (diagnose.batch_scale(len(args[0]), what="the batch"),)
    )
    assert "summed over the batch where the mean is wanted" in text


def test_right_values_and_unrelated_errors_name_nothing():
    right = _inputs(_mse, _mse, [((3,), (3,)), ((5,), (5,))])
    assert diagnose.confirmed(right, _nothing) == ""
    off = [(args, got + 0.3, want) for args, got, want in right]
    assert diagnose.confirmed(off, _nothing) == ""


def test_axes_of_one_size_on_every_input_are_named_together():
    """A square x: axis 0 and axis 1 are one size on every input, so the cause names both
    places and says which of them the mean runs over no more than the inputs can tell."""

    def mean_rows(x):
        return jnp.mean(x, axis=0)

    def sum_rows(x):
        return jnp.sum(x, axis=0)

    text = _cause(mean_rows, sum_rows, [((3, 3),), ((5, 5),)])
    assert "(d = 3 rows of the first argument (as many as its columns) here; 5 on" in text
    assert "a mean over the rows or columns of the first argument where a sum belongs" in text
