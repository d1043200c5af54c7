"""What a student's own kernel knows of the lesson it works on: which lesson, which cells.

`%grade` (`grader.notebooks.magic`) runs in the student's kernel and grades the code that
kernel ran, so unsaved edits count. This module turns what the kernel holds into the
lesson file the hidden suites import, the way `grade notebooks/` does (`source.python_of`
neutralises the magics, `module.plan` and `module.render` write the module), without
running anything: the text is written here, and run only in the grading's sandbox.

Which lesson (`choose_lesson`): the one named in `%grade 03_jit`; else the notebook's own
name when it names a lesson (`03_jit.ipynb`, `Copy of 03_jit.ipynb`), as the kernel may
know it: `__vsc_ipynb_file__` (VS Code), `__session__` (ipykernel, from Jupyter's
`JPY_SESSION_NAME`, also read from the environment); else the lesson this kernel graded
last.

Which cells (`from_history`): every cell the kernel ran, in the order it ran them (IPython's
raw input history, `In [1]`, `In [2]`, ...), as a fresh run of that sequence would rebuild
the kernel's state, minus the cells known to have raised (`failed`: the extension records
each cell's outcome once loaded). The sandbox compiles each as the file `kernel, cell 12`;
what the student reads names it as the notebook does, `In [12]` (`in_kernel_words`). When the kernel ran nothing that defines a name, the saved notebook's
code cells are graded instead (`from_notebook`), when the kernel knows its file.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.model import CheckResult, ExerciseResult
from grader.notebooks import module, source
from grader.notebooks.execution import SKIP_TAG, Outcome

NOTEBOOK_VARIABLES = ("__vsc_ipynb_file__", "__session__")
SESSION_ENV = "JPY_SESSION_NAME"
KERNEL_LABEL = "kernel"
"""The file name the cells the kernel ran are compiled under: `kernel, cell 12`."""


class NothingToGrade(Exception):
    """No lesson, or no code: the message says why and what to do."""


@dataclass(frozen=True)
class Built:
    """A lesson file rebuilt from cells: its text, and what a student should know of it."""

    lesson: str
    text: str  # the module `grade notebooks/` would write (`module.render`)
    origin: str  # "12 cells the kernel ran (In [1] to In [14])"
    notes: str  # cells left out, names never defined (`grading_step.notes`), or ""
    first_todo: tuple[str, int, str] | None  # (where, line, code) of the first TODO
    from_kernel: bool = False  # the cells the kernel ran (else the saved notebook's)


def notebook_path(user_ns: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    """The notebook's path as the kernel knows it, or ""."""
    for name in NOTEBOOK_VARIABLES:
        value = user_ns.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return environ.get(SESSION_ENV, "").strip()


