"""The harness's assertions hold both ways, on records written here (no grading)."""

from pathlib import Path

import pytest
from harness import Graded

from grader.checks.failure import CAUSE_LABEL


def _result(check_id, status, message="", fraction=1.0, **extra):
    return {
        "type": "result",
        "id": check_id,
        "status": status,
        "message": message,
        "fraction": fraction,
        "not_implemented": False,
        "blocked_by": None,
        **extra,
    }


def _graded(*results):
    return Graded(
        lesson_dir=Path("x"), records=[{"type": "start"}, *results], output="", duration_s=0
    )


WRONG = (
    "step(0) is wrong\n"
    "  expected: 1.0\n"
    "  observed: 0.5\n"
    f"  {CAUSE_LABEL} the schedule starts one step late"
)


def test_full_marks_needs_every_check_passed_at_its_whole_fraction():
    _graded(_result("test_a", "passed"), _result("test_b", "passed")).assert_full_marks()
    with pytest.raises(AssertionError, match="partial credit"):
        _graded(_result("test_a", "passed", fraction=0.5)).assert_full_marks()
    with pytest.raises(AssertionError, match="unexpected statuses"):
        _graded(_result("test_a", "passed"), _result("test_b", "failed")).assert_full_marks()
    with pytest.raises(AssertionError, match="no results"):
        _graded().assert_full_marks()


def test_fails_reads_the_message_its_fix_and_the_cause_line():
    g = _graded(
        _result("test_values", "failed", WRONG, fraction=0.0, fix="start at step 0"),
        _result("test_jit", "failed", "values are wrong", blocked_by="test_values"),
        _result("test_other", "passed"),
    )
    assert g.cause("test_values").strip() == f"{CAUSE_LABEL} the schedule starts one step late"
    assert g.cause("test_jit") == ""
    message = g.assert_fails("test_values", "step(0)", "fix: start at step 0", cause="one step")
    assert "observed: 0.5" in message
    g.assert_fails("test_values", cause=("late", "one step"), not_cause=("sign",))
    g.assert_fails("test_jit", "values are wrong", blocked_by="test_values")
    for wrong in (
        {"check_id": "test_other"},  # passed
        {"check_id": "test_values", "words": ("step(1)",)},
        {"check_id": "test_values", "cause": "observed"},  # in the message, not the cause
        {"check_id": "test_values", "not_cause": ("late",)},
        {"check_id": "test_jit", "blocked_by": "test_other"},
        {"check_id": "test_values", "only": True},  # test_jit failed too
        {"check_id": "test_nope"},
    ):
        words = wrong.pop("words", ())
        with pytest.raises(AssertionError):
            g.assert_fails(wrong.pop("check_id"), *words, **wrong)


def test_a_grading_travels_through_json_unchanged():
    g = _graded(_result("test_values", "failed", WRONG, fix="start at step 0"))
    again = Graded.from_json(g.to_json())
    assert again.records == g.records and again.results == g.results
    assert again.message("test_values").endswith("fix: start at step 0")
