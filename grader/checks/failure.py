"""One shape for every failed check (what was checked, expected vs observed, the likely
cause, the fix): `grader.protocol.failure`, re-exported here for the check kinds, the
suites and the plugin. The objects are the same (`CheckFailure` is one class), so every
`except CheckFailure` and `isinstance` check holds whichever module it was imported from.
"""

from __future__ import annotations

from grader.protocol.failure import CAUSE_LABEL, FIX_LABEL, CheckFailure, Finding, fail

__all__ = ["CAUSE_LABEL", "FIX_LABEL", "CheckFailure", "Finding", "fail"]
