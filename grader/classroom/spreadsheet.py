"""CSV cells a spreadsheet opens as text, never as a formula.

A student names their own folder, so a name such as `=HYPERLINK("http://...")`
or `@SUM(A1)` would run as a formula in Excel, LibreOffice or Google Sheets
when an instructor opens the gradebook (CSV injection). Every text cell we
write goes through `cell`:

    starts with =, +, -, @, tab or carriage return   prefixed with `'` (the OWASP rule)
    the same after a `;` or `,` inside it            `'` put before it too (see below)
    control characters (tab and newlines included)   their visible stand-ins (␉, ␊, ␛)
    bidi, zero-width and line-separator characters   `\\u200b` and the like

Numbers we compute are written as they are: they never start with one of those.

`csv_text` quotes every cell holding a separator a spreadsheet may split on, not
only the comma: in a locale whose list separator is `;` (German, French, ...)
Excel and LibreOffice split an unquoted `x;=cmd|' /C calc'!A0` into `x` and a
cell that starts with `=`, a formula again. Quoting is not enough for a cell
after the first: such a reader sees no field start at its opening quote, so a
formula start right after a separator inside a cell is prefixed as well.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from grader.reports import controls

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_AFTER_SEPARATOR = re.compile(r'([;,][\s"]*)(?=[=+\-@])')  # `x;=cmd`: `=cmd` once split
QUOTED = frozenset(',;"\t\r\n')  # a cell holding one of these is quoted
_LINES = {ord("\n"): "\u240a", ord("\t"): "\u2409"}
# Invisible in a cell, yet they change what it reads as or where a line ends.
_INVISIBLE = {
    code: f"\\u{code:04x}"
    for code in (0x061C, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2028, 0x2029, 0xFEFF)
}


def cell(text: str) -> str:
    """`text` safe to open in a spreadsheet."""
    shown = controls.visible(text.replace("\r\n", "\r")).translate(_LINES | _INVISIBLE)
    shown = _AFTER_SEPARATOR.sub(r"\1'", shown)
    return f"'{shown}" if text.startswith(FORMULA_START) else shown


def quoted(text: str) -> str:
    """`text` as one CSV field: in double quotes (its own doubled) when it holds a separator."""
    if QUOTED.isdisjoint(text):
        return text
    return '"' + text.replace('"', '""') + '"'


def csv_text(rows: Iterable[Sequence[str]]) -> str:
    """Rows of cells (already safe) as CSV text, one line per row (RFC 4180 quoting, with
    `;` and tab quoted too)."""
    return "".join(",".join(quoted(c) for c in row) + "\n" for row in rows)
