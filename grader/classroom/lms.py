"""The gradebook in the CSV formats learning management systems import.

Canvas (Grades > Import), as its gradebook export writes it and its import
reads it back:

    Student, ID, SIS User ID, SIS Login ID, Section, <one column per assignment>
    a second row `Points Possible` with each assignment's maximum

Canvas needs one of Student / ID / SIS User ID to find a student, and the SIS
Login ID and Section columns present. Without a roster the student's folder
name goes into Student and SIS Login ID; with one (`roster`, Canvas's own
gradebook export) a folder is matched to the roster row whose SIS Login ID,
SIS User ID, ID or Student equals it, and that row's five columns are used.
An assignment column is the lesson file's name (`03_jit`): Canvas fills the
assignment of that name, or offers to create it.

Moodle (Grade administration > Import > CSV file) maps each column itself:
the student column to a user field (username, ID number or email address)
and each grade column to a grade item. So its file is plain:

    Student, <one column per lesson file>

A student the grader could not grade gets empty cells (no grade: the LMS
leaves theirs alone); an untouched lesson file scores 0. Every text cell is
spreadsheet-safe (`spreadsheet.cell`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence

from grader.classroom import roster
from grader.classroom.spreadsheet import cell, csv_text
from grader.reports import labels

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_POINTS = "Points Possible"
MOODLE_STUDENT = "Student"
FORMATS = ("canvas", "moodle")


class RosterError(ValueError):
    """The roster file cannot be used (not a Canvas gradebook export)."""


def _score(student: roster.Student, lesson: str, maximum: float, percent: bool) -> str:
    if student.doc is None:
        return ""
    exercise = student.exercises.get(lesson)
    got = float(exercise["score"]) if exercise else 0.0
    if percent:
        return f"{100 * got / maximum:.1f}" if maximum else ""
    return labels.number(got)


def read_canvas_roster(text: str) -> dict[str, dict[str, str]]:
    """A Canvas gradebook export, indexed by each of its identity values."""
    rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))
    if not rows or not set(CANVAS_IDENTITY) <= set(rows[0]):
        raise RosterError(
            "the roster is not a Canvas gradebook export: its header needs "
            + ", ".join(CANVAS_IDENTITY)
        )
    index: dict[str, dict[str, str]] = {}
    for row in rows:
        if row["Student"].strip() == CANVAS_POINTS or "Points Possible" in row["Student"]:
            continue
        identity = {k: row.get(k) or "" for k in CANVAS_IDENTITY}
        for key in ("SIS Login ID", "SIS User ID", "ID", "Student"):
            if identity[key]:
                index.setdefault(identity[key], identity)
    return index


def canvas(
    students: Sequence[roster.Student],
    percent: bool = False,
    people: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[str, list[str]]:
    """Canvas's gradebook CSV; and the students the roster (`people`) does not hold."""
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
        if people is not None and s.name not in people:
            missing.append(s.name)
            continue
        found = people[s.name] if people is not None else None
        identity = [found[k] for k in CANVAS_IDENTITY] if found else [s.name, "", "", s.name, ""]
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
