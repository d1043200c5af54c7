"""How a check ended, as a frozen value: what the exception it raised (if any) means.

`classify` is a pure function of the exception, the phase it was raised in and what the
judge knew of its sandbox and its check then (`Context`); the sentences are
`grader.plugin.wording`'s. An exception that is the suite's own (`grader.plugin.blame`) is a
grader error: no points either way, no help shown, no gate closed.
A check's first failing phase decides its outcome; a passing call with partial credit
fails with the credit's fraction (`with_credit`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from grader.authoring import Credit
from grader.model import CheckStatus, SourceLine
from grader.plugin import blame, wording
from grader.plugin.gates import GateClosed
from grader.plugin.sandbox_session import WALL_PER_CPU_SHARE, LessonImportError
from grader.protocol.failure import CheckFailure
from grader.sandbox import client, quota
from grader.sandbox.client import SandboxGone, StudentError


@dataclass(frozen=True)
class Outcome:
    """A check's verdict as the judge records it (`grader.protocol.records.Result`)."""

    status: CheckStatus = "passed"
    fraction: float = 1.0
    message: str = ""
    fix: str = ""  # how to fix it: the last level of the check's help, sent apart
    location: SourceLine | None = None
    not_implemented: bool = False
    blocked_by: str | None = None
    root_cause: str | None = None
    refused: bool = False  # its observation got no credit (`client.ObservationRefused`)
    grader_error: bool = False  # the suite's own exception: no points counted either way

    @property
    def full_marks(self) -> bool:
        """Passed with every point: what a check standing on this one needs (its gate)."""
        return self.status == "passed" and self.fraction >= 1.0


PASSED = Outcome()


Check = tuple[str, int, bool]
"""A check as `Context.of` takes it: its suite's file, its line there, whether it was answered."""


@dataclass(frozen=True)
class Context:
    """What the judge knew of its sandbox when a check raised: the student function it
    was running when it stopped, where that code was when a time share ran out (the
    sandbox's stack, innermost first), each check's share of the file's time limit in
    seconds of computing, and the lesson folder (whose line is quoted); and of the check: its
    suite's file and the check's own line there, and whether anything the student's code
    gave reached the judge during it (`answered`; `grader.plugin.blame`)."""

    function: str = ""
    stuck: tuple[tuple[str, int, str], ...] = ()
    share_s: float = 0.0
    lesson_dir: str = ""
    suite: str = ""
    check_line: int = 0
    answered: bool = True

    @classmethod
    def of(
        cls,
        channel: client.Channel | None,
        share_s: float,
        lesson_dir: str,
        check: Check | None = None,
    ) -> Context:
        suite, line, answered = check if check is not None else ("", 0, True)
        if channel is None:
            return cls("", (), share_s, lesson_dir, suite, line, answered)
        return cls(channel.lost_in, channel.stuck, share_s, lesson_dir, suite, line, answered)

    @property
    def wall_s(self) -> float:
        """A check's share in wall time: a loaded machine slows its code without failing it."""
        return WALL_PER_CPU_SHARE * self.share_s


UNKNOWN = Context()
"""No sandbox known (a check's exception classified on its own)."""


def skipped(exc: BaseException) -> Outcome:
    """A check that called `pytest.skip` (no points either way)."""
    return Outcome(status="skipped", fraction=0.0, message=str(getattr(exc, "msg", exc)))


def classify(exc: BaseException, when: str, context: Context = UNKNOWN) -> Outcome:
    """The outcome of a check that raised `exc` in its phase `when` ("setup", "call",
    "teardown"): no points, the student's line when one is behind it."""
    failed: CheckStatus = "failed" if when == "call" else "error"
    base = Outcome(status="error", fraction=0.0, location=wording.error_location(exc))
    if isinstance(exc, LessonImportError):
        return replace(base, message=str(exc))
    if isinstance(exc, client.NotCalled):
        return replace(base, message=wording.not_called(exc.function))
    if isinstance(exc, SandboxGone):
        return _sandbox_gone(base, exc, context)
    if isinstance(exc, GateClosed):
        return replace(
            base,
            status="failed",
            message=str(exc),
            blocked_by=exc.required,
            not_implemented=exc.not_implemented,
        )
    if isinstance(exc, CheckFailure):
        return replace(
            base,
            status="failed",
            message=exc.finding.message(),
            fix=exc.finding.fix,
            root_cause=wording.student_root_cause(exc),
            refused=isinstance(exc, client.ObservationRefused),
        )
    if isinstance(exc, StudentError):
        return _student_error(base, exc, failed)
    if isinstance(exc, AssertionError):
        return replace(base, status="failed", message=wording.assertion(exc))
    if context.suite and blame.is_suites(exc, answered=context.answered):
        line = blame.suite_line(exc, context.suite, context.check_line)
        where = os.path.basename(context.suite)
        message = wording.suite_error(type(exc).__name__, exc, where, line)
        return replace(base, message=message, location=None, grader_error=True)
    message, fix = wording.raised(
        "the check, using what your code returned,", type(exc).__name__, exc
    )
    return replace(base, status=failed, message=message, fix=fix)


def with_credit(outcome: Outcome, credit: Credit | None) -> Outcome:
    """A passing check's outcome after the partial credit it awarded (if under full)."""
    if outcome.status != "passed" or credit is None or credit.fraction >= 1.0:
        return outcome
    return replace(
        outcome,
        status="failed",
        fraction=credit.fraction,
        message=credit.message,
        fix=credit.fix,
        root_cause=credit.root_cause,  # one cause of the student's behind every failed part
        location=credit.location,
    )


def _sandbox_gone(base: Outcome, exc: SandboxGone, context: Context) -> Outcome:
    """The sandbox had stopped before this check, or stopped during it: out of time (where
    its code was), over its write quota, unreadable, or ended."""
    text, called = str(exc), wording.called(context.function)
    if text.startswith(client.ALREADY_GONE):
        return replace(
            base, message=wording.not_run(text.removeprefix(client.ALREADY_GONE).lstrip(": "))
        )
    if text.startswith(quota.EXCEEDED):
        return replace(base, message=wording.wrote_too_much(called, exc))
    if text.startswith(client.PROTOCOL_BREAK):
        detail = text.removeprefix(client.PROTOCOL_BREAK).strip()
        return replace(base, message=wording.broke_protocol(called, detail))
    if not text.startswith(client.TIMED_OUT):
        return replace(base, message=wording.stopped(called, exc))
    share = text.startswith(client.CHECK_SHARE)
    limit = wording.time_limit(context.share_s, context.wall_s, share=share)
    location, where = base.location, ""
    if context.stuck:
        path, line, function = context.stuck[0]
        code = wording.source_line(os.path.join(context.lesson_dir, path), line)
        where = wording.stuck_at(path, line, function, code)
        location = SourceLine(path, line, code)
    message = wording.timed_out(called, limit, where, share=share)
    return replace(base, status="timeout", location=location, message=message)


def _student_error(base: Outcome, exc: StudentError, failed: CheckStatus) -> Outcome:
    """The student's code raised: a stub not written yet, out of memory, or a bug."""
    info = exc.info
    if info.is_a("NotImplementedError") and info.in_student:
        return replace(
            base,
            status="failed",
            not_implemented=True,
            message=wording.not_implemented(info.function),
        )
    if info.is_a("MemoryError") or "RESOURCE_EXHAUSTED" in info.message:
        return replace(base, message=wording.out_of_memory(info.type, exc))
    message, fix = wording.raised("your code", info.type, exc)
    return replace(
        base, status=failed, message=message, fix=fix, root_cause=wording.root_cause(exc)
    )
