"""Failing a check: `fail(...)` raises the one shape every failed check has (what was
checked, expected vs observed, the likely cause, the fix), as `pytest.fail` raises.

`fail` lives here, and only here. The exception itself, `CheckFailure`, and its `Finding`
are the protocol's (`grader.protocol.failure`: the sandbox's client raises it too),
re-exported: every `except CheckFailure` holds whichever module it was imported from. Build
a `CheckFailure(...)` yourself only to keep it before raising it, or to raise it `from` an
exception (`raise CheckFailure(...) from exc`: the student's error it stands for).

Every check kind takes `cause=` and `fix=` and applies them the same way (`explained`): an
`assert_*` that builds no message from them itself declares the two keywords and is
decorated `@explainable`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Iterator
from typing import NoReturn, ParamSpec, TypeVar

from grader.protocol.failure import CAUSE_LABEL, FIX_LABEL, CheckFailure, Finding

__all__ = [
    "CAUSE_LABEL",
    "FIX_LABEL",
    "CheckFailure",
    "Finding",
    "explainable",
    "explained",
    "fail",
]

P = ParamSpec("P")
R = TypeVar("R")


def fail(
    checked: str,
    *,
    expected: str,
    observed: str,
    cause: str = "",
    fix: str = "",
    where: tuple[str, int, str] | None = None,
) -> NoReturn:
    """Fail the running check: raise its `CheckFailure` (one line at the call site). `where`:
    the student's line the failure points at, `(path, line, code)` (the report's "in your
    code:"), for a failure no exception of the student's stands behind."""
    __tracebackhide__ = True
    raise CheckFailure(
        checked, expected=expected, observed=observed, cause=cause, fix=fix, where=where
    )


@contextlib.contextmanager
def explained(cause: str = "", fix: str = "") -> Iterator[None]:
    """What every check kind does with its `cause=`/`fix=`: a suite that knows the exercise
    better than the generic text replaces the likely cause and the fix of any failure the
    check raises within (each where given). A subclass (a closed gate, a refused
    observation) says nothing of the code and is left as it is."""
    __tracebackhide__ = True
    try:
        yield
    except CheckFailure as failure:
        if not (cause or fix) or type(failure) is not CheckFailure:
            raise
        f = failure.finding
        replaced = dataclasses.replace(f, cause=cause or f.cause, fix=fix or f.fix)
        raise CheckFailure.of(replaced) from failure.__cause__


def explainable(check: Callable[P, R]) -> Callable[P, R]:
    """A check kind's `assert_*` whose `cause=`/`fix=` keywords (it declares them, and leaves
    them to this) replace the likely cause and fix of any failure it raises (`explained`)."""

    @functools.wraps(check)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        __tracebackhide__ = True
        with explained(str(kwargs.get("cause") or ""), str(kwargs.get("fix") or "")):
            return check(*args, **kwargs)

    return run
