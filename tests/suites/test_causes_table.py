"""docs/causes.md holds what it says: every row of its table of confirmed causes names an
existing fixture that fails the row's check with the row's words in its likely-cause line,
and every look-alike row names an existing fixture whose cause line lacks the words.

The rows are read from the document itself, so a cause added to the table is graded here.
"""

from pathlib import Path

import pytest
from harness import REPO, lesson_files

DOC = REPO / "docs" / "causes.md"


def _table(text: str, heading: str) -> list[list[str]]:
    """The rows (cells stripped, backticks kept) of the first table after `heading`."""
    lines = text.split(heading, 1)[1].splitlines()
    rows: list[list[str]] = []
    for line in lines:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if set("".join(cells)) <= set("- "):
            continue  # the separator
        rows.append(cells)
    return rows[1:]  # the header left out


def causes(doc: Path = DOC) -> list[tuple[str, str, str, str, str]]:
    """(kind, lesson, fixture, check, words) of each confirmed cause."""
    rows = _table(doc.read_text(), "## Confirmed causes")
    return [
        (kind.strip("`"), lesson, fixture, check, words)
        for kind, _, lesson, fixture, check, words in rows
    ]


def look_alikes(doc: Path = DOC) -> list[tuple[str, str, str, str]]:
    """(lesson, fixture, check, words never said) of each look-alike."""
    rows = _table(doc.read_text(), "## Look-alikes")
    return [(lesson, fixture, check, words) for _, lesson, fixture, check, words in rows]


CAUSES = causes()
LOOK_ALIKES = look_alikes()
# graded when a selected test asks (no VARIANTS: `-k 07_pmap` grades 07's fixtures only)
FIXTURES = sorted(
    {(lesson, fixture) for _, lesson, fixture, *_ in CAUSES}
    | {(lesson, fixture) for lesson, fixture, *_ in LOOK_ALIKES}
)


def _id(row: tuple[str, ...]) -> str:
    return "-".join(row[:3])


def test_the_table_is_read_and_names_existing_fixtures():
    assert len(CAUSES) >= 15 and len(LOOK_ALIKES) >= 6
    kinds = {kind for kind, *_ in CAUSES}
    assert {"update_dropped", "broadcast", "order", "merged_axes", "class_mean"} <= kinds
    assert {"saved_elsewhere", "step0"} <= kinds
    for lesson, fixture in FIXTURES:
        assert fixture in lesson_files(lesson).variants(), (lesson, fixture)
    for _kind, _lesson, _fixture, check, words in CAUSES:
        assert check.startswith("test_") and words, (check, words)


def test_the_reader_rejects_nothing_silently(tmp_path):
    # a table with a row missing a cell cannot be read into rows of the wanted length
    doc = tmp_path / "causes.md"
    doc.write_text(
        "## Confirmed causes\n\n| kind | applied | lesson | fixture | check | says |\n"
        "| --- | --- | --- | --- | --- | --- |\n| `x` | y | 01_arrays | f | test_c |\n"
    )
    with pytest.raises(ValueError):
        causes(doc)


@pytest.mark.slow
@pytest.mark.parametrize("row", CAUSES, ids=_id)
def test_each_cause_is_named_on_its_fixture(graded, row):
    _kind, lesson, fixture, check, words = row
    graded(lesson, fixture).assert_fails(check, cause=words)


@pytest.mark.slow
@pytest.mark.parametrize("row", LOOK_ALIKES, ids=_id)
def test_each_look_alike_gets_no_such_cause(graded, row):
    lesson, fixture, check, words = row
    result = graded(lesson, fixture)
    assert result.results[check]["status"] == "failed", result.results[check]
    assert words not in result.cause(check), result.message(check)
