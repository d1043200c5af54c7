"""Every likely cause a suite writes as a literal is accounted for in docs/causes.md.

A cause written out in a suite (`cause="..."`, an f-string, or a module constant passed as
`cause=`) is not computed from the student's output, so nothing but its condition keeps it
true. Each one must have a row in docs/causes.md's table "Causes stated from what a check
observes": the lesson, the check (or the suite's function that writes it), words the text
holds, and why the text holds wherever it
fires (what the check observed, or what that observation entails within the spec). A literal
without a row fails here, so a new guess cannot slip in unreviewed; a row whose words no
literal holds any more fails too, so the table does not keep causes the suites dropped.

Causes computed by `grader.checks.diagnose` (confirmed against the reference) and texts a
suite builds in a helper function are outside this reading; the confirmed ones are graded
on their fixtures by test_causes_table.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

from harness import REPO
from test_causes_table import _table

DOC = REPO / "docs" / "causes.md"
SUITES = REPO / "grader" / "suites"
HEADING = "## Causes stated from what a check observes"


def _text(node: ast.expr, constants: dict[str, str]) -> str | None:
    """The text of a string literal, an f-string (its fields as {}), a module constant or a
    sum of those; None for anything computed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left, constants), _text(node.right, constants)
        return None if left is None or right is None else left + right
    return None


def _branches(node: ast.expr) -> list[ast.expr]:
    """`a if c else b` and `a or b` give each of their texts."""
    if isinstance(node, ast.IfExp):
        return _branches(node.body) + _branches(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [leaf for value in node.values for leaf in _branches(value)]
    return [node]


def literals(path: Path) -> list[tuple[int, str]]:
    """(line, text with its whitespace folded) of each literal cause in the suite at `path`."""
    tree = ast.parse(path.read_text())
    constants: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            text = _text(node.value, {})
            if isinstance(target, ast.Name) and text is not None:
                constants[target.id] = text
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg != "cause":
                continue
            for branch in _branches(keyword.value):
                text = _text(branch, constants)
                if text and text.strip():
                    found.append((branch.lineno, " ".join(text.split())))
    return found


def rows(doc: Path = DOC) -> list[tuple[str, str, str, str]]:
    """(lesson, check, words, why) of each row of the table."""
    table = _table(doc.read_text(), HEADING)
    return [(lesson, check, words.strip('"'), why) for lesson, check, words, why in table]


def _suite(lesson: str) -> Path:
    return SUITES / f"test_{lesson}.py"


ROWS = rows()
LITERALS = {
    path.stem.removeprefix("test_"): literals(path) for path in sorted(SUITES.glob("test_*.py"))
}


def test_the_reader_finds_literals_in_every_form(tmp_path):
    suite = tmp_path / "test_x.py"
    suite.write_text(
        'FIXED = "a module constant"\n'
        "def check(ok, n):\n"
        '    fail(cause="a plain literal")\n'
        '    fail(cause=f"an f-string of {n} values")\n'
        "    fail(cause=FIXED)\n"
        '    fail(cause="one branch" if ok else "")\n'
        '    fail(cause=computed(n) or "the fallback")\n'
        "    fail(cause=computed(n))\n"
    )
    assert [text for _, text in literals(suite)] == [
        "a plain literal",
        "an f-string of {} values",
        "a module constant",
        "one branch",
        "the fallback",
    ]


def test_the_table_is_read():
    assert len(ROWS) >= 20
    for lesson, check, words, why in ROWS:
        assert _suite(lesson).exists(), lesson
        assert check.isidentifier() and words and why, (lesson, check, words)


def test_every_literal_cause_has_a_row():
    missing = [
        f"{lesson}:{line}: {text}"
        for lesson, found in LITERALS.items()
        for line, text in found
        if not any(row[0] == lesson and row[2] in text for row in ROWS)
    ]
    assert not missing, "literal causes without a row in docs/causes.md:\n" + "\n".join(missing)


def test_every_row_is_still_a_literal():
    stale = [
        f"{lesson} {check}: {words}"
        for lesson, check, words, _ in ROWS
        if not any(words in text for _, text in LITERALS.get(lesson, []))
    ]
    assert not stale, "rows whose words no suite's literal holds:\n" + "\n".join(stale)
