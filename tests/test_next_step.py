"""grader.next_step: an untouched file's first TODO, a begun file's first unstarted line,
the next lesson file at full marks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from help_examples import STUB

from grader import next_step
from grader.model import CheckResult, ExerciseResult, NextStep, Report, SourceLine
from grader.reports import terminal
from grader.runner.submission import Submission


def test_the_first_todo_is_a_raise_or_a_comment_never_a_string(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the TODO's path is shown from where the student stands
    path = tmp_path / "03_jit.py"
    path.write_text(STUB)
    assert next_step.first_todo(path) == SourceLine(
        "03_jit.py", 9, 'raise NotImplementedError("piecewise is not implemented yet")'
    )
    path.write_text(STUB.replace('    raise NotImplementedError("piecewise', '    return ("'))
    assert next_step.first_todo(path) == SourceLine(
        "03_jit.py", 13, "# TODO: carry the running total through jax.lax.scan"
    )
    path.write_text("def f(:\n    # TODO: fix me\n")  # a syntax error: read line by line
    assert next_step.first_todo(path) == SourceLine("03_jit.py", 2, "# TODO: fix me")
    path.write_text("def f(x):\n    return x\n")
    assert next_step.first_todo(path) is None


def test_the_todo_is_named_by_a_path_that_opens_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`exercises/01_arrays.py line 34` from the repository: a place the student can open."""
    (tmp_path / "exercises").mkdir()
    path = tmp_path / "exercises" / "03_jit.py"
    path.write_text(STUB)
    monkeypatch.chdir(tmp_path)
    assert next_step.first_todo(Path("exercises/03_jit.py")).path == "exercises/03_jit.py"  # type: ignore[union-attr]
    assert next_step.first_todo(path).path == "exercises/03_jit.py"  # type: ignore[union-attr]
    monkeypatch.chdir(tmp_path / "exercises")
    assert next_step.first_todo(path).path == "03_jit.py"  # type: ignore[union-attr]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # outside the working folder: the path as given
    assert next_step.first_todo(path).path == str(path)  # type: ignore[union-attr]


def test_a_notebook_todo_names_its_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cells = [
        {"cell_type": "markdown", "source": ["# TODO is prose here"]},
        {"cell_type": "code", "source": ["import jax\n"]},
        {"cell_type": "code", "source": ["def f(x):\n", "    raise NotImplementedError\n"]},
    ]
    path = tmp_path / "03_jit.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    assert next_step.first_todo(path) == SourceLine(
        "03_jit.ipynb, cell 2", 2, "raise NotImplementedError"
    )


def _exercise(name: str, status: str, score: float) -> ExerciseResult:
    check = CheckResult(
        "c", "test_c", "passed" if score else "failed", score, 1.0, "public", "", "?"
    )
    return ExerciseResult(name, name, status, (check,))  # type: ignore[arg-type]


def test_an_untouched_file_names_its_first_todo_and_the_command(tmp_path: Path) -> None:
    folder = tmp_path / "my exercises"
    folder.mkdir()
    (folder / "03_jit.py").write_text(STUB)
    submission = Submission(folder, {"03_jit": folder / "03_jit.py"})
    report = Report((_exercise("03_jit", "not_attempted", 0.0),), 1, str(folder), "0")
    filled = next_step.fill(report, submission, ["01_arrays", "03_jit", "04_vmap"])
    step = filled.exercises[0].next
    assert step is not None and step.todo is not None
    assert step.command == f"grade '{folder}/03_jit.py'"
    assert (step.todo.line, step.lesson) == (9, "")
    text = terminal.render(filled, color=False)
    assert "Not attempted yet (still raising NotImplementedError): 03_jit" in text
    assert (
        f"Next: start 03_jit at {folder}/03_jit.py line 9: "
        'raise NotImplementedError("piecewise is not implemented yet")\n'
        f"      then run `grade '{folder}/03_jit.py'`"
    ) in text


def test_full_marks_name_the_next_lesson_file_to_work_on(tmp_path: Path) -> None:
    for name in ("03_jit", "04_vmap", "05_pytrees"):
        (tmp_path / f"{name}.py").write_text("")
    order = ["01_arrays", "03_jit", "04_vmap", "05_pytrees"]
    single = Submission(tmp_path, {"03_jit": tmp_path / "03_jit.py"}, single="03_jit")
    report = Report((_exercise("03_jit", "passed", 1.0),), 1, "03_jit.py", "0")
    filled = next_step.fill(report, single, order)
    assert filled.exercises[0].next == NextStep(f"grade {tmp_path}/04_vmap.py", lesson="04_vmap")
    text = terminal.render(filled, color=False)
    assert (
        f"Next: 03_jit is at full marks; go on with 04_vmap: `grade {tmp_path}/04_vmap.py`" in text
    )
    # A next file known to be at full marks is skipped; the last file has none.
    both = Report(
        (_exercise("03_jit", "passed", 1.0), _exercise("04_vmap", "passed", 1.0)), 1, ".", "0"
    )
    filled = next_step.fill(both, Submission(tmp_path, {}), order)
    assert [e.next.lesson if e.next else "" for e in filled.exercises] == ["05_pytrees"] * 2
    assert next_step.fill(report, single, ["03_jit"]).exercises[0].next is None
