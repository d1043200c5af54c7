"""grader.audience: what the student, the course and a class see of a graded report."""

from __future__ import annotations

from pathlib import Path

import pytest
from help_examples import FIX, NUDGE, STUB, raw_report

from grader import audience, state
from grader.reports import terminal
from grader.runner.submission import Submission


def test_after_grading_fills_remembers_and_applies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "03_jit.py").write_text(STUB)
    submission = Submission(tmp_path, {"03_jit": tmp_path / "03_jit.py"}, single="03_jit")
    state.save_revealed(tmp_path, "03_jit", "test_running_sum_scan", 1)
    shown = audience.after_grading(raw_report(), submission)
    check = shown.exercises[0].checks[1]
    assert (check.nudge, check.fix, check.hints_revealed) == (NUDGE, "", 1)
    kept = state.last_result(tmp_path, "03_jit")
    assert kept is not None and kept.checks[1].fix == FIX  # for `grade hint`
    assert "Next: stuck on 03_jit? `grade hint 03_jit`" in terminal.render(shown, color=False)


def test_a_grading_under_way_shows_what_after_grading_shows_and_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "03_jit.py").write_text(STUB)
    submission = Submission(tmp_path, {"03_jit": tmp_path / "03_jit.py"}, single="03_jit")
    state.save_revealed(tmp_path, "03_jit", "test_running_sum_scan", 1)
    (tmp_path / "pyproject.toml").write_text("[tool.grade]\nround = 1\n")
    partial = audience.while_grading(raw_report(), submission, ["03_jit"])
    assert not (tmp_path / ".grade" / "last.json").exists()
    check = partial.exercises[0].checks[1]
    assert (check.nudge, check.fix, check.hints_revealed) == (NUDGE, "", 1)
    done = audience.after_grading(raw_report(), submission)
    assert partial == done
