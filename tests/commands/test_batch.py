"""`grade batch`: a class graded in parallel; broken and hostile submissions stay contained."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grader.batch import pool as batch

Grade = Callable[..., tuple[int, str]]
LESSONS = ["01_sums", "02_words"]


def run_batch(grade: Grade, course: Path, out: Path, *extra: str) -> tuple[int, str]:
    return grade(
        "batch",
        str(course / "submissions"),
        "--out",
        str(out),
        "--suites",
        str(course / "suites"),
        "--timeout",
        "8",
        *extra,
    )


def book(out: Path) -> dict[str, dict[str, str]]:
    """The gradebook's rows by student (the first row, the maxima, under "maximum")."""
    return {
        r["student"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))
    }


def student(out: Path, name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / "students" / f"{name}.json").read_text())
    return {e["name"]: e for e in doc["exercises"]}


def test_students_are_the_folders_and_lesson_files_are_found_in_them_or_in_exercises(
    tmp_path: Path,
) -> None:
    for rel in (
        "ann/01_sums.py",
        "bo/exercises/02_words.py",
        "cy/notes.txt",
        ".git/x",
        "__MACOSX/y",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path / "loose.py").write_text("")
    assert batch.students(tmp_path) == ["ann", "bo", "cy"]
    assert batch.job_for(tmp_path, "ann", LESSONS).files == (
        ("01_sums", str(tmp_path / "ann" / "01_sums.py")),
    )
    bo = batch.job_for(tmp_path, "bo", LESSONS)
    assert bo.root == str(tmp_path / "bo" / "exercises") and [n for n, _ in bo.files] == [
        "02_words"
    ]
    assert batch.job_for(tmp_path, "cy", LESSONS).files == ()


