"""Calling a student's function the way a check needs: static arguments bound,
JAX's exceptions turned into `CheckFailure`s, the student's own line found.

Two sides. In the sandbox, probes use `split_static` and `attempt` (an exception
becomes data, `ErrorInfo`): those live in `grader.probes._calls`, re-exported here. In
the judge, `observed` turns such an error back into the check's failure (`translate`),
letting a stub's NotImplementedError through so the report says "not attempted".

Public: the check kinds and the suites use it (`observed` for a probe a suite runs itself,
`first_line` and `student_line` to quote a student's exception, `PASS_THROUGH`).
"""

from __future__ import annotations

import os
from typing import Any

from grader.checks.failure import CheckFailure
from grader.explain import explain, student_frame
from grader.probes._calls import attempt, dynamic_layout, name_of, ready, split_static
from grader.sandbox.client import Remote, SandboxGone, StudentError

__all__ = [
    "PASS_THROUGH",
    "attempt",
    "dynamic_layout",
    "first_line",
    "name_of",
    "observed",
    "ready",
    "split_static",
    "student_line",
    "translate",
    "type_name",
]


def type_name(fn: Any) -> str:
    """The type of the student's object (a handle knows the type it stands for)."""
    return fn._type if isinstance(fn, Remote) else type(fn).__name__


def student_line(exc: BaseException) -> str:
    """`"03_jit.py, line 14: if x > 0:"` for the innermost frame outside JAX, Python and
    the grader, following chained exceptions; "" if there is none."""
    frame = student_frame(exc)
    return f"{os.path.basename(frame[0])}, line {frame[1]}: {frame[2]}" if frame else ""


def first_line(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else ""
    return line if len(line) <= limit else line[:limit] + " [...]"


def error_of(call: Any) -> tuple[str, str] | None:
    """(the type, the first line) of what `call()` raises, or None if it returns: for a
    cause confirmed by the very error a mistake applied to the reference raises (a dead
    sandbox is not an answer: `SandboxGone` goes on)."""
    try:
        call()
    except SandboxGone:
        raise
    except StudentError as exc:
        return exc.info.type, first_line(exc)
    except Exception as exc:
        return type(exc).__name__, first_line(exc)
    return None


def translate(exc: BaseException, *, checked: str, attempted: str, expected: str) -> CheckFailure:
    """A CheckFailure for an exception JAX (or the student's code) raised while `attempted`
    ran, with the cause and the fix from `grader.explain` when the exception is known."""
    __tracebackhide__ = True
    where = student_line(exc)
    kind = exc.info.type if isinstance(exc, StudentError) else type(exc).__name__
    observed = f"{attempted} raised {kind}: {first_line(exc)}"
    if where:
        observed += f"\n    at {where}"
    explained = explain(exc)
    cause, fix = (explained.cause, explained.fix) if explained else ("", "")
    return CheckFailure(checked, expected=expected, observed=observed, cause=cause, fix=fix)


PASS_THROUGH: tuple[type[BaseException], ...] = (NotImplementedError, CheckFailure, MemoryError)
"""Exceptions a check lets propagate: the plugin reports a stub as not attempted."""


# -- the judge's side of a probe ---------------------------------------------------


def observed(value: Any, *, checked: str, attempted: str, expected: str) -> Any:
    """In the judge: a probe's observation, or its error raised as the check's failure
    (a stub's NotImplementedError and a MemoryError pass through unchanged)."""
    __tracebackhide__ = True
    if isinstance(value, StudentError):
        if isinstance(value, PASS_THROUGH):
            raise value
        raise translate(value, checked=checked, attempted=attempted, expected=expected) from value
    return value
