"""The ex1_dropout suite graded against the solution, the stub, an alternative solution
and broken submissions (each in its own subprocess)."""

import pytest
from lesson_grading import REPO
from parallel_grading import Gradings

from grader.catalog import read_suite
from grader.commands.assign import stub_source

LESSON = "ex1_dropout"
VARIANTS = ("solution", "alternative", "stub", "keep_probability", "one_key", "no_rescale")
MAX_SCORE = 20
HIDDEN = {"test_dropout_independent", "test_dropout_pure", "test_forward_logits"}
COMPARE = {"test_compare"}  # the broken fixtures leave compare_dropout unwritten (it trains twice)


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
    assert all("?" in c.hint for c in spec.checks)  # hints are leading questions


def _unfinished(graded_folder, check_ids):
    """Checks of the functions a partly done fixture leaves as stubs: not attempted."""
    for check_id in check_ids:
        assert graded_folder.results[check_id]["not_implemented"], check_id
    return set(check_ids)


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_statuses()


@pytest.mark.slow
def test_alternative_solution_passes(graded):
    graded("alternative").assert_statuses()


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_rate_read_as_keep_probability(graded):
    g = graded("keep_probability")
    g.assert_statuses(failed={"test_dropout_rate", "test_dropout_scale"} | _unfinished(g, COMPARE))
    rate = g.message("test_dropout_rate")
    assert "about 70% of units were zeroed with rate=0.3" in rate
    assert "rate is the DROP probability" in rate
    assert "KEEP probability" in rate
    assert "1 / rate, the keep-probability convention" in g.message("test_dropout_scale")


@pytest.mark.slow
def test_one_key_for_both_dropout_layers(graded):
    g = graded("one_key")
    g.assert_statuses(
        failed={"test_forward_key_reuse", "test_forward_masks"} | _unfinished(g, COMPARE)
    )
    reuse = g.message("test_forward_key_reuse")
    assert "key-reuse checker" in reuse
    assert "line" in reuse and "bernoulli" in reuse  # points at the student's draw
    masks = g.message("test_forward_masks")
    assert "SAME mask" in masks
    assert "The same key (or the same subkey) was used for both dropout layers" in masks


@pytest.mark.slow
def test_survivors_not_rescaled(graded):
    g = graded("no_rescale")
    g.assert_statuses(
        failed={"test_dropout_scale", "test_dropout_expectation"} | _unfinished(g, COMPARE)
    )
    assert "not rescaled" in g.message("test_dropout_scale")
    assert "non-inverted" in g.message("test_dropout_scale")
    assert "mean shrank by 1 - rate" in g.message("test_dropout_expectation")


@pytest.mark.slow
def test_compare_reports_accuracies_as_metrics(graded):
    metrics = {r["name"]: r["value"] for r in graded("solution").records if r["type"] == "metric"}
    assert set(metrics) == {"test accuracy with dropout", "test accuracy without dropout"}
    assert all(0.85 <= v <= 1.0 for v in metrics.values())
