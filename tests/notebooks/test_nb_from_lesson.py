"""grader.notebooks.from_lesson and `grade notebooks`: .py lesson files as notebooks."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import nbformat
import pytest

from grader.cli import main
from grader.notebooks.from_lesson import dumps, notebook_of

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted(p.stem for p in (ROOT / "solutions").glob("*.py"))


def public_names(source: str) -> set[str]:
    tree = ast.parse(source)
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_")}


def code_of(nb: dict[str, object]) -> str:
    cells = nb["cells"]
    assert isinstance(cells, list)
    return "\n\n".join(
        c["source"]
        for c in cells
        if c["cell_type"] == "code" and "skip-execution" not in c["metadata"].get("tags", [])
    )


@pytest.mark.parametrize("folder", ["exercises", "solutions"])
def test_every_lesson_file_becomes_a_valid_notebook_with_the_same_code(folder: str) -> None:
    for lesson in LESSONS:
        source = (ROOT / folder / f"{lesson}.py").read_text(encoding="utf-8")
        nb = notebook_of(source, lesson)
        nbformat.validate(nb)
        code = code_of(nb)
        assert public_names(code) == public_names(source), lesson
        assert '"""' not in code.split("\n", 1)[0]  # the lesson text went to markdown
        docstring = ast.get_docstring(ast.parse(source)) or ""
        first = nb["cells"][0]
        assert first["cell_type"] == "markdown" and first["source"].startswith("# ")
        assert docstring.splitlines()[1:3] == [] or docstring.splitlines()[2] in first["source"]


def test_a_function_cell_holds_its_code_and_its_docstring_is_markdown() -> None:
    source = (ROOT / "exercises" / "03_jit.py").read_text(encoding="utf-8")
    cells = notebook_of(source, "03_jit")["cells"]
    heading = next(i for i, c in enumerate(cells) if c["source"].startswith("### `running_sum("))
    markdown, code = cells[heading], cells[heading + 1]
    assert markdown["cell_type"] == "markdown" and code["cell_type"] == "code"
    assert code["source"].startswith("def running_sum(xs):")
    assert "# TODO" in code["source"] and "raise NotImplementedError" in code["source"]
    doc = ast.get_docstring(
        next(
            n
            for n in ast.parse(source).body
            if isinstance(n, ast.FunctionDef) and n.name == "running_sum"
        )
    )
    assert doc is not None and doc.splitlines()[0] in markdown["source"]
    assert doc.splitlines()[0] not in code["source"]
    imports = next(c for c in cells if c["cell_type"] == "code" and not c["metadata"])
    assert imports["source"].startswith("import ")


def test_the_demo_block_is_a_tagged_cell_the_grader_skips() -> None:
    source = (ROOT / "solutions" / "08_mlp.py").read_text(encoding="utf-8")
    cells = notebook_of(source, "08_mlp")["cells"]
    demo = cells[-1]
    assert demo["metadata"]["tags"] == ["skip-execution"]
    assert demo["source"].startswith("from grader.data import load_data")  # un-indented
    assert "__main__" not in demo["source"]


def test_output_is_deterministic() -> None:
    source = (ROOT / "solutions" / "03_jit.py").read_text(encoding="utf-8")
    assert dumps(notebook_of(source, "03_jit")) == dumps(notebook_of(source, "03_jit"))


def test_grade_notebooks_writes_keeps_and_forces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "nbs"
    assert (
        main(
            [
                "notebooks",
                "--from",
                str(ROOT / "exercises"),
                "--out",
                str(out),
                "--only",
                "03_jit,ex2_per_example_grads",
            ]
        )
        == 0
    )
    assert sorted(p.name for p in out.iterdir()) == ["03_jit.ipynb", "ex2_per_example_grads.ipynb"]
    work = out / "03_jit.ipynb"
    work.write_text(
        work.read_text().replace("raise NotImplementedError", "return 1  #"), encoding="utf-8"
    )
    saved = work.read_text()
    capsys.readouterr()
    assert (
        main(
            ["notebooks", "--from", str(ROOT / "exercises"), "--out", str(out), "--only", "03_jit"]
        )
        == 0
    )
    assert (
        "kept" in capsys.readouterr().out and work.read_text() == saved
    )  # a student's work survives
    assert (
        main(
            [
                "notebooks",
                "--from",
                str(ROOT / "exercises"),
                "--out",
                str(out),
                "--only",
                "03_jit",
                "--force",
            ]
        )
        == 0
    )
    assert work.read_text() != saved
    json.loads(work.read_text())


@pytest.mark.parametrize(
    ("argv", "phrase"),
    [
        (["--from", "no-such-folder"], "no such folder"),
        (["--only", "99_nothing"], "no 99_nothing.py"),
    ],
)
def test_grade_notebooks_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], phrase: str
) -> None:
    args = ["notebooks", "--out", str(tmp_path / "o"), *argv]
    if "--from" not in argv:
        args += ["--from", str(ROOT / "exercises")]
    assert main(args) == 2
    assert phrase in capsys.readouterr().err


@pytest.mark.slow
def test_solution_notebooks_run_top_to_bottom(tmp_path: Path) -> None:
    """Every generated solution notebook runs with nbclient, no cell raising.

    One kernel for all, its namespace reset (`%reset -f`) before each notebook:
    a fresh namespace per notebook at the cost of one kernel start, not sixteen.
    """
    from nbclient import NotebookClient

    notebooks = {
        lesson: nbformat.reads(
            dumps(
                notebook_of(
                    (ROOT / "solutions" / f"{lesson}.py").read_text(encoding="utf-8"), lesson
                )
            ),
            as_version=4,
        )
        for lesson in LESSONS
    }
    failures = []
    client = NotebookClient(
        nbformat.v4.new_notebook(),
        timeout=120,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    with client.setup_kernel():
        for lesson, nb in notebooks.items():
            client.nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%reset -f")])
            client.execute_cell(client.nb.cells[0], 0)
            client.nb = nb
            for index, cell in enumerate(nb.cells):
                if "skip-execution" in cell.metadata.get("tags", []):
                    continue
                client.execute_cell(cell, index)
                errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
                if errors:
                    failures.append(
                        f"{lesson}, cell {index + 1}: {errors[0].ename}: {errors[0].evalue}"
                    )
    assert not failures


def test_the_first_code_cell_loads_grade_and_installs_the_grader_where_missing() -> None:
    source = (ROOT / "exercises" / "03_jit.py").read_text(encoding="utf-8")
    cells = notebook_of(source, "03_jit", install="git+https://example.org/course/release")["cells"]
    setup = next(c for c in cells if c["cell_type"] == "code")
    assert cells.index(setup) == 1  # right after the lesson's title and text
    assert setup["metadata"]["tags"] == ["skip-execution"]  # `grade` neither runs nor grades it
    assert "%pip install --quiet git+https://example.org/course/release" in setup["source"]
    assert setup["source"].rstrip().endswith("%load_ext grader")
    assert "%grade" in cells[2]["source"]  # the working note says how to grade
