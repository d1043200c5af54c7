"""One lesson file's judging: its sandbox session, its records, the checks collected, each
check's outcome, and what the next judge of the file must know (`records.Unrun`).

Each check's own state (its outcome, partial credit, attachments, start time) is in its
item's stash; the judge keeps only the file's: the collected checks by id (the gates look
their outcomes up there) and the checks its stopped sandbox could not run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

import pytest

from grader.authoring import Attachments, Credit
from grader.plugin import blame, gates, wording
from grader.plugin.options import Options
from grader.plugin.outcomes import PASSED, Context, Outcome, classify, skipped, with_credit
from grader.plugin.sandbox_session import (
    SandboxNotStarted,
    SandboxSession,
    lesson_of,
    notebook_step,
)
from grader.protocol import records
from grader.sandbox import client, probes
from grader.sandbox.client import SandboxGone

OUTCOME = pytest.StashKey[Outcome]()
CREDIT = pytest.StashKey[Credit]()
ATTACHMENTS = pytest.StashKey[Attachments]()
STARTED = pytest.StashKey[float]()
ANSWERS = pytest.StashKey[int]()  # the sandbox's answers before the check began
REACHED = pytest.StashKey[client.Reached]()  # what of the module the check reached
GATES = pytest.StashKey[list[str]]()  # the checks it asked to have passed


class Judge:
    """The judge of the lesson file `options` name; records go where they say."""

    def __init__(self, options: Options) -> None:
        self.options = options
        fd, path = options.records_fd, options.records_path
        self._writer = records.Writer(fd) if fd is not None else None
        if self._writer is None and path:
            self._writer = records.Writer.to_path(path)
        self.session = SandboxSession(
            lesson=options.lesson,
            lesson_dir=options.lesson_dir,
            level=options.level,
            sandboxes=options.sandboxes,
            stopped=options.stopped,
        )
        self._collected: dict[str, pytest.Item] = {}  # check id -> its item
        self._unrun: list[str] = []  # checks not run: the sandbox had stopped
        self._waiting: set[str] = set()  # checks a gate closed on one of those
        self._stopped_by: list[str] = []  # the student functions running when it stopped
        self._retried: list[str] = []  # checks whose sandbox a signal from outside ended

    def emit(self, record: records.Record) -> None:
        if self._writer is not None:
            self._writer.emit(record)

    def start_sandbox(self, args: Sequence[str]) -> None:
        """Fork the sandbox (for a notebook: it runs the notebook first) and record what
        the notebook showed."""
        probes.load_all()  # the sandbox is a fork: what it may run must be loaded first
        lesson, timeout_s = self.options.lesson, self.options.timeout_s
        step = notebook_step(lesson, args, timeout_s) if self.options.notebook and lesson else None
        fds = (self._writer.fd,) if self._writer is not None else ()
        self.session.start(timeout_s, step, close_fds=fds)
        if step is not None:
            self.session.record_notebook(self._writer)

    def collect(self, items: list[pytest.Item]) -> None:
        """Order the checks (required ones first), keep those this judge runs, record them
        and the lesson's import (none runs when it failed)."""
        items[:] = gates.requirements_first(items)
        self._collected = {item.name: item for item in items}
        only = self.options.earlier.only
        if only:  # a rerun: the checks an earlier judge of this file could not run
            items[:] = [item for item in items if item.name in only]
        self.emit(records.Collected(tuple(item.name for item in items)))
        if self._writer is None or not items:
            return
        lesson = lesson_of(items[0])
        session = self.session
        exc = session.import_error() if lesson == session.lesson else FileNotFoundError(lesson)
        if exc is None:
            self.emit(records.Import(lesson, ok=True))
            return
        items[:] = []
        grader = isinstance(exc, SandboxNotStarted)  # nothing of the student's ran
        said = wording.not_started(lesson, exc) if grader else wording.import_message(lesson, exc)
        location = wording.error_location(exc)
        message = session.scrub(said)
        self.emit(
            records.Import(
                lesson, ok=False, message=message, location=location, grader_error=grader
            )
        )

    def require(self, item: pytest.Item, check_ids: Sequence[str]) -> None:
        """Raise `GateClosed` unless every collected one of `check_ids` passed in full.

        A required check this run did not collect (a released suite cut it out, `-k`
        deselected it) does not close the gate."""
        __tracebackhide__ = True
        asked = item.stash.setdefault(GATES, [])
        asked.extend(i for i in check_ids if i not in asked)
        for required in check_ids:
            checked = self._collected.get(required)
            if checked is None:
                continue
            outcome = checked.stash.get(OUTCOME, None)
            earlier = self.options.earlier
            closed = gates.closed_by(required, gates.check_name(checked), outcome, earlier)
            if closed is None:
                continue
            if outcome is not None and required in self._unrun:  # rerun with it, when it is
                self._waiting.add(item.name)
            raise closed

    def credit(self, item: pytest.Item) -> Credit:
        return item.stash.setdefault(CREDIT, Credit())

    def attachments(self, item: pytest.Item) -> Attachments:
        return item.stash.setdefault(ATTACHMENTS, Attachments())

    def begin(self, item: pytest.Item) -> None:
        """A check starts: recorded, and given its share of the file's time."""
        item.stash[STARTED] = time.perf_counter()
        item.stash[ANSWERS] = self._answers()
        channel = self.session.channel
        if channel is not None:
            item.stash[REACHED] = channel.reach()
        self.emit(records.Start(item.name))
        self.session.share_time(self.options.check_share_s)

    def report(self, item: pytest.Item, call: pytest.CallInfo[None]) -> None:
        """One phase of a check ended: its first failing phase decides its outcome."""
        outcome = item.stash.get(OUTCOME, PASSED)
        if call.excinfo is not None and outcome.status == "passed":
            exc = call.excinfo.value
            if call.excinfo.errisinstance(pytest.skip.Exception):
                outcome = skipped(exc)
            else:
                options = self.options
                context = Context.of(
                    self.session.channel,
                    options.check_share_s,
                    options.lesson_dir,
                    (str(item.path), _line_of(item), self._answered(item)),
                )
                outcome = classify(exc, call.when, context)
                self._note_stop(item.name, exc)
        if call.when == "call":
            outcome = with_credit(outcome, item.stash.get(CREDIT, None))
        item.stash[OUTCOME] = outcome

    def _answers(self) -> int:
        channel = self.session.channel
        return channel.answers if channel is not None else 0

    def _answered(self, item: pytest.Item) -> bool:
        """Whether something the student's code gave reached the judge during `item`."""
        return self._answers() > item.stash.get(ANSWERS, 0)

    def suite_not_loaded(self, path: str, exc: BaseException) -> None:
        """The suite at `path` could not be imported or collected: a grader error, no check
        of it counts (`records.SuiteError`, `grader_error`)."""
        line = blame.suite_line(exc, path, 0)
        wrapped = isinstance(exc, pytest.Collector.CollectError) and exc.__cause__ is not None
        cause = exc.__cause__ if wrapped and exc.__cause__ is not None else exc
        message = wording.suite_not_loaded(
            type(cause).__name__, cause, os.path.basename(path), line
        )
        self.emit(records.SuiteError(self.session.scrub(message)))

    def _note_stop(self, check_id: str, exc: BaseException) -> None:
        """Remember a check the stopped sandbox could not run, and what stopped it."""
        if not isinstance(exc, SandboxGone):
            return
        if str(exc).startswith(client.ALREADY_GONE):
            self._unrun.append(check_id)
            return
        box = self.session.sandbox
        once = check_id not in self.options.retried
        if once and box is not None and box.outside_signal() is not None:
            # not the judge's signal, and maybe not the student's: once more, on a fresh sandbox
            self._unrun.append(check_id)
            self._retried.append(check_id)
            return
        channel = self.session.channel
        function = channel.lost_in if channel is not None else ""
        if function and function not in self._stopped_by:
            self._stopped_by.append(function)

    def finish(self, item: pytest.Item) -> None:
        """A check ended: its result recorded, then what it attached."""
        outcome, scrub = item.stash.get(OUTCOME, PASSED), self.session.scrub
        started = item.stash.get(STARTED, None)
        reached = item.stash.get(REACHED, None)
        asked: list[str] = item.stash.get(GATES, [])
        self.emit(
            records.Uses(
                item.name,
                tuple(sorted(reached.names)) if reached is not None else (),
                tuple(asked),
                whole=reached is None or reached.whole,
            )
        )
        self.emit(
            records.Result(
                id=item.name,
                status=records.check_status(outcome.status),
                fraction=outcome.fraction,
                message=scrub(outcome.message),
                fix=scrub(outcome.fix),
                location=outcome.location,
                not_implemented=outcome.not_implemented,
                blocked_by=outcome.blocked_by,
                root_cause=scrub(outcome.root_cause) if outcome.root_cause else None,
                duration_s=time.perf_counter() - started if started is not None else 0.0,
                grader_error=outcome.grader_error,
            )
        )
        attachments = item.stash.get(ATTACHMENTS, None)
        if attachments is not None:
            for title, png in attachments.images:
                self.emit(records.Artifact(id=item.name, title=title, data=png))
            for metric, value in attachments.metrics:
                self.emit(records.Metric(id=item.name, name=metric, value=value))

    def done(self) -> None:
        """The file's last records: the checks to run again in a fresh sandbox, and why."""
        unrun = [*self._unrun, *sorted(self._waiting - set(self._unrun))]
        if unrun:
            retried = (*self.options.retried, *self._retried)
            self.emit(records.Unrun(tuple(unrun), tuple(self._stopped_by), retried))
        self.emit(records.Done())


def _line_of(item: pytest.Item) -> int:
    """The line of the check's function in its suite (1-based), or 0."""
    _, line, _ = item.reportinfo()
    return line + 1 if isinstance(line, int) else 0
