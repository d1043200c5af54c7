"""Generate the student stubs in exercises/ from the marked reference solutions.

`solutions/NAME.py` is the single source of every lesson file. Each graded body
is marked; the stub is the same file with each marked block replaced:

    def add_at(x, indices, values):
        \"\"\"...\"\"\"
        # TODO: scatter-add the values with `.at[indices].add(values)`
        ### BEGIN SOLUTION
        return jnp.asarray(x).at[indices].add(values)
        ### END SOLUTION

becomes, in exercises/NAME.py,

        # TODO: scatter-add the values with `.at[indices].add(values)`
        raise NotImplementedError("add_at is not implemented yet")

at the block's indentation (named after the innermost enclosing function). A
block may say what its stub is instead, with `### STUB: <line>` comment lines
inside it (in order, indented relative to the block). Blocks outside a
function (module or class level: `optimizer = ...`) MUST do so, since a
`raise` there would stop the stub from importing:

    # TODO: the lesson's optimizer: Adam with learning rate 1e-3, from optax
    ### BEGIN SOLUTION
    ### STUB: optimizer = None
    optimizer = optax.adam(1e-3)
    ### END SOLUTION

Every block sits under a `# TODO` comment (the student's instruction), which
the stub keeps; blocks do not nest. Everything outside the blocks is copied
unchanged, so docstrings and signatures cannot drift apart.

    grade assign                  write exercises/ from solutions/
    grade assign --check          exit 1 listing the files that differ
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from grader.errors import GraderError

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
STUB = "### STUB:"
TODO = "# TODO"
MAX_DIFF_LINES = 12


class MarkerError(GraderError):
    """A solution's markers are malformed; the message names the file and line."""


@dataclass(frozen=True)
class Block:
    begin: int  # 0-based index of the BEGIN line
    end: int  # 0-based index of the END line
    indent: str
    stub: tuple[str, ...]  # explicit replacement lines (relative to `indent`), may be empty
    owner: str | None  # the innermost enclosing function ("add_at", "__call__"), None outside one


def _owners(tree: ast.Module) -> list[tuple[int, int, str]]:
    """(first line, last line, name) of every function and method."""
    return [
        (n.lineno, n.end_lineno or n.lineno, n.name)
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def _owner(spans: list[tuple[int, int, str]], line: int) -> str | None:
    inside = [s for s in spans if s[0] < line <= s[1]]
    return max(inside, key=lambda s: s[0])[2] if inside else None


def _has_todo(lines: list[str], begin: int) -> bool:
    i = begin - 1
    while i >= 0 and lines[i].strip().startswith("#"):
        if lines[i].strip().startswith(TODO):
            return True
        i -= 1
    return False


def blocks(source: str, where: str) -> list[Block]:
    """The marked blocks of a solution, validated."""
    try:
        tree = ast.parse(source, filename=where)
    except SyntaxError as exc:
        raise MarkerError(f"{where}:{exc.lineno}: the solution does not parse: {exc.msg}") from None
    spans = _owners(tree)
    lines = source.splitlines()
    found: list[Block] = []
    begin: int | None = None
    stub: list[str] = []
    for i, line in enumerate(lines):
        text = line.strip()
        at = f"{where}:{i + 1}"
        if text == BEGIN:
            if begin is not None:
                raise MarkerError(f"{at}: {BEGIN} inside the block opened on line {begin + 1}")
            if not _has_todo(lines, i):
                raise MarkerError(
                    f"{at}: put a `{TODO}: <instruction>` comment right above {BEGIN}"
                )
            begin, stub = i, []
        elif text == END:
            if begin is None:
                raise MarkerError(f"{at}: {END} without a {BEGIN} above it")
            indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
            body = [s for s in lines[begin + 1 : i] if s.strip() and not s.strip().startswith(STUB)]
            if not body:
                raise MarkerError(f"{where}:{begin + 1}: the solution block is empty")
            owner = _owner(spans, begin + 1)
            if owner is None and not stub:
                raise MarkerError(
                    f"{where}:{begin + 1}: a block outside a function needs its stub spelled out "
                    f"with a `{STUB} <line>` comment inside it (e.g. `{STUB} optimizer = None`)"
                )
            found.append(Block(begin, i, indent, tuple(stub), owner))
            begin = None
        elif text.startswith(STUB):
            if begin is None:
                raise MarkerError(f"{at}: {STUB} outside a {BEGIN} / {END} block")
            rest = text[len(STUB) :]
            stub.append(rest[1:] if rest.startswith(" ") else rest)
        elif "### BEGIN" in text or "### END" in text:
            raise MarkerError(f"{at}: write the markers exactly as `{BEGIN}` and `{END}`")
    if begin is not None:
        raise MarkerError(f"{where}:{begin + 1}: {BEGIN} is never closed with {END}")
    return found


def stub_source(source: str, where: str = "<solution>") -> str:
    """The student stub for one solution file."""
    lines = source.splitlines()
    out: list[str] = []
    cursor = 0
    for block in blocks(source, where):
        out.extend(lines[cursor : block.begin])
        if block.stub:
            out.extend((block.indent + s).rstrip() for s in block.stub)
        else:
            out.append(
                f'{block.indent}raise NotImplementedError("{block.owner} is not implemented yet")'
            )
        cursor = block.end + 1
    out.extend(lines[cursor:])
    return "\n".join(out) + ("\n" if source.endswith("\n") else "")


def generate(solutions: Path) -> dict[str, str]:
    """File name -> stub text, for every solution file."""
    if not solutions.is_dir():
        raise MarkerError(f"{solutions}: no such folder of solutions")
    return {
        path.name: stub_source(path.read_text(encoding="utf-8"), str(path))
        for path in sorted(solutions.glob("*.py"))
        if not path.name.startswith("_")
    }


def differences(solutions: Path, exercises: Path, only: Collection[str] | None = None) -> list[str]:
    """What is out of sync between exercises/ and the stubs solutions/ generate (only for
    the file names in `only`, when given)."""
    wanted = generate(solutions)
    if only is not None:
        wanted = {name: text for name, text in wanted.items() if name in only}
    problems: list[str] = []
    for name, text in wanted.items():
        target = exercises / name
        if not target.is_file():
            problems.append(f"{target} is missing")
            continue
        current = target.read_text(encoding="utf-8")
        if current != text:
            diff = list(
                difflib.unified_diff(
                    current.splitlines(),
                    text.splitlines(),
                    str(target),
                    f"stub of {solutions / name}",
                    lineterm="",
                    n=1,
                )
            )
            shown = diff[:MAX_DIFF_LINES] + (["    ..."] if len(diff) > MAX_DIFF_LINES else [])
            problems.append(
                f"{target} differs from the stub of {solutions / name}:\n"
                + "\n".join("    " + d for d in shown)
            )
    if exercises.is_dir():
        for path in sorted(exercises.glob("*.py")):
            if only is not None and path.name not in only:
                continue
            if path.name not in wanted and not path.name.startswith("_"):
                problems.append(
                    f"{path} has no solution {solutions / path.name} (write the solution with markers)"
                )
    return problems


def write(solutions: Path, exercises: Path) -> list[Path]:
    """Write every stub; returns the files whose content changed."""
    exercises.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in generate(solutions).items():
        target = exercises / name
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
            changed.append(target)
    return changed
