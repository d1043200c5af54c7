"""Whose exception a check raised: the student's code, or the suite's own (a grader error).

Student code runs only in the sandbox. What it raises reaches the judge as a `StudentError`
(with the student's line), what stops it as a `SandboxGone` or `NotCalled`: any of them in
an exception's chain makes it the student's. Any other exception was raised in the judge,
by the suite, the grader or a library the suite called (its traceback holds no student
frame: none can be there). It is the suite's when nothing the student's code gave had
reached the judge during the check yet (`answered` false: a `1 / 0`, a Hypothesis strategy
the suite declared wrong, both before the student is called), or when nothing the student
gave could raise it at all (`SUITE_ONLY`: a name the suite misspelt, a module it could not
import, a strategy Hypothesis refuses, a misused pytest). After an answer, any other
exception may be the suite working on what the student returned (`None` where an array was
due): it stays the student's, so that no answer of the student's can turn a
check into one that counts no points.

`suite_line` finds the suite's line: the innermost frame of the suite's file in the
exception's traceback (for a Hypothesis test, the test's own line), else the check's.
"""

from __future__ import annotations

import os

import pytest

from grader.sandbox.client import NotCalled, SandboxGone, StudentError

_STUDENTS = (StudentError, SandboxGone, NotCalled)


def _suite_only() -> tuple[type[BaseException], ...]:
    """Exceptions no value of the student's can make suite code raise."""
    kinds: list[type[BaseException]] = [NameError, ImportError, SyntaxError, pytest.UsageError]
    try:
        from hypothesis.errors import InvalidArgument
    except ImportError:  # pragma: no cover - hypothesis is a dependency
        return tuple(kinds)
    return (*kinds, InvalidArgument)


def chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from or while handling, each once."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not e for e in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def is_suites(exc: BaseException, *, answered: bool) -> bool:
    """Whether `exc`, which a check raised, is the suite's (or the grader's) rather than the
    student's: see the module's docstring. `answered`: something the student's code gave
    reached the judge during the check."""
    if not isinstance(exc, Exception) or isinstance(exc, (AssertionError, MemoryError)):
        return False  # a failed assertion is a verdict; memory is the machine's and the code's
    if any(isinstance(e, _STUDENTS) for e in chain(exc)):
        return False
    return not answered or isinstance(exc, _suite_only())


def suite_line(exc: BaseException, suite: str, fallback: int) -> int:
    """The line of the suite file `suite` that `exc` was raised at (the innermost frame of
    that file in its traceback, or a syntax error's own line), else `fallback`."""
    target = os.path.realpath(suite)
    for current in chain(exc):
        if (
            isinstance(current, SyntaxError)
            and current.filename
            and current.lineno
            and os.path.realpath(current.filename) == target
        ):
            return current.lineno
        found = 0
        tb = current.__traceback__
        while tb is not None:
            if os.path.realpath(tb.tb_frame.f_code.co_filename) == target:
                found = tb.tb_lineno
            tb = tb.tb_next
        if found:
            return found
    return fallback
