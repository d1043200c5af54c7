"""The run history: recorded in the working folder, read back whatever became of the file,
and drawn on the HTML page as one column per run."""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from report_samples import MARKUP, check

from grader.model import ExerciseResult, Report
from grader.reports import history, history_chart, html

START = datetime(2026, 12, 3, 15, 0, tzinfo=timezone.utc)


def _report(seed: int, *scores: tuple[str, float]) -> Report:
    """One exercise per (name, score out of 4)."""
    exercises = tuple(
        ExerciseResult(
            name=name,
            title="",
            status="passed" if score == 4 else "failed",
            checks=(
                check("a", status="passed" if score >= 2 else "failed", score=min(score, 2.0)),
                check("b", status="passed" if score == 4 else "failed", score=max(0, score - 2)),
            ),
        )
        for name, score in scores
    )
    return Report(exercises=exercises, seed=seed, submission=".", grader_version="0")


def _record_runs(folder: Path, n: int) -> None:
    for i in range(n):
        report = _report(i, ("01_arrays", 4.0), ("03_jit", float(min(i, 4))))
        history.record(report, folder, now=START + timedelta(minutes=i))


def test_record_then_load(tmp_path: Path) -> None:
    _record_runs(tmp_path, 3)
    runs = history.load(tmp_path)
    assert [r.seed for r in runs] == [0, 1, 2]
    assert runs[0].time == "2026-12-03T15:00:00Z"
    assert [(f.name, f.score, f.max_score) for f in runs[2].files] == [
        ("01_arrays", 4.0, 4.0),
        ("03_jit", 2.0, 4.0),
    ]
    lines = (tmp_path / ".grade" / "history.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[1]) == {
        "time": "2026-12-03T15:01:00Z",
        "seed": 1,
        "files": {"01_arrays": [4.0, 4.0], "03_jit": [1.0, 4.0]},
    }


def test_only_the_last_runs_are_kept(tmp_path: Path) -> None:
    _record_runs(tmp_path, history.KEEP + 7)
    runs = history.load(tmp_path)
    assert len(runs) == history.KEEP
    assert runs[0].seed == 7 and runs[-1].seed == history.KEEP + 6
    lines = history.path(tmp_path).read_text(encoding="utf-8").splitlines()
    assert len(lines) == history.KEEP
    assert list((tmp_path / ".grade").iterdir()) == [history.path(tmp_path)]  # no temp file


DAMAGE = [
    "not json at all",
    '{"time": "2026-12-03T15:00:00Z", "seed": 1, "files": {"03_jit": [1, 4]',  # cut short
    '{"time": 5, "seed": 1, "files": {}}',
    '{"time": "t", "seed": true, "files": {}}',
    '{"time": "t", "seed": 1, "files": {"03_jit": [NaN, 4]}}',
    '{"time": "t", "seed": 1, "files": {"03_jit": [1, -4]}}',
    '{"time": "t", "seed": 1, "files": {"03_jit": "1/4"}}',
    '{"time": "t", "seed": 1, "files": []}',
    "[" * 100_000,
    "[]",
    "null",
    "",
]


def test_a_damaged_file_loses_only_its_damaged_lines(tmp_path: Path) -> None:
    _record_runs(tmp_path, 2)
    file = history.path(tmp_path)
    with file.open("ab") as handle:
        handle.write(("\n".join(DAMAGE) + "\n").encode())
        handle.write(b"\xff\xfe\x00 binary \x80\n")
    history.record(_report(9, ("03_jit", 4.0)), tmp_path, now=START)
    assert [r.seed for r in history.load(tmp_path)] == [0, 1, 9]


def test_a_damaged_file_does_not_break_the_report(tmp_path: Path) -> None:
    file = history.path(tmp_path)
    file.parent.mkdir()
    file.write_bytes(b"\x00garbage\n{]\n" + "\n".join(DAMAGE).encode())
    assert history.load(tmp_path) == []
    report = _report(1, ("03_jit", 2.0))
    page = html.render(report, history.load(tmp_path))
    assert "Your runs" not in page and "What to fix" in page
    history.record(report, tmp_path, now=START)
    assert 'data-run="1"' in html.render(report, history.load(tmp_path))


def test_a_huge_file_is_read_from_its_end(tmp_path: Path) -> None:
    file = history.path(tmp_path)
    file.parent.mkdir()
    file.write_bytes(b"x" * (3 * history.READ_LIMIT))
    _record_runs(tmp_path, 2)
    assert [r.seed for r in history.load(tmp_path)] == [0, 1]


