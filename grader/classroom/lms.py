"""The gradebook in the CSV formats learning management systems import.

Canvas (Grades > Import), as its gradebook export writes it and its import
reads it back:

    Student, ID, SIS User ID, SIS Login ID, Section, <one column per assignment>
    a second row `Points Possible` with each assignment's maximum

Canvas finds a row's student by its identity columns, so every row carries the
identity `grader.classroom.matching` tied its folder to (a roster row, or the
folder name in the column a naming convention says it is); a folder tied to no
one is left out and named. An assignment column is the lesson file's name
(`03_jit`): Canvas fills the assignment of that name, or offers to create it.

Moodle (Grade administration > Import > CSV file) maps each column itself:
the student column to a user field (username, ID number or email address)
and each grade column to a grade item. So its file is plain:

    Student, <one column per lesson file>

A student the grader could not grade gets empty cells (no grade: the LMS
leaves theirs alone); an untouched lesson file scores 0. Every text cell is
spreadsheet-safe (`spreadsheet.cell`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from grader.classroom import matching, roster
from grader.classroom.spreadsheet import cell, csv_text
from grader.reports import labels

CANVAS_IDENTITY = matching.IDENTITY
CANVAS_POINTS = matching.POINTS
MOODLE_STUDENT = "Student"
FORMATS = ("canvas", "moodle")


def _score(student: roster.Student, lesson: str, maximum: float, percent: bool) -> str:
    if student.doc is None:
        return ""
    exercise = student.exercises.get(lesson)
    got = float(exercise["score"]) if exercise else 0.0
    if percent:
        return f"{100 * got / maximum:.1f}" if maximum else ""
    return labels.number(got)


def canvas(
    students: Sequence[roster.Student], people: Mapping[str, matching.Person], percent: bool = False
) -> tuple[str, list[str]]:
    """Canvas's gradebook CSV, a row per student `people` identifies (folder name -> their
    identity columns); and the students it does not, left out."""
    maxima = roster.maxima(list(students))
    header = [*CANVAS_IDENTITY, *(cell(lesson) for lesson in maxima)]
    points = [
        CANVAS_POINTS,
        "",
        "",
        "",
        "",
        *("100" if percent else labels.number(m) for m in maxima.values()),
    ]
    rows, missing = [header, points], []
    for s in students:
        if s.name not in people:
            missing.append(s.name)
            continue
        identity = [people[s.name][k] for k in CANVAS_IDENTITY]
        scores = [_score(s, lesson, m, percent) for lesson, m in maxima.items()]
        rows.append([*(cell(v) for v in identity), *scores])
    return csv_text(rows), missing


def moodle(students: Sequence[roster.Student], percent: bool = False) -> str:
    """Moodle's grade import CSV: the student, then one column per lesson file."""
    maxima = roster.maxima(list(students))
    rows = [[MOODLE_STUDENT, *(cell(lesson) for lesson in maxima)]]
    for s in students:
        rows.append(
            [cell(s.name), *(_score(s, lesson, m, percent) for lesson, m in maxima.items())]
        )
    return csv_text(rows)
