"""Why a lesson file was not graded on its merits, read from its results.

A file that ends `error` or `not_attempted` did not earn its points for one of several
reasons, and the instructor acts differently on each: ask for a smaller file, for the
file itself instead of a link, for a file saved as UTF-8, for a fix of a syntax error,
for any work at all; or regrade (the grader's fault); or read the student's crash. The
results JSON says which in words its producers own (`submission.over_limit`,
`submission.refuse_link`, `grader.sandbox.decoding` through the import message, the
runner's `NOT_GRADED` messages, check statuses); this module names the cause from them,
for the class summary and the terminal of `grade batch`.

    oversize        over the size limit: not graded at all
    symlink         a link, not followed
    encoding        bytes Python does not read as source (not UTF-8 and not declared,
                    an unknown encoding, NUL bytes)
    syntax          Python could not parse it
    not attempted   no file, or its functions still raise NotImplementedError
    grader error    the grader's own failure: no points counted, regrade
    timeout         the student's code ran out of time
    crashed         the student's code raised, exited or ran out of memory

`of_exercise` is None for a file graded on its merits (passed, failed, skipped).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

Cause = Literal[
    "oversize",
    "symlink",
    "encoding",
    "syntax",
    "not attempted",
    "grader error",
    "timeout",
    "crashed",
]
CAUSES: tuple[Cause, ...] = (
    "oversize",
    "symlink",
    "encoding",
    "syntax",
    "not attempted",
    "grader error",
    "timeout",
    "crashed",
)
NOT_GRADED: tuple[Cause, ...] = CAUSES[:6]
"""The causes that kept a file from being graded (the others: the student's code ran)."""

WORDS: dict[Cause, str] = {
    "oversize": "oversize, not graded",
    "symlink": "symlink, not followed",
    "encoding": "encoding Python cannot read",
    "syntax": "syntax error",
    "not attempted": "not attempted",
    "grader error": "grader error, not the student's: regrade",
    "timeout": "ran out of time",
    "crashed": "crashed",
}
"""Each cause as the summary and the terminal say it."""

_OVERSIZE = re.compile(r"is [\d.]+ MB, over the [\d.]+ MB")
_SYMLINK = "is a symlink to"
_ENCODING = (
    "Non-UTF-8 code starting with",
    "encoding problem:",
    "(unicode error)",
    "cannot contain null bytes",
)
_SYNTAX = "has a syntax error"
_GRADER = ("not run: the grader", "grader error:")


def of_exercise(exercise: Mapping[str, Any]) -> Cause | None:
    """Why the lesson file whose results entry (results JSON) is `exercise` was not graded
    on its merits; None when it was."""
    status = exercise.get("status")
    message = str(exercise.get("message") or "")
    checks = [c for c in exercise.get("checks") or () if isinstance(c, Mapping)]
    said = [str(c.get("message") or "") for c in checks]
    if status == "not_attempted":
        return "not attempted"
    if status != "error":
        return None
    if any(m.startswith(_GRADER) for m in said) or message.startswith(_GRADER):
        return "grader error"
    if _SYMLINK in message:
        return "symlink"
    if _OVERSIZE.search(message):
        return "oversize"
    if _SYNTAX in message:
        return "encoding" if any(p in message for p in _ENCODING) else "syntax"
    if any(c.get("status") == "timeout" for c in checks):
        return "timeout"
    return "crashed"


def of_student(doc: Mapping[str, Any] | None) -> dict[str, Cause]:
    """Lesson file -> why it was not graded on its merits, for a student's results JSON
    (`doc`); None (the grader could not grade them at all): `{"": "grader error"}`."""
    if doc is None:
        return {"": "grader error"}
    found: dict[str, Cause] = {}
    for exercise in doc.get("exercises") or ():
        cause = of_exercise(exercise)
        if cause is not None:
            found[str(exercise.get("name", ""))] = cause
    return found


def line(found: Mapping[str, Cause]) -> str:
    """`03_jit oversize, not graded; 06_random syntax error`: the causes of one student,
    in lesson order, for one line of the terminal ("" when none)."""
    return "; ".join(
        (f"{lesson} {WORDS[cause]}" if lesson else WORDS[cause]) for lesson, cause in found.items()
    )


def grouped(found: Mapping[str, Cause]) -> list[str]:
    """`syntax error: 03_jit, 06_random`: one text per cause, in CAUSES order."""
    by_cause: dict[Cause, list[str]] = {}
    for lesson, cause in found.items():
        by_cause.setdefault(cause, []).append(lesson)
    return [
        WORDS[c] + (": " + ", ".join(n for n in by_cause[c] if n) if any(by_cause[c]) else "")
        for c in CAUSES
        if c in by_cause
    ]


def counts(students: Iterable[Mapping[str, Cause]]) -> dict[Cause, int]:
    """How many lesson files of the class each cause kept from being graded on their merits."""
    total: dict[Cause, int] = {}
    for found in students:
        for cause in found.values():
            total[cause] = total.get(cause, 0) + 1
    return {c: total[c] for c in CAUSES if c in total}
