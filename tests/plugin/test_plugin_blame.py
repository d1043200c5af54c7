"""Whose exception a check raised (`grader.plugin.blame`), without a sandbox: the suite's own
(a grader error: no points either way, no help, no gate closed) or the student's.

Real exceptions, raised from a file standing in for a suite (compiled under its path, so its
frames carry the suite's file and lines), classified as the judge classifies them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.catalog import CheckSpec, ExerciseSpec
from grader.plugin import blame
from grader.plugin.gates import Earlier, closed_by
from grader.plugin.outcomes import Context, Outcome, classify
from grader.protocol import records as rec
from grader.protocol.value_codec import ErrorInfo
from grader.protocol.worker_messages import Ended
from grader.runner import results
from grader.sandbox import client

SUITE = """\
def check_divides():
    ratio = 1 / 0
    return ratio


def check_uses_returned(returned):
    return returned.shape


def check_handles_student(exc):
    try:
        raise exc
    except Exception:
        return {}["missing"]
"""


def suite(tmp_path: Path) -> tuple[str, dict[str, Any]]:
    """A stand-in suite at `tmp_path/test_demo.py`: its functions, run from that file."""
    path = tmp_path / "test_demo.py"
    path.write_text(SUITE)
    space: dict[str, Any] = {}
    exec(compile(SUITE, str(path), "exec"), space)
    return str(path), space


def raised(run: Any, *args: Any) -> BaseException:
    try:
        run(*args)
    except Exception as exc:
        return exc
    raise AssertionError("it did not raise")


def student_error(kind: str) -> client.StudentError:
    info = ErrorInfo(kind, ("Exception",), "boom", ("01.py", 3, "1 / 0"), "f", True)
    return client.student_error(info)


def context(path: str, *, answered: bool) -> Context:
    return Context(suite=path, check_line=1, answered=answered)


def test_a_suite_bug_before_the_student_answered_is_a_grader_error_at_its_line(
    tmp_path: Path,
) -> None:
    path, space = suite(tmp_path)
    outcome = classify(raised(space["check_divides"]), "call", context(path, answered=False))
    assert outcome.grader_error and outcome.status == "error" and outcome.fraction == 0.0
    assert outcome.message.startswith("grader error: the check's own code raised ZeroDivisionError")
    assert "(test_demo.py, line 2)" in outcome.message
    assert outcome.location is None and outcome.fix == ""


def test_after_an_answer_the_same_exception_stays_the_students(tmp_path: Path) -> None:
    """Suite code working on what the student returned (None where an array was due)."""
    path, space = suite(tmp_path)
    exc = raised(space["check_uses_returned"], None)
    outcome = classify(exc, "call", context(path, answered=True))
    assert not outcome.grader_error and outcome.status == "failed"
    assert "AttributeError" in outcome.message
    assert classify(exc, "call", context(path, answered=False)).grader_error


def test_an_exception_raised_while_handling_the_students_is_the_students(tmp_path: Path) -> None:
    path, space = suite(tmp_path)
    exc = raised(space["check_handles_student"], student_error("ZeroDivisionError"))
    assert not blame.is_suites(exc, answered=False)
    assert not classify(exc, "call", context(path, answered=False)).grader_error


def test_the_students_own_error_and_a_failed_check_are_never_grader_errors(
    tmp_path: Path,
) -> None:
    path, _ = suite(tmp_path)
    for exc in (student_error("ZeroDivisionError"), AssertionError("x"), MemoryError()):
        assert not classify(exc, "call", context(path, answered=False)).grader_error
    stopped = client.SandboxGone("the sandbox process ended")
    assert not blame.is_suites(stopped, answered=False)


@given(st.floats(min_value=0.1, max_value=1.0, width=32))
def _misdeclared(x: float) -> None:
    """A Hypothesis test whose strategy Hypothesis refuses (0.1 is not a float32)."""


def test_a_strategy_hypothesis_refuses_is_the_suites_even_after_an_answer() -> None:
    from hypothesis.errors import InvalidArgument

    exc = raised(_misdeclared)
    assert isinstance(exc, InvalidArgument)
    here = __file__
    outcome = classify(exc, "call", Context(suite=here, check_line=7, answered=True))
    assert outcome.grader_error and "InvalidArgument" in outcome.message
    line = blame.suite_line(exc, here, 0)  # the test's own line: Hypothesis reports it
    assert "def _misdeclared" in Path(here).read_text().splitlines()[line - 1]


def test_without_a_frame_in_the_suite_the_checks_own_line_is_named(tmp_path: Path) -> None:
    exc = raised(int, "x")
    assert blame.suite_line(exc, str(tmp_path / "test_demo.py"), 42) == 42


def test_a_syntax_error_names_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "test_demo.py"
    exc = raised(compile, "x = (\n", str(path), "exec")
    assert blame.suite_line(exc, str(path), 0) == 1


def test_a_check_that_ended_in_a_grader_error_does_not_close_its_gate() -> None:
    broken = Outcome(status="error", fraction=0.0, message="grader error", grader_error=True)
    assert closed_by("test_values", "values", broken) is None
    failed = Outcome(status="error", fraction=0.0, message="stopped")
    assert closed_by("test_values", "values", failed) is not None


SPEC = ExerciseSpec(
    name="01_demo",
    title="demo",
    suite=Path("test_01_demo.py"),
    checks=(
        CheckSpec("test_a", "a", 2, "a question", "public", 10),
        CheckSpec("test_b", "b", 3, "another", "public", 20),
    ),
)


def assembled(*found: rec.Record) -> Any:
    lines = tuple(rec.encode(r).decode().rstrip("\n") for r in found)
    return results.assemble(SPEC, results.Ending(Ended(records=lines)))


def test_a_grader_error_counts_no_points_and_shows_no_help() -> None:
    result = assembled(
        rec.Collected(("test_a", "test_b")),
        rec.Import("01_demo", ok=True),
        rec.Result("test_a", "error", message="grader error: ...", fix="x", grader_error=True),
        rec.Result("test_b", "passed", fraction=1.0),
        rec.Done(),
    )
    a, b = result.checks
    assert (a.status, a.score, a.max_score, a.hint, a.fix) == ("error", 0.0, 0.0, "", "")
    assert (b.score, b.max_score) == (3.0, 3.0)
    assert result.score == 3.0 and result.max_score == 3.0


def test_a_suite_that_did_not_load_counts_no_check() -> None:
    result = assembled(
        rec.SuiteError("grader error: ... (test_demo.py, line 3: ZeroDivisionError: ...)"),
        rec.Collected(()),
        rec.Done(),
    )
    assert result.status == "error" and "test_demo.py, line 3" in result.message
    assert all(c.max_score == 0.0 and c.status == "error" and not c.hint for c in result.checks)
    assert result.max_score == 0.0


def test_the_flag_travels_in_the_record() -> None:
    record = rec.Result("test_a", "error", message="grader error", grader_error=True)
    assert rec.decode(rec.encode(record)) == record
    assert rec.decode(rec.encode(rec.Result("test_a", "failed"))) == rec.Result("test_a", "failed")


@pytest.mark.parametrize("answered", [False, True])
def test_misspelt_names_are_always_the_suites(answered: bool) -> None:
    assert blame.is_suites(raised(eval, "undefined_name"), answered=answered)


def test_a_rerun_keeps_the_gate_of_a_grader_error_open() -> None:
    """A judge that reruns checks after a stopped sandbox learns the earlier verdicts: a check
    that ended in a grader error counts as no obstacle there either."""
    found = [
        rec.Result("test_a", "error", message="grader error: ...", grader_error=True),
        rec.Result("test_b", "error", message="stopped"),
        rec.Result("test_c", "timeout", message="ran out of time"),
        rec.Unrun(("test_c",)),
    ]
    rerun = results.rerun_of([rec.encode(r).decode() for r in found])
    assert rerun is not None and rerun.ids == ("test_c",)
    assert "test_a" in rerun.passed and "test_a" not in rerun.unjudged
    assert rerun.unjudged == ("test_b",)
    earlier = Earlier(only=frozenset(rerun.ids), passed=frozenset(rerun.passed))
    assert closed_by("test_a", "a", None, earlier) is None


def test_a_run_shared_by_several_checks_counts_as_an_answer_of_each_that_reads_it() -> None:
    """`_shared.once` gives later checks what the student's code answered an earlier one: a
    check that reads it has had an answer, so what the suite raises on it (`None` where an
    array was due) stays the student's and is never a grader error counting no points."""
    import types

    from grader.suites import _shared

    student = client.local(types.SimpleNamespace(train=lambda: None))
    channel = client.channel_of(student)
    first = channel.answers
    assert _shared.once(student, "a shared run", lambda: student.train()) is None
    assert channel.answers > first  # the first check's own answer
    second = channel.answers
    _shared.once(student, "a shared run", lambda: pytest.fail("computed twice"))
    assert channel.answers > second  # the second check reads it: an answer of its own

    def reference() -> int:
        return 3

    assert _shared.once(student, "the judge's own", reference) == 3
    third = channel.answers
    assert _shared.once(student, "the judge's own", reference) == 3
    assert channel.answers == third  # nothing of the student's: no answer
