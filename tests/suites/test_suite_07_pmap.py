"""The 07_pmap suite graded against the solution, the stub, an alternative solution and
broken submissions, each with 8 simulated devices (the suite's DEVICES)."""

import pytest
from harness import lesson_files

from grader.catalog import read_suite
from grader.checks.failure import CAUSE_LABEL

LESSON = "07_pmap"
MAX_SCORE = 15
HIDDEN = {"test_result_spans_devices", "test_other_loss_and_devices"}


def test_suite_manifest():
    spec = read_suite(lesson_files(LESSON).suite)
    assert spec.max_score == MAX_SCORE
    assert {c.id for c in spec.checks if c.visibility == "hidden"} == HIDDEN
    assert spec.devices == 8


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_full_marks()


@pytest.mark.slow
def test_alternative_solution_passes(graded):
    graded("alternative").assert_full_marks()


@pytest.mark.slow
@pytest.mark.parametrize("idiom", ["decorator_psum", "class_value_and_grad", "numpy_shard"])
def test_correct_alternatives_in_other_idioms_pass_every_check(graded, idiom):
    """decorator_psum: split and stack, replicated params, a pmap decorator, psum / psum(1);
    class_value_and_grad: a data-parallel class pmeaning (loss, grads), reshape with -1;
    numpy_shard: shard as a NumPy reshape on the host (not jittable: the spec does not ask)."""
    graded(idiom).assert_full_marks()


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_without_pmean_each_device_keeps_its_own_gradient(graded):
    g = graded("no_pmean")
    gated = {
        "test_one_copy_per_device",
        "test_cross_device_reduction",
        "test_result_spans_devices",
        "test_jit_and_repeat",
    }
    g.assert_statuses(failed={"test_full_batch_mean", "test_other_loss_and_devices"} | gated)
    assert "gradient of its OWN shard" in g.message("test_full_batch_mean")
    assert "`jax.lax.pmean` of the gradients" in g.message("test_full_batch_mean")
    for check in gated:  # properties of wrong gradients earn nothing
        assert g.results[check]["blocked_by"] == "test_full_batch_mean", check
        assert "values are wrong" in g.message(check)


@pytest.mark.slow
def test_psum_instead_of_pmean_is_n_times_too_large(graded):
    g = graded("psum")
    gated = {
        "test_one_copy_per_device",
        "test_cross_device_reduction",
        "test_result_spans_devices",
        "test_jit_and_repeat",
    }
    g.assert_statuses(failed={"test_full_batch_mean", "test_other_loss_and_devices"} | gated)
    assert "8 times the mean gradient" in g.message("test_full_batch_mean")
    assert "4 times the mean gradient" in g.message("test_other_loss_and_devices")


@pytest.mark.slow
def test_vmap_on_one_device_and_round_robin_shard(graded):
    g = graded("vmap_mean")
    g.assert_statuses(
        failed={
            "test_shard_layout",
            "test_shard_jits",
            "test_cross_device_reduction",
            "test_result_spans_devices",
        }
    )
    assert "round-robin" in g.message("test_shard_layout")
    assert g.results["test_shard_jits"]["blocked_by"] == "test_shard_layout"
    assert "on 1 device(s)" in g.message("test_result_spans_devices")
    # what the result shows (one device), not a guess at how it was computed
    assert "the result is not spread over the" in g.message("test_result_spans_devices")
    assert "jax.vmap" not in g.cause("test_result_spans_devices")


@pytest.mark.slow
def test_module_state_is_impure_even_with_right_values(graded):
    g = graded("module_state")
    g.assert_statuses(failed={"test_shard_jits", "test_jit_and_repeat"})
    assert "purity of shard(x, n_devices)" in g.message("test_shard_jits")
    assert "the global `STATS`['rows_sharded'] changed" in g.message("test_shard_jits")
    assert "the global `STEPS` changed" in g.message("test_jit_and_repeat")


@pytest.mark.slow
def test_a_gradient_no_diagnostic_explains_names_no_cause(graded):
    g = graded("first_device")
    for check in ("test_full_batch_mean", "test_other_loss_and_devices"):
        message = g.message(check)
        assert g.results[check]["status"] == "failed", check
        assert CAUSE_LABEL not in message, message
        assert "expected:" in message and "observed:" in message


@pytest.mark.slow
def test_row_count_first_and_a_mean_after_pmap_are_named(graded):
    g = graded("rows_first_host_mean")
    assert "the two leading sizes are in each other's place" in g.cause("test_shard_layout")
    for check in ("test_full_batch_mean", "test_other_loss_and_devices"):
        assert g.results[check]["status"] == "failed", check
        assert "without the device axis" in g.cause(check), g.message(check)


@pytest.mark.slow
def test_a_sum_divided_by_the_rows_is_named(graded):
    g = graded("psum_over_rows")
    for check in ("test_full_batch_mean", "test_other_loss_and_devices"):
        assert g.results[check]["status"] == "failed", check
        assert "divided by each device's" in g.cause(check), g.message(check)
        assert "(`jax.lax.psum`) instead of averaged" not in g.message(check)


@pytest.mark.slow
def test_a_batch_split_over_every_device_whatever_n_devices_is_named(graded):
    """shard with `n_devices = jax.device_count()` inside: right for n_devices = 8, its own
    ValueError for 12 rows over 4; batches of 16 rows over 4 and 24 over 2 come back split
    over 8 devices, which names the unused argument (the error stays the observation)."""
    g = graded("shard_device_count")
    g.assert_fails(
        "test_shard_layout",
        "it raised ValueError: a batch of 12 does not split evenly over 8 devices",
        cause=(
            "split over all 8 devices whatever n_devices is given",
            "shard(x of 16 rows, 4) and shard(x of 24 rows, 2) have a leading axis of 8",
            "the argument is not used",
        ),
    )


@pytest.mark.slow
@pytest.mark.parametrize("fixture", ["rows_first_host_mean", "vmap_mean", "shard_merged"])
def test_other_wrong_layouts_are_not_called_an_unused_device_count(graded, fixture):
    """Leading sizes swapped, rows dealt round-robin, rows merged with their features: shard
    is wrong at n_devices = 8 too, and what it gives elsewhere is no split over 8 devices."""
    g = graded(fixture)
    g.assert_fails("test_shard_layout", not_cause=("whatever n_devices is given",))
