"""Turn what a grading child left behind into an `ExerciseResult`.

The child writes JSON-lines records (see `grader.plugin`); the worker reports
how the child ended. Both come from a process that ran student code, so
nothing here is trusted: records are validated, unknown checks ignored,
fractions clamped, and points always come from the catalog (the suites'
source), never from the child.
"""

from __future__ import annotations

import base64
import json
import math
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.catalog import CheckSpec, ExerciseSpec
from grader.model import (
    CHECK_STATUSES,
    Artifact,
    CheckResult,
    CheckStatus,
    ExerciseResult,
    ExerciseStatus,
    SourceLine,
)

MAX_RECORDS = 10_000
MAX_ARTIFACTS = 8
MAX_ARTIFACT_BYTES = 2_000_000
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
NOTEBOOK_ID = "notebook"  # artifacts of a notebook's own run carry this id (no check's)


@dataclass(frozen=True)
class Ending:
    """How the grading child ended, as the worker saw it."""

    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    output: str = ""
    output_bytes: int = 0
    duration_s: float = 0.0
    timeout_s: float = 0.0
    memory_limit: int = 0
    lost: str = ""  # set when the worker itself died or stopped answering

    @classmethod
    def from_reply(cls, reply: dict[str, Any], timeout_s: float) -> Ending:
        def num(key: str) -> int | None:
            value = reply.get(key)
            return value if isinstance(value, int) else None

        return cls(
            exit_code=num("exit_code"),
            signal=num("signal"),
            timed_out=bool(reply.get("timed_out")),
            output=str(reply.get("output", "")),
            output_bytes=int(reply.get("output_bytes", 0) or 0),
            duration_s=float(reply.get("duration_s", 0.0) or 0.0),
            timeout_s=timeout_s,
            memory_limit=int(reply.get("memory_limit", 0) or 0),
        )


@dataclass
class _Parsed:
    collected: bool = False
    imported: dict[str, Any] | None = None
    skipped: str | None = None
    suite_error: str | None = None
    started: list[str] = field(default_factory=list)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    artifacts: list[Artifact] = field(default_factory=list)
    metrics: list[tuple[str, float]] = field(default_factory=list)
    notebook: str = ""  # what the notebook's run left to say (grader.notebooks.grading)
    done: bool = False


def read_records(path: Path, known_ids: set[str]) -> _Parsed:
    parsed = _Parsed()
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[:MAX_RECORDS]
    except OSError:
        return parsed
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        kind, rid = rec.get("type"), rec.get("id")
        if kind == "collected":
            parsed.collected = True
        elif kind == "import" and parsed.imported is None:
            parsed.imported = rec
        elif kind == "skipped":
            parsed.skipped = str(rec.get("message", ""))
        elif kind == "suite_error":
            parsed.suite_error = str(rec.get("message", ""))
        elif kind == "start" and rid in known_ids:
            parsed.started.append(str(rid))
        elif kind == "result" and rid in known_ids and rid not in parsed.results:
            parsed.results[str(rid)] = rec
        elif kind == "notebook":
            parsed.notebook = str(rec.get("message", ""))[:4000]
        elif kind == "artifact" and (rid in known_ids or rid == NOTEBOOK_ID) and len(parsed.artifacts) < MAX_ARTIFACTS:
            artifact = _artifact(rec)
            if artifact is not None:
                parsed.artifacts.append(artifact)
        elif kind == "metric" and rid in known_ids:
            value = rec.get("value")
            if isinstance(value, int | float) and math.isfinite(value):
                parsed.metrics.append((str(rec.get("name", ""))[:80], float(value)))
        elif kind == "done":
            parsed.done = True
    return parsed


def _artifact(rec: dict[str, Any]) -> Artifact | None:
    try:
        data = base64.b64decode(str(rec.get("data", "")), validate=True)
    except ValueError:
        return None
    if not data.startswith(PNG_MAGIC) or len(data) > MAX_ARTIFACT_BYTES:
        return None
    return Artifact(str(rec.get("title", "image"))[:120], "image/png", data)


def _location(raw: Any) -> SourceLine | None:
    if not isinstance(raw, dict):
        return None
    try:
        return SourceLine(str(raw["path"])[:200], int(raw["line"]), str(raw["code"])[:300])
    except (KeyError, TypeError, ValueError):
        return None


def _result(spec: CheckSpec, status: CheckStatus, message: str, *, fraction: float = 0.0,
            location: SourceLine | None = None, duration_s: float = 0.0) -> CheckResult:
    earned = spec.points * fraction if status in ("passed", "failed") else 0.0
    return CheckResult(
        name=spec.name,
        id=spec.id,
        status=status,
        score=round(earned, 6),
        max_score=0.0 if status == "skipped" else spec.points,
        visibility=spec.visibility,
        message=message,
        hint=spec.hint,
        location=location,
        duration_s=duration_s,
    )


def _seconds(raw: Any) -> float:
    return float(raw) if isinstance(raw, int | float) and math.isfinite(raw) and raw >= 0 else 0.0


def _death(ending: Ending, filename: str) -> tuple[CheckStatus, str]:
    """What to say about the check that was running when the child stopped."""
    if ending.lost:
        return "error", ending.lost
    if ending.timed_out:
        return "timeout", (
            f"still running after {ending.timeout_s:g} s, the time limit for {filename}. "
            "Look for a loop that never ends (a `while` whose condition never changes) or "
            "a very slow Python loop over array elements; `grade --timeout` raises the limit."
        )
    if ending.signal is not None:
        name = signal.Signals(ending.signal).name if ending.signal in signal.valid_signals() else str(ending.signal)
        extra = ""
        if ending.signal in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT):
            extra = (
                f" This usually means memory ran out (limit {ending.memory_limit / 2**30:.1f} GiB "
                "of address space) or native code crashed."
            )
        return "error", f"the grading process was killed by {name} while running this check.{extra}"
    return "error", (
        f"the grading process exited (exit code {ending.exit_code}) in the middle of this check. "
        "Something in your code ended the program: remove `sys.exit(...)`, `os._exit(...)` "
        "or `quit()` from your functions."
    )


