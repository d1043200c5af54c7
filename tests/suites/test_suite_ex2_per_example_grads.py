"""The ex2_per_example_grads suite graded against the solution, the stub, alternative
solutions and broken submissions, each in its own subprocess (as the runner grades)."""

import pytest

pytestmark = pytest.mark.slow

LESSON = "ex2_per_example_grads"
GATED = {"test_mean_is_full_batch_grad", "test_no_growth", "test_jittable", "test_pure"}


def test_solution_passes_every_check(graded):
    graded("solution").assert_full_marks()


def test_alternative_solution_passes(graded):
    # a closure over params, vmap(optax.tree.norm), jax.lax.top_k
    graded("alternative").assert_full_marks()


@pytest.mark.parametrize(
    "name",
    [
        "jacrev_einsum",  # jax.jacrev of the vmapped losses, einsum norms, flipped argsort
        "value_and_grad_partial",  # vmap(value_and_grad), partial(jax.jit), vdot norms
    ],
)
def test_other_correct_styles_score_full_marks(graded, name):
    g = graded(name)
    g.assert_full_marks()


def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


def test_a_python_loop_of_grad_has_the_values_but_is_not_vmap(graded):
    g = graded("python_loop")
    g.assert_statuses(failed={"test_no_growth"})
    message = g.message("test_no_growth")
    assert "at n=4" in message and "at n=32" in message
    assert "jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))" in message
    assert "your loop unrolled" in g.cause("test_no_growth")


def test_sum_of_leaf_norms_and_ascending_top_k(graded):
    g = graded("sloppy_norms")
    g.assert_statuses(failed={"test_norms", "test_largest_order", "test_jittable", "test_pure"})
    for gated in ("test_jittable", "test_pure"):  # per_example_grads' properties still count
        message = g.message(gated)
        assert "1 of 3 passed" in message, message
        assert (
            "per_example_grad_norms: this property is judged once the values are right" in message
        )
        assert g.results[gated]["fraction"] == pytest.approx(1 / 3)
    assert "not the global norm: these are the sums of each leaf's own norm" in g.message(
        "test_norms"
    )
    order = g.message("test_largest_order")
    assert "the right examples in reverse order, smallest first" in order


def test_full_batch_gradient_repeated_is_named(graded):
    g = graded("full_batch_repeated")
    values = {"test_matches_loop", "test_batch_of_32", "test_norms", "test_largest_order"}
    g.assert_statuses(failed=values | GATED)
    for check_id in ("test_matches_loop", "test_batch_of_32"):
        message = g.message(check_id)
        assert "the gradient of the whole batch's MEAN loss" in message, message
        assert "repeated" in message and "not on example i alone" in message
    assert "every example has the same norm" in g.message("test_norms")
    # its batch mean IS the full-batch gradient: that check earns nothing for it
    assert g.results["test_mean_is_full_batch_grad"]["blocked_by"] == "test_matches_loop"
    assert "values are wrong: " in g.message("test_mean_is_full_batch_grad")


def test_print_at_trace_time_and_module_history_are_impure(graded):
    g = graded("side_effects")
    g.assert_statuses(failed={"test_pure"})
    message = g.message("test_pure")
    assert "1 of 3 passed" in message
    assert "per_example_grads: side effects of per_example_grads" in message
    assert "a Python `print` runs only while jit traces the function" in message
    assert "largest_gradient_examples: purity of largest_gradient_examples" in message
    assert "the global `_QUERIES` grew" in message


@pytest.mark.slow
def test_ranking_by_wrong_norms_does_not_blame_the_order(graded):
    # held-out case c32: the order follows the student's own, wrong norms: the norms are named,
    # not the order
    g = graded("norm_mean_squares")
    assert g.status("test_norms") == "failed"
    order = g.message("test_largest_order")
    assert g.status("test_largest_order") == "failed"
    assert "in the wrong order" not in order
    assert "your per_example_grad_norms" in g.cause("test_largest_order")


@pytest.mark.slow
def test_examples_ranked_by_their_loss_are_named(graded):
    # held-out case h_ex2b: top_k of the per-example losses where the gradient norms rank
    g = graded("ranked_by_loss")
    g.assert_fails("test_largest_order", cause="the k examples with the largest LOSS")
    assert g.status("test_norms") == "passed"
    # look-alikes: other wrong orders name their own mistake, not this one
    for other in ("skips_largest", "top_norms", "reverse_slice_short"):
        assert "LOSS" not in graded(other).cause("test_largest_order"), other
