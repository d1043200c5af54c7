"""The text of the values a check shows: `grader.probes._format`, re-exported for the
check kinds (the probes report with it too, so it lives in the probe layer).

Private to the check kinds.
"""

from __future__ import annotations

from grader.probes._format import (
    LIMIT,
    as_produced,
    aval,
    call,
    counts,
    is_key,
    produced_dtype,
    show,
)

__all__ = ["LIMIT", "as_produced", "aval", "call", "counts", "is_key", "produced_dtype", "show"]
