"""Canvas and Moodle import files, and spreadsheet-safe cells."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from grader.batch import gradebook
from grader.classroom import lms, matching, similarity
from grader.classroom.roster import Student
from grader.classroom.spreadsheet import cell


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


EXPORT = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Quiz 1 (77)\n"
    "    Points Possible,,,,,10\n"
    '"Lovelace, Ann",1201,S-1,ann,Section A,9\n'
    '"Hopper, Dee",1202,S-2,dee,Section B,\n'
)  # Canvas's own gradebook export: the roster


def test_canvas_file_by_sis_user_ids() -> None:
    text, missing = lms.canvas(CLASS, matching.by_name([s.name for s in CLASS], "sis-user"))
    table = rows(text)
    assert table[0] == [*lms.CANVAS_IDENTITY, "01_a", "02_b"]
    assert table[1] == ["Points Possible", "", "", "", "", "3", "4"]
    assert table[2] == ["", "", "ann", "", "", "3", "2.5"]
    assert table[3] == ["", "", "'=cmd|' /C calc'!A0", "", "", "1", "0"]
    assert table[4] == ["", "", "dee", "", "", "", ""]  # not graded: no grade, not 0
    assert missing == [] and all(len(r) == len(table[0]) for r in table)


def test_canvas_roster_matches_folders_to_canvas_students() -> None:
    people = matching.read_roster("\ufeff" + EXPORT)
    found, missing = matching.from_roster([s.name for s in CLASS], people)
    text, left_out = lms.canvas(CLASS, found, percent=True)
    table = rows(text)
    assert table[1][5:] == ["100", "100"]
    assert table[2] == ["Lovelace, Ann", "1201", "S-1", "ann", "Section A", "100.0", "62.5"]
    assert table[3] == ["Hopper, Dee", "1202", "S-2", "dee", "Section B", "", ""]
    assert missing == left_out == ["=cmd|' /C calc'!A0"]
    with pytest.raises(matching.RosterError, match="SIS Login ID"):
        matching.read_roster("name,score\nann,3\n")


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


def _canvas_import_reads(text: str) -> list[dict[str, str]]:
    """The rows a Canvas gradebook import finds a student for, read as its guides describe.

    "Import CSV File for Carmen Grades" (Ohio State's Canvas guide,
    https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/
    import-csv-file-carmen-grades): the file has four required components: Student Name OR
    Student ID OR Student SIS User ID (columns A-C, only one of the three required), SIS Login
    ID (column D), Section (column E), then the assignment columns (F on), new assignment
    columns creating assignments. A CityU guide to the same import
    (github.com/myl7/mylmoe, docs/posts/cityu-ta-upload-canvas-grade.md) found the import
    rejects these columns in any other order than Student, ID, SIS User ID, SIS Login ID,
    Section. Canvas's export (VCU's "Gradebook Action Menu" page) puts each assignment's
    Points Possible in the row under the header, which the import reads back. A Student
    cell holding a folder name is no Canvas display name, so each row here must carry the
    Canvas ID or SIS User ID.
    """
    table = rows(text)
    assert table[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assignments = table[0][5:]
    assert assignments and len(set(assignments)) == len(assignments)
    assert table[1][0] == "Points Possible" and all(float(p) > 0 for p in table[1][5:])
    found = []
    for row in table[2:]:
        assert len(row) == len(table[0])
        person = dict(zip(table[0], row, strict=True))
        assert person["ID"] or person["SIS User ID"], f"Canvas finds no student for {row}"
        assert all(person[a] == "" or float(person[a]) >= 0 for a in assignments)
        found.append(person)
    return found


def _moodle_import_reads(text: str, user_field: str) -> list[dict[str, str]]:
    """The rows a Moodle CSV grade import takes, read as its documentation describes.

    MoodleDocs "Grade import" (https://docs.moodle.org/311/en/Grade_import): a CSV with a
    header row; when importing, one column is mapped ("Map from") to a user field ("Map to":
    userid, useridnumber, useremail; username too in grade/import/csv/classes/load_data.php,
    which skips a row whose user field is blank) and each other column to a grade item or a
    new grade item ("Grade item mappings"); no column may be added that the mapping lacks.
    """
    table = rows(text)
    header = table[0]
    assert header[0] == user_field and len(set(header)) == len(header)
    found = []
    for row in table[1:]:
        assert len(row) == len(header) and row[0], row
        assert all(g == "" or float(g) >= 0 for g in row[1:])
        found.append(dict(zip(header, row, strict=True)))
    return found


def test_canvas_and_moodle_files_read_as_their_documented_imports() -> None:
    people = matching.read_roster(EXPORT)
    cls = [s for s in CLASS if s.name in ("ann", "dee")]
    by_roster, _ = lms.canvas(cls, matching.from_roster(["ann", "dee"], people)[0])
    imported = _canvas_import_reads(by_roster)
    assert [(p["ID"], p["01_a"]) for p in imported] == [("1201", "3"), ("1202", "")]
    by_user_id, _ = lms.canvas(cls, matching.by_name(["ann", "dee"], "sis-user"))
    assert [p["SIS User ID"] for p in _canvas_import_reads(by_user_id)] == ["ann", "dee"]
    moodle = _moodle_import_reads(lms.moodle(CLASS, percent=True), lms.MOODLE_STUDENT)
    assert [(m["Student"], m["02_b"]) for m in moodle] == [
        ("ann", "62.5"),
        ("'=cmd|' /C calc'!A0", "0.0"),
        ("dee", ""),
    ]


def test_a_file_without_canvas_ids_is_what_the_documented_import_cannot_match() -> None:
    """The control: the file `grade export canvas` wrote without a roster (the folder name
    under Student and SIS Login ID, ID and SIS User ID empty) fails the documented reading."""
    old = "Student,ID,SIS User ID,SIS Login ID,Section,01_a\nPoints Possible,,,,,3\nann,,,ann,,3\n"
    with pytest.raises(AssertionError, match="Canvas finds no student"):
        _canvas_import_reads(old)


SPLIT = ["x;=cmd|' /C calc'!A0", 'y; "@SUM(A1)', "z,+1", "Ng, Ann"]  # folder names


def _every_csv() -> dict[str, str]:
    cls = [Student(n, CLASS[0].doc) for n in SPLIT]
    pair = similarity.Pair("01_a", SPLIT[0], SPLIT[2], 1.0, 40, 40, 40, 1.0)
    return {
        "canvas": lms.canvas(cls, matching.by_name(SPLIT, "sis-user"))[0],
        "moodle": lms.moodle(cls),
        "gradebook": gradebook.gradebook_csv(cls),
        "similarity": gradebook.similarity_csv([pair]),
    }


@pytest.mark.parametrize("kind", ["canvas", "moodle", "gradebook", "similarity"])
def test_every_csv_opens_without_a_formula_in_a_comma_or_semicolon_locale(kind: str) -> None:
    """A spreadsheet whose list separator is `;` splits each line at `;` only, inside quotes
    or not; one whose separator is `,` honours the quotes. Either way no cell may start a
    formula, and a cell holding `;` or `,` is one quoted field."""
    text = _every_csv()[kind]
    names = [SPLIT[0], SPLIT[2]] if kind == "similarity" else SPLIT
    for name in names:
        shown = cell(name)
        assert '"' + shown.replace('"', '""') + '"' in text, (name, text)
    for separator in (",", ";"):
        for row in csv.reader(io.StringIO(text), delimiter=separator):
            for field in row:
                opened = field.strip().lstrip('"').strip()
                assert not opened.startswith(("=", "+", "-", "@")), (separator, field)
    fields = {f for row in rows(text) for f in row}
    assert {cell(n) for n in names} <= fields  # the whole name, one cell each
