"""CSV cells a spreadsheet opens as text, never as a formula.

A student names their own folder, so a name such as `=HYPERLINK("http://...")`
or `@SUM(A1)` would run as a formula in Excel, LibreOffice or Google Sheets
when an instructor opens the gradebook (CSV injection). Every text cell we
write goes through `cell`:

    starts with =, +, -, @, tab or carriage return   prefixed with `'` (the OWASP rule)
    control characters (tab and newlines included)   their visible stand-ins (␉, ␊, ␛)

Numbers we compute are written as they are: they never start with one of those.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

from grader.reports import controls

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_LINES = {ord("\n"): "\u240a", ord("\t"): "\u2409"}


def cell(text: str) -> str:
    """`text` safe to open in a spreadsheet."""
    shown = controls.visible(text.replace("\r\n", "\r")).translate(_LINES)
    return f"'{shown}" if text.startswith(FORMULA_START) else shown


def csv_text(rows: Iterable[Sequence[str]]) -> str:
    """Rows of cells (already safe) as CSV text, one line per row."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows(rows)
    return buffer.getvalue()
