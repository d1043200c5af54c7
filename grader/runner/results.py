"""Turn what a grading child left behind into an `ExerciseResult`.

The judge writes records (`grader.protocol.records`) to a pipe the worker
reads; the worker reports how the judge ended (`grader.protocol.worker_messages.Ended`).
Both come from the processes that graded student code, so nothing here is
trusted: every line goes through the protocol's validating decoder, unknown
checks are ignored, fractions clamped, and points always come from the catalog
(the suites' source), never from the child. A result holds all of a check's
help (hint, nudge, fix); what a student may see of it is decided afterwards,
in one place (`grader.hints.apply`).
"""

from __future__ import annotations

import signal
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from grader.catalog import CheckSpec, ExerciseSpec
from grader.model import (
    Artifact,
    CheckResult,
    CheckStatus,
    ExerciseResult,
    ExerciseStatus,
    SourceLine,
)
from grader.protocol import records as rec
from grader.protocol.worker_messages import Ended

NOT_GRADED = (
    "not run: the grader could not start the process that runs your code "
    "(a grader error, not yours: no points counted)"
)
"""Each check's message when the judge said the grader could not import the lesson file
(`rec.Import.grader_error`): the file's message says what the grader could not do."""


NOT_GRADED_FAULT = (
    "not run: the grader's own process was lost while grading this file "
    "(a grader error, not yours: no points counted)"
)
"""Each check's message when the grader failed the file itself on every try
(`Ending.grader_fault`, `grader.runner.engine.grader_fault`)."""

NOT_LOADED = (
    "not run: the grader's checks for this file could not be loaded "
    "(a grader error, not yours: no points counted)"
)
"""Each check's message when the suite failed to import or collect (`rec.SuiteError`): the
file's message says where."""


@dataclass(frozen=True)
class Ending:
    """How the grading child ended: the worker's reply, or why there is none."""

    ended: Ended = field(default_factory=Ended)
    timeout_s: float = 0.0
    lost: str = ""  # set when the worker itself died or stopped answering
    grader_fault: str = ""  # why the grader failed this file on every try (`engine.grader_fault`)
    attempts: int = 0  # tries the grader made when it failed this file itself


@dataclass
class _Parsed:
    """What the records say, keeping the first answer for each check."""

    known_ids: frozenset[str]
    collected: bool = False
    imported: rec.Import | None = None
    skipped: str | None = None
    suite_error: str | None = None
    started: list[str] = field(default_factory=list)
    results: dict[str, rec.Result] = field(default_factory=dict)
    artifacts: list[Artifact] = field(default_factory=list)
    metrics: list[tuple[str, float]] = field(default_factory=list)
    notebook: str = ""  # what the notebook's run left to say (grader.notebooks.grading_step)
    done: bool = False

    def take(self, record: rec.Record) -> None:
        known = self.known_ids
        match record:
            case rec.Collected():
                self.collected = True
            case rec.Import() if self.imported is None:
                self.imported = record
            case rec.Skipped(message=message):
                self.skipped = message
            case rec.SuiteError(message=message):
                self.suite_error = message
            case rec.Start(id=rid) if rid in known:
                self.started.append(rid)
            case rec.Result(id=rid) if rid in known and rid not in self.results:
                self.results[rid] = record
            case rec.Notebook(message=message):
                self.notebook = message
            case rec.Artifact(id=rid) if (rid in known or rid == rec.NOTEBOOK_ID) and len(
                self.artifacts
            ) < rec.MAX_ARTIFACTS:
                self.artifacts.append(Artifact(record.title, record.media_type, record.data))
            case rec.Metric(id=rid, name=name, value=value) if rid in known:
                self.metrics.append((name, value))
            case rec.Done():
                self.done = True


def read_records(lines: Iterable[str | bytes], known_ids: Iterable[str]) -> _Parsed:
    """The valid records among `lines` (the judge's, undecoded), for the checks in `known_ids`."""
    parsed = _Parsed(frozenset(known_ids))
    for record in rec.decode_all(lines):
        parsed.take(record)
    return parsed


