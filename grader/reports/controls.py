"""Control characters in what a submission produced, made visible.

A student's program may print, raise or name anything: ANSI colours
(`ESC[31m`), an OSC sequence that retitles the terminal or hides a hyperlink
(`ESC]8;;...BEL`), a carriage return or backspaces that overwrite the line the
grader printed, a bell, NUL. The reports show that text with every control
character replaced by a visible stand-in, so nothing a submission wrote can
move the cursor, recolour or rewrite a report, and the student sees what was
there:

    C0 controls and DEL       their Unicode control pictures: ␛[31m, ␍, ␈, ␀, ␡
    C1 controls (U+0080-009F) `\\x9b` (they have no pictures)
    bidirectional overrides   `\\u202e` (they reorder how a line reads)

Newline and tab are kept, and a Windows line ending (CR LF) is a newline.
`visible_in` applies this to every string of a (frozen) result model, so a
report made from its output needs no care field by field; the reports' own
colours are added afterwards.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar, cast

T = TypeVar("T")

_KEPT = ("\n", "\t")
_PICTURES = {code: chr(0x2400 + code) for code in range(0x20)} | {0x7F: "\u2421"}
_C1 = {code: f"\\x{code:02x}" for code in range(0x80, 0xA0)}
_BIDI = {code: f"\\u{code:04x}" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
_TABLE: dict[int, str] = {
    code: text for code, text in (_PICTURES | _C1 | _BIDI).items() if chr(code) not in _KEPT
}


def visible(text: str) -> str:
    """`text` with every control character but newline and tab shown as a stand-in."""
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
