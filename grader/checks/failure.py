"""Failing a check: `fail(...)` raises the one shape every failed check has (what was
checked, expected vs observed, the likely cause, the fix), as `pytest.fail` raises.

`fail` lives here, and only here. The exception itself, `CheckFailure`, and its `Finding`
are the protocol's (`grader.protocol.failure`: the sandbox's client raises it too),
re-exported: every `except CheckFailure` holds whichever module it was imported from. Build
a `CheckFailure(...)` yourself only to keep it before raising it, or to raise it `from` an
exception (`raise CheckFailure(...) from exc`: the student's error it stands for).
"""

from __future__ import annotations

from typing import NoReturn

from grader.protocol.failure import CAUSE_LABEL, FIX_LABEL, CheckFailure, Finding

__all__ = ["CAUSE_LABEL", "FIX_LABEL", "CheckFailure", "Finding", "fail"]


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
