"""CSV cells a spreadsheet opens as text, never as a formula.

A student names their own folder, so a name such as `=HYPERLINK("http://...")`
or `@SUM(A1)` would run as a formula in Excel, LibreOffice or Google Sheets
when an instructor opens the gradebook (CSV injection). Every text cell we
write goes through `cell`:

    starts with =, +, -, @, tab or carriage return   prefixed with `'` (the OWASP rule)
    control characters (tab and newlines included)   their visible stand-ins (␉, ␊, ␛)
    bidi, zero-width and line-separator characters   `\\u200b` and the like

Numbers we compute are written as they are: they never start with one of those.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

from grader.reports import controls

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_LINES = {ord("\n"): "\u240a", ord("\t"): "\u2409"}
# Invisible in a cell, yet they change what it reads as or where a line ends.
_INVISIBLE = {
    code: f"\\u{code:04x}"
    for code in (0x061C, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2028, 0x2029, 0xFEFF)
}


def cell(text: str) -> str:
    """`text` safe to open in a spreadsheet."""
    shown = controls.visible(text.replace("\r\n", "\r")).translate(_LINES | _INVISIBLE)
    return f"'{shown}" if text.startswith(FORMULA_START) else shown


def csv_text(rows: Iterable[Sequence[str]]) -> str:
    """Rows of cells (already safe) as CSV text, one line per row."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows(rows)
    return buffer.getvalue()
