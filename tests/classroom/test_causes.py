"""Why a lesson file was not graded on its merits, named from its results entry: each
cause from the words its producer writes, and a file graded on its merits has none."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from grader.classroom import causes
from grader.runner import results
from grader.runner.submission import SubmissionError, over_limit, refuse_link
from grader.sandbox import decoding


def entry(status: str, message: str, *checks: tuple[str, str]) -> dict[str, Any]:
    return {
        "name": "03_jit",
        "status": status,
        "message": message,
        "checks": [{"status": s, "message": m} for s, m in checks],
    }


def _oversize(tmp_path: Path) -> str:
    big = tmp_path / "03_jit.py"
    with big.open("wb") as fh:
        fh.truncate(3_000_000)
    return over_limit(big)


def _symlink(tmp_path: Path) -> str:
    (tmp_path / "target.py").write_text("")
    os.symlink(tmp_path / "target.py", tmp_path / "link.py")
    with pytest.raises(SubmissionError) as refused:
        refuse_link(tmp_path / "link.py")
    return str(refused.value)


def _encoding() -> str:
    with pytest.raises(SyntaxError) as raised:
        decoding.text(b"# caf\xe9\n", "03_jit.py")
    return f"03_jit.py has a syntax error at line 1: {raised.value.msg}. Python could not read"


SYNTAX = "03_jit.py has a syntax error at line 4: expected ':'. Python could not read the file"


def test_each_cause_is_named_from_the_words_its_producer_writes(tmp_path: Path) -> None:
    named = {
        "oversize": entry(
            "error", _oversize(tmp_path), ("error", "not run: the file is too large")
        ),
        "symlink": entry("error", _symlink(tmp_path), ("error", "not run: the file is a symlink")),
        "encoding": entry("error", _encoding(), ("error", "not run")),
        "syntax": entry("error", SYNTAX, ("error", SYNTAX)),
        "not attempted": entry("not_attempted", "no 03_jit.py in sub: nothing to grade"),
        "grader error": entry(
            "error", "the grader could not import", ("error", results.NOT_GRADED)
        ),
        "timeout": entry("error", "`f` could not finish", ("passed", ""), ("timeout", "ran out")),
        "crashed": entry("error", "`f` could not finish: MemoryError", ("error", "MemoryError")),
    }
    assert sorted(named) == sorted(causes.CAUSES)
    for cause, found in named.items():
        assert causes.of_exercise(found) == cause, (cause, found["message"])
    # a NUL byte is not text either: Python's own message for it
    with pytest.raises(SyntaxError) as raised:
        compile(decoding.text(b"x = 1\x00\n", "03_jit.py"), "03_jit.py", "exec")
    said = f"03_jit.py has a syntax error: {raised.value.msg}."
    assert causes.of_exercise(entry("error", said)) == "encoding"
    # the grader lost its own process on every try: its fault, whatever the student wrote
    lost = entry("error", "`f` could not finish", ("timeout", results.NOT_GRADED_FAULT))
    assert causes.of_exercise(lost) == "grader error"


def test_a_file_graded_on_its_merits_has_no_cause() -> None:
    for status in ("passed", "failed", "skipped"):
        assert causes.of_exercise(entry(status, "", ("failed", "expected 2, got 3"))) is None
    # a failed check whose message mentions a symlink or the size is still a graded file
    assert causes.of_exercise(entry("failed", "", ("failed", "is a symlink to x"))) is None


def test_a_students_causes_read_in_one_line_and_grouped() -> None:
    doc = {
        "exercises": [
            entry("error", SYNTAX) | {"name": "03_jit"},
            entry("passed", "") | {"name": "04_vmap"},
            entry("error", "boom", ("timeout", "")) | {"name": "06_random"},
            entry("error", SYNTAX) | {"name": "07_pmap"},
        ]
    }
    found = causes.of_student(doc)
    assert found == {"03_jit": "syntax", "06_random": "timeout", "07_pmap": "syntax"}
    assert (
        causes.line(found) == "03_jit syntax error; 06_random ran out of time; 07_pmap syntax error"
    )
    assert causes.grouped(found) == ["syntax error: 03_jit, 07_pmap", "ran out of time: 06_random"]
    assert causes.of_student(None) == {"": "grader error"}
    assert causes.line(causes.of_student(None)) == causes.WORDS["grader error"]
    assert causes.counts([found, {}, {"": "grader error"}]) == {
        "syntax": 2,
        "grader error": 1,
        "timeout": 1,
    }
