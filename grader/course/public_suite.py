"""The public part of a suite: its source with the hidden checks cut out.

Used by `grade release`. The hidden check functions (`@check(..., hidden=True)`)
are removed from the source text, and then, repeatedly, every top-level helper,
constant, fixture and import that nothing left uses (a `_ref_*` only a hidden
check called, the `import math` only it needed). Everything else keeps its
exact text and comments. The cut is recorded in the released suite as a
literal the catalog reads, so students' summaries can say what is not there:

    HIDDEN = {"checks": 3, "points": 5}  # hidden checks, run at grading, not in this file
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from grader import catalog
from grader.errors import GraderError

KEEP = catalog.MANIFEST_KEYS | {"pytestmark"}


class PublicSuiteError(GraderError):
    """The hidden checks cannot be cut out cleanly; the message says where and why."""


@dataclass(frozen=True)
class PublicSuite:
    source: str
    hidden_ids: tuple[str, ...]
    hidden_names: tuple[str, ...]
    hidden_points: float


def _target_names(target: ast.expr) -> list[str] | None:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        names = [_target_names(t) for t in target.elts]
        return None if any(n is None for n in names) else [x for n in names for x in n or ()]
    return None  # `x.attr = ...`, `d[k] = ...`: a side effect, always kept


def _defined(node: ast.stmt) -> set[str]:
    """Top-level names a statement defines (empty for statements always kept)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        found = [_target_names(t) for t in targets]
        return set() if any(f is None for f in found) else {x for f in found for x in f or ()}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    return set()


def _always_kept(node: ast.stmt) -> bool:
    names = _defined(node)
    if not names:
        return True  # expressions, ifs, star imports: not ours to judge
    if names & KEEP or any(n.startswith("__") for n in names):
        return True
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        if node.name.startswith(("test_", "pytest_")):
            return True
        return any("autouse" in ast.unparse(d) for d in node.decorator_list)
    return False


def _uses(node: ast.stmt) -> set[str]:
    """Names a statement refers to (not the ones it defines), fixture requests included."""
    used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    for fn in ast.walk(node):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            used |= {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    # usefixtures("name"), getattr(module, "name"): an identifier in a string may be a use
    used |= {
        c.value
        for c in ast.walk(node)
        if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.isidentifier()
    }
    return used - _defined(node)


def _first_line(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _import_text(node: ast.Import | ast.ImportFrom, used: set[str]) -> str:
    kept = [a for a in node.names if (a.asname or a.name).split(".")[0] in used]
    if isinstance(node, ast.Import):
        return ast.unparse(ast.Import(names=kept))
    return ast.unparse(ast.ImportFrom(module=node.module, names=kept, level=node.level))


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def public_suite(path: Path) -> PublicSuite:
    """The released text of the suite at `path`, with what was cut out."""
    spec = catalog.read_suite(path)
    hidden = [c for c in spec.checks if c.visibility == "hidden"]
    source = path.read_text(encoding="utf-8")
    if not hidden:
        return PublicSuite(source, (), (), 0.0)
    hidden_ids = {c.id for c in hidden}
    body = ast.parse(source, filename=str(path)).body
    removed, used = _cut(body, hidden_ids)
    lines = source.splitlines()
    drop, replace = _edits(body, lines, removed, used)
    points = sum(c.points for c in hidden) + spec.hidden_points
    count = len(hidden) + spec.hidden_checks
    marker = (
        f'HIDDEN = {{"checks": {count}, "points": {_number(points)}}}'
        "  # hidden checks, run at grading, not in this file"
    )
    anchor = max(
        (n.end_lineno or n.lineno) - 1
        for n in body
        if isinstance(n, ast.Assign) and _defined(n) & {"LESSON", "TITLE"}
    )
    out: list[str] = []
    for index, line in enumerate(lines):
        if index in drop:
            continue
        if index in replace:
            out.append(replace[index])
        elif not (line.startswith("HIDDEN =") and spec.hidden_checks):
            out.append(line)
        if index == anchor:
            out.append(marker)
    text = re.sub(r"\n{4,}", "\n\n\n", "\n".join(out)).rstrip("\n") + "\n"
    names = tuple(c.name for c in hidden)
    _check(path, text, [*hidden_ids, *names])
    return PublicSuite(text, tuple(sorted(hidden_ids)), names, float(points))


def _cut(body: list[ast.stmt], hidden_ids: set[str]) -> tuple[set[int], set[str]]:
    """The top-level statements cut out (their indices: the hidden checks, then, repeatedly,
    what nothing left uses) and the names what is kept uses."""
    removed = {
        i
        for i, node in enumerate(body)
        if isinstance(node, ast.FunctionDef) and node.name in hidden_ids
    }
    while True:
        kept = [node for i, node in enumerate(body) if i not in removed]
        used: set[str] = set().union(*(_uses(n) for n in kept))
        unused = {
            i
            for i, node in enumerate(body)
            if i not in removed and not _always_kept(node) and not (_defined(node) & used)
        }
        if not unused:
            return removed, used
        removed |= unused


def _edits(
    body: list[ast.stmt], lines: list[str], removed: set[int], used: set[str]
) -> tuple[set[int], dict[int, str]]:
    """The source lines dropped (0-based) and the import lines rewritten to what is used."""
    drop: set[int] = set()
    replace: dict[int, str] = {}
    for i, node in enumerate(body):
        first, last = _first_line(node) - 1, (node.end_lineno or node.lineno) - 1
        if i in removed:
            while first > 0 and lines[first - 1].lstrip().startswith("#"):
                first -= 1  # the comment that introduces what is cut out goes with it
            drop.update(range(first, last + 1))
        elif isinstance(node, ast.Import | ast.ImportFrom) and not _defined(node) <= used:
            replace[first] = _import_text(node, used)
            drop.update(range(first + 1, last + 1))
    return drop, replace


def _check(path: Path, text: str, hidden: list[str]) -> None:
    """`PublicSuiteError` when the public `text` names a hidden check or does not parse."""
    leaks = [n for n in hidden if n in text]
    if leaks:
        raise PublicSuiteError(
            f"{path}: the public suite still mentions hidden check(s) {', '.join(map(repr, leaks))} "
            "(in a comment, docstring or string); reword that text so the release does not reveal it"
        )
    try:
        ast.parse(text)
    except SyntaxError as exc:
        raise PublicSuiteError(
            f"{path}: cutting the hidden checks broke the suite ({exc})"
        ) from None
