"""The 09_optax suite graded against the solution, the stub, an alternative solution and
broken submissions, each in its own subprocess."""

import pytest
from lesson_grading import FIXTURES, REPO, grade

pytestmark = pytest.mark.slow

LESSON = "09_optax"
UPDATE_CHECKS = (
    "test_clip_before_adamw",
    "test_max_norm_observed",
    "test_weight_decay_observed",
    "test_schedule_drives_learning_rate",
    "test_defaults",
)
_CACHE = {}


@pytest.fixture(scope="module")
def graded():
    def run(name):
        if name not in _CACHE:
            folder = {"solution": REPO / "solutions", "stub": REPO / "exercises"}.get(
                name, FIXTURES / LESSON / name
            )
            _CACHE[name] = grade(folder, LESSON)
        return _CACHE[name]

    return run


def test_solution_passes_every_check(graded):
    graded("solution").assert_statuses()


def test_alternative_solution_passes(graded):
    graded("alternative").assert_statuses()


def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


def test_clip_after_adamw(graded):
    g = graded("clip_after")
    failed = {"test_clip_before_adamw", "test_max_norm_observed", "test_defaults"}
    g.assert_statuses(failed=failed)
    for check in failed:
        assert "the clip runs AFTER adamw" in g.message(check)
    assert "gradient norm 5" in g.message("test_clip_before_adamw")


def test_adam_without_weight_decay(graded):
    g = graded("adam_no_decay")
    g.assert_statuses(
        failed={"test_optimizer_interface", "test_weight_decay_observed", "test_defaults"}
    )
    assert "optax.adam, which has no weight decay" in g.message("test_weight_decay_observed")
    assert "the chain never reads the params" in g.message("test_optimizer_interface")


def test_hardcoded_threshold_and_decay(graded):
    g = graded("hardcoded")
    g.assert_statuses(failed={"test_max_norm_observed", "test_weight_decay_observed"})
    assert "not max_norm=0.5: the argument is ignored" in g.message("test_max_norm_observed")
    assert "not weight_decay=0.3" in g.message("test_weight_decay_observed")


def test_elementwise_clip(graded):
    g = graded("elementwise_clip")
    failed = {"test_clip_before_adamw", "test_max_norm_observed", "test_defaults"}
    g.assert_statuses(failed=failed)
    assert "`optax.clip` clips each element" in g.message("test_clip_before_adamw")


def test_python_if_schedule_fails_only_under_jit(graded):
    g = graded("python_schedule")
    g.assert_statuses(failed={"test_schedule_jits", "test_update_jits"})
    for check in ("test_schedule_jits", "test_update_jits"):
        message = g.message(check)
        assert "TracerBoolConversionError" in message
        assert "09_optax.py, line" in message and "if count < warmup_steps" in message


def test_late_decay_and_schedule_ignoring_arguments(graded):
    g = graded("late_decay")
    g.assert_statuses(failed={"test_schedule_values", *UPDATE_CHECKS} - {"test_defaults"})
    assert "decay_steps counts from step 0" in g.message("test_schedule_values")
    assert "not the arguments given to make_optimizer" in g.message("test_clip_before_adamw")
