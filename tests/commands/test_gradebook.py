"""The gradebook CSV and the class summary, from per-student results (no grading here)."""

from __future__ import annotations

import csv
import io
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from grader.batch import gradebook
from grader.classroom import similarity


def check(cid: str, status: str, points: float, *, hidden: bool = False) -> dict[str, Any]:
    return {
        "id": cid,
        "name": f"check {cid}",
        "status": status,
        "score": points if status == "passed" else 0.0,
        "max_score": points,
        "visibility": "hidden" if hidden else "public",
    }


def exercise(name: str, status: str, *checks: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "title": f"title of {name}",
        "status": status,
        "checks": list(checks),
        "score": sum(c["score"] for c in checks),
        "max_score": sum(c["max_score"] for c in checks),
    }


def results(*exercises: dict[str, Any], hints: int = 0) -> dict[str, Any]:
    return {
        "hints_revealed": hints,
        "exercises": list(exercises),
        "score": sum(e["score"] for e in exercises),
        "max_score": sum(e["max_score"] for e in exercises),
        "seed": 3,
        "grader_version": "9.9",
    }


def klass(tmp_path: Path) -> Path:
    folder = tmp_path / gradebook.STUDENTS
    folder.mkdir()
    docs = {
        "ann": results(
            exercise(
                "01_a", "passed", check("x", "passed", 2), check("y", "passed", 1, hidden=True)
            ),
            exercise("02_b", "passed", check("z", "passed", 3)),
            hints=2,
        ),
        "ben": results(
            exercise(
                "01_a", "failed", check("x", "passed", 2), check("y", "failed", 1, hidden=True)
            ),
            exercise("02_b", "error", check("z", "timeout", 3)),
        ),
        "cy": results(
            exercise("01_a", "not_attempted", check("x", "failed", 2), check("y", "failed", 1)),
            exercise("02_b", "not_attempted", check("z", "failed", 3)),
        ),
    }
    for name, doc in docs.items():
        (folder / f"{name}.json").write_text(json.dumps(doc))
    # What ann's and ben's submissions report of the hints they revealed (cy's: nothing).
    reported = tmp_path / "hints"
    reported.mkdir()
    (reported / "ann.json").write_text('{"01_a": {"x": 2, "y": 1}, "02_b": {"z": 1}}')
    (reported / "ben.json").write_text("{}")
    (reported / "dee.json").write_text('{"01_a": {"x": 2}}')  # no results: not shown
    (folder / "dee.error.txt").write_text("the grader could not grade submissions/dee:\nOSError")
    return tmp_path


def test_gradebook_has_maxima_then_a_row_per_student_and_a_column_per_lesson_file(
    tmp_path: Path,
) -> None:
    out = klass(tmp_path)
    graded = datetime(2026, 3, 1, 9, 30, 5, tzinfo=timezone.utc).timestamp()
    for path in (out / gradebook.STUDENTS).iterdir():
        os.utime(path, (graded, graded))
    gradebook.rebuild(out)
    rows = list(csv.reader(io.StringIO((out / gradebook.GRADEBOOK).read_text())))
    at = "2026-03-01T09:30:05Z"
    # The hints come from each student's own record (self-reported), not the results JSON
    # (ann's says 2): empty where their submission reports none.
    assert rows == [
        ["student", "total", "max", "percent", "01_a", "02_b", "status",
         "hints_revealed_self_reported", "graded_at"],
        ["maximum", "6", "6", "100.0", "3", "3", "", "", ""],
        ["ann", "6", "6", "100.0", "3", "3", "passed", "4", at],
        ["ben", "2", "6", "33.3", "2", "0", "error", "0", at],
        ["cy", "0", "6", "0.0", "0", "0", "not_attempted", "", at],
        ["dee", "0", "0", "0.0", "", "", "grader_error", "", at],
    ]  # fmt: skip


