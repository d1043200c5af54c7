"""A `.py` lesson file as a Jupyter notebook a student can open and work in.

The file is read with `ast` (never imported). The notebook is, in file order:

    markdown  the module docstring: the lesson text, its first line the title
    code      the grader's setup: installs the grader when the kernel lacks it (a fresh
              hosted kernel, Colab) and loads `%grade` (`SETUP_CELL`; tagged
              `skip-execution`: `grade` neither runs nor grades it)
    markdown  how to work in the notebook and grade it
    code      the imports and other module-level code (one cell per run of them)
    markdown  per public function or class: its signature and docstring
    code      the function itself (decorators and the comments above it kept,
              the docstring moved into the markdown cell above)
    markdown  + code: the `if __name__ == "__main__":` demo, un-indented, tagged
              `skip-execution` (Jupyter runs it; the grader does not)

The output is deterministic (cell ids are numbered), so regenerating a
notebook from an unchanged file gives the same bytes.
"""

from __future__ import annotations

import ast
import inspect
import json
import shlex
import textwrap
from dataclasses import dataclass
from typing import Any

from grader.notebooks.execution import SKIP_TAG

NBFORMAT_MINOR = 5
DEFAULT_INSTALL = ""
"""What the setup cell's `%pip install` installs: nothing by default. No index serves the
grader; the course's student release does, from its URL (`grade release --url` records it,
`grade notebooks` reads it: `grader.notebooks.convert.recorded_install`)."""

SETUP_CELL = """\
# Run this cell first: it loads the grader's `%grade` magic, and installs the
# grader when this kernel lacks it (a fresh hosted kernel, e.g. Colab).
try:
    import grader
except ImportError:
    %pip install --quiet {install}
%load_ext grader"""

NO_INSTALL_CELL = """\
# Run this cell first: it loads the grader's `%grade` magic. This notebook names no
# release to install the grader from: run it in a kernel of the course's venv.
try:
    import grader
except ImportError:
    raise ImportError(
        "the grader is not installed in this kernel: run `pip install .` in the course's "
        "repository and start this notebook's kernel from that venv"
    ) from None
%load_ext grader"""

WORKING_NOTE = """\
**Working in this notebook.** Each function has its own code cell: replace its
`raise NotImplementedError(...)` line with your code (the `# TODO` comment above
it says what to write), run the cells from the top, and try your functions in
new cells. Then grade, in a new cell:

    %grade

It grades the cells this kernel ran (saved or not) and shows the verdict under
the cell; `%grade --hint` shows more help for the first failing check. From a
shell, save and run `grade {name}.ipynb`: the grader then runs the saved
notebook from the top in a fresh kernel. A cell that raises an error or never
finishes is left out (the verdict names it), `!shell` lines and `%magics` are
not run, and a cell tagged `skip-execution` is not run by the grader."""


@dataclass(frozen=True)
class _Chunk:
    kind: str  # "code", "markdown"
    text: str
    tags: tuple[str, ...] = ()


def notebook_of(source: str, name: str, install: str = DEFAULT_INSTALL) -> dict[str, Any]:
    """The nbformat 4 notebook (as JSON data) of the lesson file `name`.py with `source`;
    `install`: what its setup cell installs when the kernel has no grader ("": nothing)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    chunks: list[_Chunk] = []
    body = list(tree.body)
    doc = ast.get_docstring(tree, clean=True)
    if doc is not None:
        chunks.append(_Chunk("markdown", _lesson_text(doc)))
        body = body[1:]
    setup = SETUP_CELL.format(install=shlex.quote(install)) if install else NO_INSTALL_CELL
    chunks.append(_Chunk("code", setup, (SKIP_TAG,)))
    chunks.append(_Chunk("markdown", WORKING_NOTE.format(name=name)))

    pending: list[str] = []  # module-level code waiting to become one cell
    cursor = tree.body[0].end_lineno if doc is not None and tree.body[0].end_lineno else 0
    for node in body:
        start, end = _start(node, lines, cursor), _end(node, lines)
        pending.extend(lines[cursor : start - 1])  # blank lines and loose comments before it
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            loose = _take_comments(pending)
            _flush(pending, chunks)
            chunks.extend(_definition(node, lines, start, loose))
        elif isinstance(node, ast.If) and _is_main_guard(node):
            _flush(pending, chunks)
            chunks.extend(_demo(node, lines))
        else:
            pending.extend(lines[start - 1 : end])
        cursor = end
    pending.extend(lines[cursor:])
    _flush(pending, chunks)
    return _document(chunks, name)


def _take_comments(pending: list[str]) -> list[str]:
    """Pending lines that are only comments go with the definition after them."""
    if any(line.strip() and not line.lstrip().startswith("#") for line in pending):
        return []
    taken = (
        "\n".join(pending).strip("\n").split("\n") if any(line.strip() for line in pending) else []
    )
    pending.clear()
    return taken


def _end(node: ast.stmt, lines: list[str]) -> int:
    """The node's last line, with the indented comments that close its body (`### END ...`)."""
    end: int = node.end_lineno or node.lineno
    while end < len(lines):
        line = lines[end]
        indent = len(line) - len(line.lstrip())
        if not (line.lstrip().startswith("#") and indent > node.col_offset):
            break
        end += 1
    return end


