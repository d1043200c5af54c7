"""grader.notebooks.module and the notes of grader.notebooks.grading_step, without a kernel."""

from __future__ import annotations

import importlib.util
import inspect
import sys
import traceback
import types
from pathlib import Path

import pytest

from grader.notebooks import grading_step, module
from grader.notebooks.execution import Outcome, Status
from grader.notebooks.source import Cell, python_of
from grader.tracebacks import innermost_student_line, raised_in_student_code

ROOT = Path(__file__).resolve().parents[2]


def cell(number: int, source: str) -> Cell:
    code, changes = python_of(source)
    return Cell(number, "code", source, code, changes)


def outcome(number: int, source: str, status: Status = "ran", **extra: object) -> Outcome:
    result = Outcome(cell(number, source), status)
    for key, value in extra.items():
        setattr(result, key, value)
    return result


def load(
    lessons: Path, lesson: str, outcomes: list[Outcome]
) -> tuple[types.ModuleType, module.Plan]:
    chosen = module.plan(
        outcomes, lambda n: module.cell_filename(str(lessons), f"{lesson}.ipynb", n)
    )
    path = lessons / f"{lesson}.py"
    path.write_text(module.render(lesson, f"{lesson}.ipynb", chosen.included), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(lesson, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[lesson] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(lesson, None)
    return mod, chosen


def test_the_module_is_the_cells_that_ran_in_notebook_order(tmp_path: Path) -> None:
    mod, chosen = load(
        tmp_path,
        "nb_order",
        [
            outcome(2, "def f(x):\n    return SCALE * x"),  # uses a name defined further down
            outcome(
                3, "f(undefined)", "raised", error="NameError: name 'undefined' is not defined"
            ),
            outcome(5, "SCALE = 3"),
            outcome(6, "def f(x):\n    return SCALE * x + 1"),  # a later copy wins
            outcome(7, "while True:\n    pass", "timeout", seconds=5.0),
            outcome(8, "def g(:\n    pass", "not_run", reason="the kernel could not be restarted"),
            outcome(9, "%time h = f(1)"),
            outcome(10, "demo()", "skipped", reason="tagged"),
        ],
    )
    assert [c.number for c in chosen.included] == [2, 5, 6, 9]
    assert [(o.cell.number, why) for o, why in chosen.left_out] == [
        (3, "raised"),
        (7, "timeout"),
        (8, "syntax"),
        (10, "skipped"),
    ]
    assert mod.f(2) == 7 and mod.h == 4
    assert chosen.defined["f"] == [2, 6]
    assert not hasattr(mod, "_exec_cells")


def test_tracebacks_and_getsource_name_the_notebook_cell(tmp_path: Path) -> None:
    mod, _ = load(
        tmp_path,
        "nb_trace",
        [
            outcome(
                4,
                "import math\n\ndef bad(x):\n    %time y = 1\n    raise NotImplementedError('todo')",
            ),
        ],
    )
    with pytest.raises(NotImplementedError) as info:
        mod.bad(1)
    where = innermost_student_line(info.value, str(tmp_path))
    assert where is not None
    assert (where.path, where.line, where.code) == (
        "nb_trace.ipynb, cell 4",
        5,
        "raise NotImplementedError('todo')",
    )
    assert raised_in_student_code(
        info.value, str(tmp_path)
    )  # so an untouched stub is "not attempted"
    assert "%time y = 1" in inspect.getsource(mod.bad)  # the saved text, not the neutralised one
    assert 'File "' + str(tmp_path.resolve()) + '/nb_trace.ipynb, cell 4", line 5' in "".join(
        traceback.format_exception(info.value)
    )


def test_expected_names_come_from_the_suite_source() -> None:
    names = grading_step.expected_names(ROOT / "grader" / "suites" / "test_03_jit.py")
    assert {"piecewise", "running_sum", "newton_sqrt"} <= names


def test_notes_name_cells_lines_duplicates_and_missing_functions() -> None:
    outcomes = [
        outcome(2, "def helper(x):\n    return 1 / x"),
        outcome(
            3, "helper(0)", "raised", error="ZeroDivisionError: division by zero", where=(2, 2)
        ),
        outcome(4, "def running_sum(xs):\n    return xs"),
        outcome(5, "def running_sum(xs):\n    return xs"),
        outcome(6, "while True:\n    pass", "timeout", seconds=15.2),
        outcome(7, "x = 1", "not_run", reason="the notebook's time budget (90 s) was spent"),
    ]
    chosen = module.plan(outcomes, lambda n: f"/x/03_jit.ipynb, cell {n}")
    text = grading_step.notes("03_jit.ipynb", outcomes, chosen, {"running_sum", "piecewise"}, "")
    assert text.startswith("Notes on 03_jit.ipynb")
    assert (
        "cell 3 (`helper(0)`) raised ZeroDivisionError: division by zero, at cell 2, line 2: `return 1 / x`"
        in text
    )
    assert "cell 6 (`while True:`) was still running after 15 s" in text
    assert (
        "cell(s) 7 did not run in the notebook (the notebook's time budget (90 s) was spent)"
        in text
    )
    assert "`running_sum` is defined in cells 4, 5: the grader uses the last one (cell 5)" in text
    assert "defines no `piecewise`" in text


def test_a_clean_run_has_no_notes() -> None:
    outcomes = [outcome(1, "import jax"), outcome(2, "def piecewise(x):\n    return x")]
    chosen = module.plan(outcomes, lambda n: f"/x/a.ipynb, cell {n}")
    assert grading_step.notes("03_jit.ipynb", outcomes, chosen, {"piecewise"}, "") == ""


def test_a_cell_that_raises_while_the_module_is_built_is_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mod, _ = load(
        tmp_path,
        "nb_partial",
        [
            outcome(1, "x = 1\n1 / 0", "raised", error="ZeroDivisionError: division by zero"),
            outcome(2, "y = x + 1"),  # ran in the kernel, where the raising cell had set x
            outcome(3, "def f():\n    return 3\ndisplay(f())"),  # IPython's display() is there too
        ],
    )
    assert mod.f() == 3 and not hasattr(mod, "y")
    assert "nb_partial.ipynb, cell 2 raised NameError" in capsys.readouterr().err


def test_notes_come_in_order_kernel_left_out_not_run_duplicates_missing() -> None:
    outcomes = [
        outcome(1, "def piecewise(x):\n    return x"),
        outcome(2, "def f(:\n    pass", where=(2, 1)),
        outcome(3, "def piecewise(x):\n    return -x"),
        outcome(4, "y = 1", "not_run", reason="no kernel"),
        outcome(5, "z = 2", "not_run", reason="an earlier cell crashed the kernel"),
        outcome(6, "w = 3", "not_run", reason="an earlier cell crashed the kernel"),
        outcome(7, "v = 4", "not_run", reason="a budget"),
        outcome(8, "u = 5", "raised", error="ValueError: v", where=(8, 1)),
    ]
    chosen = module.plan(outcomes, lambda n: f"/x/a.ipynb, cell {n}")
    assert grading_step.notes(
        "a.ipynb", outcomes, chosen, set(), "kernel missing"
    ).splitlines() == [
        "Notes on a.ipynb (run top to bottom in a fresh kernel):",
        "- no Jupyter kernel could be started (kernel missing); the notebook was graded from its "
        "source alone, without running its cells (no cell errors, no figures).",
        "- cell 2 (`def f(:`) has a syntax error, at line 1: `def f(:` (SyntaxError: invalid "
        "syntax); it is left out of the graded code.",
        "- cell 8 (`u = 5`) raised ValueError: v, at line 1: `u = 5`. The cell is left out of the "
        "graded code, so nothing it defines is graded; fix it and run the notebook top to bottom "
        "(Restart & Run All).",
        "- cell(s) 7 did not run in the notebook (a budget); they are graded from their source.",
        "- cell(s) 5, 6 did not run in the notebook (an earlier cell crashed the kernel); they are "
        "graded from their source.",
        "- `piecewise` is defined in cells 1, 3: the grader uses the last one (cell 3), as running "
        "the notebook top to bottom does. Delete the copies you do not mean.",
    ]
    first = outcomes[:1]
    chosen = module.plan(first, lambda n: f"/x/a.ipynb, cell {n}")
    assert grading_step.notes("a.ipynb", first, chosen, {"piecewise", "newton"}, "") == (
        "Notes on a.ipynb (run top to bottom in a fresh kernel):\n- a.ipynb defines no `newton` "
        "in the cells that ran, so the checks that call it fail. Was its cell deleted, or the "
        "function renamed?"
    )