def test_unknown_student_and_empty_class_are_usage_errors(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    code, out = run_batch(grade, course, tmp_path / "out", "--student", "zed")
    assert code == 2 and "no folder zed" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out = grade("batch", str(empty), "--out", str(tmp_path / "out"))
    assert code == 2 and "holds no student folders" in out


@pytest.mark.slow
def test_the_class_is_graded_and_one_student_regraded(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    # bob asked `grade hint` for help on his machine; its record goes with his work. carol's
    # `.grade` is a link to bob's: not read.
    submissions = course / "submissions"
    (submissions / "bob" / ".grade").mkdir()
    (submissions / "bob" / ".grade" / "hints.json").write_text(
        '{"01_sums": {"test_total": 2, "test_add": 1}}'
    )
    (submissions / "carol" / ".grade").symlink_to(submissions / "bob" / ".grade")
    code, text = run_batch(grade, course, out, "--jobs", "2")
    assert code == 0, text
    # Not a terminal (a CI log): one plain line per student, nothing redrawn.
    assert "\r" not in text and "\x1b" not in text
    assert "[1/7] " in text and "[7/7] " in text and "alice: 100.0%" in text
    rows = book(out)
    top = rows.pop("maximum")
    assert (top["total"], top["01_sums"], top["02_words"]) == ("12", "9", "3")
    assert list(rows) == ["alice", "bob", "carol", "dave", "erin", "frank", "gina"]
    assert list(rows["alice"]) == [
        "student",
        "total",
        "max",
        "percent",
        "01_sums",
        "02_words",
        "status",
        "hints_revealed_self_reported",
        "graded_at",
    ]
    assert rows["bob"]["hints_revealed_self_reported"] == "3"
    assert rows["alice"]["hints_revealed_self_reported"] == ""  # nothing reported
    assert rows["carol"]["hints_revealed_self_reported"] == ""
    assert json.loads((out / "hints" / "bob.json").read_text())["01_sums"]["test_total"] == 2
    assert (rows["alice"]["total"], rows["alice"]["percent"], rows["alice"]["status"]) == (
        "12",
        "100.0",
        "passed",
    )
    assert (rows["bob"]["01_sums"], rows["bob"]["02_words"], rows["bob"]["status"]) == (
        "5",
        "0",
        "failed",
    )
    assert rows["frank"]["status"] == "not_attempted" and rows["frank"]["total"] == "0"
    for name in (
        "carol",
        "dave",
        "erin",
    ):  # broken or hostile: an error, the other file still graded
        assert rows[name]["status"] == "error" and rows[name]["02_words"] == "3", name
    assert "gina" in rows  # a notebook submission gets a row whatever the engine makes of it

    assert "syntax" in student(out, "carol")["01_sums"]["message"].lower()
    assert "os._exit" in student(out, "dave")["01_sums"]["message"]
    assert [c["status"] for c in student(out, "erin")["01_sums"]["checks"]][:2] == [
        "passed",
        "timeout",
    ]
    for name in rows:
        assert (out / "students" / f"{name}.html").read_text().startswith("<!DOCTYPE html>")

    summary = (out / "summary.html").read_text()
    assert "<svg" in summary and "7 student(s), 7 graded" in summary
    assert summary.index("total of the empty list is zero") < summary.index(
        "shout upper-cases and exclaims"
    )
    assert str(tmp_path) not in summary

    # bob fixes his code: one command regrades him and updates the class files
    fixed = course / "submissions" / "bob" / "01_sums.py"
    fixed.write_text(fixed.read_text().replace("return xs[0] + sum(xs[1:])", "return sum(xs)"))
    before = {n: (out / "students" / f"{n}.json").read_text() for n in rows}
    code, text = run_batch(grade, course, out, "--student", "bob")
    assert code == 0, text
    after = book(out)
    del after["maximum"]
    assert (after["bob"]["01_sums"], after["bob"]["total"]) == ("9", "9")
    unchanged = {n: r for n, r in after.items() if n != "bob"}
    assert unchanged == {n: r for n, r in rows.items() if n != "bob"}  # graded_at included
    for name in rows:
        if name != "bob":
            assert (out / "students" / f"{name}.json").read_text() == before[name]
    assert "7 student(s), 7 graded" in (out / "summary.html").read_text()


def test_a_class_is_not_graded_below_user_isolation(
    course: Path, grade: Grade, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from grader.runner import policy
    from grader.sandbox.isolation import Isolation

    laptop = Isolation("basic", ("root (to switch the sandbox to a user of its own)",))
    monkeypatch.setattr(policy, "detected", lambda: laptop)
    code, text = run_batch(grade, course, tmp_path / "out")
    assert code == 2
    assert "--require-isolation user: the detected isolation is 'basic'" in text and "root" in text
    assert not (tmp_path / "out").exists()
    code, text = run_batch(
        grade, course, tmp_path / "out", "--require-isolation", "basic", "--student", "frank"
    )
    assert code == 0, text
    assert (
        json.loads((tmp_path / "out" / "students" / "frank.json").read_text())["isolation"]
        == laptop.to_json()
    )


ORIGINAL = """def add(a, b):
    result = a
    result = result + b
    return result


def total(xs):
    running = 0
    for x in xs:
        if x is None:
            continue
        running = running + x
    return running
"""

COPY = """# 01 - sums, by me
def add(first, second):
    out = first
    out = out + second  # add them
    return out


def total(values):
    # sum them up
    acc = 0
    for v in values:
        if v is None:
            continue
        acc = acc + v
    return acc
"""

INDEPENDENT = """import functools
import operator


def add(a, b):
    return operator.add(a, b)


def total(xs):
    return functools.reduce(operator.add, [x for x in xs if x is not None], 0)
"""


@pytest.mark.slow
def test_a_class_where_two_students_hand_in_the_same_files_names_that_pair(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    submissions = tmp_path / "class"
    for name, source in (("pat", ORIGINAL), ("quin", COPY), ("ray", INDEPENDENT)):
        (submissions / name).mkdir(parents=True)
        (submissions / name / "01_sums.py").write_text(source)
    out = tmp_path / "out"
    code, text = grade(
        "batch", str(submissions), "--out", str(out), "--suites", str(course / "suites"),
        "--only", "01_sums", "--stubs", str(course / "exercises"), "--timeout", "8",
    )  # fmt: skip
    assert code == 0, text
    assert "1 pair(s) alike, the most: pat and quin in 01_sums" in text
    pairs = list(csv.DictReader(io.StringIO((out / "similarity.csv").read_text())))
    assert [(p["lesson"], p["student_a"], p["student_b"], p["score"]) for p in pairs] == [
        ("01_sums", "pat", "quin", "1.000")
    ]
    rows = book(out)
    assert rows["maximum"]["01_sums"] == "9" and rows["pat"]["01_sums"] == "9"
    summary = (out / "summary.html").read_text()
    similar = summary[summary.index(">Similar pairs<") : summary.index(">Scores<")]
    assert ">pat<" in similar and ">quin<" in similar and "ray" not in similar
