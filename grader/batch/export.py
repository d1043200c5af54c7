"""Write a graded class's gradebook in the CSV format an LMS imports.

    grade export canvas GRADES_DIR -o FILE [--roster CANVAS_EXPORT.csv] [--percent]
    grade export moodle GRADES_DIR -o FILE [--percent]

GRADES_DIR is the `--out` folder of `grade batch` (its students/ results). Canvas
gets its gradebook CSV (Student, ID, SIS User ID, SIS Login ID, Section, one
column per lesson file, a Points Possible row); give `--roster` the gradebook
Canvas exports to match each student folder to its Canvas row. Moodle gets a
student column and one column per lesson file, mapped when importing. Scores are
points, or percentages of each lesson file's maximum with `--percent`. The
README's `grade export` section gives the import steps.
"""

# `grader/commands/export.py` declares the arguments; the docstring above is its help.

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader import atomic
from grader.classroom import lms, roster


class ExportError(Exception):
    """What keeps the gradebook from being exported; the message says what to fix."""


@dataclass(frozen=True)
class Exported:
    students: int  # the students written
    missing: list[str]  # canvas: the students not in the roster, left out


def export(
    fmt: str, grades: Path, output: Path, *, roster_file: str | None = None, percent: bool = False
) -> Exported:
    """Write the gradebook of `grades` (the --out folder of `grade batch`) to `output` in
    the import format `fmt` (`lms.FORMATS`); `ExportError` before anything is written."""
    if not (grades / roster.STUDENTS).is_dir():
        raise ExportError(
            f"{grades}: no {roster.STUDENTS}/ folder in it; give the --out folder of `grade batch`"
        )
    students = roster.load(grades)
    if not students:
        raise ExportError(f"{grades / roster.STUDENTS} holds no results")
    if roster_file is not None and fmt != "canvas":
        raise ExportError("--roster is for canvas; Moodle maps students when importing")
    missing: list[str] = []
    if fmt == "canvas":
        people = None
        if roster_file is not None:
            try:
                people = lms.read_canvas_roster(Path(roster_file).read_text(encoding="utf-8"))
            except (OSError, lms.RosterError) as exc:
                raise ExportError(f"--roster {roster_file}: {exc}") from None
        text, missing = lms.canvas(students, percent=percent, people=people)
    else:
        text = lms.moodle(students, percent=percent)
    try:
        atomic.write_text(output, text)
    except OSError as exc:
        raise ExportError(str(exc)) from None
    return Exported(len(students) - len(missing), missing)