@pytest.mark.parametrize("damage", ["grade-is-a-file", "history-is-a-folder", "no-folder"])
def test_recording_never_raises(tmp_path: Path, damage: str) -> None:
    folder = tmp_path
    if damage == "grade-is-a-file":
        (tmp_path / ".grade").write_text("x")
    elif damage == "history-is-a-folder":
        history.path(tmp_path).mkdir(parents=True)
    else:
        folder = tmp_path / "gone"
    history.record(_report(1, ("03_jit", 2.0)), folder)
    assert history.load(folder) == []


def test_the_chart_shows_each_run(tmp_path: Path) -> None:
    _record_runs(tmp_path, 5)
    report = _report(4, ("01_arrays", 4.0), ("03_jit", 4.0), ("04_vmap", 0.0))
    page = html.render(report, history.load(tmp_path))
    columns = re.findall(r'<g class="run" data-run="(\d+)">(.*?)</g>', page, re.S)
    assert [int(n) for n, _ in columns] == [1, 2, 3, 4, 5]
    assert all(body.count("<rect ") == 2 for _, body in columns)  # 04_vmap is new: no cells
    assert "<title>03_jit, run 2 of 5 (2026-12-03 15:01 UTC, seed 1): 1/4</title>" in page
    assert "the last 5 runs of <code>grade</code>" in page
    assert page.count('fill="#2da44e"') == 5 + 1  # 01_arrays every run, 03_jit in the last
    assert '<text x="0" y="49">04_vmap<title>04_vmap</title></text>' in page  # its row, empty
    assert html.render(report, history.load(tmp_path)) == page  # same history, same bytes


@pytest.mark.parametrize(
    ("score", "max_score", "colour"),
    [(4, 4, "#2da44e"), (2, 4, "#d4a72c"), (1, 4, "#fb8f44"), (0, 4, "#cf222e"), (0, 0, "#d1d9e0")],
)
def test_a_cell_is_coloured_by_the_share_of_points(
    score: float, max_score: float, colour: str
) -> None:
    assert history_chart.shade(history.FileScore("03_jit", score, max_score)) == colour


def test_no_history_no_chart() -> None:
    report = _report(1, ("03_jit", 2.0))
    assert "Your runs" not in html.render(report)
    assert html.render(report, []) == html.render(report)


def test_names_from_the_history_file_are_escaped(tmp_path: Path) -> None:
    file = history.path(tmp_path)
    file.parent.mkdir()
    run = {"time": "<b>noon</b>", "seed": 1, "files": {MARKUP: [1, 2]}}
    file.write_text(json.dumps(run) + "\n", encoding="utf-8")
    page = html.render(_report(1, ("03_jit", 2.0)), history.load(tmp_path))
    assert "<script" not in page and "<img" not in page
    assert "<title>&lt;script&gt;alert(1)&lt;/script&gt; &#34;&gt;&lt;img src=x" in page
    assert "run 1 of 1 (&lt;b&gt;noon&lt;/b&gt;, seed 1)" in page


def test_history_of_a_partial_run(tmp_path: Path) -> None:
    """`grade --only 03_jit` records only that file; the others keep their last score."""
    _record_runs(tmp_path, 2)
    history.record(_report(7, ("03_jit", 4.0)), tmp_path, now=START)
    runs = history.load(tmp_path)
    assert [f.name for f in runs[-1].files] == ["03_jit"]
    page = html.render(replace(_report(7, ("03_jit", 4.0))), runs)
    assert page.count('<g class="run"') == 3


@pytest.mark.parametrize("planted", ["file-link", "folder-link"])
def test_a_planted_link_is_not_written_through(tmp_path: Path, planted: str) -> None:
    """A submission's `.grade/history.jsonl` linked to another file (say the results the
    autograder uploads) must not make the grader append to that file."""
    target = tmp_path / "results.json"
    target.write_text('{"score": 10}\n', encoding="utf-8")
    work = tmp_path / "work"
    if planted == "file-link":
        (work / ".grade").mkdir(parents=True)
        history.path(work).symlink_to(target)
    else:
        work.mkdir()
        (tmp_path / "elsewhere").mkdir()
        (work / ".grade").symlink_to(tmp_path / "elsewhere")
    history.record(_report(1, ("03_jit", 2.0)), work)
    assert target.read_text(encoding="utf-8") == '{"score": 10}\n'
    if planted == "folder-link":
        assert list((tmp_path / "elsewhere").iterdir()) == []
    assert history.load(work) == []


def test_a_fifo_does_not_hang_grading(tmp_path: Path) -> None:
    (tmp_path / ".grade").mkdir()
    os.mkfifo(history.path(tmp_path))
    history.record(_report(1, ("03_jit", 2.0)), tmp_path)
    assert history.load(tmp_path) == []
