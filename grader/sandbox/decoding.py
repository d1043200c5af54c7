"""A lesson file's text, decoded the way `python3 lesson.py` decodes it (PEP 263).

A file is UTF-8 unless its first or second line declares another encoding
(`# -*- coding: latin-1 -*-`); a UTF-8 byte order mark says UTF-8 too. Bytes the
encoding cannot decode make the file unreadable to Python: `python3 03_jit.py` stops
with `SyntaxError: Non-UTF-8 code starting with '\\xe9' in file 03_jit.py on line 1,
but no encoding declared; see https://peps.python.org/pep-0263/ for details`.

`compile(bytes)` and the import system's loaders do not say so: they accept such a byte in
a comment (CPython 3.11), so a file its author cannot run was graded. `text` raises the
SyntaxError Python's own file reader raises, with its message, before anything is compiled.
"""

from __future__ import annotations

import codecs
import re

PEP_263 = "https://peps.python.org/pep-0263/"
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")  # as `tokenize.cookie_re`
_BLANK = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")  # a line that lets the next one declare


def declared(data: bytes) -> str | None:
    """The encoding the first two lines of `data` declare (as written), None when none does."""
    lines = data.removeprefix(codecs.BOM_UTF8).splitlines(keepends=True)[:2]
    for line in lines:
        found = _COOKIE.match(line)
        if found:
            return found.group(1).decode("ascii")
        if not _BLANK.match(line):
            return None
    return None


def text(data: bytes, filename: str) -> str:
    """The source in `data` (the file `filename`, named in messages) as Python reads it:
    decoded with the encoding it declares (UTF-8 when none), line endings made `\\n`.
    SyntaxError with Python's message when it cannot be decoded."""
    bom = data.startswith(codecs.BOM_UTF8)
    name = declared(data)
    encoding = "utf-8"
    if name is not None:
        try:
            encoding = codecs.lookup(name).name
        except LookupError:
            raise _error(f"encoding problem: {name}", filename, 1) from None
        if bom and encoding != "utf-8":
            raise _error(f"encoding problem: {name} with BOM", filename, 1)
    body = data[len(codecs.BOM_UTF8) :] if bom else data
    try:
        decoded = body.decode(encoding)
    except UnicodeDecodeError as exc:
        line = body.count(b"\n", 0, exc.start) + 1
        byte = body[exc.start]
        if name is None:
            message = (
                f"Non-UTF-8 code starting with '\\x{byte:02x}' in file {filename} on line "
                f"{line}, but no encoding declared; see {PEP_263} for details"
            )
        else:
            message = (
                f"(unicode error) '{encoding}' codec can't decode byte 0x{byte:02x} on line "
                f"{line}: {exc.reason}; the file declares the encoding {name}"
            )
        raise _error(message, filename, line) from None
    if "\x00" in decoded:  # CPython 3.11.2's compile raises ValueError here, later ones this
        line = decoded.count("\n", 0, decoded.index("\x00")) + 1
        raise _error("source code string cannot contain null bytes", filename, line)
    return decoded.replace("\r\n", "\n").replace("\r", "\n")


def _error(message: str, filename: str, line: int) -> SyntaxError:
    return SyntaxError(message, (filename, line, 0, None))


__all__ = ["PEP_263", "declared", "text"]
