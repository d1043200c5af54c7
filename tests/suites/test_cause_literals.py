"""Every likely cause a suite writes as a literal is accounted for in docs/causes.md.

A cause written out in a suite (`cause="..."`, an f-string, or a module constant passed as
`cause=`) is not computed from the student's output, so nothing but its condition keeps it
true. Each one must have a row in docs/causes.md's table "Causes stated from what a check
observes": the lesson, the check (or the suite's function that writes it), words the text
holds, and why the text holds wherever it
fires (what the check observed, or what that observation entails within the spec). A literal
without a row fails here, so a new guess cannot slip in unreviewed; a row whose words no
literal holds any more fails too, so the table does not keep causes the suites dropped.

Causes computed by `grader.checks.diagnose` (confirmed against the reference) are outside
this reading; the confirmed ones are graded on their fixtures by test_causes_table.py. The
texts a suite builds in a helper function, and those the check kinds write, are read by
test_cause_texts.py (the reader of both: cause_reader.py).
"""

from __future__ import annotations

from pathlib import Path

from cause_reader import literals
from harness import REPO
from test_causes_table import _table

DOC = REPO / "docs" / "causes.md"
SUITES = REPO / "grader" / "suites"
HEADING = "## Causes stated from what a check observes"


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
