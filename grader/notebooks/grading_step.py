"""The grading child's notebook step: run the notebook, write the module pytest imports.

Runs in the sandbox (`grader.plugin` passes `run` to `grader.sandbox.launch`
as the step before the import) when the lesson file is a notebook. As the
sandbox's user, in its namespaces, it reads `<lessons>/03_jit.ipynb`, runs its cells in a fresh kernel
(`grader.notebooks.execution`), writes `<lessons>/03_jit.py`
(`grader.notebooks.module`) and returns notes, which the judge validates and
turns into records (`emit_notes`, `grader.protocol.records`):

- `Notebook(message)`: what a student should know about the run (a cell that
  raised, with its cell and line; a cell that never finished; a function
  defined twice or not at all); empty when all went well;
- `Artifact(id=NOTEBOOK_ID, ...)`: each figure the cells drew;
- for a notebook that cannot be graded at all (empty, broken JSON, no code),
  `Import(ok=False, message=...)`: the exercise is an error naming the file,
  and none of its checks run.

Time: each cell gets at most a quarter of the exercise's time limit (and
`CELL_TIMEOUT_S`), all cells together half of it, so the checks keep the rest.
"""

from __future__ import annotations

import ast
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from grader.notebooks import execution, module, source
from grader.notebooks.execution import Outcome
from grader.protocol import records

CELL_TIMEOUT_S = 60.0
MAX_FIGURES = 6


def run(
    lesson: str,
    lessons: Path,
    *,
    timeout_s: float,
    devices: int,
    expected: set[str],
    log_path: Path,
) -> dict[str, Any]:
    """In the sandbox: run `<lessons>/<lesson>.ipynb` in a kernel (started here, so it is
    isolated as the sandbox is), write `<lessons>/<lesson>.py` and return the notes the judge
    records: `{"unreadable": message}` for a notebook that cannot be graded, else
    `{"notebook": text, "figures": [(title, png), ...]}`."""
    path = lessons / f"{lesson}.ipynb"
    try:
        notebook = source.read(path)
    except source.NotebookError as exc:
        return {"unreadable": str(exc)}

    limits = execution.Limits(
        cell_timeout_s=min(CELL_TIMEOUT_S, timeout_s / 4), budget_s=timeout_s / 2
    )
    cells = notebook.code_cells
    started = time.monotonic()
    problem = ""
    try:
        outcomes = execution.run(
            cells,
            cwd=Path.cwd(),
            env=execution.kernel_env(dict(os.environ), devices),
            limits=limits,
            log_path=log_path,
        )
    except execution.KernelUnavailable as exc:
        problem = str(exc)
        outcomes = [Outcome(c, reason="no kernel") for c in cells]
    seconds = time.monotonic() - started

    def filename_of(number: int) -> str:
        return module.cell_filename(str(lessons), notebook.name, number)

    chosen = module.plan(outcomes, filename_of)
    (lessons / f"{lesson}.py").write_text(
        module.render(lesson, notebook.name, chosen.included), encoding="utf-8"
    )
    print(summary(notebook, outcomes, chosen, seconds, problem), flush=True)
    return {
        "notebook": notes(notebook.name, outcomes, chosen, expected, problem),
        "figures": figures(notebook.name, outcomes),
    }


def emit_notes(found: dict[str, Any], lesson: str, out: records.Writer) -> str | None:
    """In the judge: the sandbox's notes as records (validated: they come from a process that
    ran student code). Returns the message when the notebook could not be graded at all."""
    unreadable = found.get("unreadable")
    if isinstance(unreadable, str):
        out.emit(records.Import(lesson=lesson, ok=False, message=unreadable))
        return unreadable
    text = found.get("notebook")
    out.emit(records.Notebook(text if isinstance(text, str) else ""))
    shown = found.get("figures")
    for item in (shown if isinstance(shown, list) else [])[:MAX_FIGURES]:
        if (
            isinstance(item, tuple)
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], bytes)
            and item[1].startswith(records.PNG_MAGIC)
        ):
            out.emit(records.Artifact(id=records.NOTEBOOK_ID, title=item[0], data=item[1]))
    return None


def expected_names(suite: Path) -> set[str]:
    """The lesson's names the suite uses (`student.running_sum`), read from its source."""
    try:
        tree = ast.parse(suite.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return set()
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "student"
    }


def _quoted(text: str) -> str:
    return f"`{text}`"


def _where(outcome: Outcome, by_number: dict[int, source.Cell]) -> str:
    if outcome.where is None:
        return ""
    number, line = outcome.where
    cell = by_number.get(number)
    code = cell.line(line) if cell is not None else ""
    place = "line" if number == outcome.cell.number else f"cell {number}, line"
    return f", at {place} {line}" + (f": `{code}`" if code else "")


def notes(
    name: str, outcomes: Sequence[Outcome], chosen: module.Plan, expected: set[str], problem: str
) -> str:
    """The exercise-level message about the notebook run; empty when there is nothing to say."""
    lines = [
        *_kernel_notes(problem),
        *_left_out_notes(outcomes, chosen),
        *_not_run_notes(outcomes),
        *_duplicate_notes(chosen, expected),
        *_missing_notes(name, chosen, expected),
    ]
    if not lines:
        return ""
    return f"Notes on {name} (run top to bottom in a fresh kernel):\n" + "\n".join(
        f"- {line}" for line in lines
    )


