"""The 04_vmap suite graded against the solution, an alternative solution, the stub and
broken submissions (each folder in its own subprocess, two at a time)."""

import pytest
from harness import lesson_files

from grader.catalog import read_suite
from grader.checks.failure import CAUSE_LABEL

LESSON = "04_vmap"


def test_suite_manifest():
    spec = read_suite(lesson_files(LESSON).suite)
    assert spec.max_score == 18
    assert {c.id for c in spec.checks if c.visibility == "hidden"} == set()


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_full_marks()


@pytest.mark.slow
def test_alternative_solution_passes_every_check(graded):
    graded("alternative").assert_full_marks()


@pytest.mark.slow
@pytest.mark.parametrize(
    "variant",
    [
        # in_axes as a pytree like params, out_axes=1 with b mapped outside, norm squared
        "pytree_in_axes_out_axes",
        # jitted functions, a broadcast multiply-sum, in_axes=1 on xs.T, one decorator vmap
        # around a distance that broadcasts over b
        "jitted_transposed",
    ],
)
def test_other_idioms_pass_every_check(graded, variant):
    graded(variant).assert_full_marks()


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_python_loops_give_the_right_values_but_grow(graded):
    g = graded("python_loop")
    g.assert_statuses(failed={"test_batch_predict_no_growth", "test_pairwise_no_growth"})
    assert "21 operations at n=4, 163 operations at n=32" in g.message(
        "test_batch_predict_no_growth"
    )
    assert "one copy of predict per example" in g.message("test_batch_predict_no_growth")
    assert "nest two `jax.vmap`s" in g.message("test_pairwise_no_growth")


@pytest.mark.slow
def test_default_in_axes_batches_params_and_swapped_maps_transpose(graded):
    g = graded("default_in_axes")
    g.assert_statuses(
        failed={
            "test_batch_predict_matches_loop",
            "test_batch_predict_params_unbatched",
            "test_batch_predict_no_growth",
            "test_batch_predict_jit",
            "test_pure",
            "test_pairwise_values",
            "test_pairwise_no_growth",
            "test_pairwise_jit",
        }
    )
    for check in ("test_batch_predict_matches_loop", "test_batch_predict_params_unbatched"):
        assert "params were batched too" in g.message(check)
        assert "in_axes=(None, 0)" in g.message(check)
    assert "expected: shape (4, 4)" in g.message(
        "test_batch_predict_params_unbatched"
    )  # silent: no error
    # properties of a batch_predict with wrong values are not judged: gated on the value checks
    for check in ("test_batch_predict_no_growth", "test_batch_predict_jit"):
        assert g.results[check]["blocked_by"] == "test_batch_predict_matches_loop"
        assert "values are wrong" in g.message(check)
    pure = g.results["test_pure"]
    assert pure["fraction"] == pytest.approx(1 / 3)  # predict is right and pure
    assert "values are wrong" in pure["message"]
    # the swapped maps give D.T: confirmed on the numbers, named as a transpose
    assert "matrix transposed" in g.message("test_pairwise_values")
    for check in ("test_pairwise_no_growth", "test_pairwise_jit"):
        assert g.results[check]["blocked_by"] == "test_pairwise_values"


@pytest.mark.slow
def test_the_expansion_formula_passes_every_check(graded):
    """|a|^2 + |b|^2 - 2 a.b is ||a - b||^2 to float32 precision: the spec asks for the
    matrix D, not for exact zeros on its diagonal (the hidden check that did is gone)."""
    graded("expansion").assert_full_marks()


def _cause(message):
    lines = [line for line in message.splitlines() if line.strip().startswith(CAUSE_LABEL)]
    return lines[0] if lines else ""


@pytest.mark.slow
def test_a_missing_bias_and_unsquared_distances_are_named(graded):
    g = graded("no_bias_norms")
    for check in (
        "test_predict_values",
        "test_batch_predict_matches_loop",
        "test_batch_predict_params_unbatched",
        "test_pairwise_values",
    ):
        assert g.results[check]["status"] == "failed", check
    assert "without the bias" in _cause(g.message("test_predict_values"))
    assert "not their squares" in _cause(g.message("test_pairwise_values"))
    # a batch_predict whose values differ but not as vmap over params does: no cause guessed
    assert "params were batched" not in g.message("test_batch_predict_params_unbatched")


