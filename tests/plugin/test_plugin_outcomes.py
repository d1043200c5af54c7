"""How a check ended, from the exception it raised (`grader.plugin.outcomes`), without a
sandbox: real exceptions (a student's error as the judge sees it, a check's failure raised
from it, the sandbox's stop reasons) classified into frozen outcomes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from grader.authoring import Credit
from grader.checks.failure import CheckFailure
from grader.model import SourceLine
from grader.plugin.gates import GateClosed
from grader.plugin.outcomes import PASSED, Context, Outcome, classify, skipped, with_credit
from grader.plugin.sandbox_session import LessonImportError
from grader.protocol.value_codec import ErrorInfo
from grader.sandbox import client, quota
from grader.sandbox.client import SandboxGone, StudentError


def student_error(
    kind: str,
    message: str = "",
    *,
    line: int | None = None,
    function: str = "",
    in_student: bool = False,
) -> StudentError:
    location = ("03_jit.py", line, "y = x[0]") if line is not None else None
    return client.student_error(
        ErrorInfo(kind, ("Exception", "BaseException"), message, location, function, in_student)
    )


def failure_from(cause: BaseException | None) -> CheckFailure:
    """A check's failure raised, as suites do, `from` the student's error (or from nothing)."""
    try:
        raise CheckFailure("values", expected="1.0", observed="2.0", fix="use jnp.where") from cause
    except CheckFailure as failure:
        return failure


def test_a_passed_check_has_full_marks_and_its_outcome_is_frozen() -> None:
    assert PASSED.full_marks and PASSED.status == "passed"
    assert not Outcome(status="passed", fraction=0.5).full_marks
    assert not Outcome(status="failed", fraction=1.0).full_marks
    with pytest.raises(dataclasses.FrozenInstanceError):
        PASSED.status = "failed"  # type: ignore[misc]


def test_a_check_failure_fails_with_its_message_and_its_fix_apart() -> None:
    outcome = classify(failure_from(None), "call")
    assert outcome.status == "failed" and outcome.fraction == 0.0
    assert outcome.message == "values\n  expected: 1.0\n  observed: 2.0"
    assert outcome.fix == "use jnp.where" and "use jnp.where" not in outcome.message
    assert outcome.root_cause is None and outcome.location is None


def test_a_failure_raised_from_the_students_error_names_its_root_cause_and_line() -> None:
    outcome = classify(
        failure_from(student_error("IndexError", "bad", line=7, function="f")), "call"
    )
    assert outcome.root_cause == "IndexError|03_jit.py|7|f"
    assert outcome.location == SourceLine("03_jit.py", 7, "y = x[0]")


def test_a_stub_not_implemented_is_said_so_whatever_the_phase() -> None:
    stub = student_error("NotImplementedError", line=3, function="piecewise", in_student=True)
    outcome = classify(stub, "call")
    assert (outcome.status, outcome.not_implemented) == ("failed", True)
    assert outcome.message == (
        "`piecewise` is not implemented yet: it still raises NotImplementedError."
    )
    assert outcome.root_cause is None
    # Raised by a library the student called, not by the stub's own line: a bug like any other.
    library = student_error("NotImplementedError", "no", line=3, function="piecewise")
    assert not classify(library, "call").not_implemented


def test_the_students_error_fails_the_call_and_errs_in_setup() -> None:
    error = student_error("ValueError", "negative size", line=9, function="g")
    called, prepared = classify(error, "call"), classify(error, "setup")
    assert (called.status, prepared.status) == ("failed", "error")
    assert called.message.startswith("your code raised ValueError: negative size")
    assert called.root_cause == "ValueError|03_jit.py|9|g"
    assert classify(student_error("ValueError", "x"), "call").root_cause is None  # no line


def test_out_of_memory_is_an_error_not_the_students_bug() -> None:
    for error in (
        student_error("MemoryError"),
        student_error("XlaRuntimeError", "RESOURCE_EXHAUSTED: 9 GiB"),
    ):
        outcome = classify(error, "call")
        assert outcome.status == "error"
        assert outcome.message.startswith("ran out of memory: the code tried to allocate")
    assert classify(student_error("XlaRuntimeError", "INTERNAL"), "call").status == "failed"


def test_a_closed_gate_fails_blocked_by_the_check_it_stands_on() -> None:
    outcome = classify(GateClosed("test_v", "values", not_implemented=True), "call")
    assert (outcome.status, outcome.blocked_by, outcome.not_implemented) == (
        "failed",
        "test_v",
        True,
    )
    assert "values are wrong: fix the values first: see 'values'" in outcome.message


def test_a_suites_bare_assert_keeps_its_first_line() -> None:
    assert classify(AssertionError("x == 2\n  where x = 1"), "call").message == "x == 2"
    assert classify(AssertionError(), "call").message == "assertion failed"


def test_an_exception_of_the_check_itself_is_said_to_use_what_the_code_returned() -> None:
    outcome = classify(KeyError("w"), "call")
    assert outcome.status == "failed"
    assert outcome.message == "the check, using what your code returned, raised KeyError: 'w'"
    assert classify(KeyError("w"), "teardown").status == "error"


def test_a_lesson_that_did_not_import_and_a_function_not_called_again_are_errors() -> None:
    imported = classify(LessonImportError("03_jit.py has a syntax error"), "setup")
    assert (imported.status, imported.message) == ("error", "03_jit.py has a syntax error")
    not_called = classify(client.NotCalled("newton"), "call")
    assert not_called.status == "error"
    assert not_called.message.startswith("not judged: `newton` stopped the process")


def test_a_sandbox_that_stopped_earlier_runs_nothing_more() -> None:
    outcome = classify(SandboxGone(f"{client.ALREADY_GONE}: it was killed"), "call")
    assert outcome.status == "error"
    assert outcome.message == (
        "not run: the process running your code stopped in an earlier check (it was killed)"
    )


@pytest.mark.parametrize(
    ("reason", "start"),
    [
        (f"{quota.EXCEEDED} (1 MiB)", "`loop` wrote too much: "),
        (f"{client.PROTOCOL_BREAK} (ValueError: x)", "the process running your code sent"),
        ("signal 9", "the process running your code stopped while `loop` ran (signal 9)"),
    ],
)
def test_a_sandbox_stopping_during_the_check_says_why(reason: str, start: str) -> None:
    outcome = classify(SandboxGone(reason), "call", Context(function="loop"))
    assert outcome.status == "error" and outcome.message.startswith(start)


def test_a_time_share_that_ran_out_says_where_the_code_was(tmp_path: Path) -> None:
    (tmp_path / "03_jit.py").write_text("def loop():\n    while True:\n        pass\n")
    stuck = (("03_jit.py", 2, "loop"),)
    context = Context(function="loop", stuck=stuck, share_s=2.0, lesson_dir=str(tmp_path))
    outcome = classify(SandboxGone(client.CHECK_SHARE), "call", context)
    assert outcome.status == "timeout" and outcome.fraction == 0.0
    assert outcome.location == SourceLine("03_jit.py", 2, "while True:")
    assert outcome.message.startswith(
        "`loop` was still running when this check's share of the time limit (2 s of computing, "
        "4 s in all) ran out. It was at 03_jit.py, line 2, in `loop`: `while True:`."
    )
    assert outcome.message.endswith("The file's other checks ran in a fresh process.")


def test_the_files_time_limit_is_named_as_such_and_without_a_stack_no_line() -> None:
    outcome = classify(SandboxGone(client.FILE_LIMIT), "call", Context())
    assert outcome.status == "timeout" and outcome.location is None
    assert outcome.message.startswith(
        "your code was still running when the time limit for this file ran out. Look for"
    )
    assert "fresh process" not in outcome.message


def test_a_skip_is_no_verdict() -> None:
    with pytest.raises(pytest.skip.Exception) as info:
        pytest.skip("needs flax")
    assert skipped(info.value) == Outcome(status="skipped", fraction=0.0, message="needs flax")


def test_partial_credit_fails_a_passing_check_with_its_fraction() -> None:
    credit = Credit()
    assert with_credit(PASSED, credit) is PASSED  # full credit: nothing changes
    credit.award(0.5, "2 of 4 cases right", fix="mind the edges")
    assert with_credit(PASSED, credit) == Outcome(
        status="failed", fraction=0.5, message="2 of 4 cases right", fix="mind the edges"
    )
    failed = classify(KeyError("w"), "call")
    assert with_credit(failed, credit) is failed  # a failure stays what it was
    assert with_credit(PASSED, None) is PASSED