@dataclass(frozen=True)
class Rerun:
    """The checks a stopped sandbox could not run (`ids`), and what the judge that reruns them
    needs: the checks passed before (gates), those with no verdict, the functions that stopped
    a sandbox of this file (not called again)."""

    ids: tuple[str, ...]
    passed: tuple[str, ...]
    unjudged: tuple[str, ...]
    stopped: tuple[str, ...]
    retried: tuple[str, ...] = ()  # run again once already after an outside signal


def rerun_of(lines: Iterable[str | bytes]) -> Rerun | None:
    """What to grade again after the judge that wrote `lines` (None: nothing)."""
    found = rec.decode_all(lines)
    unrun = [r for r in found if isinstance(r, rec.Unrun)]
    if not unrun or not unrun[-1].ids:
        return None
    results = {r.id: r for r in found if isinstance(r, rec.Result)}
    ids = tuple(i for i in unrun[-1].ids if i in results)
    if not ids:
        return None
    # a check that ended in a grader error (the suite's own bug) closes no gate, as in the
    # judge that saw it (`grader.plugin.gates.closed_by`)
    passed = tuple(
        i
        for i, r in results.items()
        if (r.status == "passed" and r.fraction >= 1.0) or r.grader_error
    )
    unjudged = tuple(
        i
        for i, r in results.items()
        if r.status in ("timeout", "error") and not r.grader_error and i not in ids
    )
    stopped = tuple(dict.fromkeys(name for r in unrun for name in r.stopped))
    retried = tuple(dict.fromkeys(name for r in unrun for name in r.retried))
    return Rerun(ids, passed, unjudged, stopped, retried)


def merge(first: Ended, again: Ended, rerun: Rerun) -> Ended:
    """One file's grading from two judges: the second's verdicts replace the first's for the
    checks it reran; what stopped the first stays known (an `Unrun` without checks)."""
    kept: list[str] = []
    for line in first.records:
        record = rec.decode(line)
        match record:
            case rec.Start(id=rid) | rec.Result(id=rid) if rid in rerun.ids:
                continue
            case rec.Done():
                continue
            case rec.Unrun():
                done = rec.Unrun((), record.stopped, record.retried)
                kept.append(rec.encode(done).decode().rstrip("\n"))
            case None:
                continue
            case _:
                kept.append(line)
    merged = (*kept, *again.records)[: rec.MAX_RECORDS]
    output = first.output + again.output
    return replace(
        again,
        output=output,
        output_bytes=first.output_bytes + again.output_bytes,
        duration_s=first.duration_s + again.duration_s,
        records=merged,
        records_dropped=first.records_dropped + again.records_dropped,
        leftovers=first.leftovers + again.leftovers,
    )


def _result(
    spec: CheckSpec,
    status: CheckStatus,
    message: str,
    *,
    fraction: float = 0.0,
    fix: str = "",
    location: SourceLine | None = None,
    duration_s: float = 0.0,
    blocked_by: str | None = None,
    root_cause: str | None = None,
    counted: bool = True,
) -> CheckResult:
    """The check's result; not `counted` (nor when skipped): worth no points either way."""
    earned = spec.points * fraction if status in ("passed", "failed") else 0.0
    return CheckResult(
        name=spec.name,
        id=spec.id,
        status=status,
        score=round(earned, 6),
        max_score=spec.points if counted and status != "skipped" else 0.0,
        visibility=spec.visibility,
        message=message,
        hint=spec.hint,
        nudge=spec.nudge,
        fix=fix,
        location=location,
        duration_s=duration_s,
        blocked_by=blocked_by,
        root_cause=root_cause,
    )


def _helpless(check: CheckResult) -> CheckResult:
    """`check` without its help: a grader error is not the student's to fix."""
    return replace(check, hint="", nudge="", fix="")


