"""What the student is told (`grader.plugin.wording`): an import that failed, the student's
line behind a failure, the root cause a failure was raised from, messages cleaned of the
grader's folders. Real exceptions, no sandbox."""

from __future__ import annotations

import os
from pathlib import Path

from grader.checks.failure import CheckFailure, fail
from grader.model import SourceLine
from grader.plugin import wording
from grader.protocol.value_codec import ErrorInfo
from grader.sandbox import client
from grader.sandbox.client import SandboxGone, StudentError


def student_error(
    kind: str, message: str = "", *, line: int | None = None, in_student: bool = False
) -> StudentError:
    location = ("03_jit.py", line, "x = 1 +") if line is not None else None
    info = ErrorInfo(kind, ("Exception",), message, location, "f", in_student)
    return client.student_error(info)


def test_scrub_drops_addresses_and_the_private_lesson_folder(tmp_path: Path) -> None:
    folder = str(tmp_path)
    message = f"<function f at 0x7f3a2b> in {folder}{os.sep}03_jit.py"
    assert wording.scrub(message, folder) == "<function f> in 03_jit.py"
    assert wording.scrub(message) == f"<function f> in {folder}{os.sep}03_jit.py"


def test_short_cuts_long_texts_only() -> None:
    assert wording.short(ValueError("  brief  ")) == "brief"
    assert wording.short(ValueError("x" * 700)) == "x" * 600 + " [...]"


def test_the_students_line_is_found_through_causes_and_contexts() -> None:
    error = student_error("TypeError", "bad", line=4)
    try:
        try:
            raise error
        except StudentError:
            raise RuntimeError("while checking") from None  # context kept, cause suppressed
    except RuntimeError as outer:
        assert wording.error_location(outer) == SourceLine("03_jit.py", 4, "x = 1 +")
    assert wording.error_location(RuntimeError("the check's own")) is None


def test_only_an_explicit_cause_is_a_root_cause() -> None:
    error = student_error("TypeError", "bad", line=4)
    try:
        raise CheckFailure("v", expected="a", observed="b") from error
    except CheckFailure as explicit:
        assert wording.student_root_cause(explicit) == "TypeError|03_jit.py|4|f"
    try:
        try:
            raise error
        except StudentError:
            raise fail("v", expected="a", observed="b")  # noqa: B904 - an implicit context
    except CheckFailure as implicit:
        assert wording.student_root_cause(implicit) is None


def test_a_stub_or_an_error_without_a_line_is_no_root_cause() -> None:
    for cause in (
        student_error("NotImplementedError", line=4, in_student=True),
        student_error("TypeError", "bad"),
    ):
        try:
            raise CheckFailure("v", expected="a", observed="b") from cause
        except CheckFailure as failure:
            assert wording.student_root_cause(failure) is None


def test_a_syntax_error_names_its_line_from_the_location_or_the_message() -> None:
    located = wording.import_message("03_jit", student_error("SyntaxError", "bad", line=5))
    assert located.startswith("03_jit.py has a syntax error (03_jit.py, line 5: x = 1 +): bad.")
    unlocated = student_error("SyntaxError", "invalid syntax (03_jit.py, line 8)")
    assert wording.import_message("03_jit", unlocated).startswith(
        "03_jit.py has a syntax error at line 8: invalid syntax. Python could not read the file"
    )


def test_an_exit_at_import_and_an_ended_process_are_explained() -> None:
    exited = wording.import_message("03_jit", student_error("SystemExit", "2"))
    assert exited.startswith("03_jit.py called sys.exit(2) while being imported. A lesson file")
    gone = wording.import_message("03_jit", SandboxGone("exit code 3"))
    assert gone.startswith(
        "03_jit.py could not be imported: the process importing it stopped (exit code 3)."
    )


def test_other_import_errors_say_how_to_see_them() -> None:
    message = wording.import_message("03_jit", student_error("NameError", "name 'jnp' is not"))
    assert message == (
        "03_jit.py failed to import: NameError: name 'jnp' is not. None of its checks ran. "
        "Run `python 03_jit.py` to see the error, fix it and grade again."
    )
    missing = student_error("FileNotFoundError", "03_jit.py is not in the submission")
    assert wording.import_message("03_jit", missing) == "03_jit.py is not in the submission"
    assert wording.import_message("03_jit", FileNotFoundError("no sandbox")) == "no sandbox"


def test_a_raise_carries_jaxs_likely_cause_when_known() -> None:
    plain, fix = wording.raised("your code", "KeyError", KeyError("w"))
    assert (plain, fix) == ("your code raised KeyError: 'w'", "")
    tracer = student_error("ConcretizationTypeError", "Abstract tracer value encountered")
    explained, _ = wording.raised("your code", "ConcretizationTypeError", tracer)
    assert explained.splitlines()[0].startswith("your code raised ConcretizationTypeError")
    assert explained.splitlines()[1].startswith("  likely cause:")


def test_source_line_quotes_the_lesson_or_nothing(tmp_path: Path) -> None:
    lesson = tmp_path / "03_jit.py"
    lesson.write_text("def f():\n    return 1   \n")
    assert wording.source_line(str(lesson), 2) == "return 1"
    assert wording.source_line(str(lesson), 9) == ""
    assert wording.source_line(str(tmp_path / "missing.py"), 1) == ""


def test_a_time_limit_is_the_checks_share_or_the_files() -> None:
    assert wording.time_limit(1.5, 3.0, share=True) == (
        "this check's share of the time limit (1.5 s of computing, 3 s in all)"
    )
    assert wording.time_limit(1.5, 3.0, share=False) == "the time limit for this file"
