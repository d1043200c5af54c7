"""Equivalent mutants: the committed list of mutants that behave exactly like the solution.

`grader/mutate/equivalent.toml` has one table per lesson file, mutant id -> reason:

    ["03_jit"]
    "constant_changed:newton_sqrt:2bd61be6" = "the suite ... (why no correct check can see it)"

A listed mutant is not graded and counts as equivalent (out of the kill rate's
denominator). An id that no longer matches a generated mutant is *stale* (the
solution or an operator changed): `grade mutate` names it so the entry is fixed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).with_name("equivalent.toml")


class EquivalentFileError(Exception):
    """The equivalent-mutants file cannot be read, or is not lesson -> {id: reason}."""


def _toml_loads(text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib.loads(text)
    try:  # pragma: no cover - Python 3.10
        import tomli  # type: ignore[import-not-found, unused-ignore]
    except ImportError as exc:  # pragma: no cover
        raise EquivalentFileError("reading it needs Python 3.11 or `pip install tomli`") from exc
    loaded: dict[str, Any] = tomli.loads(text)
    return loaded


def load(path: Path = DEFAULT) -> dict[str, dict[str, str]]:
    """lesson -> {mutant id: reason}; an absent file lists nothing."""
    if not path.exists():
        return {}
    try:
        doc = _toml_loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EquivalentFileError(f"{path}: {exc}") from None
    listed: dict[str, dict[str, str]] = {}
    for lesson, table in doc.items():
        if not isinstance(table, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in table.items()
        ):
            raise EquivalentFileError(
                f'{path}: [{lesson}] must map mutant ids to reasons ("id" = "why it is equivalent")'
            )
        listed[lesson] = dict(table)
    return listed


def stale(listed: Mapping[str, str], generated: Iterable[str]) -> list[str]:
    """The listed ids that match no generated mutant, in the file's order."""
    ids = set(generated)
    return [mutant_id for mutant_id in listed if mutant_id not in ids]
