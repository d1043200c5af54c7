"""Every likely-cause text the check kinds, grader/explain.py and the suites' helpers write is
accounted for in docs/causes.md.

test_cause_literals.py reads the literals a suite passes as `cause=`. This test reads the
rest, with `ast` (tests/suites/cause_reader.py), in grader/checks/*.py, grader/explain.py
and grader/suites/*.py. The rule that finds a cause text:

- a site: the value of a `cause=` keyword; an argument in a `cause` field's place of a class
  of the module (`Difference(expected, observed, cause)`); the second argument of a
  `diagnose.Cause(kind, text)` a suite builds itself; a `"cause"` entry of a dict; the
  return value of a function whose name is `cause`/`causes` or ends in `_cause`/`_causes`;
  a value assigned to such a name (a local `cause`, a module's `CAUSES` dict or `_COUNT_CAUSE`),
  or to it within a tuple (`cause, fix = pair`, `for key, expected, cause, fix in PAIRS`);
- followed from a site to its texts: a string, an f-string (fields as {}), a module constant
  or a sum of those; each branch of an `if`/`or`; each element of a tuple (diagnostics);
  the element of a (cause, fix) pair, constant or local; an entry of a module's dict; a
  local variable (each value assigned or added to it, in the function or the one a closure
  is in); a parameter (what this module's callers pass for it); a function of the module
  called there (what it returns), a lambda or a diagnostic defined inside; a function of
  the module called in a text's f-string field adds its returned clauses (what is not text
  there, or a text of fewer than three words, a shape, a joined list, is data);
- not followed, because it is read elsewhere: a name for causes (its assignments are sites),
  a call of a function named for causes (its returns are), `.cause`/`.text` of a finding, a
  Difference or a Diagnostic (built at a site), `CAUSES[kind]` and `parts["cause"]`,
  `diagnose`'s own calls and constants (confirmed against the reference: the tables above
  the one this test reads, and test_causes_table.py), a failure built with its `cause=`;
- anything else a site leads to is a source this reading cannot follow, and fails
  `test_every_cause_site_is_read`, so a new way of building a cause is not skipped silently.

Each text must have a row in docs/causes.md's table "Causes the check kinds and the suites'
helpers write": the module (its path under grader/), the function (or constant) that writes
it, words the text holds, and why it holds wherever it fires (observed, entailed or
confirmed). A suite's text that test_cause_literals.py reads already has its row in that
test's table and is left out here. A text without a row fails, and a row whose words no
text of its module holds fails too. A question mark or an " or " in a text must lie inside
the words of a row it matches, so that a guess cannot ride on a row written for the rest of
the text: the row shows each alternative it vouches for.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cause_reader import literals, texts
from harness import REPO
from test_causes_table import _table

DOC = REPO / "docs" / "causes.md"
GRADER = REPO / "grader"
HEADING = "## Causes the check kinds and the suites' helpers write"
MODULES = sorted(
    [
        *(GRADER / "checks").glob("*.py"),
        GRADER / "explain.py",
        *(GRADER / "suites").glob("*.py"),
    ]
)
# functions named for causes that return no cause text, and what they return instead
NOT_TEXT = {
    ("suites/_shared.py", "_one_cause"): "the root-cause key of the student's exception (the "
    "reports group failures by it), and its line",
}


def _name(path: Path) -> str:
    return path.relative_to(GRADER).as_posix()


def found(path: Path) -> list[tuple[int, str, str]]:
    """(line, function, text) of each cause text of the module at `path` that this test
    reads: a suite's literal causes are test_cause_literals.py's."""
    read = texts(path)
    covered = {text for _, text in literals(path)} if path.parent.name == "suites" else set()
    return [
        (line, owner, text)
        for line, owner, text in read.found
        if text not in covered and (_name(path), owner) not in NOT_TEXT
    ]


def rows(doc: Path = DOC) -> list[tuple[str, str, str, str]]:
    """(module, function, words, why) of each row of the table."""
    table = _table(doc.read_text(), HEADING)
    return [
        (module.strip("`"), function.strip("`"), words.strip('"'), why)
        for module, function, words, why in table
    ]


def missing(
    texts_by_module: dict[str, list[tuple[int, str, str]]], table: list[tuple[str, str, str, str]]
) -> list[str]:
    """Each text no row of its module holds the words of."""
    return [
        f"grader/{module}:{line} ({owner}): {text}"
        for module, found_here in texts_by_module.items()
        for line, owner, text in found_here
        if not any(row[0] == module and row[2] in text for row in table)
    ]


def stale(
    texts_by_module: dict[str, list[tuple[int, str, str]]], table: list[tuple[str, str, str, str]]
) -> list[str]:
    """Each row whose words no text of its module holds."""
    return [
        f"{module} {function}: {words}"
        for module, function, words, _ in table
        if not any(words in text for _, _, text in texts_by_module.get(module, []))
    ]


def open_alternatives(
    texts_by_module: dict[str, list[tuple[int, str, str]]], table: list[tuple[str, str, str, str]]
) -> list[str]:
    """Each text with a question mark or an " or " outside the words of every row it
    matches: a guess lists possibilities, so the row must show the alternatives it vouches
    for (each one observed, or one thing said two ways)."""
    out = []
    for module, found_here in texts_by_module.items():
        for line, owner, text in found_here:
            covered: set[int] = set()
            for row in table:
                if row[0] == module and row[2] in text:
                    start = text.index(row[2])
                    covered.update(range(start, start + len(row[2])))
            marks = [m.start() for m in re.finditer(r"\?| or ", text)]
            if any(mark not in covered for mark in marks):
                out.append(f"grader/{module}:{line} ({owner}): {text}")
    return out


ROWS = rows()
FOUND = {_name(path): found(path) for path in MODULES}


def test_the_reader_follows_every_form(tmp_path):
    module = tmp_path / "kind.py"
    module.write_text(
        "from dataclasses import dataclass\n"
        "@dataclass\n"
        "class Difference:\n"
        "    expected: str\n"
        "    cause: str = ''\n"
        "PAIRS = (('k', 'expected', 'a cause from a pair', 'its fix'),)\n"
        "ONE = ('a cause of a constant pair', 'its fix')\n"
        "CAUSES = {'a': 'a dict of causes'}\n"
        "def assert_x(cause=''):\n"
        "    fail(cause=cause or 'the kind itself' + (' and more' if cause else ''))\n"
        "def _helper_cause(n):\n"
        "    text = f'built from {n}'\n"
        "    text += ', a clause added'\n"
        "    return text if n else _private(n)\n"
        "def _private(n):\n"
        "    return 'returned by a function the cause calls'\n"
        "def check(parts):\n"
        "    for key, _, cause, fix in PAIRS:\n"
        "        fail(cause=cause)\n"
        "    cause, fix = ONE\n"
        "    fail(cause=cause)\n"
        "    fail(cause=CAUSES['a'] or parts['cause'])\n"
        "    fail(cause=f'{_clause(1)}: a field')\n"
        "    return Difference('e', 'a cause by position')\n"
        "def _clause(n):\n"
        "    return 'a clause in a field' if n else str(n)\n"
        "def suite():\n"
        "    return {'cause': 'a dict entry', 'fix': ''}\n"
    )
    read = texts(module)
    assert sorted(text for _, _, text in read.found) == sorted(
        [
            "a cause from a pair",
            "a cause of a constant pair",
            "a dict of causes",
            "the kind itself and more",
            "the kind itself",
            "built from {}",
            ", a clause added",
            "returned by a function the cause calls",
            "{}: a field",
            "a clause in a field",
            "a cause by position",
            "a dict entry",
        ]
    )
    assert read.unread == []


def test_a_source_it_cannot_follow_is_reported(tmp_path):
    module = tmp_path / "kind.py"
    module.write_text(
        "def check(found):\n"
        "    fail(cause=found.describe())\n"
        "def _other_cause(xs):\n"
        "    return ' '.join(xs)\n"
    )
    unread = [source for _, _, source in texts(module).unread]
    assert unread == ["found.describe()", "' '.join(xs)"]


def test_a_text_without_a_row_and_a_stale_row_fail(tmp_path):
    module = tmp_path / "kind.py"
    module.write_text("def check():\n    fail(cause='a new guess, or something else?')\n")
    read = {"checks/kind.py": texts(module).found}
    table = [("checks/kind.py", "check", "an old cause", "observed: ...")]
    assert missing(read, table) == [
        "grader/checks/kind.py:2 (check): a new guess, or something else?"
    ]
    assert stale(read, table) == ["checks/kind.py check: an old cause"]
    table = [("checks/kind.py", "check", "a new guess", "observed: ...")]
    assert missing(read, table) == stale(read, table) == []
    # the row does not show the alternatives: the guess is still open
    assert open_alternatives(read, table) == [
        "grader/checks/kind.py:2 (check): a new guess, or something else?"
    ]
    table = [("checks/kind.py", "check", "a new guess, or something else?", "observed: ...")]
    assert open_alternatives(read, table) == []


def test_the_table_is_read():
    assert len(ROWS) >= 50
    names = {_name(path) for path in MODULES}
    for module, function, words, why in ROWS:
        assert module in names, module
        assert function.isidentifier() and why, (module, function, words)
        assert len(words) >= 12, (module, words)  # words that stand for one text, not many
        assert why.startswith(("observed", "entailed", "confirmed")), (module, words, why)


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_every_cause_site_is_read(path):
    unread = [
        f"grader/{_name(path)}:{line} ({owner}): {source}"
        for line, owner, source in texts(path).unread
        if (_name(path), owner) not in NOT_TEXT
    ]
    assert not unread, "cause sites this reading cannot follow:\n" + "\n".join(unread)


def test_every_cause_text_has_a_row():
    lost = missing(FOUND, ROWS)
    assert not lost, "cause texts without a row in docs/causes.md:\n" + "\n".join(lost)


def test_every_alternative_is_in_a_row():
    opened = open_alternatives(FOUND, ROWS)
    assert not opened, (
        "cause texts whose '?' or ' or ' no row's words show (a guess, or a row to widen):\n"
        + "\n".join(opened)
    )


def test_every_row_is_still_a_text():
    gone = stale(FOUND, ROWS)
    assert not gone, "rows whose words no cause text holds:\n" + "\n".join(gone)
