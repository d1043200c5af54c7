"""The ex1_dropout suite graded against the solution, the stub, an alternative solution
and broken submissions (each in its own subprocess)."""

import pytest
from lesson_grading import FIXTURES, REPO, grade

pytestmark = pytest.mark.slow

LESSON = "ex1_dropout"
_CACHE = {}
COMPARE = {"test_compare"}  # the broken fixtures leave compare_dropout unwritten (it trains twice)


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


def _unfinished(graded_folder, check_ids):
    """Checks of the functions a partly done fixture leaves as stubs: not attempted."""
    for check_id in check_ids:
        assert graded_folder.results[check_id]["not_implemented"], check_id
    return set(check_ids)


def test_solution_passes_every_check(graded):
    graded("solution").assert_statuses()


def test_alternative_solution_passes(graded):
    graded("alternative").assert_statuses()


def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


def test_rate_read_as_keep_probability(graded):
    g = graded("keep_probability")
    g.assert_statuses(failed={"test_dropout_rate", "test_dropout_scale"} | _unfinished(g, COMPARE))
    rate = g.message("test_dropout_rate")
    assert "about 70% of units were zeroed with rate=0.3" in rate
    assert "rate is the DROP probability" in rate
    assert "KEEP probability" in rate
    assert "1 / rate, the keep-probability convention" in g.message("test_dropout_scale")


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


def test_survivors_not_rescaled(graded):
    g = graded("no_rescale")
    g.assert_statuses(
        failed={"test_dropout_scale", "test_dropout_expectation"} | _unfinished(g, COMPARE)
    )
    assert "not rescaled" in g.message("test_dropout_scale")
    assert "non-inverted" in g.message("test_dropout_scale")
    assert "mean shrank by 1 - rate" in g.message("test_dropout_expectation")


def test_compare_reports_accuracies_as_metrics(graded):
    metrics = {r["name"]: r["value"] for r in graded("solution").records if r["type"] == "metric"}
    assert set(metrics) == {"test accuracy with dropout", "test accuracy without dropout"}
    assert all(0.85 <= v <= 1.0 for v in metrics.values())