def test_gradebook_cells_are_spreadsheet_safe(tmp_path: Path) -> None:
    folder = tmp_path / gradebook.STUDENTS
    folder.mkdir()
    one = results(exercise("01_a", "passed", check("x", "passed", 1)))
    for name in ("=HYPERLINK(evil)", "@SUM(A1)", "+1", "-1", "\tx"):
        (folder / f"{name}.json").write_text(json.dumps(one))
    names = [
        r[0] for r in csv.reader(io.StringIO(gradebook.gradebook_csv(gradebook.load(tmp_path))))
    ]
    assert sorted(names[2:]) == sorted(["'+1", "'-1", "'=HYPERLINK(evil)", "'@SUM(A1)", "'\u2409x"])


def test_checks_are_ranked_by_pass_rate_lowest_first() -> None:
    students = [
        gradebook.Student(
            "s",
            results(exercise("01_a", "failed", check("x", "passed", 1), check("y", "failed", 1))),
        )
    ] * 2
    students.append(
        gradebook.Student(
            "t",
            results(exercise("01_a", "passed", check("x", "passed", 1), check("y", "passed", 1))),
        )
    )
    rates = gradebook.check_rates(students)
    assert [(r.id, r.passed, r.graded) for r in rates] == [("y", 1, 3), ("x", 3, 3)]
    assert rates[0].failures == "failed 2"


def test_summary_page_is_self_contained_and_deterministic(tmp_path: Path) -> None:
    out = klass(tmp_path)
    gradebook.rebuild(out)
    page = (out / gradebook.SUMMARY).read_text()
    gradebook.rebuild(out)
    assert (out / gradebook.SUMMARY).read_text() == page
    assert "<svg" in page and "score distribution" in page
    assert "<script" not in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    first_y, first_x = page.index("check y"), page.index("check x")
    assert first_y < first_x  # y (1 of 3 passed) is listed before x (2 of 3)
    assert 'href="students/ann.html"' in page and 'href="students/dee.html"' not in page
    assert "grader error" in page and "OSError" in page
    assert "hints (self-reported)" in page
    roster = page[page.index(">Roster<") :]
    for name, hints in (("ann", "4"), ("ben", "0"), ("cy", "–")):
        row = roster[roster.index(f">{name}<") :]
        row = row[: row.index("</tr>")]
        assert f'<td class="num">{hints}</td>' in row, (name, row)


def test_histogram_bins_scores_by_tenths() -> None:
    svg = gradebook.histogram_svg([0, 5, 95, 100, 100])
    assert (
        "0-10%: 2 student(s)" in svg
        and "90-100%: 3 student(s)" in svg
        and "50-60%: 0 student(s)" in svg
    )


def test_names_are_escaped_in_the_summary(tmp_path: Path) -> None:
    folder = tmp_path / gradebook.STUDENTS
    folder.mkdir()
    (folder / "<i>eve & co.json").write_text(
        json.dumps(results(exercise("01_a", "passed", check("x", "passed", 1))))
    )
    page = gradebook.summary_html(gradebook.load(tmp_path))
    assert "<i>eve" not in page and "&lt;i&gt;eve &amp; co" in page
    assert 'href="students/%3Ci%3Eeve%20%26%20co.html"' in page


