"""Write a graded class's gradebook in the CSV format an LMS imports.

    grade export canvas GRADES_DIR -o FILE --roster CANVAS_EXPORT.csv [--percent]
    grade export canvas GRADES_DIR -o FILE --match-by sis-user [--percent]
    grade export moodle GRADES_DIR -o FILE [--percent]

GRADES_DIR is the `--out` folder of `grade batch` (its students/ results). Canvas
gets its gradebook CSV (Student, ID, SIS User ID, SIS Login ID, Section, one
column per lesson file, a Points Possible row). Canvas finds each row's student
by those identity columns, so say how a student folder is tied to a Canvas
student: `--roster` the gradebook Canvas exports (the folder name is looked up
in its SIS Login ID, SIS User ID, ID and Student columns, or only in the one
`--match-by` names), or, without a roster, `--match-by sis-user` when the folder
names ARE the students' SIS user IDs (SIS login IDs need the roster: Canvas's
import does not find a student by one alone). A folder matching two
students, or two folders matching one, stops the export. Moodle gets a student
column and one column per lesson file, mapped when importing. Scores are points,
or percentages of each lesson file's maximum with `--percent`. The instructors'
guide (docs/instructors.md, `grade export`) gives the import steps.
"""

# `grader/commands/export.py` declares the arguments; the docstring above is its help.

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader import atomic
from grader.classroom import lms, matching, roster
from grader.errors import GraderError


class ExportError(GraderError):
    """What keeps the gradebook from being exported; the message says what to fix."""


UNMATCHED = (
    "canvas: no way to tell which Canvas student each folder is (Canvas's import "
    "finds a row's student by its Canvas ID or SIS User ID, and a folder name is neither, so "
    "such a file would match nobody); give --roster CANVAS_EXPORT.csv, the gradebook Canvas "
    "exports (Grades > Export > Export Entire Gradebook), or --match-by sis-user when the "
    "folder names are the students' SIS user IDs"
)
LOGIN_ALONE = (
    "--match-by sis-login: Canvas's import does not find a student by "
    "SIS Login ID alone; give --roster CANVAS_EXPORT.csv too (each login ID is looked up in "
    "it), or --match-by sis-user when the folder names are the students' SIS user IDs"
)


@dataclass(frozen=True)
class Exported:
    students: int  # the students written
    missing: list[str]  # canvas: the students not in the roster, left out


def export(
    fmt: str,
    grades: Path,
    output: Path,
    *,
    roster_file: str | None = None,
    match_by: str | None = None,
    percent: bool = False,
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
    if (roster_file is not None or match_by is not None) and fmt != "canvas":
        raise ExportError(
            "--roster and --match-by are for canvas; Moodle maps students when importing "
            "(docs/instructors.md, `grade export`): leave them out"
        )
    missing: list[str] = []
    if fmt == "canvas":
        text, missing = lms.canvas(students, _people(students, roster_file, match_by), percent)
    else:
        text = lms.moodle(students, percent=percent)
    try:
        atomic.write_text(output, text)
    except OSError as exc:
        raise ExportError(str(exc)) from None
    return Exported(len(students) - len(missing), missing)


def _people(
    students: list[roster.Student], roster_file: str | None, match_by: str | None
) -> dict[str, matching.Person]:
    """Each student folder's Canvas identity, as far as it can be told (`matching`)."""
    names = [s.name for s in students]
    if roster_file is None:
        if match_by not in matching.NAMING:
            raise ExportError(UNMATCHED if match_by is None else LOGIN_ALONE)
        return matching.by_name(names, match_by)
    try:
        people = matching.read_roster(Path(roster_file).read_text(encoding="utf-8"))
        return matching.from_roster(names, people, match_by)[0]
    except (OSError, UnicodeDecodeError, matching.RosterError, matching.Ambiguous) as exc:
        raise ExportError(f"--roster {roster_file}: {exc}") from None
