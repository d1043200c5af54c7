"""Our results JSON: `Report.to_json()` written deterministically.

The document is the versioned results contract (schema_version 1, described by
`grader/results.schema.json`, shipped in the package). Keys are sorted and the
file ends in a newline, so the same report gives the same bytes. Non-finite
floats (a suite's NaN metric) are written as `null`: bare `NaN` is not JSON.
What a submission printed, raised or named is made visible first
(`controls.visible_in`), as in every report: a tool that prints a field of this
file prints no escape sequence, direction mark or zero-width character.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

from grader import atomic
from grader.model import Report
from grader.reports import controls

SCHEMA_FILE = "results.schema.json"


def _finite(doc: Any) -> Any:
    if isinstance(doc, float) and not math.isfinite(doc):
        return None
    if isinstance(doc, dict):
        return {k: _finite(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_finite(v) for v in doc]
    return doc


def document(report: Report) -> dict[str, Any]:
    """The JSON document (plain dicts and lists) for `report`."""
    doc: dict[str, Any] = _finite(controls.visible_in(report).to_json())
    return doc


def render(report: Report) -> str:
    """The document as text: sorted keys, indent 2, trailing newline."""
    return (
        json.dumps(document(report), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
        + "\n"
    )


def write(report: Report, path: str | Path) -> Path:
    """Write the results JSON to `path` (UTF-8); returns the path."""
    target = Path(path)
    atomic.write_text(target, render(report))
    return target


def schema() -> dict[str, Any]:
    """The JSON Schema of the document (schema_version 1)."""
    text = resources.files("grader").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded
