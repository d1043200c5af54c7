"""grader.state: what `grade` keeps in the graded folder's `.grade/`."""

from __future__ import annotations

from pathlib import Path

import pytest
from help_examples import STUB, failed, raw_report

from grader import audience, state
from grader.model import ExerciseResult, Report
from grader.runner.submission import Submission


def test_last_results_keep_the_help_and_lessons_graded_before(tmp_path: Path) -> None:
    other = ExerciseResult("01_arrays", "arrays", "passed", ())
    state.remember(
        Report((other,), seed=1, submission=".", grader_version="0"), tmp_path, "on-request"
    )
    state.remember(raw_report(), tmp_path, "on-request")
    back = state.last_result(tmp_path, "03_jit")
    assert back is not None and back.checks[1] == failed()
    assert state.last_result(tmp_path, "01_arrays") is not None
    assert state.last_result(tmp_path, "02_grad") is None
    state.remember(raw_report(), tmp_path, "never")
    back = state.last_result(tmp_path, "03_jit")
    assert back is not None and back.checks[1].fix == ""
    assert "SOLUTION_CODE" not in (tmp_path / ".grade" / "last.json").read_text()


def test_revealed_levels_survive_a_damaged_file(tmp_path: Path) -> None:
    assert state.load_revealed(tmp_path) == {}
    state.save_revealed(tmp_path, "03_jit", "test_x", 1)
    state.save_revealed(tmp_path, "03_jit", "test_y", 2)
    assert state.load_revealed(tmp_path) == {"03_jit": {"test_x": 1, "test_y": 2}}
    (tmp_path / ".grade" / "hints.json").write_text("{not json")
    assert state.load_revealed(tmp_path) == {}


def test_a_planted_link_is_not_written_through(tmp_path: Path) -> None:
    """The graded folder is the student's: a `.grade` linked elsewhere is not written into."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / ".grade").symlink_to(elsewhere)
    with pytest.raises(OSError, match="is a link"):
        state.save_revealed(work, "03_jit", "test_x", 1)
    with pytest.raises(OSError, match="is a link"):
        state.remember(raw_report(), work, "on-request")  # after_grading goes on without it
    assert list(elsewhere.iterdir()) == []


def test_state_belongs_to_the_graded_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / "exercises").mkdir(parents=True)
    (repo / "notebooks").mkdir()
    other = tmp_path / "other"
    other.mkdir()
    assert state.state_folder(repo / "exercises") == repo.resolve()
    assert state.state_folder(repo / "notebooks") == repo.resolve()
    assert state.state_folder(other) == other.resolve()
    assert state.state_folder_here(repo) == repo.resolve()
    assert state.state_folder_here(repo / "exercises") == repo.resolve()
    monkeypatch.chdir(other)
    assert state.state_folder_here() == other.resolve()
    submission = Submission(repo / "exercises", {"03_jit": repo / "exercises" / "03_jit.py"})
    (repo / "exercises" / "03_jit.py").write_text(STUB)
    audience.after_grading(raw_report(), submission)  # run in `other`
    assert (repo / ".grade" / "last.json").is_file() and not (other / ".grade").exists()


def test_a_students_file_is_read_as_data(tmp_path: Path) -> None:
    path = tmp_path / "hints.json"
    assert state.revealed_in(path) is None
    path.write_text('{"03_jit": {"test_a": 2, "test_b": 7, "test_c": true, "4": "x"}, "x": 1}')
    revealed = state.revealed_in(path)
    assert revealed == {"03_jit": {"test_a": 2, "test_b": 2}}
    assert state.count(revealed) == 4
    path.write_text("[1, 2]")
    assert state.revealed_in(path) is None
    path.write_text(" " * (state.REVEALED_LIMIT + 1) + "{}")
    assert state.revealed_in(path) is None
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "target.json")
    (tmp_path / "target.json").write_text('{"03_jit": {"test_a": 1}}')
    assert state.revealed_in(link) is None
