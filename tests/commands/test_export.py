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


def test_canvas_export_without_a_way_to_match_students_is_refused(
    grade: Grade, tmp_path: Path
) -> None:
    """Folder names under Student with ID and SIS User ID empty: Canvas imports such a file
    matching no one. The export says so, and how to match, and writes nothing."""
    out, target = graded_class(tmp_path), tmp_path / "canvas.csv"
    code, text = grade("export", "canvas", str(out), "-o", str(target))
    assert code == 2 and "no way to tell which Canvas student each folder is" in text
    assert "give --roster CANVAS_EXPORT.csv" in text and "--match-by sis-user" in text
    code, text = grade("export", "canvas", str(out), "-o", str(target), "--match-by", "sis-login")
    assert code == 2 and "SIS Login ID alone" in text and "give --roster" in text
    assert not target.exists()


def test_canvas_export_by_sis_user_ids(grade: Grade, tmp_path: Path) -> None:
    out, target = graded_class(tmp_path), tmp_path / "canvas.csv"
    code, text = grade("export", "canvas", str(out), "-o", str(target), "--match-by", "sis-user")
    assert code == 0, text
    assert "canvas: 3 student(s)" in text
    table = read(target)
    assert table[0] == [*lms.CANVAS_IDENTITY, "03_jit"]
    assert table[1] == ["Points Possible", "", "", "", "", "21"]
    assert table[2:] == [
        ["", "", "ann", "", "", "21"],
        ["", "", "ben", "", "", "13.5"],
        ["", "", "cy", "", "", ""],
    ]


def test_a_folder_matching_two_roster_students_stops_the_export(
    grade: Grade, tmp_path: Path
) -> None:
    """Ben's folder `11` is his login ID and Ann's Canvas ID: two rows for Ann, the second
    with Ben's grades, unless refused; `--match-by sis-login` then tells them apart."""
    out, target = graded_class(tmp_path), tmp_path / "canvas.csv"
    (out / "students" / "ben.json").rename(out / "students" / "11.json")
    roster = tmp_path / "export.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section\n"
        "    Points Possible,,,,\n"
        '"Ng, Ann",11,S11,ann,A\n"Bo, Ben",12,S12,11,A\n"Cy, Cy",13,S13,cy,A\n'
    )
    argv = ["export", "canvas", str(out), "-o", str(target), "--roster", str(roster)]
    code, text = grade(*argv)
    assert code == 2 and "folder '11' matches 2 students of the roster" in text, text
    assert "--match-by sis-login" in text and not target.exists()
    code, text = grade(*argv, "--match-by", "sis-login")
    assert code == 0, text
    assert [row[:4] + row[5:] for row in read(target)[2:]] == [
        ["Bo, Ben", "12", "S12", "11", "13.5"],
        ["Ng, Ann", "11", "S11", "ann", "21"],
        ["Cy, Cy", "13", "S13", "cy", ""],
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
    assert code == 2 and "--roster and --match-by are for canvas" in text
