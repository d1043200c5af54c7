"""One shape for every failed check: what was checked, expected vs observed,
the likely cause, the fix.

Every check kind raises `CheckFailure`; the runner turns its fields into the
message students read, so every failure in every report reads the same way.
The fix travels apart from the message (`Finding.message()` leaves it out):
it is the last level of a check's help, shown only when the course allows it
(`grader.hints`). `str()` of a failure still reads in full, fix included, for
whoever debugs a suite.

It lives in the protocol layer (it depends on nothing) so that the sandbox's client
(`grader.sandbox.client.require_observable`) can raise it without reaching up into
`grader.checks`. What suites and check kinds call to fail a check, `fail`, is
`grader.checks.failure`'s (its one home), which re-exports these very objects.
"""

from __future__ import annotations

from dataclasses import dataclass

CAUSE_LABEL = "likely cause:"
FIX_LABEL = "fix:"


@dataclass(frozen=True)
class Finding:
    checked: str
    expected: str
    observed: str
    cause: str = ""
    fix: str = ""
    where: tuple[str, int, str] | None = None  # the student's line it points at: (path, line, code)

    def message(self) -> str:
        """What students read with the failure: checked, expected, observed, likely cause."""
        lines = [self.checked, f"  expected: {self.expected}", f"  observed: {self.observed}"]
        if self.cause:
            lines.append(f"  {CAUSE_LABEL} {self.cause}")
        return "\n".join(lines)

    def render(self) -> str:
        """The message and the fix: the whole finding, as `str()` of the failure shows it."""
        return self.message() + (f"\n  {FIX_LABEL} {self.fix}" if self.fix else "")


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
        where: tuple[str, int, str] | None = None,
    ) -> None:
        self.finding = Finding(checked, expected, observed, cause, fix, where)
        super().__init__(self.finding.render())

    @classmethod
    def of(cls, finding: Finding) -> CheckFailure:
        """The failure that carries `finding` (one made with `dataclasses.replace`, say)."""
        return cls(
            finding.checked,
            expected=finding.expected,
            observed=finding.observed,
            cause=finding.cause,
            fix=finding.fix,
            where=finding.where,
        )
