"""`grade batch` schedules the work, not the students (`grader.runner.schedule`): one list
of (student, lesson file) gradings that every worker takes from, the current student's
longest file first; each student's results are those `grade` gives for their folder."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from test_batch import Grade, run_batch

from grader import catalog
from grader.model import CheckResult, ExerciseResult
from grader.runner import engine, policy, schedule
from grader.runner.submission import Submission
from grader.sandbox.isolation import Isolation

FIXTURES = Path(__file__).parent / "fixtures"


def _untimed(message: str) -> str:
    """A message with its numbers left out, and none where a time limit stopped the code:
    how long it ran and which request was running then is a matter of timing (the status
    and the score still compare)."""
    return "" if "time limit" in message else re.sub(r"\d+(\.\d+)?", "N", message)


def verdicts(doc: dict[str, Any]) -> dict[str, Any]:
    """A results JSON without its timings: every lesson file's status, score and message,
    and every check's."""
    return {
        e["name"]: (
            e["status"],
            e["score"],
            e["max_score"],
            _untimed(e["message"]),
            [
                (c["id"], c["status"], c["score"], c["max_score"], _untimed(c["message"]))
                for c in e["checks"]
            ],
        )
        for e in doc["exercises"]
    }


def test_each_student_of_the_pool_is_graded_as_grade_grades_them_alone(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    # a limit well above a rerun's minimum (engine.RERUN_MIN_S) once erin's endless loop has
    # spent its share: under 8 s, a loaded machine decided whether her hidden check was judged
    # again in one run and not in the other
    limit = "20"
    code, text = run_batch(grade, course, out, "--jobs", "3", "--timeout", limit)
    assert code == 0, text
    assert "3 local worker(s)" in text
    assert " left)" in text, text  # the students done so far say how long the rest takes
    names = sorted(p.stem for p in (out / "students").glob("*.json"))
    assert names == ["alice", "bob", "carol", "dave", "erin", "frank", "gina"]
    for name in names:
        alone = tmp_path / f"{name}.json"
        folder = course / "submissions" / name
        graded = folder / "exercises" if (folder / "exercises").is_dir() else folder
        code, said = grade(
            str(graded), "--suites", str(course / "suites"), "--timeout", limit,
            "--json", str(alone), "--no-html",
        )  # fmt: skip
        pooled = json.loads((out / "students" / f"{name}.json").read_text())
        if not alone.exists():  # frank handed in nothing: `grade` refuses the folder
            assert code == 2 and pooled["score"] == 0, said
            continue
        assert verdicts(pooled) == verdicts(json.loads(alone.read_text())), (
            name,
            verdicts(pooled),
            verdicts(json.loads(alone.read_text())),
        )


def _fake_result(spec: catalog.ExerciseSpec) -> ExerciseResult:
    check = CheckResult(
        name="x", id="test_x", status="passed", score=1.0, max_score=1.0,
        visibility="public", message="", hint="",
    )  # fmt: skip
    return ExerciseResult(name=spec.name, title=spec.title, status="passed", checks=(check,))


def _pooled(
    monkeypatch: pytest.MonkeyPatch, students: int, grade: Any, workers: int = 2
) -> tuple[schedule.Pooled, engine.Pool]:
    monkeypatch.setattr(policy, "detected", lambda: Isolation("basic", ()))
    monkeypatch.setattr(engine._Grading, "_grade", grade)
    specs = list(catalog.exercises(FIXTURES / "suites"))
    subs = [
        Submission(Path(f"s{i}"), {s.name: Path(f"s{i}/{s.name}.py") for s in specs})
        for i in range(students)
    ]
    pool = engine.Pool(workers)
    options = policy.Options(isolation="basic", require_isolation="basic")
    known = {"01_sums": 5.0, "02_words": 9.0}
    return schedule.Pooled(subs, specs, options, pool, known), pool


def test_the_workers_take_files_so_the_last_student_does_not_wait_for_a_second_wave(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """3 students of 2 files on 2 workers: each grading waits until another runs beside it
    (a barrier of 2). Scheduled by student, the third student's files would run on one
    worker, alone: the barrier would break. Taken from one list, both workers are busy to
    the end."""
    beside = threading.Barrier(2, timeout=10)
    ran: list[tuple[str, str]] = []

    def grade(self: Any, spec: catalog.ExerciseSpec, worker: Any) -> Any:
        beside.wait()
        ran.append((str(self.submission.root), spec.name))
        return _fake_result(spec), None

    pooled, pool = _pooled(monkeypatch, 3, grade)
    with pool:
        done = list(pooled.run())
    assert sorted(d.index for d in done) == [0, 1, 2]
    assert all(d.error == "" and d.report is not None for d in done), [d.error for d in done]
    assert len(ran) == 6
    for d in done:
        assert d.report is not None
        assert [e.name for e in d.report.exercises] == ["01_sums", "02_words"]  # the specs' order


def test_a_broken_barrier_is_what_a_lone_file_meets() -> None:
    """The barrier above does fail a grading that runs alone (the test can fail)."""
    beside = threading.Barrier(2, timeout=0.2)
    with pytest.raises(threading.BrokenBarrierError):
        beside.wait()


def test_the_current_students_longest_file_goes_first_and_students_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pooled, pool = _pooled(monkeypatch, 2, lambda *a: None)
    with pool:
        order = []
        while (item := pooled._next()) is not None:
            order.append((item[0], item[1].name))
    # 02_words is the longer (known: 9 s against 5 s): first for each student in turn
    assert order == [(0, "02_words"), (0, "01_sums"), (1, "02_words"), (1, "01_sums")]


def test_times_measured_in_the_run_reorder_the_files_and_say_the_time_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pooled, pool = _pooled(monkeypatch, 3, lambda *a: None)
    with pool:
        for _ in range(3):  # 01_sums measured longer than 02_words's earlier time
            pooled._timed.setdefault("01_sums", []).append(20.0)
        assert pooled.estimate_s(pooled.specs[0]) == 20.0
        assert pooled._next() == (0, pooled.specs[0])
        assert pooled.left_s() == pytest.approx(3 * (20.0 + 9.0) / 2)


def test_a_grader_failure_fails_that_student_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def grade(self: Any, spec: catalog.ExerciseSpec, worker: Any) -> Any:
        if str(self.submission.root) == "s1":
            raise RuntimeError("the grader broke on s1")
        time.sleep(0.01)
        return _fake_result(spec), None

    pooled, pool = _pooled(monkeypatch, 3, grade)
    with pool:
        done = {d.index: d for d in pooled.run()}
    assert sorted(done) == [0, 1, 2]
    assert done[1].report is None and "the grader broke on s1" in done[1].error
    assert done[0].report is not None and done[2].report is not None
