"""The 09_optax suite graded against the solution, the stub, an alternative solution and
broken submissions, each in its own subprocess."""

import pytest
from harness import lesson_files

from grader.catalog import read_suite

LESSON = "09_optax"
UPDATE_CHECKS = (
    "test_clip_before_adamw",
    "test_max_norm_observed",
    "test_weight_decay_observed",
    "test_schedule_drives_learning_rate",
    "test_defaults",
)
MAX_SCORE = 18
HIDDEN = {"test_schedule_drives_learning_rate"}
# gated on test_clip_before_adamw (test_pure per case: the schedule's half stays earned)
CHAIN_GATED = {"test_optimizer_interface", "test_update_jits", "test_pure"}


def test_suite_manifest():
    spec = read_suite(lesson_files(LESSON).suite)
    assert spec.max_score == MAX_SCORE
    assert {c.id for c in spec.checks if c.visibility == "hidden"} == HIDDEN


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_full_marks()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["alternative", "tree_util_clip", "class_schedule_named_chain"])
def test_alternative_solutions_pass(graded, name):
    # tree_util_clip: a jnp schedule and a hand-written clip transformation;
    # class_schedule_named_chain: a callable schedule class with lax.cond, AdamW's parts in
    # optax.named_chain (another state structure, the same updates)
    graded(name).assert_full_marks()


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_clip_after_adamw(graded):
    g = graded("clip_after")
    failed = {"test_clip_before_adamw", "test_max_norm_observed", "test_defaults"}
    g.assert_statuses(failed=failed | CHAIN_GATED)
    for check in failed:
        assert "the clip runs AFTER adamw" in g.message(check)
    for check in CHAIN_GATED - {"test_pure"}:
        assert g.results[check]["blocked_by"] == "test_clip_before_adamw"
    assert g.results["test_pure"]["fraction"] == pytest.approx(0.5)
    assert "gradient norm 5" in g.message("test_clip_before_adamw")


@pytest.mark.slow
def test_adam_without_weight_decay(graded):
    g = graded("adam_no_decay")
    # (an update without params is not in the spec: the interface check does not try it)
    g.assert_statuses(failed={"test_weight_decay_observed", "test_defaults"})
    assert "optax.adam, which has no weight decay" in g.message("test_weight_decay_observed")
    assert "optax.adam, which has no weight decay" in g.message("test_defaults")


@pytest.mark.slow
def test_hardcoded_threshold_and_decay(graded):
    g = graded("hardcoded")
    g.assert_statuses(failed={"test_max_norm_observed", "test_weight_decay_observed"})
    assert "not max_norm=0.5: the argument is ignored" in g.message("test_max_norm_observed")
    assert "not weight_decay=0.3" in g.message("test_weight_decay_observed")


@pytest.mark.slow
def test_elementwise_clip(graded):
    g = graded("elementwise_clip")
    failed = {"test_clip_before_adamw", "test_max_norm_observed", "test_defaults"}
    g.assert_statuses(failed=failed | CHAIN_GATED)
    assert "`optax.clip` clips each element" in g.message("test_clip_before_adamw")


@pytest.mark.slow
def test_python_if_schedule_fails_only_under_jit(graded):
    g = graded("python_schedule")
    g.assert_statuses(failed={"test_schedule_jits", "test_update_jits", "test_pure"})
    for check in ("test_schedule_jits", "test_update_jits"):
        message = g.message(check)
        assert "TracerBoolConversionError" in message
        assert "09_optax.py, line" in message and "if count < warmup_steps" in message


@pytest.mark.slow
def test_late_decay_and_schedule_ignoring_arguments(graded):
    g = graded("late_decay")
    g.assert_statuses(
        failed={"test_schedule_values", "test_schedule_jits", *UPDATE_CHECKS, *CHAIN_GATED}
        - {"test_defaults"}
    )
    assert g.results["test_pure"]["fraction"] == 0.0  # both halves stand on wrong values
    assert "decay_steps counts from step 0" in g.message("test_schedule_values")
    assert "not the arguments given to make_optimizer" in g.message("test_clip_before_adamw")


