"""Notebook submissions graded end to end by the real `grade`, in real subprocesses and kernels.

The notebooks are written by `grade notebooks` from solutions/ and exercises/,
then damaged the way students damage them (cells moved, copied, deleted;
magics and shell lines; old outputs; a cell that raises or never ends).
Expected scores are not written down: they are those of the same code graded
as `.py` files in the same session, so the tests follow the suites as they grow.
"""

from __future__ import annotations

import copy
import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from grader.sandbox import landlock

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ("03_jit", "ex2_per_example_grads")
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="

pytestmark = pytest.mark.slow
Notebook = dict[str, Any]


def grade(path: Path, *extra: str, only: tuple[str, ...] = LESSONS) -> dict[str, dict[str, Any]]:
    """The exercises of the JSON report, by name."""
    out = path.parent / f"{path.name}-results.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            str(path),
            "--only",
            ",".join(only),
            "--json",
            str(out),
            "--no-html",
            "--no-color",
            "-q",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=path.parent,
    )
    assert out.is_file(), proc.stdout + proc.stderr
    return {e["name"]: e for e in json.loads(out.read_text())["exercises"]}


def checks(exercise: dict[str, Any]) -> dict[str, tuple[str, float]]:
    return {c["id"]: (c["status"], c["score"]) for c in exercise["checks"]}


def write_notebooks(source: str, out: Path, only: tuple[str, ...] = LESSONS) -> Path:
    from grader.cli import main

    assert (
        main(
            ["notebooks", "--from", str(ROOT / source), "--out", str(out), "--only", ",".join(only)]
        )
        == 0
    )
    return out


def load(path: Path) -> Notebook:
    data: Notebook = json.loads(path.read_text(encoding="utf-8"))
    return data


def save(nb: Notebook, path: Path) -> None:
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def code(source: str, **extra: Any) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "metadata": {},
        "source": source,
        "outputs": [],
        "execution_count": None,
        **extra,
    }


