"""The 03_jit suite graded against the solution, the stub, an alternative solution and
broken submissions, each in its own subprocess (as the runner grades)."""

import pytest

pytestmark = pytest.mark.slow

LESSON = "03_jit"


def test_solution_passes_every_check(graded):
    graded("solution").assert_full_marks()


def test_alternative_solution_passes(graded):
    # jitted by the student, lax.cond with jnp functions, a tuple carry, a while_loop
    graded("alternative").assert_full_marks()


@pytest.mark.parametrize(
    "variant",
    [
        # lax.switch (a cond in the jaxpr), a scan over positions, Newton as a scan with length=
        "switch_scan_indices",
        # jitted static methods of a class, static_argnums, closure branches, a reversed scan,
        # a fori_loop with a traced trip count (a while loop)
        "class_static_argnums",
        # Newton as x - f / f' from 1.0 (NaN far outside a in [1e-2, 1e4]: checks stay in
        # the domain), a scan emitting its new carry, a cond on a tuple operand
        "newton_form",
    ],
)
def test_other_idioms_pass_every_check(graded, variant):
    graded(variant).assert_full_marks()


def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


def test_python_loop_running_sum_unrolls(graded):
    g = graded("python_loop_running_sum")
    g.assert_statuses(failed={"test_running_sum_scan", "test_running_sum_no_growth"})
    assert "Python loop at line 14" in g.message("test_running_sum_scan")
    assert "jax.lax.scan" in g.message("test_running_sum_scan")
    growth = g.message("test_running_sum_no_growth")
    assert "your loop unrolled" in growth and "at n=4" in growth and "at n=32" in growth
    assert "jax.lax.scan" in growth
    # the lesson's words, and the student's `for` as the line to look at
    for check_id in ("test_running_sum_scan", "test_running_sum_no_growth"):
        assert "stablehlo" not in g.message(check_id).lower()
        assert "read from its compiled program" in g.message(check_id)
        where = g.results[check_id]["location"]
        assert (where["line"], where["code"]) == (14, "for i in range(xs.shape[0]):"), where


def test_where_piecewise_has_the_right_values_but_no_cond(graded):
    g = graded("where_piecewise")
    g.assert_statuses(failed={"test_piecewise_cond"})
    message = g.message("test_piecewise_cond")
    assert "jnp.where" in message and "BOTH branches" in message and "jax.lax.cond" in message


def test_a_branch_point_at_one_fails_the_values_between_zero_and_one(graded):
    """`x > 1` for `x > 0`: only inputs in (0, 1] tell them apart, which a random search over
    [-50, 50] may miss; the fixed edge points do not (the gated checks wait for the values)."""
    g = graded("branch_at_one")
    assert g.status("test_piecewise_values") == "failed"
    assert "piecewise(0.25)" in g.message("test_piecewise_values")


def test_unrolled_newton_has_no_loop_primitive_and_grows(graded):
    g = graded("unrolled_newton")
    g.assert_statuses(failed={"test_newton_loop_primitive", "test_newton_no_growth"})
    assert "fori_loop" in g.message("test_newton_loop_primitive")
    assert "at n=5" in g.message("test_newton_no_growth")
    for check_id in ("test_newton_loop_primitive", "test_newton_no_growth"):
        where = g.results[check_id]["location"]
        assert (where["line"], where["code"]) == (17, "for _ in range(n_iters):"), where


def test_trace_time_effects_and_a_static_value(graded):
    g = graded("trace_time_effects")
    g.assert_statuses(
        failed={
            "test_newton_jit",
            "test_newton_loop_primitive",
            "test_newton_no_growth",
            "test_traced_once",
            "test_pure",
        }
    )
    assert "must be hashable Python values" in g.message("test_newton_jit")
    traced = g.results["test_traced_once"]
    assert traced["fraction"] == pytest.approx(2 / 3)
    assert (
        "3 new compilations for 3 calls" in traced["message"]
        and "marked static" in traced["message"]
    )
    pure = g.results["test_pure"]
    assert pure["fraction"] == pytest.approx(1 / 3)  # newton_sqrt itself is pure
    assert "jax.debug.print" in pure["message"]  # piecewise prints at trace time
    assert "CALL_LOG" in pure["message"]  # running_sum logs into a global


def test_ignored_n_iters_and_a_carry_kept_in_a_global(graded):
    g = graded("ignores_n_iters")
    g.assert_statuses(failed={"test_newton_steps", "test_pure"})
    steps = g.message("test_newton_steps")
    assert "the same value for every n_iters" in steps
    assert "n_iters is not used as the number of steps" in steps
    pure = g.results["test_pure"]
    assert pure["fraction"] == pytest.approx(2 / 3)
    assert "running_sum: purity of running_sum(xs)" in pure["message"]
    assert "the global `CARRIES` grew" in pure["message"]


def test_a_loop_one_step_short_is_named(graded):
    # the steps are right, so a first value below sqrt(a) is reached by no step at all
    g = graded("one_step_short")
    g.assert_statuses(failed={"test_newton_steps"})
    message = g.message("test_newton_steps")
    assert "newton_sqrt(2, n_iters=1)" in message
    assert "the loop runs n_iters - 1 times" in message


def test_a_default_n_iters_other_than_20(graded):
    g = graded("default_n_iters")
    g.assert_statuses(failed={"test_newton_steps"})
    message = g.message("test_newton_steps")
    assert "newton_sqrt(1e+12) against newton_sqrt(1e+12, n_iters=20)" in message
    assert "default number of iterations is not 20" in message


