"""`grade export canvas|moodle GRADES_DIR -o FILE`: a graded class in an LMS's import CSV."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

from grader.classroom import lms

Grade = Callable[..., tuple[int, str]]


def graded_class(tmp_path: Path) -> Path:
    """The --out folder of a batch: two students graded, one the grader failed on."""
    out = tmp_path / "grades"
    (out / "students").mkdir(parents=True)
    for name, score in (("ann", 21.0), ("ben", 13.5)):
        doc = {
            "score": score,
            "max_score": 21.0,
            "exercises": [
                {"name": "03_jit", "title": "jit", "status": "failed", "score": score,
                 "max_score": 21.0, "checks": []},
            ],
        }  # fmt: skip
        (out / "students" / f"{name}.json").write_text(json.dumps(doc))
    (out / "students" / "cy.error.txt").write_text("the grader could not grade cy")
    return out


def read(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_canvas_export_writes_canvas_gradebook_columns(grade: Grade, tmp_path: Path) -> None:
    out = graded_class(tmp_path)
    code, text = grade("export", "canvas", str(out), "-o", str(tmp_path / "canvas.csv"))
    assert code == 0, text
    assert "canvas: 3 student(s)" in text
    table = read(tmp_path / "canvas.csv")
    assert table[0] == [*lms.CANVAS_IDENTITY, "03_jit"]
    assert table[1] == ["Points Possible", "", "", "", "", "21"]
    assert table[2:] == [
        ["ann", "", "", "ann", "", "21"],
        ["ben", "", "", "ben", "", "13.5"],
        ["cy", "", "", "cy", "", ""],
    ]


def test_canvas_roster_and_percent(grade: Grade, tmp_path: Path) -> None:
    out = graded_class(tmp_path)
    roster = tmp_path / "export.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section\n"
        "    Points Possible,,,,\n"
        '"Ng, Ann",11,S11,ann,A\n"Bo, Ben",12,S12,ben,A\n'
    )
    target = tmp_path / "canvas.csv"
    code, text = grade(
        "export", "canvas", str(out), "-o", str(target), "--roster", str(roster), "--percent"
    )
    assert code == 1 and "not in the roster, left out: cy" in text
    assert read(target)[2:] == [
        ["Ng, Ann", "11", "S11", "ann", "A", "100.0"],
        ["Bo, Ben", "12", "S12", "ben", "A", "64.3"],
    ]


def test_moodle_export(grade: Grade, tmp_path: Path) -> None:
    out = graded_class(tmp_path)
    code, text = grade("export", "moodle", str(out), "-o", str(tmp_path / "moodle.csv"))
    assert code == 0, text
    assert read(tmp_path / "moodle.csv") == [
        ["Student", "03_jit"],
        ["ann", "21"],
        ["ben", "13.5"],
        ["cy", ""],
    ]


def test_a_folder_that_is_not_a_batch_is_a_usage_error(grade: Grade, tmp_path: Path) -> None:
    code, text = grade("export", "moodle", str(tmp_path), "-o", str(tmp_path / "m.csv"))
    assert code == 2 and "--out folder of `grade batch`" in text
    code, text = grade(
        "export", "moodle", str(graded_class(tmp_path)), "-o", "x.csv", "--roster", "r.csv"
    )
    assert code == 2 and "--roster is for canvas" in text
