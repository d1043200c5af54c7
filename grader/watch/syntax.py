"""What the parent reads of a lesson file without importing it.

`grade watch` shows a syntax error the moment the file is saved, without a grading
run: the source is compiled here, never executed (the parent must not run student
code; `compile` only parses).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

from grader.sandbox import decoding


@dataclass(frozen=True)
class SyntaxProblem:
    """Why a lesson file cannot be parsed: where, the line, and Python's words."""

    file: str  # the file's name (no folder)
    line: int  # 1-based; 0 when Python gave none
    column: int  # 1-based; 0 when unknown
    code: str  # the offending line, as written
    message: str  # e.g. "expected ':'"


def syntax_problem(path: Path) -> SyntaxProblem | None:
    """The syntax error in the Python file at `path`, or None when it parses.

    Notebooks are not checked here (their cells are parsed in the grading run)."""
    if path.suffix != ".py":
        return None
    try:
        source = path.read_bytes()
    except OSError:
        return None  # gone or unreadable: the grading run says so
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning would print over the screen
            # decoded as python3 decodes it: an undeclared Latin-1 byte is its SyntaxError
            compile(decoding.text(source, path.name), path.name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return SyntaxProblem(
            file=path.name,
            line=exc.lineno or 0,
            column=exc.offset or 0,
            code=(exc.text or "").rstrip("\r\n"),
            message=exc.msg or "invalid syntax",
        )
    except ValueError as exc:  # e.g. "source code string cannot contain null bytes"
        return SyntaxProblem(path.name, 0, 0, "", str(exc))
    return None
