"""The output-safety layer: what a submission produced, made visible and inert in every sink.

A student's program may print, raise or name anything: ANSI colours
(`ESC[31m`), an OSC sequence that retitles the terminal or hides a hyperlink
(`ESC]8;;...BEL`), a carriage return or backspaces that overwrite the line the
grader printed, a bell, NUL; direction marks that make a line read in another
order than it is stored; zero-width characters that hide text or make two
different names look the same; line separators that break a line where no
newline is. A submission's folder and file names can hold the same. The
reports show that text with each such character replaced by a visible
stand-in, so nothing a submission wrote can move the cursor, recolour, reorder
or rewrite a report, and the student sees what was there:

    C0 controls and DEL          their Unicode control pictures: ␛[31m, ␍, ␈, ␀, ␡
    C1 controls (U+0080-009F)    `\\x9b` (they have no pictures)
    bidirectional controls       `\\u202e`: U+202A-202E, U+2066-2069, U+200E/200F, U+061C
    zero-width and invisible     `\\u200b`: U+200B-200D, U+2060-2064, U+FEFF, U+00AD, U+180E,
                                 U+206A-206F, U+FFF9-FFFB, tags U+E0000-E007F (`\\U000e0041`)
    line/paragraph separators    `\\u2028`, `\\u2029`

Newline and tab are kept, and a Windows line ending (CR LF) is a newline.
`visible_in` applies this to every string of a (frozen) result model, so a
report made from its output needs no care field by field; the reports' own
colours are added afterwards. Every sink passes through here:

    the terminal      `terminal.render`/`done_line`/`progress_line`, `console.Progress`,
                      `grade hint`, `grade watch`'s screen
    the HTML report   `html.environment`'s finalize (every `{{ ... }}`), then autoescape
    our results JSON  `results.document`
    Gradescope JSON   `gradescope.document`
    JUnit XML         `junit._xml_text`
    CSV               `csv_cell` (also neutralises formulas)

`tests/reports/test_sinks.py` sends a list of hostile strings through each.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TypeVar, cast

T = TypeVar("T")

_KEPT = ("\n", "\t")
_PICTURES = {code: chr(0x2400 + code) for code in range(0x20)} | {0x7F: "\u2421"}
_C1 = {code: f"\\x{code:02x}" for code in range(0x80, 0xA0)}
BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)
INVISIBLE = (
    *range(0x200B, 0x200E),  # zero-width space, non-joiner, joiner
    *range(0x2060, 0x2065),  # word joiner, invisible operators
    *range(0x206A, 0x2070),  # deprecated format characters
    0xFEFF,  # zero-width no-break space (byte order mark)
    0x00AD,  # soft hyphen
    0x180E,  # Mongolian vowel separator
    *range(0xFFF9, 0xFFFC),  # interlinear annotation
    *range(0xE0000, 0xE0080),  # tags: invisible copies of ASCII
)
SEPARATORS = (0x2028, 0x2029)


def _escape(code: int) -> str:
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


_TABLE: dict[int, str] = {
    code: text
    for code, text in (
        _PICTURES | _C1 | {code: _escape(code) for code in (*BIDI, *INVISIBLE, *SEPARATORS)}
    ).items()
    if chr(code) not in _KEPT
}
# Every character `visible` replaces: for tests and for sinks that check what is left.
UNSAFE = re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(_TABLE)) + "]")


def visible(text: str) -> str:
    """`text` with every control, direction, invisible and separator character but
    newline and tab shown as a stand-in."""
    return text.replace("\r\n", "\n").translate(_TABLE)


def visible_in(value: T) -> T:
    """`value` with `visible` applied to every string in it.

    `value` is a string, a tuple, or a dataclass of the result model (made of
    those); other values (numbers, bytes, None) are returned as they are.
    """
    if isinstance(value, str):
        return cast(T, visible(value))
    if isinstance(value, tuple):
        return cast(T, tuple(visible_in(item) for item in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: visible_in(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init
        }
        return cast(T, dataclasses.replace(value, **changes))
    return value


# What a spreadsheet reads as a formula when a cell starts with it (OWASP's "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def csv_cell(text: str) -> str:
    """`text` as a CSV cell no spreadsheet evaluates, its characters made visible.

    A cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula
    to Excel, LibreOffice and Google Sheets (`=HYPERLINK(...)`, `@SUM(...)`, `-2+3`):
    it gets a leading `'`, which they show as text. A plain number (`-1.5`) is left
    as it is. Write the cells with the `csv` module, which quotes what needs it.
    """
    if text.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text):
        text = "'" + text
    return visible(text)
