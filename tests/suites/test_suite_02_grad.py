"""The 02_grad suite graded against the solution, an alternative solution, the stub and
broken submissions (each folder in its own subprocess, two at a time)."""

import pytest
from harness import lesson_files

from grader.catalog import read_suite

LESSON = "02_grad"


def test_suite_manifest():
    spec = read_suite(lesson_files(LESSON).suite)
    assert spec.max_score == 17
    assert {c.id for c in spec.checks if c.visibility == "hidden"} == {
        "test_derivative_of_derivative"
    }


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
        # jacrev as the derivative, jacfwd(jacrev), jacrev(jacfwd), functools.partial loss, einsum
        "jacobians_partial",
        # callable objects on jax.vjp, a Hessian of vmapped Hessian-vector products, argnums
        "class_hvp",
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
def test_finite_differences_are_not_exact(graded):
    g = graded("finite_difference")
    g.assert_statuses(
        failed={
            "test_derivative_exact",
            "test_second_derivative_exact",
            "test_hessian_exact",
            "test_derivative_of_derivative",
            # properties of approximate derivatives are not judged: gated on the values
            "test_compose_with_jit",
            "test_compose_with_vmap",
            "test_mse_jit_and_pure",
        }
    )
    for check in ("test_compose_with_jit", "test_compose_with_vmap"):
        assert g.results[check]["fraction"] == 0.0
        assert g.results[check]["blocked_by"] == "test_derivative_exact"
        assert "values are wrong" in g.message(check)
    pure = g.results["test_mse_jit_and_pure"]
    assert pure["fraction"] == pytest.approx(1 / 4)  # mse_value_and_grad is right and pure
    assert "values are wrong" in pure["message"]
    for check in (
        "test_derivative_exact",
        "test_second_derivative_exact",
        "test_derivative_of_derivative",
    ):
        assert "finite difference" in g.message(check)
        assert "max rel error" in g.message(check)
    assert "not the exact Hessian" in g.message("test_hessian_exact")


@pytest.mark.slow
def test_a_python_float_derivative_does_not_compose(graded):
    g = graded("float_convert")
    g.assert_statuses(
        failed={
            "test_compose_with_jit",
            "test_compose_with_vmap",
            "test_derivative_of_derivative",
        }
    )  # its values are exact
    for check in ("test_compose_with_jit", "test_compose_with_vmap"):
        r = g.results[check]
        assert r["fraction"] == pytest.approx(2 / 3)  # second_derivative and hessian compose
        assert "ConcretizationTypeError" in r["message"]
        assert "return float(jax.grad(f)(x))" in r["message"]
    assert "cannot be traced by JAX again" in g.message("test_derivative_of_derivative")
    assert "observed: ConcretizationTypeError" in g.message("test_derivative_of_derivative")


@pytest.mark.slow
def test_two_passes_and_an_outer_product_hessian(graded):
    g = graded("two_pass")
    g.assert_statuses(
        failed={
            "test_hessian_exact",
            "test_mse_one_pass",
            # the outer-product Hessian's properties are gated on its values
            "test_compose_with_jit",
            "test_compose_with_vmap",
            "test_mse_jit_and_pure",
        }
    )
    for check, share in (
        ("test_compose_with_jit", 2 / 3),
        ("test_compose_with_vmap", 2 / 3),
        ("test_mse_jit_and_pure", 3 / 4),
    ):
        assert g.results[check]["fraction"] == pytest.approx(share)
        assert "hessian: this property is judged once the values are right" in g.message(check)
    assert "outer product of gradients" in g.message("test_hessian_exact")
    assert "2 products x @ w" in g.message("test_mse_one_pass")
    assert "the forward pass runs more than once" in g.message("test_mse_one_pass")


