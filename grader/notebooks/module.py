"""The lesson module the hidden suites import, built from a notebook's cells.

The suites import `03_jit` and call its functions, so a notebook is graded as
the module a top-to-bottom run leaves behind: its code cells in notebook
order (a function defined twice is the later one, as in the kernel), minus
the cells that raised or never finished when the notebook ran, which would
otherwise stop the import. Cells tagged `skip-execution` are left out too;
cells the run did not reach are kept when they compile.

The module is a small file beside the notebook's copy:

    from grader.notebooks.module import exec_cells as _exec_cells
    _exec_cells(globals(), "03_jit.ipynb", [(2, "import jax..."), (4, "def running_sum...")])

A cell that raises while the module is built (it leaned on something a
left-out cell had made before raising) is left out too, with a line in the
captured output. `exec_cells` compiles each cell as the file `<lessons>/03_jit.ipynb, cell 4`
(with the cell's saved text in `linecache`), so a traceback, the grader's
"your code raised ... at line 3" and `inspect.getsource` all name the
notebook's cell and the student's own line.
"""

from __future__ import annotations

import ast
import linecache
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from grader.notebooks.execution import Outcome

HEADER = '''"""{lesson}, built by the grader from {notebook}: the cells that ran, in notebook order."""

from grader.notebooks.module import exec_cells as _exec_cells

_exec_cells(globals(), {notebook!r}, [
'''
FOOTER = """])
del _exec_cells
"""


@dataclass(frozen=True)
class Included:
    number: int
    code: str  # runnable Python (magics neutralised)
    source: str  # as saved, shown in tracebacks


@dataclass
class Plan:
    """Which cells make the module, and what a reader of the report should know."""

    included: list[Included] = field(default_factory=list)
    left_out: list[tuple[Outcome, str]] = field(default_factory=list)  # (cell, why)
    defined: dict[str, list[int]] = field(default_factory=dict)  # public name -> cells defining it


def plan(outcomes: Sequence[Outcome], filename_of: Any) -> Plan:
    """Choose the cells; `filename_of(number)` is the name a cell is compiled under."""
    result = Plan()
    for outcome in outcomes:
        cell = outcome.cell
        if outcome.status in ("raised", "timeout", "skipped"):
            result.left_out.append((outcome, outcome.status))
            continue
        try:
            tree = compile(
                cell.code, filename_of(cell.number), "exec", ast.PyCF_ONLY_AST, dont_inherit=True
            )
        except SyntaxError as exc:
            outcome.error = f"SyntaxError: {exc.msg}"
            outcome.where = (cell.number, exc.lineno or 1)
            result.left_out.append((outcome, "syntax"))
            continue
        result.included.append(Included(cell.number, cell.code, cell.source))
        for name in _top_level_names(tree):
            result.defined.setdefault(name, []).append(cell.number)
    return result


def _top_level_names(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_")]


def render(lesson: str, notebook: str, cells: Sequence[Included]) -> str:
    """The module's source text."""
    body = "".join(f"    ({c.number}, {c.code!r}, {c.source!r}),\n" for c in cells)
    return HEADER.format(lesson=lesson, notebook=notebook) + body + FOOTER


def cell_filename(directory: str, notebook: str, number: int) -> str:
    return os.path.join(os.path.realpath(directory), f"{notebook}, cell {number}")


def exec_cells(
    namespace: dict[str, Any], notebook: str, cells: Sequence[tuple[int, str, str]]
) -> None:
    """Run the cells, in order, as the body of the module whose globals are `namespace`."""
    directory = os.path.dirname(str(namespace.get("__file__", "")))
    namespace.setdefault("display", _display)  # IPython's builtin, common in cells
    for number, code, source in cells:
        filename = cell_filename(directory, notebook, number)
        lines = source.splitlines(keepends=True)
        linecache.cache[filename] = (len(source), None, lines, filename)
        try:
            exec(compile(code, filename, "exec", dont_inherit=True), namespace)
        except Exception as exc:  # as in the notebook run: a raising cell is left out
            print(
                f"[grader] {notebook}, cell {number} raised {type(exc).__name__}: {exc} while the graded "
                "module was built, so it is left out. It ran in the notebook: it needs something a "
                "cell left out there had made.",
                file=sys.stderr,
            )


def _display(*objects: Any, **options: Any) -> None:
    """IPython's `display(...)` outside IPython: nothing to show when grading."""