@pytest.mark.slow
def test_a_late_end_on_the_lessons_schedule_alone_is_not_named(graded):
    # decay_steps + 1000 ends the cosine at warmup + decay for a warm-up of 1000 only
    g = graded("decay_plus_1000")
    assert g.status("test_schedule_values") == "failed"
    assert "make_schedule(0.001, 1000, 50000)" in g.message("test_schedule_values")
    assert g.cause("test_schedule_values") == "", g.message("test_schedule_values")


@pytest.mark.slow
def test_trace_time_counter_in_the_schedule_is_impure(graded):
    g = graded("trace_counter")
    g.assert_statuses(failed={"test_pure"})
    message = g.message("test_pure")
    assert "SCHEDULE_CALLS" in message
    assert g.results["test_pure"]["fraction"] == 0.0  # the update runs the schedule too


@pytest.mark.slow
def test_weight_decay_by_position_is_named_as_b1(graded):
    g = graded("decay_positional")
    failed = {
        "test_clip_before_adamw",
        "test_max_norm_observed",
        "test_weight_decay_observed",
        "test_schedule_drives_learning_rate",
        "test_defaults",
    }
    g.assert_statuses(failed=failed | CHAIN_GATED)
    for check in failed:
        assert "lands in b1" in g.cause(check), (check, g.message(check))


@pytest.mark.slow
def test_a_decay_added_after_adam_is_named(graded):
    # held-out case h09b: chain(clip, adam(schedule), add_decayed_weights(weight_decay))
    g = graded("decay_after_adam")
    for check in ("test_weight_decay_observed", "test_defaults"):
        assert "the decay is added after Adam's learning rate" in g.cause(check), g.message(check)
    for other in ("adam_no_decay", "decay_positional"):
        assert "after Adam" not in graded(other).cause("test_weight_decay_observed"), other


@pytest.mark.slow
def test_a_cosine_ending_above_zero_is_named(graded):
    # held-out case h09a: end_value=peak_lr / 10; the late-ending cosines name their own
    g = graded("end_value_tenth")
    assert "the cosine ends above 0" in g.cause("test_schedule_values")
    assert "0.0001, 0.05, 0.2" in g.cause("test_schedule_values")
    for other in ("late_decay", "decay_plus_1000"):
        assert "ends above 0" not in graded(other).cause("test_schedule_values"), other


@pytest.mark.slow
def test_warmup_and_decay_lengths_in_each_others_place_are_named(graded):
    """make_schedule calling warmup_cosine_decay_schedule(0.0, peak_lr, decay_steps,
    warmup_steps): optax raises for every decay_steps > warmup_steps, naming decay_steps =
    warmup_steps - decay_steps; the same error from optax with the two swapped, at every
    setting tried, names the swap, on the schedule check and on every chain check that
    fails only because make_schedule raises."""
    g = graded("schedule_lengths_swapped")
    g.assert_fails(
        "test_schedule_values",
        "it raised ValueError: The cosine_decay_schedule requires positive decay_steps, "
        "got decay_steps=-49000.",
        cause=(
            "optax was given warmup_steps=50000 and decay_steps=1000",
            "decay_steps=-49000 is warmup_steps - decay_steps of this call",
            "in each other's place",
        ),
    )
    for check in UPDATE_CHECKS:
        g.assert_fails(
            check, "got decay_steps=-", cause=("make_schedule raises", "in each other's place")
        )
    g.assert_fails("test_clip_before_adamw", cause="warmup_steps=20 and decay_steps=3")
    g.assert_fails("test_defaults", cause="warmup_steps=50000 and decay_steps=1000")


@pytest.mark.slow
def test_decay_steps_set_to_warmup_steps_is_not_called_a_swap(graded):
    """decay_steps=warmup_steps: optax's same ValueError (decay_steps=0) at every setting,
    which no swap of the two lengths gives: not named."""
    g = graded("decay_is_warmup")
    g.assert_fails("test_schedule_values", "got decay_steps=0", not_cause=("each other's place",))
    for check in UPDATE_CHECKS:
        g.assert_fails(check, "got decay_steps=0", not_cause=("each other's place",))