def index_of(nb: Notebook, start: str) -> int:
    return next(
        i
        for i, c in enumerate(nb["cells"])
        if c["cell_type"] == "code" and c["source"].startswith(start)
    )


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The solutions graded as .py files."""
    folder = tmp_path_factory.mktemp("py") / "solutions"
    folder.mkdir()
    for lesson in LESSONS:
        shutil.copy(ROOT / "solutions" / f"{lesson}.py", folder)
    return grade(folder)


def test_solution_notebooks_score_as_the_py_solutions(
    tmp_path: Path, reference: dict[str, dict[str, Any]]
) -> None:
    graded = grade(write_notebooks("solutions", tmp_path / "nbs"))
    for lesson in LESSONS:
        assert graded[lesson]["score"] == reference[lesson]["score"], graded[lesson]["message"]
        assert graded[lesson]["status"] == reference[lesson]["status"]
        assert checks(graded[lesson]) == checks(reference[lesson])
        assert graded[lesson]["message"] == ""  # a clean run leaves nothing to say
        assert f"[grader] {lesson}.ipynb:" in graded[lesson]["output"]


def test_stub_notebooks_are_not_attempted(tmp_path: Path) -> None:
    graded = grade(write_notebooks("exercises", tmp_path / "nbs"))
    for lesson in LESSONS:
        assert graded[lesson]["status"] == "not_attempted", graded[lesson]["message"]
        assert graded[lesson]["score"] == 0


PROBE = """import os, resource, json
with open({path!r}, "a") as fh:
    fh.write(json.dumps({{"pid": os.getpid(), "ppid": os.getppid(), "sid": os.getsid(0),
                         "as": resource.getrlimit(resource.RLIMIT_AS)[0], "cwd": os.getcwd(),
                         "home": os.environ.get("HOME"), "uid": os.getuid()}}) + "\\n")"""


def damaged_03_jit(nb: Notebook, probe: Path) -> Notebook:
    """Moved cells, magics, shell lines, old outputs, a raising cell, an endless one, a figure."""
    nb = copy.deepcopy(nb)
    cells = nb["cells"]
    imports = cells.pop(index_of(nb, "import "))
    cells.insert(0, code("%time print(running_sum(jnp.arange(3.0)))"))  # runs before its definition
    cells.append(imports)  # imports last: the functions only need them when called
    scan = index_of(nb, "def running_sum")
    cells[scan]["source"] = "%%time\n" + cells[scan]["source"]
    cells[scan]["outputs"] = [
        {"output_type": "error", "ename": "NameError", "evalue": "stale", "traceback": ["old"]},
        {"output_type": "display_data", "data": {"image/png": PNG_1PX}, "metadata": {}},
    ]
    cells[scan]["execution_count"] = 17
    cells.extend(
        [
            code(
                "!pip install --no-such-flag nothing\n%matplotlib inline\nimport matplotlib.pyplot as plt\n"
                "plt.plot([1, 3, 2])\n%timeit -n 1 -r 1 piecewise(2.0)"
            ),
            code("def helper(x):\n    return 1 / x"),
            code("helper(0)"),
            code(PROBE.format(path=str(probe))),
            code("while True:\n    pass"),
            code("def after_the_loop():\n    return piecewise(-3.0)"),
        ]
    )
    return nb


def copied_and_deleted_04_vmap(nb: Notebook) -> Notebook:
    """A broken copy of `predict` before the right one; `pairwise_sq_dists` deleted; a raising `batch_predict`."""
    nb = copy.deepcopy(nb)
    cells = nb["cells"]
    predict = index_of(nb, "def predict")
    cells.insert(predict, code("def predict(params, x):\n    return x  # first try"))
    del cells[index_of(nb, "def pairwise_sq_dists")]
    batch = cells[index_of(nb, "def batch_predict")]
    head, rest = batch["source"].split("\n", 1)
    batch["source"] = f"{head}\n    raise ValueError('not like this')\n{rest}"
    return nb


def test_damaged_notebooks_grade_with_clear_notes(
    tmp_path: Path, reference: dict[str, dict[str, Any]]
) -> None:
    good = write_notebooks("solutions", tmp_path / "good", only=("03_jit", "04_vmap"))
    folder = tmp_path / "submission"
    folder.mkdir()
    # The probe writes outside the sandbox's own folders: only `basic` without Landlock allows
    # that (at `strict` this folder does not exist for the sandbox; at `user` it is not
    # writable; Landlock refuses it at every level).
    probe = tmp_path / "probe.jsonl"
    save(damaged_03_jit(load(good / "03_jit.ipynb"), probe), folder / "03_jit.ipynb")
    save(copied_and_deleted_04_vmap(load(good / "04_vmap.ipynb")), folder / "04_vmap.ipynb")
    shutil.copy(ROOT / "solutions" / "01_arrays.py", folder)  # a .py among the notebooks
    graded = grade(
        folder, "--timeout", "80", "--isolation", "basic", only=("03_jit", "04_vmap", "01_arrays")
    )  # 20 s per cell

    jit = graded["03_jit"]
    assert jit["score"] == reference["03_jit"]["score"], jit["message"]
    assert "cell 1 (`%time print(running_sum(jnp.arange(3.0)))`) raised NameError" in jit["message"]
    assert "raised ZeroDivisionError: division by zero, at cell" in jit["message"]
    assert "line 2: `return 1 / x`" in jit["message"]
    assert [a["title"] for a in jit["artifacts"]] == [
        f"03_jit.ipynb, cell {len(load(folder / '03_jit.ipynb')['cells']) - 5}"
    ]
    assert "(`while True:`) was still running after 20 s" in jit["message"]
    assert "cell(s)" not in jit["message"]  # the cell after the loop ran: SIGINT stopped the loop
    assert "`!pip install --no-such-flag nothing`: shell command, not run" in jit["output"]

    if landlock.abi() > 0:  # Landlock keeps even a `basic` sandbox to its own folders
        assert not probe.exists()
        runs = []
    else:
        runs = [json.loads(line) for line in probe.read_text().splitlines()]
        assert len(runs) == 2  # once in the kernel, once when the suite imported the module
    for run in runs:
        assert run["as"] != resource.RLIM_INFINITY  # the child's memory limit reached the kernel
        assert (
            Path(run["cwd"]).name == "scratch" and Path(run["cwd"]) != folder
        )  # the sandbox's folder
        assert run["home"] == run["cwd"]
        assert run["uid"] == os.geteuid()  # `basic`: the sandbox's user is the grader's
    if runs:
        kernel, imported = runs
        assert (
            kernel["ppid"] == imported["pid"]
        )  # the sandbox started the kernel, then imported the cells

    vmap = graded["04_vmap"]
    assert "`predict` is defined in cells" in vmap["message"]
    assert "defines no `pairwise_sq_dists`" in vmap["message"]
    assert 0 < vmap["score"] < vmap["max_score"]
    batch_cell = index_of(load(folder / "04_vmap.ipynb"), "def batch_predict") + 1
    by_id = {check["id"]: check for check in vmap["checks"]}
    for check in vmap["checks"]:
        if check["blocked_by"]:  # a property of a function whose values failed: not judged
            assert check["status"] == "failed" and "fix the values first" in check["message"]
            assert by_id[check["blocked_by"]]["status"] == "failed"
        elif "pairwise_sq_dists" in check["message"]:
            assert (
                check["status"] == "failed"
                and "has no attribute 'pairwise_sq_dists'" in check["message"]
            )
        elif (
            "ValueError: not like this" in check["message"]
        ):  # the student's line, in the notebook's terms
            assert check["location"] == {
                "path": f"04_vmap.ipynb, cell {batch_cell}",
                "line": 2,
                "code": "raise ValueError('not like this')",
            }
        else:
            assert check["status"] == "passed", check
    assert any("not like this" in c["message"] for c in vmap["checks"])

    assert graded["01_arrays"]["status"] == "passed", graded["01_arrays"]["message"]


def test_ungradable_notebooks_are_errors_naming_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "03_jit.ipynb").write_bytes(b"")
    (folder / "04_vmap.ipynb").write_text(
        '{"cells": [{"cell_type": "code", "source": "import jax', encoding="utf-8"
    )
    save(
        {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
        folder / "ex2_per_example_grads.ipynb",
    )
    graded = grade(folder, only=("03_jit", "04_vmap", "ex2_per_example_grads"))
    expected = {
        "03_jit": "03_jit.ipynb is empty (0 bytes)",
        "04_vmap": "04_vmap.ipynb is not valid notebook JSON",
        "ex2_per_example_grads": "ex2_per_example_grads.ipynb has no cells at all",
    }
    for lesson, phrase in expected.items():
        assert graded[lesson]["status"] == "error"
        assert graded[lesson]["message"].startswith(phrase), graded[lesson]["message"]
        assert graded[lesson]["score"] == 0