def test_summary_opens_with_attention_and_roster_then_misconceptions_then_similar_pairs(
    tmp_path: Path,
) -> None:
    out = klass(tmp_path)
    pairs = [similarity.Pair("01_a", "ann", "ben", 0.92, 30, 31, 32, 0.9)]
    gradebook.rebuild(out, pairs)
    page = (out / gradebook.SUMMARY).read_text()
    order = [
        page.index(">Needs attention"),
        page.index(">Roster<"),
        page.index(">Misconceptions"),
        page.index(">Similar pairs<"),
        page.index(">Checks, most failed first<"),
    ]
    assert order == sorted(order)
    attention = page[order[0] : order[1]]
    for who, why in [("ben", "ran out of time: 02_b"), ("cy", "nothing started"),
                     ("dee", "the grader could not grade them"), ("ann", "01_a like ben")]:  # fmt: skip
        assert who in attention and why in attention, who
    # ben's hidden check y failed (a misconception, linking to his row); cy's untouched
    # files are "not attempted", not failures
    misconceptions_part = page[order[2] : order[3]]
    assert "check y" in misconceptions_part and 'href="#student-2">ben<' in misconceptions_part
    assert "Not attempted" in misconceptions_part and 'href="#student-3">cy<' in misconceptions_part
    assert 'id="student-2"' in page
    assert "0.92" in page[order[3] : order[4]]
    assert (out / gradebook.SIMILARITY).read_text().splitlines() == [
        "lesson,student_a,student_b,score,overlap,shared,a_fingerprints,b_fingerprints",
        "01_a,ann,ben,0.920,0.900,30,31,32",
    ]


def test_untouched_work_is_not_counted_as_failed_in_the_check_table() -> None:
    students = [
        gradebook.Student("a", results(exercise("01_a", "failed", check("x", "failed", 1)))),
        gradebook.Student("b", results(exercise("01_a", "not_attempted", check("x", "failed", 1)))),
        gradebook.Student("c", results(exercise("01_a", "passed", check("x", "passed", 1)))),
    ]
    (rate,) = gradebook.check_rates(students)
    assert (rate.passed, rate.graded, rate.not_attempted, rate.failures) == (1, 2, 1, "failed 1")


def test_a_student_is_failed_only_when_a_check_they_attempted_failed(tmp_path: Path) -> None:
    folder = tmp_path / gradebook.STUDENTS
    folder.mkdir()
    done = exercise("01_a", "passed", check("x", "passed", 2))
    untouched = exercise("02_b", "not_attempted", check("z", "not_attempted", 3))
    begun = exercise("02_b", "failed", check("z", "passed", 1), check("w", "not_attempted", 2))
    wrong = exercise("02_b", "failed", check("z", "failed", 1), check("w", "not_attempted", 2))
    docs = {
        "ann": results(done, untouched),  # one file done, the other not started
        "ben": results(done, begun),  # a file half done, nothing failed
        "cy": results(done, wrong),  # a check attempted failed, the rest not started
        "dan": results(untouched),  # nothing started
        "eve": results(done),
    }
    for name, doc in docs.items():
        (folder / f"{name}.json").write_text(json.dumps(doc))
    gradebook.rebuild(tmp_path)
    rows = list(csv.reader(io.StringIO((tmp_path / gradebook.GRADEBOOK).read_text())))
    status = {row[0]: (row[1], row[6]) for row in rows[2:]}
    assert status == {
        "ann": ("2", "in_progress"),
        "ben": ("3", "in_progress"),
        "cy": ("2", "failed"),
        "dan": ("0", "not_attempted"),
        "eve": ("2", "passed"),
    }
    page = (tmp_path / gradebook.SUMMARY).read_text()
    roster = page[page.index(">Roster<") :]
    for name, word in (("ann", "in progress"), ("ben", "in progress"), ("cy", "failed")):
        row = roster[roster.index(f">{name}<") :]
        row = row[: row.index("</tr>")]
        assert f'<span class="badge s-{word.replace(" ", "_")}">{word}</span>' in row, (name, row)
    assert "in progress: 2" in page and "failed: 1" in page
    # each lesson file's cell is coloured as the HTML report's badge says it
    for name, badge in (
        ("ben", '<span class="badge s-not_attempted" title="to do">1/3</span>'),
        ("cy", '<span class="badge s-failed" title="failed">0/3</span>'),
        ("ann", '<span class="badge s-not_attempted" title="not attempted">0/3</span>'),
    ):
        row = roster[roster.index(f">{name}<") :]
        assert badge in row[: row.index("</tr>")], (name, row)
    assert ".s-not_attempted, .s-in_progress {" in page  # coloured as work to do, not red
