"""`grade`'s run (grader.grading.run): the per-file line shown while grading carries the
points the finished report will, after the course's policy (`[tool.grade] round`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import grading
from grader.model import CheckResult, ExerciseResult, Report
from grader.reports import labels, terminal
from grader.runner import engine, policy
from grader.runner.submission import Submission


def _check(check_id: str, score: float, max_score: float) -> CheckResult:
    status = "passed" if score == max_score else "failed"
    return CheckResult(check_id, check_id, status, score, max_score, "public", "", "")  # type: ignore[arg-type]


def _lesson() -> ExerciseResult:
    """13.33/21: two checks at 2/3 of a point, the rest whole."""
    checks = (
        _check("test_piecewise_values", 2.0, 2.0),
        _check("test_running_sum_values", 2.0, 2.0),
        _check("test_newton_values", 2.0, 2.0),
        _check("test_all_values", 6.0, 6.0),
        _check("test_traced_once", 2 / 3, 1.0),
        _check("test_pure", 2 / 3, 1.0),
        _check("test_other", 0.0, 7.0),
    )
    return ExerciseResult("03_jit", "jit", "failed", checks)


def _graded(
    folder: Path, monkeypatch: pytest.MonkeyPatch, outputs: dict[str, Path] | None = None
) -> tuple[list[str], Report]:
    """The progress lines `grade` prints (terminal.done_line of what `on_result` gets) and
    the report, with the engine replaced by one that finds `_lesson` in `folder`."""

    def engine_grade(
        specs: object, submission: Submission, options: object, on_result: object, **_: object
    ) -> Report:
        assert callable(on_result)
        on_result(1, 1, _lesson())
        return Report((_lesson(),), seed=0, submission=str(submission.root), grader_version="0")

    monkeypatch.setattr(engine, "grade", engine_grade)
    (folder / "03_jit.py").write_text("def piecewise(x):\n    return x\n")
    submission = Submission(folder, {"03_jit": folder / "03_jit.py"}, single="03_jit")
    lines: list[str] = []
    graded = grading.run(
        [],
        submission,
        policy.Options(),
        suites=None,
        outputs=outputs or {},
        on_result=lambda i, n, result: lines.append(terminal.done_line(result)),
    )
    return lines, graded.report


@pytest.mark.parametrize(
    ("setting", "points"), [("round = 1", "12/21"), ("round = 0.5", "13/21"), ("", "13.33/21")]
)
def test_the_progress_line_shows_the_points_the_report_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, points: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f"[tool.grade]\n{setting}\n")
    lines, report = _graded(tmp_path, monkeypatch)
    assert [line.split()[:2] for line in lines] == [["FAIL", points]]
    assert points == labels.points(report.score, report.max_score)


def test_graded_for_the_course_the_line_uses_the_course_s_rounding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gradescope: the working folder's (the course's) setting, not the submission's own."""
    course, submission = tmp_path / "course", tmp_path / "submission"
    course.mkdir()
    submission.mkdir()
    (course / "pyproject.toml").write_text("[tool.grade]\nround = 1\n")
    (submission / "pyproject.toml").write_text("[tool.grade]\nround = false\n")
    monkeypatch.chdir(course)
    lines, report = _graded(submission, monkeypatch, {"gradescope": tmp_path / "results.json"})
    assert [line.split()[:2] for line in lines] == [["FAIL", "12/21"]] and report.score == 12


def test_a_malformed_rounding_is_said_once_and_the_line_keeps_the_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.grade]\nround = "whole"\n')
    lines, report = _graded(tmp_path, monkeypatch)
    assert [line.split()[:2] for line in lines] == [["FAIL", "13.33/21"]]
    assert report.score == pytest.approx(13 + 1 / 3)
    assert capsys.readouterr().err.count("[tool.grade] round") == 1