@pytest.mark.slow
def test_trace_time_print_a_global_log_and_a_hessian_for_four_inputs(graded):
    g = graded("trace_time_prints")
    g.assert_statuses(
        failed={
            "test_hessian_exact",
            "test_compose_with_jit",
            "test_compose_with_vmap",
            "test_mse_jit_and_pure",
        }
    )
    hessian = g.message("test_hessian_exact")
    assert "hessian(f)(v) for f: R^2 -> R" in hessian and "expected: a (2, 2) matrix" in hessian
    assert "hard-coded number of basis vectors" in hessian
    assert "right for v of 4 entries and raises for 2" in hessian
    for check in ("test_compose_with_jit", "test_compose_with_vmap"):
        r = g.results[check]
        assert r["fraction"] == pytest.approx(2 / 3)  # the Hessian is gated
        assert "hessian: this property is judged once the values are right" in r["message"]
    pure = g.results["test_mse_jit_and_pure"]
    assert pure["fraction"] == pytest.approx(1 / 4)  # second_derivative is pure
    assert "the global `LOSSES` grew" in pure["message"]  # LOSSES.append
    assert "printed 'derivative at" in pure["message"]
    assert "jax.debug.print" in pure["message"]


@pytest.mark.slow
def test_first_derivative_is_not_called_an_approximation(graded):
    # held-out case c06: a second derivative that is the first is named so, not called a
    # finite-difference approximation
    g = graded("second_is_first")
    assert g.status("test_second_derivative_exact") == "failed"
    assert "finite difference" not in g.message("test_second_derivative_exact")
    assert "approximation" not in g.message("test_second_derivative_exact")
    assert "the first derivative" in g.cause("test_second_derivative_exact")
    assert g.status("test_derivative_exact") == "passed"


@pytest.mark.slow
def test_a_value_and_grad_pair_is_not_blamed_on_tracing(graded):
    """derivative returns jax.value_and_grad(f): differentiating it again fails because its
    output is a pair, which the cause says; it does not claim a float() or NumPy call."""
    g = graded("value_and_grad_pair")
    message = g.message("test_derivative_of_derivative")
    assert "returns a tuple of 2 values, not one scalar" in message
    assert "cannot be traced" not in message and "float()" not in message


@pytest.mark.slow
def test_a_transformed_function_never_called_is_named(graded):
    # held-out case h02c: `return jax.value_and_grad(loss)`, a function, where (value, grads)
    # belong; a pair of the wrong kind is still a container's difference
    g = graded("value_and_grad_not_called")
    assert g.status("test_mse_values") == "failed"
    assert "gave a function" in g.message("test_mse_values")
    assert "a function came back, not values" in g.cause("test_mse_values")
    assert "kind of container" not in g.cause("test_mse_values")


@pytest.mark.slow
def test_a_mean_absolute_error_is_named(graded):
    # held-out case h02c: mean(|x @ w - y|) where the mean of the squares belongs
    g = graded("mean_absolute_error")
    g.assert_fails("test_mse_values", cause="the loss is the mean absolute error")
    # look-alikes: another wrong loss names its own formula, not this one
    for other in ("rmse_hessian_of_sum", "mean_then_square", "summed_mse"):
        assert "absolute error" not in graded(other).cause("test_mse_values"), other


@pytest.mark.slow
def test_edits_of_the_lesson_loss_are_named(graded):
    # loss(w) = mean((x @ w + y) ** 2) and mean(x @ w - y) are the lesson's loss with one edit
    # (a mutant of _lesson_mse), each carried into its gradient as jax.value_and_grad carries
    # it, on the probes of 3 and 5 rows; a negated gradient is no edit of the loss and names
    # nothing
    graded("residual_plus_y").assert_fails(
        "test_mse_values", cause="an addition in place of one of its subtractions"
    )
    graded("residual_not_squared").assert_fails(
        "test_mse_values", cause="the power 1 where it raises to the power 2"
    )
    g = graded("gradient_negated")
    assert g.status("test_mse_values") == "failed"
    assert g.cause("test_mse_values") == "", g.message("test_mse_values")