def lesson_named(text: str, lessons: Collection[str]) -> str | None:
    """The lesson a notebook's name or an argument names: `03_jit`, `03_jit.ipynb`,
    `notebooks/03_jit.ipynb`, `Copy of 03_jit (1).ipynb`; None when it names none."""
    stem = Path(text).name
    for suffix in (".ipynb", ".py"):
        stem = stem.removesuffix(suffix)
    if stem in lessons:
        return stem
    found = [n for n in lessons if re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", stem)]
    return max(found, key=len) if found else None


def choose_lesson(argument: str, notebook: str, lessons: Sequence[str], last: str = "") -> str:
    """The lesson to grade (see the module's docstring; `last`: the one this kernel graded
    last, for a bare `%grade` after `%grade 03_jit`), or NothingToGrade saying how to name
    one."""
    known = ", ".join(lessons)
    if argument:
        lesson = lesson_named(argument, lessons)
        if lesson is None:
            close = difflib.get_close_matches(argument, lessons, n=1)
            meant = f" Did you mean `%grade {close[0]}`?" if close else ""
            raise NothingToGrade(
                f"`%grade {argument}`: no lesson is called {argument!r}.{meant} "
                f"The lessons: {known}."
            )
        return lesson
    lesson = lesson_named(notebook, lessons) if notebook else None
    if lesson is not None:
        return lesson
    if last in lessons:
        return last
    where = (
        f"this notebook ({Path(notebook).name}) is not named after a lesson"
        if notebook.endswith(".ipynb")
        else "this kernel does not know its notebook's name"
    )
    raise NothingToGrade(
        f"Which lesson? {where}. Name it: `%grade 03_jit` (the lessons: {known}), or save "
        "the notebook under the lesson's name (03_jit.ipynb)."
    )


def _cells(numbered: Iterable[tuple[int, str, tuple[str, ...]]]) -> list[source.Cell]:
    cells = []
    for number, text, tags in numbered:
        if text.strip():
            code, changes = source.python_of(text)
            cells.append(source.Cell(number, "code", text, code, changes, tags))
    return cells


def is_setup_cell(text: str) -> bool:
    """Whether a cell is a setup cell `grade notebooks` writes, with a release to install
    or without (it imports and loads the grader: in a notebook it is tagged
    `skip-execution`, in a kernel's history it is not). Leaving out whatever starts with
    the first line of either only leaves code ungraded."""
    from grader.notebooks.from_lesson import NO_INSTALL_CELL, SETUP_CELL

    first_lines = tuple(cell.splitlines()[0] for cell in (SETUP_CELL, NO_INSTALL_CELL))
    return text.lstrip().startswith(first_lines)


def from_history(
    lesson: str, raw: Sequence[str], failed: Collection[int], expected: set[str]
) -> Built | None:
    """The lesson file of the cells the kernel ran (`raw`: IPython's raw input history,
    index = execution count, index 0 unused); None when none of them defines a name."""
    cells = _cells((n, text, ()) for n, text in enumerate(raw) if n > 0)
    outcomes = [
        Outcome(c, "skipped", reason="the grader's own setup cell")
        if is_setup_cell(c.source)
        else Outcome(c, "raised" if c.number in failed else "ran")
        for c in cells
    ]
    for outcome in outcomes:
        if outcome.status == "raised":
            outcome.error = "an error in the kernel"
    numbers = [c.number for c in cells]
    span = f"In [{numbers[0]}] to In [{numbers[-1]}]" if len(numbers) > 1 else ""
    origin = f"the {len(cells)} cell runs of this kernel" + (f" ({span})" if span else "")
    return _built(lesson, KERNEL_LABEL, outcomes, origin, expected)


def from_notebook(lesson: str, path: Path, expected: set[str]) -> Built | None:
    """The lesson file of the code cells saved in the notebook at `path` (cells tagged
    `skip-execution` left out, as `grade` leaves them); None when none defines a name."""
    notebook = source.read(path)
    cells = _cells((c.number, c.source, c.tags) for c in notebook.code_cells)
    outcomes = [
        Outcome(c, "skipped", reason=f"tagged `{SKIP_TAG}`") if SKIP_TAG in c.tags else Outcome(c)
        for c in cells
    ]
    origin = f"the {len(cells)} code cells saved in {path.name} (the kernel ran none)"
    return _built(lesson, path.name, outcomes, origin, expected)


def _built(
    lesson: str, label: str, outcomes: list[Outcome], origin: str, expected: set[str]
) -> Built | None:
    from grader.notebooks import grading_step  # its notes are the same as `grade notebooks/`'s

    def filename_of(number: int) -> str:
        return module.cell_filename(".", label, number)

    chosen = module.plan(outcomes, filename_of)
    if not chosen.defined:
        return None
    # A kernel's history repeats the cells run again: a definition run twice is no mistake.
    chosen.defined = {name: cells[-1:] for name, cells in chosen.defined.items()}
    notes = grading_step.notes(label, outcomes, chosen, expected, problem="")
    if label == KERNEL_LABEL:  # said in the kernel's words: In [12] is the cell run 12th
        notes = re.sub(r"\bcell (\d+)", r"In [\1]", notes.split("\n", 1)[-1])
        notes = f"Notes on the cells this kernel ran:\n{notes}" if notes else ""
    todo = None
    for cell in chosen.included:
        line = _first_todo(cell.source)
        if line is not None:
            where = (
                f"In [{cell.number}]" if label == KERNEL_LABEL else f"{label}, cell {cell.number}"
            )
            todo = (where, *line)
            break
    text = module.render(lesson, label, chosen.included)
    return Built(lesson, text, origin, notes, todo, from_kernel=label == KERNEL_LABEL)


KERNEL_CELL = re.compile(rf"\b{KERNEL_LABEL}, cell (\d+)")


def in_kernel_words(exercise: ExerciseResult) -> ExerciseResult:
    """`exercise` with the cells the kernel ran named as the notebook shows them: the
    grading's `kernel, cell 12` (a file name the sandbox compiled the cell under) is
    `In [12]`."""

    def said(text: str) -> str:
        return KERNEL_CELL.sub(r"In [\1]", text)

    def check(c: CheckResult) -> CheckResult:
        where = c.location
        if where is not None:
            where = dataclasses.replace(where, path=said(where.path))
        return dataclasses.replace(
            c, message=said(c.message), location=where, nudge=said(c.nudge), fix=said(c.fix)
        )

    return dataclasses.replace(
        exercise,
        message=said(exercise.message),
        output=said(exercise.output),
        checks=tuple(check(c) for c in exercise.checks),
    )


def _first_todo(text: str) -> tuple[int, str] | None:
    from grader import next_step

    found = next_step.first_todo_in(text, "")
    return (found.line, found.code) if found is not None else None


def saved_notebook(notebook: str, lesson: str, cwd: Path) -> Path | None:
    """The notebook file the kernel works on, when it can be found from `cwd`."""
    candidates = [Path(notebook)] if notebook.endswith(".ipynb") else []
    candidates += [cwd / Path(notebook).name] if notebook.endswith(".ipynb") else []
    candidates.append(cwd / f"{lesson}.ipynb")
    for path in candidates:
        full = path if path.is_absolute() else cwd / path
        if full.is_file():
            return full
    return None