def _output(ending: Ending) -> str:
    text = ending.output
    if ending.output_bytes > len(ending.output.encode("utf-8", errors="replace")):
        shown = len(ending.output.encode("utf-8", errors="replace"))
        text += (
            f"\n[output truncated: {ending.output_bytes:,} bytes were printed; "
            f"the first {shown:,} are shown]"
        )
    return text


def assemble(spec: ExerciseSpec, records_path: Path, ending: Ending, filename: str = "") -> ExerciseResult:
    """`filename` is the graded file as submitted (`03_jit.py` or `03_jit.ipynb`)."""
    parsed = read_records(records_path, {c.id for c in spec.checks})
    status, checks, message = _judge(spec, parsed, ending, filename or spec.filename)
    message = "\n\n".join(part for part in (message, parsed.notebook) if part)
    return ExerciseResult(
        name=spec.name,
        title=spec.title,
        status=status,
        checks=checks,
        message=message,
        output=_output(ending),
        artifacts=tuple(parsed.artifacts),
        metrics=tuple(parsed.metrics),
        duration_s=ending.duration_s,
    )


Judgement = tuple[ExerciseStatus, tuple[CheckResult, ...], str]


def _judge(spec: ExerciseSpec, parsed: _Parsed, ending: Ending, filename: str) -> Judgement:
    if parsed.skipped is not None and not parsed.results:
        return "skipped", tuple(_result(c, "skipped", parsed.skipped) for c in spec.checks), parsed.skipped
    if parsed.imported is not None and not parsed.imported.get("ok"):
        return _import_failed(spec, parsed.imported, filename)
    if not parsed.collected and not ending.lost and not ending.timed_out:
        message = (
            "the grader could not run this file's checks (a problem in the grader, not in your "
            f"code; exit code {ending.exit_code}, signal {ending.signal}). Please report it."
            + (f"\n{parsed.suite_error}" if parsed.suite_error else "")
        )
        return "error", tuple(_result(c, "error", "not run: the grader failed") for c in spec.checks), message

    running = next((sid for sid in reversed(parsed.started) if sid not in parsed.results), None)
    death = None if parsed.done and not ending.timed_out else _death(ending, filename)
    if death is not None and running is None and not parsed.started and spec.checks:
        running = spec.checks[0].id  # it died while importing the lesson file
    checks = tuple(_check_result(c, parsed, running, death, filename) for c in spec.checks)
    not_implemented = sum(bool(parsed.results.get(c.id, {}).get("not_implemented")) for c in spec.checks)
    status = _exercise_status(checks, not_implemented)
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


def _import_failed(spec: ExerciseSpec, imported: dict[str, Any], filename: str) -> Judgement:
    message = str(imported.get("message", f"{filename} failed to import"))[:4000]
    location = _location(imported.get("location"))
    checks = [_result(c, "error", f"not run: {filename} does not import") for c in spec.checks]
    if checks:
        checks[0] = _result(spec.checks[0], "error", message, location=location)
    return "error", tuple(checks), message


def _check_result(check: CheckSpec, parsed: _Parsed, running: str | None,
                  death: tuple[CheckStatus, str] | None, filename: str) -> CheckResult:
    rec = parsed.results.get(check.id)
    if rec is not None:
        raw = rec.get("status")
        status: CheckStatus = raw if raw in CHECK_STATUSES else "error"
        fraction = rec.get("fraction", 0.0)
        fraction = min(max(float(fraction), 0.0), 1.0) if isinstance(fraction, int | float) else 0.0
        if status == "passed":
            fraction = 1.0
        elif fraction >= 1.0:
            fraction = 0.0
        return _result(check, status, str(rec.get("message", ""))[:4000], fraction=fraction,
                       location=_location(rec.get("location")),
                       duration_s=_seconds(rec.get("duration_s")))
    if death is not None and check.id == running:
        return _result(check, death[0], death[1])
    if death is not None and death[0] == "timeout":
        return _result(check, "error", f"not run: {filename} ran out of time in an earlier check")
    if death is not None:
        first = death[1].split(".")[0]
        return _result(check, "error", f"not run: the grading process stopped in an earlier check ({first})")
    return _result(check, "error", "not run: the suite never reached this check")


def _exercise_status(checks: tuple[CheckResult, ...], not_implemented: int) -> ExerciseStatus:
    statuses = {c.status for c in checks}
    if statuses & {"error", "timeout"}:
        return "error"
    if statuses == {"skipped"}:
        return "skipped"
    if not_implemented and statuses <= {"failed", "skipped"} and all(c.score == 0 for c in checks):
        return "not_attempted"
    if statuses <= {"passed", "skipped"}:
        return "passed"
    return "failed"


def missing(spec: ExerciseSpec, where: str) -> ExerciseResult:
    message = f"no {spec.name}.py in {where}: nothing to grade for this lesson file."
    checks = tuple(_result(c, "failed", "not run: the file is missing") for c in spec.checks)
    return ExerciseResult(spec.name, spec.title, "not_attempted", checks, message=message)


def skipped(spec: ExerciseSpec, message: str) -> ExerciseResult:
    checks = tuple(_result(c, "skipped", message) for c in spec.checks)
    return ExerciseResult(spec.name, spec.title, "skipped", checks, message=message)
