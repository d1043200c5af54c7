"""Which Canvas student each student folder is.

Canvas's gradebook import finds the student of a row by its identity columns
(`IDENTITY`), not by anything a folder name says by itself. So `grade export
canvas` writes a row only for a folder it can tie to one student:

    a roster (`read_roster`: Canvas's own gradebook export)
        the folder name is compared with each row's SIS Login ID, SIS User ID,
        ID and Student (or, given `by`, with that one column); the row found
        gives all five identity columns
    a naming convention (`by` without a roster: `NAMING`)
        the folder names ARE the students' SIS user IDs (`sis-user`): the name
        goes into that column, the others empty. Folder names that are SIS login
        IDs need the roster: Canvas's import finds a student by Student, ID or
        SIS User ID, a SIS Login ID alone is not enough (its guides, cited in
        tests/classroom/test_lms.py)

A folder that matches two roster rows, or two folders that match one row, is
`Ambiguous`: written anyway, one student's grades would land on another
(a folder named after a classmate's Canvas ID gave that classmate a second row).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence

IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS = "Points Possible"  # the second row of Canvas's export: not a student
COMPARED = ("SIS Login ID", "SIS User ID", "ID", "Student")  # with a folder name, no `by`
BY = {"sis-login": "SIS Login ID", "sis-user": "SIS User ID"}  # --match-by NAME: its column
NAMING = ("sis-user",)  # the `BY` that tie a folder to its student without a roster

Person = Mapping[str, str]  # the five identity columns of one student


class RosterError(ValueError):
    """The roster file cannot be used (not a Canvas gradebook export)."""


class Ambiguous(ValueError):
    """A folder cannot be tied to exactly one roster row; the message says which and why."""


def read_roster(text: str) -> list[dict[str, str]]:
    """The students of a Canvas gradebook export: their identity columns, in file order."""
    rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))
    if not rows or not set(IDENTITY) <= set(rows[0]):
        raise RosterError(
            "the roster is not a Canvas gradebook export: its header needs "
            + ", ".join(IDENTITY)
            + "; export it from Canvas (Grades > Export > Export Entire Gradebook)"
        )
    people = []
    for row in rows:
        if POINTS in (row["Student"] or ""):
            continue
        people.append({k: (row.get(k) or "").strip() for k in IDENTITY})
    return people


def by_name(names: Sequence[str], by: str) -> dict[str, Person]:
    """Each folder name as the column `BY[by]` of its own row (the others empty); `by` is
    one of `NAMING`."""
    if by not in NAMING:
        raise ValueError(f"--match-by {by} needs a roster")
    column = BY[by]
    return {name: {k: name if k == column else "" for k in IDENTITY} for name in names}


def _label(person: Person) -> str:
    return person["Student"] or person["SIS Login ID"] or person["ID"] or person["SIS User ID"]


def _found(name: str, people: Sequence[Person], columns: Sequence[str]) -> list[tuple[int, str]]:
    """(row, the column it matched in) of every roster row holding `name`, one per row."""
    key, hits = name.strip(), dict[int, str]()
    for index, person in enumerate(people):
        for column in columns:
            if key and person[column] == key:
                hits.setdefault(index, column)
    return list(hits.items())


def from_roster(
    names: Sequence[str], people: Sequence[Person], by: str | None = None
) -> tuple[dict[str, Person], list[str]]:
    """Each folder name's roster row, and the names no row holds; `Ambiguous` when a name
    is in two rows or two names are in one row."""
    columns = (BY[by],) if by else COMPARED
    hint = (
        f"folder names are compared with {BY[by]} only"
        if by
        else "compare the folder names with one column only: --match-by "
        + " or --match-by ".join(BY)
        + " (what the folder names are)"
    )
    matched: dict[str, Person] = {}
    owner: dict[int, str] = {}
    missing: list[str] = []
    for name in names:
        hits = _found(name, people, columns)
        if not hits:
            missing.append(name)
            continue
        if len(hits) > 1:
            rows = "; ".join(f"{_label(people[i])} by {column}" for i, column in hits)
            raise Ambiguous(
                f"folder {name!r} matches {len(hits)} students of the roster ({rows}): one "
                f"student's grades would go to another; {hint}, or rename the folder"
            )
        index = hits[0][0]
        if index in owner:
            raise Ambiguous(
                f"folders {owner[index]!r} and {name!r} both match {_label(people[index])} "
                "of the roster: Canvas would import two rows for one student, the second "
                f"overwriting the first; keep one of the folders, or {hint}"
            )
        owner[index] = name
        matched[name] = people[index]
    return matched, missing