def _death(ending: Ending, filename: str) -> tuple[CheckStatus, str]:
    """What to say about the check that was running when the child stopped."""
    if ending.lost:
        return "error", ending.lost
    ended = ending.ended
    if ended.timed_out:
        return "timeout", (
            f"still running after {ending.timeout_s:g} s, the time limit for {filename}. "
            "Look for a loop that never ends (a `while` whose condition never changes) or "
            "a very slow Python loop over array elements; `grade --timeout` raises the limit."
        )
    if ended.signal is not None:
        name = (
            signal.Signals(ended.signal).name
            if ended.signal in signal.valid_signals()
            else str(ended.signal)
        )
        extra = ""
        if ended.signal in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT):
            extra = (
                f" This usually means memory ran out (limit {ended.memory_limit / 2**30:.1f} GiB "
                "of address space) or native code crashed."
            )
        return "error", f"the grading process was killed by {name} while running this check.{extra}"
    return "error", (
        f"the grading process exited (exit code {ended.exit_code}) in the middle of this check. "
        "Something in your code ended the program: remove `sys.exit(...)`, `os._exit(...)` "
        "or `quit()` from your functions."
    )


def _output(ended: Ended) -> str:
    text = ended.output
    shown = len(ended.output.encode("utf-8", errors="replace"))
    if ended.output_bytes > shown:
        text += (
            f"\n[output truncated: {ended.output_bytes:,} bytes were printed; "
            f"the first {shown:,} are shown]"
        )
    return text


def assemble(spec: ExerciseSpec, ending: Ending, filename: str = "") -> ExerciseResult:
    """The result from the judge's records and its ending (`ending.ended.records`).

    `filename` is the graded file as submitted (`03_jit.py` or `03_jit.ipynb`)."""
    parsed = read_records(ending.ended.records, (c.id for c in spec.checks))
    status, checks, message = _judge(spec, parsed, ending, filename or spec.filename)
    message = "\n\n".join(part for part in (message, parsed.notebook) if part)
    return ExerciseResult(
        name=spec.name,
        title=spec.title,
        status=status,
        checks=checks,
        message=message,
        output=_output(ending.ended),
        artifacts=tuple(parsed.artifacts),
        metrics=tuple(parsed.metrics),
        duration_s=ending.ended.duration_s,
    )


Judgement = tuple[ExerciseStatus, tuple[CheckResult, ...], str]


def _judge(spec: ExerciseSpec, parsed: _Parsed, ending: Ending, filename: str) -> Judgement:
    if parsed.skipped is not None and not parsed.results:
        return (
            "skipped",
            tuple(_result(c, "skipped", parsed.skipped) for c in spec.checks),
            parsed.skipped,
        )
    if ending.grader_fault:  # the grader failed it on every try: nothing of it is a verdict
        message = (
            f"the grader could not grade {filename}: {ending.grader_fault} (on each of "
            f"{ending.attempts} tries). A grader error, not yours: no points counted; "
            "grade it again."
        )
        checks = tuple(_result(c, "error", NOT_GRADED_FAULT, counted=False) for c in spec.checks)
        return "error", checks, message
    if parsed.imported is not None and not parsed.imported.ok:
        return _import_failed(spec, parsed.imported, filename)
    if parsed.suite_error is not None and not parsed.results:  # the suite's bug: none counts
        checks = tuple(_result(c, "error", NOT_LOADED, counted=False) for c in spec.checks)
        return "error", tuple(_helpless(c) for c in checks), parsed.suite_error
    ended = ending.ended
    if not parsed.collected and not ending.lost and not ended.timed_out:
        message = (
            "the grader could not run this file's checks (a problem in the grader, not in your "
            f"code; exit code {ended.exit_code}, signal {ended.signal}). Please report it."
        )
        return (
            "error",
            tuple(_result(c, "error", "not run: the grader failed") for c in spec.checks),
            message,
        )

    running = next((sid for sid in reversed(parsed.started) if sid not in parsed.results), None)
    death = None if parsed.done and not ended.timed_out else _death(ending, filename)
    if death is not None and running is None and not parsed.started and spec.checks:
        running = spec.checks[0].id  # it died while importing the lesson file
    checks = tuple(_check_result(c, parsed, running, death, filename) for c in spec.checks)
    status = _exercise_status(checks)
    message = ""
    if death is not None:
        message = death[1]
    elif status == "error":
        first = next(c for c in checks if c.status in ("error", "timeout"))
        message = f"`{first.name}` could not finish: {first.message}"
    elif status == "not_attempted":
        message = (
            f"Not attempted yet: the functions in {filename} still raise "
            "NotImplementedError. Start with the first TODO."
        )
    return status, checks, message


