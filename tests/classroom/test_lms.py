"""Canvas and Moodle import files, and spreadsheet-safe cells."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from grader.classroom import lms
from grader.classroom.roster import Student
from grader.classroom.spreadsheet import cell

# Canvas's gradebook import, as its guides document it ("How do I import grades in the
# Gradebook?"; its own export has the same header): a student is found by Student (name),
# ID or SIS User ID, the SIS Login ID and Section columns are present, then one column per
# assignment; the export's second row gives each assignment's Points Possible.
CANVAS_DOCUMENTED = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def results(scores: dict[str, tuple[float, float, str]]) -> dict[str, Any]:
    exercises = [
        {"name": n, "title": n, "score": s, "max_score": m, "status": st, "checks": []}
        for n, (s, m, st) in scores.items()
    ]
    return {
        "exercises": exercises,
        "score": sum(s for s, _, _ in scores.values()),
        "max_score": sum(m for _, m, _ in scores.values()),
    }


CLASS = [
    Student("ann", results({"01_a": (3, 3, "passed"), "02_b": (2.5, 4, "failed")})),
    Student("=cmd|' /C calc'!A0", results({"01_a": (1, 3, "failed"), "02_b": (0, 4, "not_attempted")})),
    Student("dee", None, "OSError"),
]  # fmt: skip


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_canvas_file_has_the_documented_columns_and_points_possible() -> None:
    text, missing = lms.canvas(CLASS)
    table = rows(text)
    assert table[0][:5] == CANVAS_DOCUMENTED and table[0][5:] == ["01_a", "02_b"]
    assert table[1] == ["Points Possible", "", "", "", "", "3", "4"]
    assert table[2] == ["ann", "", "", "ann", "", "3", "2.5"]
    assert table[3] == ["'=cmd|' /C calc'!A0", "", "", "'=cmd|' /C calc'!A0", "", "1", "0"]
    assert table[4] == ["dee", "", "", "dee", "", "", ""]  # not graded: no grade, not 0
    assert missing == [] and all(len(r) == len(table[0]) for r in table)


def test_canvas_roster_matches_folders_to_canvas_students() -> None:
    export = (
        "Student,ID,SIS User ID,SIS Login ID,Section,Quiz 1 (77)\n"
        "    Points Possible,,,,,10\n"
        '"Lovelace, Ann",1201,S-1,ann,Section A,9\n'
        '"Hopper, Dee",1202,S-2,dee,Section B,\n'
    )
    people = lms.read_canvas_roster("\ufeff" + export)
    text, missing = lms.canvas(CLASS, percent=True, people=people)
    table = rows(text)
    assert table[1][5:] == ["100", "100"]
    assert table[2] == ["Lovelace, Ann", "1201", "S-1", "ann", "Section A", "100.0", "62.5"]
    assert table[3] == ["Hopper, Dee", "1202", "S-2", "dee", "Section B", "", ""]
    assert missing == ["=cmd|' /C calc'!A0"]
    with pytest.raises(lms.RosterError, match="SIS Login ID"):
        lms.read_canvas_roster("name,score\nann,3\n")


def test_moodle_file_is_a_student_column_and_a_column_per_lesson() -> None:
    table = rows(lms.moodle(CLASS))
    assert table == [
        ["Student", "01_a", "02_b"],
        ["ann", "3", "2.5"],
        ["'=cmd|' /C calc'!A0", "1", "0"],
        ["dee", "", ""],
    ]


@pytest.mark.parametrize(
    ("text", "safe"),
    [
        ("ann", "ann"),
        ("=SUM(A1:A9)", "'=SUM(A1:A9)"),
        ("+1", "'+1"),
        ("-2+3", "'-2+3"),
        ("@cmd", "'@cmd"),
        ("\t=1", "'\u2409=1"),
        ("\r=1", "'\u240d=1"),
        ("a\nb", "a\u240ab"),
        ("red \x1b[31m", "red \u241b[31m"),
        ("anne-marie", "anne-marie"),
        ("ann\u200b\u202eb", "ann\\u200b\\u202eb"),
        ("\ufeff=1", "\\ufeff=1"),
    ],
)
def test_cells_never_open_as_formulas(text: str, safe: str) -> None:
    assert cell(text) == safe
