"""The class as `grade batch` left it: one `Student` per results file in OUT/students/.

`NAME.json` is the student's results JSON (`grade --json`); `NAME.error.txt`
says why the grader itself could not grade them. The time of grading is the
results file's modification time (the results JSON has no clock in it, so two
gradings of the same code compare equal); everything else comes from the JSON,
but the hints the student revealed: OUT/hints/NAME.json, the `.grade/hints.json`
`grade batch` found in their submission (`grade hint` wrote it on their machine:
self-reported, nothing checks it; no file, nothing reported).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from grader import state
from grader.model import ExerciseResult, ExerciseStatus, Report
from grader.reports import labels

STUDENTS = "students"
HINTS = "hints"  # OUT/hints/NAME.json: the student's own record of the hints they revealed


class UnreadableResults(Exception):
    """A results file that cannot be read back; the message names it and says why."""


@dataclass(frozen=True)
class Student:
    name: str
    doc: dict[str, Any] | None  # the results JSON; None when grading failed
    error: str = ""
    graded_at: str = ""  # ISO 8601, UTC, to the second: when the results were written
    hints: state.Revealed | None = None  # as their submission reported; None: no record

    @property
    def score(self) -> float:
        return float(self.doc["score"]) if self.doc else 0.0

    @property
    def max_score(self) -> float:
        return float(self.doc["max_score"]) if self.doc else 0.0

    @property
    def percent(self) -> float:
        return 100 * self.score / self.max_score if self.max_score else 0.0

    @property
    def exercises(self) -> dict[str, dict[str, Any]]:
        return {e["name"]: e for e in self.doc["exercises"]} if self.doc else {}

    def lesson(self, name: str) -> ExerciseResult | None:
        """The lesson file `name` of their results, read back into the model; None when
        they have none."""
        found = self.exercises.get(name)
        return None if found is None else ExerciseResult.from_json(found)

    @property
    def hints_revealed(self) -> int | None:
        """Help levels the student asked for (`grade hint`), as their submission's
        `.grade/hints.json` reports them (self-reported); None when it has no such file."""
        return None if self.hints is None else state.count(self.hints)

    @property
    def report(self) -> Report | None:
        """The results, read back into the model (`Report.from_json`); None when grading
        failed."""
        return None if self.doc is None else Report.from_json(self.doc)

    @property
    def status(self) -> str:
        """passed (full marks); failed (a check they attempted failed); in_progress (begun,
        nothing attempted failed, functions or files not started left); error (an exercise
        crashed or timed out); not_attempted (nothing done or no lesson files);
        grader_error."""
        if self.report is None:
            return "grader_error"
        statuses: set[ExerciseStatus] = {e.status for e in self.report.exercises}
        shown = {labels.shown_status(e) for e in self.report.exercises}
        if "error" in statuses:
            return "error"
        if "failed" in shown:
            return "failed"
        if statuses <= {"not_attempted", "skipped"}:
            return "not_attempted"
        return "passed" if shown <= {"passed", "skipped"} else "in_progress"


def written_at(path: Path) -> str:
    stamp = datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def read(path: Path) -> dict[str, Any]:
    """A student's results JSON; `UnreadableResults` when it cannot be read back into the
    model (truncated by a full disk, written by hand, from an older grader)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        _shaped(doc)
        Report.from_json(doc)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise UnreadableResults(f"{path} is unreadable ({type(exc).__name__}: {exc})") from None
    return doc  # type: ignore[no-any-return]


def _shaped(doc: Any) -> None:
    """TypeError unless `doc` holds what the class's files read of it."""

    def fields(part: Any, numbers: tuple[str, ...], texts: tuple[str, ...]) -> None:
        if not isinstance(part, dict):
            raise TypeError(f"{part!r:.40} is not an object")
        for name in numbers:
            if isinstance(part[name], bool) or not isinstance(part[name], int | float):
                raise TypeError(f"{name} is not a number")
        for name in texts:
            if not isinstance(part[name], str):
                raise TypeError(f"{name} is not a string")

    fields(doc, ("score", "max_score"), ())
    for exercise in doc["exercises"]:
        fields(exercise, ("score", "max_score"), ("name", "title", "status"))
        for check in exercise["checks"]:
            fields(check, (), ("status", "id", "name", "visibility"))


def unreadable(path: Path) -> str | None:
    """Why the results file at `path` cannot be read (None when it can)."""
    try:
        read(path)
    except UnreadableResults as exc:
        return str(exc)
    return None


def load(out: Path) -> list[Student]:
    """Every student with results in OUT/students/, by name. A results file that cannot be
    read makes its student a grader error saying so (`grade batch` grades them again)."""
    folder = out / STUDENTS
    found: dict[str, Student] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            doc = read(path)
        except UnreadableResults as exc:
            found[path.stem] = Student(path.stem, None, str(exc), graded_at=written_at(path))
            continue
        reported = state.revealed_in(out / HINTS / path.name)
        found[path.stem] = Student(path.stem, doc, graded_at=written_at(path), hints=reported)
    for path in sorted(folder.glob("*.error.txt")):
        name = path.name.removesuffix(".error.txt")
        if name not in found:
            text = path.read_text(encoding="utf-8", errors="replace")
            found[name] = Student(name, None, text, graded_at=written_at(path))
    return [found[n] for n in sorted(found)]


def columns(students: list[Student]) -> list[tuple[str, str]]:
    """(name, title) of every lesson file, in the order the results list them."""
    seen: dict[str, str] = {}
    for student in students:
        for name, exercise in student.exercises.items():
            seen.setdefault(name, exercise["title"])
    return list(seen.items())


def maxima(students: list[Student]) -> dict[str, float]:
    """Each lesson file's maximum score (the largest any student's results give)."""
    top: dict[str, float] = {}
    for student in students:
        for name, exercise in student.exercises.items():
            top[name] = max(top.get(name, 0.0), float(exercise["max_score"]))
    return {name: top[name] for name, _ in columns(students)}
