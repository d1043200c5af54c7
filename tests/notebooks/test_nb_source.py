"""grader.notebooks.source: reading notebook files, neutralising IPython syntax."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.notebooks.source import NotebookError, python_of, read


def write(tmp_path: Path, content: str | bytes, name: str = "03_jit.ipynb") -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def notebook(*cells: dict[str, object]) -> str:
    return json.dumps({"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def code(source: str | list[str], **extra: object) -> dict[str, object]:
    return {
        "cell_type": "code",
        "source": source,
        "metadata": {},
        "outputs": [],
        "execution_count": None,
        **extra,
    }


# content -> phrases the error message must contain (it always names the file)
UNGRADABLE = {
    "zero bytes": (b"", ["is empty (0 bytes)", "never saved"]),
    "whitespace": ("  \n", ["is empty"]),
    "cut short": (
        '{"cells": [{"cell_type": "code", "source": "x = 1"',
        ["not valid notebook JSON", "line 1"],
    ),
    "not utf-8": (b"\xff\xfe\x00garbage", ["not a text file"]),
    "a list": ("[1, 2]", ["not a Jupyter notebook", "list"]),
    "no cells key": ('{"metadata": {}}', ["not a Jupyter notebook", '"cells"']),
    "cell not object": ('{"cells": [3]}', ["cell 1 is not an object"]),
    "zero cells": (notebook(), ["has no cells at all", "nothing to grade"]),
    "markdown only": (
        notebook({"cell_type": "markdown", "source": "# hi"}),
        ["1 cell(s) but no code"],
    ),
    "blank code cells": (notebook(code(""), code("  \n")), ["2 cell(s) but no code"]),
}


@pytest.mark.parametrize("case", sorted(UNGRADABLE))
def test_ungradable_notebooks_name_the_file_and_the_fix(tmp_path: Path, case: str) -> None:
    content, phrases = UNGRADABLE[case]
    with pytest.raises(NotebookError) as info:
        read(write(tmp_path, content))
    message = str(info.value)
    assert message.startswith("03_jit.ipynb ")
    for phrase in phrases:
        assert phrase in message
    assert "save it" in message or "Save" in message


def test_cells_are_numbered_from_the_top_markdown_included(tmp_path: Path) -> None:
    nb = read(
        write(
            tmp_path,
            notebook(
                {"cell_type": "markdown", "source": ["# Title\n", "text"]},
                code(["import jax\n", "x = 1"]),
                {"cell_type": "raw", "source": "raw"},
                code("def f(x):\n    return x", metadata={"tags": ["skip-execution"]}),
            ),
        )
    )
    assert [c.number for c in nb.code_cells] == [2, 4]
    assert nb.code_cells[0].source == "import jax\nx = 1"  # a list of lines is joined
    assert nb.code_cells[1].tags == ("skip-execution",)
    assert nb.code_cells[1].headline == "def f(x):"
    assert nb.code_cells[1].line(2) == "return x"


def test_nbformat_3_notebooks_are_read(tmp_path: Path) -> None:
    v3 = {"nbformat": 3, "worksheets": [{"cells": [{"cell_type": "code", "input": ["y = 2\n"]}]}]}
    nb = read(write(tmp_path, json.dumps(v3)))
    assert [c.code for c in nb.code_cells] == ["y = 2\n"]


def test_outputs_left_in_are_ignored(tmp_path: Path) -> None:
    stale = [
        {"output_type": "error", "ename": "NameError", "evalue": "old", "traceback": []},
        {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo="}, "metadata": {}},
    ]
    nb = read(write(tmp_path, notebook(code("z = 3", outputs=stale, execution_count=41))))
    assert nb.code_cells[0].code == "z = 3"


# cell source -> (neutralised code, a phrase of the change note or None)
NEUTRALISED = {
    "%time y = f(x)\nprint(y)": ("y = f(x)\nprint(y)", "runs once"),
    "%timeit -n 3 -r1 g()": ("g()", "runs once"),
    "x = %time h(2)": ("x = h(2)", "runs once"),
    "%%time\nz = 3": ("# %%time  (the grader runs the body once)\nz = 3", "body runs once"),
    "%%timeit -n1\nz = 3": (
        "# %%timeit -n1  (the grader runs the body once)\nz = 3",
        "body runs once",
    ),
    "!pip install optax\nimport optax": (
        "pass  # !pip install optax\nimport optax",
        "shell command, not run",
    ),
    "files = !ls": ("files = None  # !ls", "files is None"),
    "%matplotlib inline": ("pass  # %matplotlib inline", "IPython magic, ignored"),
    "%%bash\necho hi": ("# %%bash\n# echo hi", "not Python, not run"),
    "jnp.where?": ("pass  # jnp.where?", "help, ignored"),
    "if True:\n    !ls\n    %time f()": ("if True:\n    pass  # !ls\n    f()", "shell"),
    "x = 5 % 3": ("x = 5 % 3", None),
    'def f():\n    """doc\n    %time is not a magic here\n    !nor this\n    """': (
        'def f():\n    """doc\n    %time is not a magic here\n    !nor this\n    """',
        None,
    ),
}


@pytest.mark.parametrize("cell", sorted(NEUTRALISED))
def test_magics_and_shell_lines_are_neutralised_line_for_line(cell: str) -> None:
    expected, phrase = NEUTRALISED[cell]
    code_text, changes = python_of(cell)
    assert code_text == expected
    assert code_text.count("\n") == cell.count("\n")  # line N stays line N
    if phrase is None:
        assert changes == ()
    else:
        assert any(phrase in change for change in changes), changes
    compile(code_text, "cell", "exec")
