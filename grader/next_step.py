"""What a student does next with a lesson file, said with its verdict.

- An untouched file (status `not_attempted`) names its first TODO: the first
  `raise NotImplementedError` or `# TODO` comment in the student's file, with its
  line and text, and the command that grades the file again.
- A file begun but not finished (some of its checks `not_attempted`: their function
  still raises the stub's NotImplementedError) names the first such line, from the
  checks' own record of where the error was raised, and the command that grades it.
- A file at full marks names the next lesson file to work on (catalog order) and
  the command that grades it.

The student's file is read as text, never imported: this runs in the parent,
which never runs student code. A notebook's code cells are read in order; its
line is then `03_jit.ipynb, cell 4` and the line within that cell.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import tokenize
from collections.abc import Iterator, Sequence
from pathlib import Path

from grader.invocations import command, shown
from grader.model import ExerciseResult, NextStep, Report, SourceLine
from grader.runner.submission import LESSON_SUFFIXES, MAX_LESSON_BYTES, Submission

_TODO_COMMENT = re.compile(r"#\s*TODO\b", re.IGNORECASE)
_RAISE_NOT_IMPLEMENTED = re.compile(r"^\s*raise\s+NotImplementedError\b")
MAX_CODE_CHARS = 200
"""A TODO line is cut to this many characters (it is shown on one terminal line)."""


def _todo_lines(source: str) -> Iterator[int]:
    """Line numbers (from 1) of TODO comments and `raise NotImplementedError`, in order.

    Tokens, not text, where the file tokenizes: a "# TODO" inside a string is not one."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        for number, line in enumerate(source.splitlines(), start=1):
            if _RAISE_NOT_IMPLEMENTED.match(line) or _TODO_COMMENT.search(line):
                yield number
        return
    for index, token in enumerate(tokens):
        if (token.type == tokenize.COMMENT and _TODO_COMMENT.match(token.string)) or (
            token.type == tokenize.NAME
            and token.string == "raise"
            and index + 1 < len(tokens)
            and tokens[index + 1].string == "NotImplementedError"
        ):
            yield token.start[0]


def first_todo_in(source: str, path: str) -> SourceLine | None:
    """The first TODO of a Python source, as the line to show (`path` is how to name it)."""
    lines = source.splitlines()
    for number in _todo_lines(source):
        code = lines[number - 1].strip() if number <= len(lines) else ""
        return SourceLine(path, number, code[:MAX_CODE_CHARS])
    return None


def _notebook_cells(text: str) -> Iterator[str]:
    doc = json.loads(text)
    cells = doc.get("cells", []) if isinstance(doc, dict) else []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            yield "".join(source) if isinstance(source, list) else str(source)


def first_todo(path: Path) -> SourceLine | None:
    """The first TODO of the lesson file at `path` (a `.py` or an `.ipynb`), or None; its
    path as `invocations.shown` (`exercises/01_arrays.py line 34`: a place the student
    can open)."""
    try:
        if path.stat().st_size > MAX_LESSON_BYTES * 25:
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    where = shown(path)
    if path.suffix != ".ipynb":
        return first_todo_in(text, where)
    try:
        cells = list(_notebook_cells(text))
    except (ValueError, RecursionError):
        return None
    for number, cell in enumerate(cells, start=1):
        found = first_todo_in(cell, f"{where}, cell {number}")
        if found is not None:
            return found
    return None


def _file_of(submission: Submission, lesson: str) -> Path:
    """The lesson file of `lesson` in the submission's folder (its `.py` when there is none)."""
    if lesson in submission.files:
        return submission.files[lesson]
    for suffix in LESSON_SUFFIXES:
        candidate = submission.root / f"{lesson}{suffix}"
        if candidate.is_file():
            return candidate
    return submission.root / f"{lesson}.py"


def at_full_marks(exercise: ExerciseResult) -> bool:
    return exercise.status == "passed" and exercise.score >= exercise.max_score > 0


def step(
    exercise: ExerciseResult,
    submission: Submission,
    order: Sequence[str],
    done: frozenset[str] = frozenset(),
) -> NextStep | None:
    """What to do next with `exercise` (None when the verdict itself says it: a failure).

    `order`: every lesson, in catalog order; `done`: lessons known to be at full marks
    (skipped when naming the next file)."""
    if exercise.status == "not_attempted" and exercise.name in submission.files:
        path = submission.files[exercise.name]
        return NextStep(command(path), todo=first_todo(path))
    if exercise.name in submission.files and (todo := not_started_at(exercise, submission)):
        return NextStep(command(submission.files[exercise.name]), todo=todo)
    if at_full_marks(exercise) and exercise.name in order:
        later = [n for n in order[order.index(exercise.name) + 1 :] if n not in done]
        if later:
            return NextStep(command(_file_of(submission, later[0])), lesson=later[0])
    return None


def not_started_at(exercise: ExerciseResult, submission: Submission) -> SourceLine | None:
    """The first line, in the file, where a not-started check's function still raises
    NotImplementedError (its path as `shown`), or None when no check is not started or
    none recorded its line."""
    lines = sorted(
        (c.location.line, c.location.code)
        for c in exercise.checks
        if c.status == "not_attempted" and c.location is not None
    )
    path = submission.files[exercise.name]
    if not lines or path.suffix == ".ipynb":  # a notebook's lines are not its cells'
        return first_todo(path) if lines else None
    line, code = lines[0]
    return SourceLine(shown(path), line, code[:MAX_CODE_CHARS])


def fill(report: Report, submission: Submission, order: Sequence[str]) -> Report:
    """`report` with each exercise's next step (`order`: every lesson, in catalog order)."""
    done = frozenset(e.name for e in report.exercises if at_full_marks(e))
    exercises = tuple(
        dataclasses.replace(e, next=step(e, submission, order, done)) for e in report.exercises
    )
    return dataclasses.replace(report, exercises=exercises)
