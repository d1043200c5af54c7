"""`%grade` in a real Jupyter kernel, driven by nbclient, grading through the real engine.

The notebook's cells are 03_jit's reference solution, one cell per function (as
`grade notebooks` writes them), and end with `%load_ext grader` / `%grade 03_jit`.
Each test starts one kernel (its working folder is the test's own) and shuts it down;
the grading worker the kernel started goes with it.
"""

from __future__ import annotations

import ast
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

LOOP_RUNNING_SUM = """\
def running_sum(xs):
    xs = jnp.asarray(xs)
    total = jnp.zeros((), xs.dtype)
    partial = []
    for x in xs:
        total = total + x
        partial.append(total)
    return total, jnp.stack(partial)"""
SCAN_QUESTION = "How does jax.lax.scan carry a value from one element to the next"


def solution_cells() -> list[str]:
    """solutions/03_jit.py as a notebook's code cells: the imports, then one per function."""
    source = (ROOT / "solutions" / "03_jit.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    imports = [
        ast.get_source_segment(source, n)
        for n in tree.body
        if isinstance(n, ast.Import | ast.ImportFrom)
    ]
    functions = [
        ast.get_source_segment(source, n) for n in tree.body if isinstance(n, ast.FunctionDef)
    ]
    return ["\n".join(i for i in imports if i), *(f for f in functions if f)]


class Kernel:
    """One kernel running cells one at a time, as a student does."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def run(self, code: str) -> list[Any]:
        cell = nbformat.v4.new_code_cell(code)
        self.client.nb.cells.append(cell)
        self.client.execute_cell(cell, len(self.client.nb.cells) - 1)
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"{errors[0].ename}: {errors[0].evalue}"
        return list(cell.outputs)


@contextmanager
def started(tmp_path: Path, **env: str) -> Iterator[Kernel]:
    """A kernel working in `tmp_path`, shut down on leaving."""
    from nbclient import NotebookClient

    client = NotebookClient(
        nbformat.v4.new_notebook(),
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    with client.setup_kernel(env={**os.environ, **env}):
        yield Kernel(client)


def verdict(outputs: list[Any]) -> tuple[str, str]:
    """The (HTML, plain text) of the `%grade` display."""
    shown = [o for o in outputs if o.output_type == "display_data"]
    assert shown, outputs
    data = shown[-1]["data"]
    return data["text/html"], data["text/plain"]


def worker_pid(kernel: Kernel) -> int:
    out = kernel.run(
        "from grader.notebooks import magic as _m\n"
        "print(next(iter(_m._LOADED.values())).worker.proc.pid)"
    )
    return int("".join(o.get("text", "") for o in out if o.output_type == "stream").split()[-1])


def gone(pid: int, within_s: float = 20.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


def test_a_solved_notebook_shows_full_marks_then_a_loop_shows_its_failure(tmp_path: Path) -> None:
    with started(tmp_path) as kernel:
        for code in solution_cells():
            kernel.run(code)
        html, text = verdict(kernel.run("%load_ext grader\n%grade 03_jit"))
        assert "PASS" in text and "21/21  03_jit" in text, text
        assert 'class="badge s-passed"' in html and "21/21" in html
        assert re.search(r"<details>\s*<summary>\d+ checks passed</summary>", html)  # folded
        assert "Next:" in html and "04_vmap" in html
        assert "<script" not in html.lower()

        kernel.run(LOOP_RUNNING_SUM)  # the student rewrites running_sum as a Python loop
        html, text = verdict(kernel.run("%grade 03_jit"))
        assert "FAIL" in text and "running_sum" in text, text
        assert SCAN_QUESTION in text and SCAN_QUESTION in html
        assert 'class="badge s-failed"' in html and "running_sum" in html
        assert "%grade --hint" in text and "warm worker" in text
        pid = worker_pid(kernel)
    assert gone(pid), "the grading worker outlived its kernel"


def test_cells_the_kernel_ran_count_though_the_saved_notebook_lacks_them(tmp_path: Path) -> None:
    saved = tmp_path / "03_jit.ipynb"
    cells = [nbformat.v4.new_code_cell(code) for code in solution_cells()]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), saved)  # the solution, on disk
    with started(tmp_path, JPY_SESSION_NAME=str(saved)) as kernel:
        for code in solution_cells():
            kernel.run(code)
        kernel.run("%load_ext grader")
        kernel.run(LOOP_RUNNING_SUM)  # run, never saved: the file on disk does not have it
        html, text = verdict(kernel.run("%grade"))  # the lesson from the notebook's name
        assert LOOP_RUNNING_SUM not in saved.read_text()
        assert "FAIL" in text and "03_jit" in text, text
        assert SCAN_QUESTION in html
        assert "cell runs of this kernel" in text
