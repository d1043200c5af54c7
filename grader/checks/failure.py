"""One shape for every failed check: what was checked, expected vs observed,
the likely cause, the fix.

Every check kind raises `CheckFailure`; the runner turns its fields into the
message students read, so every failure in every report reads the same way.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    checked: str
    expected: str
    observed: str
    cause: str = ""
    fix: str = ""

    def render(self) -> str:
        lines = [self.checked, f"  expected: {self.expected}", f"  observed: {self.observed}"]
        if self.cause:
            lines.append(f"  likely cause: {self.cause}")
        if self.fix:
            lines.append(f"  fix: {self.fix}")
        return "\n".join(lines)


class CheckFailure(AssertionError):
    """A submission did not meet a check. Raised by every check kind."""

    __slots__ = ("finding",)

    def __init__(
        self,
        checked: str,
        *,
        expected: str,
        observed: str,
        cause: str = "",
        fix: str = "",
    ) -> None:
        self.finding = Finding(checked, expected, observed, cause, fix)
        super().__init__(self.finding.render())


def fail(
    checked: str, *, expected: str, observed: str, cause: str = "", fix: str = ""
) -> CheckFailure:
    """Build the failure (to `raise fail(...)`), keeping the call site one line."""
    __tracebackhide__ = True
    return CheckFailure(checked, expected=expected, observed=observed, cause=cause, fix=fix)
