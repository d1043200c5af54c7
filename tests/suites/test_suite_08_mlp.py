"""The 08_mlp suite graded against the solution, the stub, an alternative solution and
broken submissions, each in its own subprocess."""

import pytest
from lesson_grading import REPO
from parallel_grading import Gradings

from grader.catalog import read_suite
from grader.commands.assign import stub_source

LESSON = "08_mlp"
TRAIN_CHECKS = {"test_train_accuracy", "test_train_history", "test_train_reshuffles"}
VARIANTS = (
    "solution",
    "alternative",
    "stub",
    "xavier_reuse",
    "naive_softmax_sum",
    "not_jitted",
    "retracing",
    "no_reshuffle",
)
MAX_SCORE = 20
HIDDEN = {"test_train_reshuffles"}


@pytest.fixture(scope="module")
def graded():
    gradings = Gradings(LESSON, VARIANTS)
    yield gradings
    gradings.close()


def test_stub_is_the_solution_with_its_bodies_removed():
    solution = (REPO / "solutions" / f"{LESSON}.py").read_text()
    assert stub_source(solution, LESSON) == (REPO / "exercises" / f"{LESSON}.py").read_text()


def test_suite_manifest():
    spec = read_suite(REPO / "grader" / "suites" / f"test_{LESSON}.py")
    assert spec.max_score == MAX_SCORE
    assert {c.id for c in spec.checks if c.visibility == "hidden"} == HIDDEN
    assert spec.timeout_s == 240


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    g = graded("solution")
    g.assert_statuses()
    metrics = [r for r in g.records if r["type"] == "metric" and r["name"] == "test_accuracy"]
    assert metrics and metrics[0]["value"] >= 0.95


@pytest.mark.slow
def test_alternative_solution_passes(graded):
    graded("alternative").assert_statuses()


@pytest.mark.slow
def test_stub_fails_every_check(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    # `optimizer = None` is the stub's "not done" marker: named as such, not a crash.
    assert "None (still the TODO)" in stub.message("test_optimizer_is_adam")
    others = {k: r for k, r in stub.results.items() if k != "test_optimizer_is_adam"}
    assert all(r["not_implemented"] for r in others.values())


@pytest.mark.slow
def test_xavier_scale_and_one_key_for_all_layers(graded):
    g = graded("xavier_reuse")
    g.assert_statuses(failed={"test_init_he_statistics", "test_init_keys"})
    assert "sqrt(1 / fan_in)" in g.message("test_init_he_statistics")
    assert "0.71 x the He value" in g.message("test_init_he_statistics")
    assert "key-reuse checker" in g.message("test_init_keys")
    assert "08_mlp.py, line" in g.message("test_init_keys")


@pytest.mark.slow
def test_naive_softmax_overflows_and_sum_is_not_mean(graded):
    g = graded("naive_softmax_sum")
    g.assert_statuses(
        failed={
            "test_loss_value",
            "test_loss_stable",
            "test_loss_gradients",
            "test_train_step_values",
        }
    )
    assert "summed over the batch" in g.message("test_loss_value")
    assert "NaN" in g.message("test_loss_stable")
    assert "jax.nn.log_softmax" in g.message("test_loss_stable")
    assert "summed over the batch" in g.message("test_loss_gradients")
    assert "differs from the reference" in g.message("test_train_step_values")


@pytest.mark.slow
def test_train_step_not_jitted(graded):
    g = graded("not_jitted")
    g.assert_statuses(failed={"test_train_step_compiles_once"} | TRAIN_CHECKS)
    assert "a plain Python function" in g.message("test_train_step_compiles_once")
    assert "@jax.jit" in g.message("test_train_step_compiles_once")
    assert all(g.results[k]["not_implemented"] for k in TRAIN_CHECKS)


@pytest.mark.slow
def test_train_step_retraces_every_call(graded):
    g = graded("retracing")
    g.assert_statuses(failed={"test_train_step_compiles_once"} | TRAIN_CHECKS)
    message = g.message("test_train_step_compiles_once")
    assert "traced 1 more time(s)" in message
    assert "applied inside train_step" in message


@pytest.mark.slow
def test_no_reshuffle_array_history_and_wrong_learning_rate(graded):
    g = graded("no_reshuffle")
    g.assert_statuses(
        failed={
            "test_optimizer_is_adam",
            "test_train_step_values",
            "test_train_history",
            "test_train_reshuffles",
        }
    )
    assert "3 x Adam's at 1e-3" in g.message("test_optimizer_is_adam")
    assert "not optax.adam(1e-3)" in g.message("test_train_step_values")
    assert "Python floats" in g.message("test_train_history")
    assert "same permutation in two epochs" in g.message("test_train_reshuffles")