@pytest.mark.slow
def test_the_expansion_with_its_cross_term_once_is_named(graded):
    # held-out case h04a: |a|^2 + |b|^2 - a.b; the right expansion gets full marks (above), and
    # the other pairwise mistakes name their own
    g = graded("cross_term_once")
    assert g.status("test_pairwise_values") == "failed"
    assert "cross term is taken once" in g.cause("test_pairwise_values")
    for other in ("no_bias_norms", "abs_distance_out_axes", "sum_then_square", "swapped_pairwise"):
        assert "cross term" not in graded(other).cause("test_pairwise_values"), other


@pytest.mark.slow
def test_differences_no_diagnostic_confirms_name_no_cause(graded):
    g = graded("unexplained")
    for check in ("test_predict_values", "test_pairwise_values"):
        message = g.message(check)
        assert g.results[check]["status"] == "failed"
        assert CAUSE_LABEL not in message, message
        assert "expected:" in message and "observed:" in message


@pytest.mark.slow
def test_a_numpy_predict_and_a_trace_time_print(graded):
    g = graded("numpy_predict_prints")
    g.assert_statuses(failed={"test_predict_jit", "test_pure"})
    jit_message = g.message("test_predict_jit")
    assert "TracerArrayConversionError" in jit_message and "np.asarray(params" in jit_message
    pure = g.results["test_pure"]
    assert pure["fraction"] == pytest.approx(2 / 3)
    assert "printed 'pairwise distances of (4, 3) and (2, 3)" in pure["message"]
    assert "jax.debug.print" in pure["message"]


@pytest.mark.slow
def test_a_difference_of_squares_is_named(graded):
    # sum(u**2 - v**2) per pair: ||a[i]||^2 - ||b[j]||^2 on both fixed inputs; the other
    # pairwise mistakes name their own
    graded("difference_of_squares").assert_fails(
        "test_pairwise_values", cause="a difference of squares"
    )
    for other in ("cross_term_once", "no_bias_norms", "sum_then_square", "swapped_pairwise"):
        assert "difference of squares" not in graded(other).cause("test_pairwise_values"), other


@pytest.mark.slow
def test_one_vmap_over_both_point_sets_is_named(graded):
    # held-out case h04c: jax.vmap(sq_dist)(a, b) raises on 4 and 2 rows; on rows cut to the
    # same count it gives the row-wise distances, at both sizes
    g = graded("one_vmap_over_both")
    g.assert_fails(
        "test_pairwise_values", "inconsistent sizes", cause="one `jax.vmap` maps a and b together"
    )
    for other in ("difference_of_squares", "cross_term_once"):
        assert "maps a and b together" not in graded(other).cause("test_pairwise_values"), other


@pytest.mark.slow
def test_x_at_w_is_named_by_square_weights(graded):
    # held-out case h04a: x @ w + b raises on the search's (2, 3) weights; on square weights of
    # two sizes it gives x @ w + b
    g = graded("x_at_w")
    g.assert_fails("test_predict_values", cause="predict computes `x @ w`")
    for other in ("bias_subtracted", "predict_relu"):
        assert "x @ w" not in graded(other).cause("test_predict_values"), other


@pytest.mark.slow
def test_the_square_left_out_is_named_by_the_lesson_form(graded):
    # sum(u - v) is the lesson's sum((u - v) ** 2) with the power 1 (a mutant of the lesson's
    # form, _lesson_pairwise), on points of 3 and of 4 coordinates; `* 2` typed for `** 2` is
    # no one edit of it and names nothing
    graded("difference_not_squared").assert_fails(
        "test_pairwise_values", cause="the power 1 where it raises to the power 2"
    )
    g = graded("square_as_doubling")
    assert g.status("test_pairwise_values") == "failed"
    assert g.cause("test_pairwise_values") == "", g.message("test_pairwise_values")
