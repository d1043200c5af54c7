"""A notebook file read into cells, its IPython syntax turned into plain Python.

Reading is lenient about what Jupyter itself tolerates (nbformat 3 or 4, a
cell's source as one string or a list of lines, missing metadata) and strict
about what cannot be graded: an empty file, broken JSON, JSON that is not a
notebook. Each of those raises `NotebookError` with a message that names the
file and says what to do.

A code cell's `code` is the cell with IPython's own syntax neutralised, line
for line (line N of the cell stays line N, so tracebacks point at the
student's line):

    %time y = f(x)        ->  y = f(x)         (timing magics: the statement runs once)
    %%time / %%timeit     ->  # %%time ...     (the body runs once)
    !pip install optax    ->  pass  # !pip install optax   (shell: never run)
    %matplotlib inline    ->  pass  # %matplotlib inline   (other magics: ignored)
    files = !ls           ->  files = None  # !ls
    %%bash (whole cell)   ->  every line commented out
    jnp.where?            ->  pass  # jnp.where?           (help)

Lines inside a multi-line string (a docstring line starting with `%`) are
left alone.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Magics whose statement (or cell body) is ordinary Python, run once instead of timed.
RUN_ONCE = frozenset({"time", "timeit", "prun", "capture"})
_ASSIGN_MAGIC = re.compile(r"^(\s*)([\w.\[\], ]+?)\s*=\s*([%!].*)$")
_HELP = re.compile(r"^\s*(\?{1,2}[\w.]*|[\w.]+\?{1,2})\s*$")
_TIMEIT_OPTION = re.compile(r"^-(?:[nrp]\s*\d+|[tcqo])\s*")

SAVE_HINT = (
    "Open it in Jupyter and save it (File > Save, or Ctrl+S), or write a fresh one with "
    "`grade notebooks`, then grade again."
)


class NotebookError(Exception):
    """A notebook that cannot be graded at all; the message names the file and the fix."""


@dataclass(frozen=True)
class Cell:
    number: int  # position in the notebook, from 1, markdown cells included
    kind: str  # "code", "markdown" or "raw"
    source: str  # as saved
    code: str = ""  # code cells: runnable Python, same lines as `source`
    changes: tuple[str, ...] = ()  # what the neutralising changed, one phrase each
    tags: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"cell {self.number}"

    @property
    def headline(self) -> str:
        """The cell's first line of code, to recognise it by (`def running_sum(xs):`)."""
        for line in self.source.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                text = line.strip()
                return text if len(text) <= 60 else text[:59] + "…"
        return "(comments only)"

    def line(self, number: int) -> str:
        lines = self.source.splitlines()
        return lines[number - 1].strip() if 0 < number <= len(lines) else ""


@dataclass(frozen=True)
class Notebook:
    name: str  # the file name, e.g. "03_jit.ipynb"
    cells: tuple[Cell, ...]

    @property
    def code_cells(self) -> tuple[Cell, ...]:
        return tuple(c for c in self.cells if c.kind == "code" and c.source.strip())


def read(path: Path) -> Notebook:
    """The notebook at `path`, or NotebookError saying why it cannot be graded."""
    name = path.name
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise NotebookError(f"{name} could not be read ({exc.strerror or exc}).") from None
    if not raw.strip():
        raise NotebookError(
            f"{name} is empty ({len(raw)} bytes): the notebook was never saved, so there is "
            f"nothing to grade. {SAVE_HINT}"
        )
    try:
        doc = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise NotebookError(
            f"{name} is not a text file (byte {exc.start} is not UTF-8). {SAVE_HINT}"
        ) from None
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"{name} is not valid notebook JSON: {exc.msg} at line {exc.lineno}, column "
            f"{exc.colno}. The file was cut short or edited by hand. {SAVE_HINT}"
        ) from None
    cells = _cells_of(doc, name)
    notebook = Notebook(
        name, tuple(_cell(i, raw_cell) for i, raw_cell in enumerate(cells, start=1))
    )
    if not notebook.code_cells:
        what = "no cells at all" if not cells else f"{len(cells)} cell(s) but no code"
        raise NotebookError(
            f"{name} has {what}: there is nothing to grade. If you have been working in it, "
            f"the work is not in the file yet. {SAVE_HINT}"
        )
    return notebook


