"""Whole points where a course asks (`[tool.grade] round`): each check's score rounded down to
the course's step, read with the course's other settings and applied wherever the help policy
is, so every report shows the same points; without the setting, scores stay as the checks give
them and a fractional one says where it comes from."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from grader import audience, rounding, settings
from grader.model import CheckResult, ExerciseResult, Report
from grader.reports import gradescope, json_report, terminal
from grader.runner.submission import Submission

SHARE = "2 of 3 passed (piecewise failed); each of the 3 parts is 1/3 of the points."


def _check(check_id: str, score: float, max_score: float, message: str = "") -> CheckResult:
    status = "passed" if score == max_score else "failed"
    return CheckResult(check_id, check_id, status, score, max_score, "public", message, "?")  # type: ignore[arg-type]


def _report() -> Report:
    """The issue's 03_jit totals: 8.67/21 from two checks of three parts at 2/3 of a point
    and a 2-point check at 2/3 of its points."""
    checks = (
        _check("test_piecewise_values", 2.0, 2.0),
        _check("test_piecewise_jit", 0.0, 2.0, "raised"),
        _check("test_running_sum_values", 2.0, 2.0),
        _check("test_newton_values", 2.0, 2.0),
        _check("test_two_point_parts", 4 / 3, 2.0, SHARE + "\nrunning_sum: ..."),
        _check("test_traced_once", 2 / 3, 1.0, SHARE + "\npiecewise: ..."),
        _check("test_pure", 2 / 3, 1.0, SHARE + "\npiecewise: ..."),
        _check("test_other", 0.0, 9.0, "failed"),
    )
    lesson = ExerciseResult("03_jit", "jit", "failed", checks)
    return Report(exercises=(lesson,), seed=0, submission="03_jit.py", grader_version="0.1.0")


def test_without_the_setting_a_fractional_total_stays_and_says_where_it_comes_from() -> None:
    report = rounding.rounded(_report(), None)
    assert report == _report()
    assert report.score == pytest.approx(8.6667, abs=1e-3)
    text = terminal.render(report, color=False)
    assert "8.67/21" in text and SHARE in text


def test_whole_points_round_each_check_down_and_the_totals_add_up() -> None:
    report = rounding.rounded(_report(), 1.0)
    scores = {c.id: c.score for c in report.exercises[0].checks}
    assert scores["test_traced_once"] == scores["test_pure"] == 0.0  # never a full point
    assert scores["test_two_point_parts"] == 1.0
    assert scores["test_piecewise_values"] == 2.0 and scores["test_piecewise_jit"] == 0.0
    assert report.score == 7.0 == sum(scores.values())
    text = terminal.render(report, color=False)
    assert "Total 7/21" in text and "(0.67/1)" not in text and "(1.33/2)" not in text
    assert json.loads(json_report.render(report))["score"] == 7.0
    assert json.loads(gradescope.render(report))["score"] == 7.0
    pure = next(c for c in report.exercises[0].checks if c.id == "test_pure")
    first = pure.message.splitlines()[0]
    assert first.startswith(SHARE) and "0.67 is rounded down to 0" in first
    assert pure.message.splitlines()[1] == "piecewise: ..."


def test_a_half_point_step_and_scores_at_a_step_already() -> None:
    report = rounding.rounded(_report(), 0.5)
    scores = {c.id: c.score for c in report.exercises[0].checks}
    assert scores["test_traced_once"] == 0.5 and scores["test_two_point_parts"] == 1.0
    exact = _check("test_three_thirds", (1 / 3) * 3, 1.0)  # 2/3 * 3 parts: 1.0, give or take
    assert rounding._check(exact, 1.0) is exact


@pytest.mark.parametrize(
    ("line", "step"),
    [("", None), ("round = 1", 1.0), ("round = 0.5", 0.5), ("round = true", 1.0),
     ("round = false", None)],
)  # fmt: skip
@pytest.mark.parametrize("tomllib", [True, False], ids=["tomllib", "py310"])
def test_round_is_read_with_the_courses_other_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, step: float | None, tomllib: bool
) -> None:
    if not tomllib:
        monkeypatch.setitem(sys.modules, "tomllib", None)  # import fails as on Python 3.10
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.grade]\nshow_fixes = true\n{line}\n\n[tool.other]\nround = 3\n"
    )
    (tmp_path / "exercises").mkdir()
    assert settings.round_step(tmp_path / "exercises") == step
    assert settings.show_fixes(tmp_path / "exercises") == "always"  # the other setting unharmed


@pytest.mark.parametrize("value", ['"whole"', "0", "-1", "nan"])
def test_a_bad_round_is_said_and_grading_keeps_the_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.grade]\nround = {value}\n")
    with pytest.raises(settings.SettingError, match="give a positive number"):
        settings.round_step(tmp_path)
    shown = audience.for_class(_report(), tmp_path)
    assert shown.score == _report().score
    assert "[tool.grade] round" in capsys.readouterr().err


def test_every_grading_path_rounds_as_the_course_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.grade]\nround = 1\n")
    (tmp_path / "03_jit.py").write_text("def piecewise(x):\n    return x\n")
    submission = Submission(tmp_path, {"03_jit": tmp_path / "03_jit.py"}, single="03_jit")
    assert audience.after_grading(_report(), submission).score == 7.0  # grade, watch, %grade
    assert audience.for_course(_report(), submission, course=tmp_path).score == 7.0  # Gradescope
    assert audience.for_class(_report(), tmp_path).score == 7.0  # grade batch


def test_a_release_carries_the_courses_rounding(tmp_path: Path) -> None:
    from grader.course import tree

    released = tmp_path / "release"
    released.mkdir()
    (released / "pyproject.toml").write_text(tree.pyproject(released, "on-request", 1.0))
    assert settings.round_step(released) == 1.0
    assert settings.show_fixes(released) == "on-request"
    (released / "pyproject.toml").write_text(tree.pyproject(released, "on-request"))
    assert settings.round_step(released) is None  # not set: not written
