"""grader.invocations: the commands a report names, as they run from where the student
stands."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import invocations


def test_the_grade_command_names_the_file_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "exercises" / "03_jit.py"
    path.parent.mkdir()
    monkeypatch.chdir(tmp_path)
    assert invocations.command(path) == "grade exercises/03_jit.py"
    monkeypatch.chdir(path.parent)
    assert invocations.command(path) == "grade 03_jit.py"
    assert invocations.command(tmp_path / "my work" / "03_jit.py") == (
        f"grade '{tmp_path}/my work/03_jit.py'"
    )


def test_the_hint_command_finds_the_grading_from_where_it_is_printed(tmp_path: Path) -> None:
    """`grade hint 03_jit` where `grade hint` finds the grading from the working folder;
    else the lesson file's path, whose grading it reads (so a command printed after
    `grade ~/course/exercises` from elsewhere leads to that grading)."""
    repo = tmp_path / "repo"
    (repo / "exercises").mkdir(parents=True)
    inside = repo / "exercises"
    assert invocations.hint_command("03_jit", "exercises", repo) == "grade hint 03_jit"
    assert invocations.hint_command("03_jit", "exercises/03_jit.py", repo) == "grade hint 03_jit"
    assert invocations.hint_command("03_jit", "", repo) == "grade hint 03_jit"
    assert invocations.hint_command("03_jit", "03_jit.py", inside) == "grade hint 03_jit"
    assert invocations.hint_command("03_jit", ".", inside) == "grade hint 03_jit"
    elsewhere = invocations.hint_command("03_jit", "repo/exercises", tmp_path)
    assert elsewhere == "grade hint repo/exercises/03_jit.py"
    assert invocations.hint_command("03_jit", "repo/exercises/03_jit.py", tmp_path) == elsewhere
    away = tmp_path / "away"
    away.mkdir()
    absolute = invocations.hint_command("03_jit", str(inside), away)
    assert absolute == f"grade hint {inside / '03_jit.py'}"
    assert invocations.hint_command("03_jit", "bad\0name", away) == "grade hint 03_jit"