def test_a_python_if_is_one_cause_shown_once_and_a_python_loop_is_shown_at_its_for(graded):
    g = graded("python_if_and_loop")
    g.assert_statuses(
        failed={
            "test_piecewise_jit",
            "test_piecewise_cond",
            "test_running_sum_scan",
            "test_running_sum_no_growth",
            "test_traced_once",
            "test_pure",
        }
    )
    # the Python `if`: one root cause for every check it cost, the parts of two included
    key = g.results["test_piecewise_jit"]["root_cause"]
    assert key == "TracerBoolConversionError|03_jit.py|9|piecewise", key
    for check_id in ("test_piecewise_cond", "test_traced_once", "test_pure"):
        assert g.results[check_id]["root_cause"] == key, (check_id, g.results[check_id])
        assert g.results[check_id]["location"]["line"] == 9
    for check_id in ("test_traced_once", "test_pure"):
        assert abs(g.results[check_id]["fraction"] - 2 / 3) < 1e-6
        first = g.message(check_id).splitlines()[0]
        assert (
            first == "2 of 3 passed (piecewise failed); each of the 3 parts is 1/3 of the points."
        )
    # the Python `for`: the line the student reads, under both structural checks
    for check_id in ("test_running_sum_scan", "test_running_sum_no_growth"):
        assert g.results[check_id]["location"]["line"] == 18, g.results[check_id]
        assert "stablehlo" not in g.message(check_id).lower()


def test_the_help_of_the_checks_of_all_three_fits_what_they_report():
    # test_traced_once and test_pure report a function that does not run under jit (a Python
    # `if` on a traced value) as well as their own property: their help speaks of both, and the
    # question of the first does not presume static arguments.
    from grader import catalog

    checks = {c.id: c for c in catalog.by_name()[LESSON].checks}
    for check_id in ("test_traced_once", "test_pure"):
        assert "run under jax.jit" in checks[check_id].hint, checks[check_id].hint
        assert "Python `if`" in checks[check_id].nudge, checks[check_id].nudge
    assert "static" not in checks["test_traced_once"].hint
    assert "static" in checks["test_traced_once"].nudge  # the retrace it also reports


def test_a_fori_loop_body_with_its_arguments_swapped_is_named(graded):
    """body(x, i) under fori_loop, which calls body(i, x): each step starts from the index.
    Named from the iterates; not called an unconverged iteration."""
    g = graded("body_args_swapped")
    message = g.message("test_newton_values")
    assert "the body takes the index for x" in message
    assert "converge" not in g.cause("test_newton_values")


def test_a_far_starting_guess_is_named_unconverged(graded):
    """Every step right, from a * a: 20 steps miss sqrt(1e4), 200 reach it."""
    g = graded("guess_far")
    message = g.message("test_newton_values")
    assert "n_iters=200) reaches sqrt(a) where 20 steps do not" in message
    assert "index" not in g.cause("test_newton_values")


@pytest.mark.slow
def test_a_starting_guess_of_zero_is_named(graded):
    # held-out case h03b: x0 = 0, so a / x is infinite from the first step on
    g = graded("zero_guess")
    assert g.status("test_newton_values") == "failed"
    assert "the starting guess is 0" in g.cause("test_newton_values")
    for other in ("guess_far", "body_args_swapped"):
        assert "guess is 0" not in graded(other).cause("test_newton_values"), other


def test_a_newton_step_without_its_half_is_named(graded):
    """x <- x + a / x: the iterates grow; each step from n_iters=k to k + 1 is that step, at
    a = 2 and 30. The other newton mistakes do not name it."""
    graded("newton_no_half").assert_fails(
        "test_newton_values", cause="the average of x and a / x is not taken"
    )
    for other in ("guess_far", "body_args_swapped", "zero_guess"):
        assert "average of x" not in graded(other).cause("test_newton_values"), other


def test_a_scan_carry_of_the_shape_of_xs_is_named(graded):
    """jnp.zeros_like(xs) as the scan's carry: total of shape (n,), each entry the total, and
    partial_sums (n, n). The other running_sum mistakes (a shape of their own among them) do
    not name it."""
    g = graded("scan_carry_like_xs")
    g.assert_fails("test_running_sum_values", cause="the carry starts as an array of xs's shape")
    for other in ("exclusive_scan", "carry_from_first", "scan_from_second", "total_of_partials"):
        assert "xs's shape" not in graded(other).cause("test_running_sum_values"), other


def test_a_scan_from_the_other_end_is_named(graded):
    """`lax.scan(..., reverse=True)` gives suffix sums (the reference on xs reversed, put back
    in order), a scan over `xs[::-1]` the reference on xs reversed: the transformed-inputs tier
    names each, on the two fixed series of 6 and 4 elements, and neither names the other's
    text; the other running_sum mistakes (named by the suite's own diagnostics) name neither."""
    reversed_in = "computed on the first argument in reverse order along its first axis"
    put_back = reversed_in + ", then put back in order"
    g = graded("scan_reversed")
    g.assert_fails("test_running_sum_values", cause=put_back)
    g = graded("scan_flipped_xs")
    g.assert_fails("test_running_sum_values", cause=reversed_in)
    assert "put back in order" not in g.cause("test_running_sum_values")
    for other in ("exclusive_scan", "carry_from_first", "scan_from_second", "total_of_partials"):
        assert "your values equal the right ones" not in graded(other).cause(
            "test_running_sum_values"
        ), other


def test_a_true_branch_left_unsquared_is_named(graded):
    # lambda v: v where v ** 2 belongs is the batch reference's `xs ** 2` (the lesson's form)
    # with the power 1, on two batches through jax.vmap; a square root there is no one edit
    # of it and names nothing
    graded("true_branch_x").assert_fails(
        "test_piecewise_values", cause="the power 1 where it raises to the power 2"
    )
    g = graded("true_branch_sqrt")
    assert g.status("test_piecewise_values") == "failed"
    assert g.cause("test_piecewise_values") == "", g.message("test_piecewise_values")