def _import_failed(spec: ExerciseSpec, imported: rec.Import, filename: str) -> Judgement:
    if imported.grader_error:  # none of the student's code ran: no verdict, no points counted
        message = imported.message or f"the grader could not import {filename}"
        checks = [_result(c, "error", NOT_GRADED, counted=False) for c in spec.checks]
        return "error", tuple(checks), message
    message = imported.message or f"{filename} failed to import"
    checks = [_result(c, "error", f"not run: {filename} does not import") for c in spec.checks]
    if checks:
        checks[0] = _result(spec.checks[0], "error", message, location=imported.location)
    return "error", tuple(checks), message


def _check_result(
    check: CheckSpec,
    parsed: _Parsed,
    running: str | None,
    death: tuple[CheckStatus, str] | None,
    filename: str,
) -> CheckResult:
    result = parsed.results.get(check.id)
    if result is not None and result.grader_error:  # the suite's own exception: none counts
        error = _result(check, "error", result.message, duration_s=result.duration_s, counted=False)
        return _helpless(error)
    if result is not None:
        # The decoder kept the fraction in [0, 1]; a check that did not pass never earns it all.
        fraction = (
            1.0 if result.status == "passed" else result.fraction if result.fraction < 1.0 else 0.0
        )
        status = result.status
        if status == "failed" and result.not_implemented and fraction == 0.0:
            status = "not_attempted"  # the stub's NotImplementedError, or a check waiting on one
        return _result(
            check,
            status,
            result.message,
            fraction=fraction,
            fix=result.fix if result.status != "passed" else "",
            location=result.location,
            duration_s=result.duration_s,
            blocked_by=result.blocked_by if result.status == "failed" else None,
            root_cause=result.root_cause if result.status != "passed" else None,
        )
    if death is not None and check.id == running:
        return _result(check, death[0], death[1])
    if death is not None and death[0] == "timeout":
        return _result(check, "error", f"not run: {filename} ran out of time in an earlier check")
    if death is not None:
        first = death[1].split(".")[0]
        return _result(
            check, "error", f"not run: the grading process stopped in an earlier check ({first})"
        )
    return _result(check, "error", "not run: the suite never reached this check")


def _exercise_status(checks: tuple[CheckResult, ...]) -> ExerciseStatus:
    statuses = {c.status for c in checks}
    if statuses & {"error", "timeout"}:
        return "error"
    if statuses == {"skipped"}:
        return "skipped"
    begun = statuses - {"not_attempted", "failed", "skipped"} or any(c.score for c in checks)
    if "not_attempted" in statuses and not begun:
        return "not_attempted"  # nothing begun (a check the stub fails otherwise included)
    if statuses <= {"passed", "skipped"}:
        return "passed"
    return "failed"


def missing(spec: ExerciseSpec, where: str) -> ExerciseResult:
    message = f"no {spec.name}.py in {where}: nothing to grade for this lesson file."
    checks = tuple(_result(c, "not_attempted", "not run: the file is missing") for c in spec.checks)
    return ExerciseResult(spec.name, spec.title, "not_attempted", checks, message=message)


def too_large(
    spec: ExerciseSpec, message: str, why: str = "the file is too large to grade"
) -> ExerciseResult:
    """A lesson file not graded as it is: over its size limit (`submission.over_limit` says
    which and why), or a symlink (`submission.refuse_link`, `why` says so)."""
    checks = tuple(_result(c, "error", f"not run: {why}") for c in spec.checks)
    return ExerciseResult(spec.name, spec.title, "error", checks, message=message)


def skipped(spec: ExerciseSpec, message: str) -> ExerciseResult:
    checks = tuple(_result(c, "skipped", message) for c in spec.checks)
    return ExerciseResult(spec.name, spec.title, "skipped", checks, message=message)