def _lesson_text(doc: str) -> str:
    title, _, rest = doc.partition("\n")
    return f"# {title.strip().rstrip('.')}\n\n{rest.strip()}".rstrip()


def _start(node: ast.stmt, lines: list[str], cursor: int) -> int:
    """The node's first line, with its decorators and the comment lines right above it."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    while start - 1 > cursor and lines[start - 2].lstrip().startswith("#"):
        start -= 1
    return start


def _flush(pending: list[str], chunks: list[_Chunk]) -> None:
    text = "\n".join(pending).strip("\n")
    if text.strip():
        chunks.append(_Chunk("code", text))
    pending.clear()


def _definition(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
    lines: list[str],
    start: int,
    loose: list[str],
) -> list[_Chunk]:
    end = _end(node, lines)
    doc = ast.get_docstring(node, clean=True)
    keep = list(range(start, end + 1))
    first = node.body[0]
    if doc is not None and len(node.body) > 1 and first.lineno > node.lineno:
        dropped = set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
        keep = [n for n in keep if n not in dropped]
    code = "\n".join([*loose, *(lines[n - 1] for n in keep)]).strip("\n")
    chunks = []
    if doc is not None or not node.name.startswith("_"):
        if isinstance(node, ast.ClassDef):
            heading = f"### `class {node.name}`"
        else:
            heading = f"### `{node.name}({ast.unparse(node.args)})`"
        chunks.append(_Chunk("markdown", heading + (f"\n\n{inspect.cleandoc(doc)}" if doc else "")))
    chunks.append(_Chunk("code", code))
    return chunks


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or node.orelse:
        return False
    test = node.test
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _demo(node: ast.If, lines: list[str]) -> list[_Chunk]:
    start, end = node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno
    code = textwrap.dedent("\n".join(lines[start - 1 : end]))
    note = (
        "### Try it\n\nThe file's demo, to run by hand once the functions above work. "
        f"It is tagged `{SKIP_TAG}`: the grader does not run it."
    )
    return [_Chunk("markdown", note), _Chunk("code", code, (SKIP_TAG,))]


def _document(chunks: list[_Chunk], name: str) -> dict[str, Any]:
    cells = []
    for index, chunk in enumerate(chunks, start=1):
        cell: dict[str, Any] = {
            "cell_type": chunk.kind,
            "id": f"cell-{index:02d}",
            "metadata": {"tags": list(chunk.tags)} if chunk.tags else {},
            "source": chunk.text,
        }
        if chunk.kind == "code":
            cell.update({"execution_count": None, "outputs": []})
        cells.append(cell)
    return {
        "cells": cells,
        "metadata": {
            "grader": {"lesson": name},
            "kernelspec": {
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
                "name": "python3",
            },
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": NBFORMAT_MINOR,
    }


def dumps(notebook: dict[str, Any]) -> str:
    """The notebook as Jupyter writes it (sorted keys, one-space indent, final newline)."""
    import nbformat

    nbformat.validate(notebook)
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