def _cells_of(doc: Any, name: str) -> list[dict[str, Any]]:
    not_notebook = f"{name} is JSON but not a Jupyter notebook"
    if not isinstance(doc, dict):
        raise NotebookError(
            f"{not_notebook} (the top level is a {type(doc).__name__}, not an object). {SAVE_HINT}"
        )
    if "worksheets" in doc and "cells" not in doc:  # nbformat 3
        sheets = doc.get("worksheets") or [{}]
        cells = (
            sheets[0].get("cells", [])
            if isinstance(sheets, list) and isinstance(sheets[0], dict)
            else None
        )
    else:
        cells = doc.get("cells")
    if not isinstance(cells, list):
        raise NotebookError(f'{not_notebook} (it has no list of "cells"). {SAVE_HINT}')
    bad = next((i for i, c in enumerate(cells, start=1) if not isinstance(c, dict)), None)
    if bad is not None:
        raise NotebookError(f"{not_notebook} (cell {bad} is not an object). {SAVE_HINT}")
    return cells


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return value if isinstance(value, str) else ""


def _cell(number: int, raw: dict[str, Any]) -> Cell:
    kind = str(raw.get("cell_type", "code"))
    kind = kind if kind in ("code", "markdown", "raw") else "raw"
    source = _text(raw.get("source", raw.get("input", "")))  # "input": nbformat 3 code cells
    metadata = raw.get("metadata")
    tags = metadata.get("tags", []) if isinstance(metadata, dict) else []
    tags = tuple(str(t) for t in tags) if isinstance(tags, list) else ()
    if kind != "code":
        return Cell(number, kind, source, tags=tags)
    code, changes = python_of(source)
    return Cell(number, kind, source, code, changes, tags)


# -- IPython syntax -> Python ---------------------------------------------------
def python_of(source: str) -> tuple[str, tuple[str, ...]]:
    """`source` with magics and shell lines neutralised, line for line, and what changed."""
    lines = source.split("\n")
    changes: list[str] = []
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        magic = first[2:].split()[0] if first[2:].split() else ""
        if magic in RUN_ONCE:
            lines[0] = f"# {lines[0].strip()}  (the grader runs the body once)"
            changes.append(f"`%%{magic}`: the body runs once")
        else:
            changes.append(f"`%%{magic}` cell: not Python, not run")
            return "\n".join(f"# {line}" for line in lines), tuple(changes)
    for index in _magic_lines(lines):
        lines[index], change = _neutralised(lines[index])
        changes.append(change)
    return "\n".join(lines), tuple(changes)


def _candidate(line: str) -> bool:
    stripped = line.lstrip()
    return bool(stripped[:1] in ("%", "!", "?") or _ASSIGN_MAGIC.match(line) or _HELP.match(line))


def _magic_lines(lines: list[str]) -> list[int]:
    """Indexes of the lines that are IPython syntax (not inside a multi-line string)."""
    candidates = [i for i, line in enumerate(lines) if _candidate(line)]
    if not candidates:
        return []
    probe = list(lines)
    for i in candidates:
        probe[i] = probe[i][: len(probe[i]) - len(probe[i].lstrip())] + "pass"
    inside: set[int] = set()
    string_kinds = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)}
    try:
        for tok in tokenize.generate_tokens(io.StringIO("\n".join(probe) + "\n").readline):
            if tok.type in string_kinds and tok.end[0] > tok.start[0]:
                inside.update(range(tok.start[0], tok.end[0]))  # 0-based rows after the first
    except (tokenize.TokenError, SyntaxError):
        return candidates  # unbalanced code: the cell will not compile either way
    return [i for i in candidates if i not in inside]


def _neutralised(line: str) -> tuple[str, str]:
    indent = line[: len(line) - len(line.lstrip())]
    text = line.strip()
    assign = _ASSIGN_MAGIC.match(line)
    if assign and not text.startswith(("%", "!")):
        target, magic = assign.group(2), assign.group(3)
        statement = _run_once(magic)
        if statement is not None:
            return f"{indent}{target} = {statement}", f"`{text}`: runs once, untimed"
        return (
            f"{indent}{target} = None  # {magic}",
            f"`{text}`: IPython output not available, {target} is None",
        )
    if _HELP.match(line) and not text.startswith(("%", "!")):
        return f"{indent}pass  # {text}", f"`{text}`: help, ignored"
    if text.startswith("!"):
        return f"{indent}pass  # {text}", f"`{text}`: shell command, not run"
    statement = _run_once(text)
    if statement is not None:
        return f"{indent}{statement or 'pass'}", f"`{text}`: runs once, untimed"
    return f"{indent}pass  # {text}", f"`{text}`: IPython magic, ignored"


def _run_once(magic: str) -> str | None:
    """The Python statement of a timing magic (`%time f(x)` -> `f(x)`), else None."""
    match = re.match(r"^%(\w+)\s*(.*)$", magic)
    if not match or match.group(1) not in RUN_ONCE - {"capture"}:
        return None
    statement = match.group(2).strip()
    if match.group(1) == "timeit":
        while (option := _TIMEIT_OPTION.match(statement)) is not None:
            statement = statement[option.end() :]
    return statement