def _kernel_notes(problem: str) -> list[str]:
    """Why no kernel ran the notebook, if none did."""
    if not problem:
        return []
    return [
        f"no Jupyter kernel could be started ({problem}); the notebook was graded from "
        "its source alone, without running its cells (no cell errors, no figures)."
    ]


# Why a cell was left out of the graded code -> the note, from the cell (`cell N (`headline`)`),
# its outcome, and where in the notebook it failed (`, at line L: `code``, or "").
_LEFT_OUT: dict[str, Callable[[str, Outcome, str], str]] = {
    "raised": lambda cell, outcome, where: (
        f"{cell} raised {outcome.error}{where}. The cell is left "
        "out of the graded code, so nothing it defines is graded; fix it and run the "
        "notebook top to bottom (Restart & Run All)."
    ),
    "timeout": lambda cell, outcome, where: (
        f"{cell} was still running after {outcome.seconds:.0f} s, the time limit "
        "for one cell; it was stopped and left out of the graded code. Look for a loop "
        "that never ends, or move a long demo run out of the notebook "
        "(`grade --timeout` raises the limits)."
    ),
    "syntax": lambda cell, outcome, where: (
        f"{cell} has a syntax error{where} ({outcome.error}); it is left out of the graded code."
    ),
}


def _left_out_notes(outcomes: Sequence[Outcome], chosen: module.Plan) -> list[str]:
    """One note per cell left out of the graded code, in the plan's order."""
    by_number = {o.cell.number: o.cell for o in outcomes}
    lines = []
    for outcome, why in chosen.left_out:
        note = _LEFT_OUT.get(why)
        if note is not None:
            cell = f"cell {outcome.cell.number} ({_quoted(outcome.cell.headline)})"
            lines.append(note(cell, outcome, _where(outcome, by_number)))
    return lines


def _not_run_notes(outcomes: Sequence[Outcome]) -> list[str]:
    """The cells the kernel did not run (no kernel at all aside), grouped by reason."""
    not_run = [o for o in outcomes if o.status == "not_run" and o.reason]
    reasons = sorted({o.reason for o in not_run if o.reason != "no kernel"})
    return [
        f"cell(s) {', '.join(str(o.cell.number) for o in not_run if o.reason == reason)} did "
        f"not run in the notebook ({reason}); they are graded from their source."
        for reason in reasons
    ]


def _duplicate_notes(chosen: module.Plan, expected: set[str]) -> list[str]:
    """The graded functions (every one when none is expected) defined in several cells."""
    return [
        f"`{fn}` is defined in cells {', '.join(map(str, numbers))}: the grader uses the "
        f"last one (cell {numbers[-1]}), as running the notebook top to bottom does. "
        "Delete the copies you do not mean."
        for fn, numbers in sorted(chosen.defined.items())
        if len(numbers) > 1 and (fn in expected or not expected)
    ]


def _missing_notes(name: str, chosen: module.Plan, expected: set[str]) -> list[str]:
    """The expected functions no cell that ran defines."""
    missing = sorted(expected - set(chosen.defined))
    if not missing:
        return []
    where = (
        "Is it in a cell left out above, or was its cell deleted?"
        if chosen.left_out
        else "Was its cell deleted, or the function renamed?"
    )
    return [
        f"{name} defines no {', '.join(_quoted(n) for n in missing)} in the cells that "
        f"ran, so the checks that call it fail. {where}"
    ]


def figures(name: str, outcomes: Sequence[Outcome]) -> list[tuple[str, bytes]]:
    found: list[tuple[str, bytes]] = []
    for outcome in outcomes:
        for k, png in enumerate(outcome.images, start=1):
            suffix = f" (figure {k})" if len(outcome.images) > 1 else ""
            found.append((f"{name}, cell {outcome.cell.number}{suffix}", png))
    return found[:MAX_FIGURES]


def summary(
    notebook: source.Notebook,
    outcomes: Sequence[Outcome],
    chosen: module.Plan,
    seconds: float,
    problem: str,
) -> str:
    """Printed into the exercise's captured output: the run, cell by cell."""
    ran = (
        "graded from source (no kernel)" if problem else f"run in a fresh kernel in {seconds:.1f} s"
    )
    lines = [
        f"[grader] {notebook.name}: {len(outcomes)} code cell(s) {ran}; "
        f"{len(chosen.included)} make the graded module."
    ]
    for outcome in outcomes:
        cell = outcome.cell
        state = {
            "ran": "ran",
            "raised": f"raised {outcome.error}",
            "timeout": "timed out",
            "not_run": f"not run ({outcome.reason})",
            "skipped": f"skipped ({outcome.reason})",
        }
        lines.append(
            f"[grader]   cell {cell.number:>3}: {state[outcome.status]}"
            + (f" in {outcome.seconds:.2f} s" if outcome.status in ("ran", "raised") else "")
        )
        lines.extend(f"[grader]             {change}" for change in cell.changes)
    return "\n".join(lines)
