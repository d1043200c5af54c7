"""The result model: the one thing the runner hands to the reports.

Every report (terminal, HTML, JSON, Gradescope, JUnit) is a pure function of a
`Report`. The model is frozen and typed; `Report.to_json()` is the versioned
results contract (schema_version 1) that CI pipelines read, and `Report.from_json`
(`ExerciseResult.from_json`, `CheckResult.from_json`) the one reader of it: what
`grade hint` (`.grade/last.json`) and `grade batch` (students/NAME.json) read back.
The reader is lenient: a missing or malformed field gets its default, an unknown
status is `error`; images come back without their bytes, which the JSON does not hold.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Literal

from grader.isolation_levels import LEVELS, Isolation

SCHEMA_VERSION = 1

CheckStatus = Literal["passed", "failed", "error", "timeout", "not_attempted", "skipped"]
ExerciseStatus = Literal["passed", "failed", "error", "not_attempted", "skipped"]
Visibility = Literal["public", "hidden"]

CHECK_STATUSES: tuple[CheckStatus, ...] = (
    "passed",
    "failed",
    "error",
    "timeout",
    "not_attempted",
    "skipped",
)
# `not_attempted`, "not started": of a check, the function it judges still raises the stub's
# NotImplementedError (or the check waits for one that does); of an exercise, none of its
# functions is started (an untouched stub, or no file). It scores 0 like a failure, and is
# told apart from one in every report: a student half-way through a file is not failing
# the functions they have not begun.
EXERCISE_STATUSES: tuple[ExerciseStatus, ...] = (
    "passed",
    "failed",
    "error",
    "not_attempted",
    "skipped",
)

# Keys whose values are measurements (wall-clock times, what a suite measured,
# the size of a chart drawn from them): everything else in the JSON is a
# deterministic function of the submission and the seed.
MEASURED_KEYS = frozenset({"duration_s", "metrics", "bytes"})


@dataclass(frozen=True)
class SourceLine:
    """A line of the student's own code, as shown next to a failure."""

    path: str  # relative to the submission, e.g. "03_jit.py"
    line: int
    code: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "code": self.code}

    @classmethod
    def from_json(cls, doc: Any) -> SourceLine | None:
        if not isinstance(doc, dict):
            return None
        try:
            return cls(str(doc["path"]), int(doc["line"]), str(doc["code"]))
        except (KeyError, TypeError, ValueError):
            return None


def _text(doc: dict[str, Any], key: str) -> str:
    value = doc.get(key)
    return value if isinstance(value, str) else ""


def _optional_text(doc: dict[str, Any], key: str) -> str | None:
    value = doc.get(key)
    return value if isinstance(value, str) else None


def _number(doc: dict[str, Any], key: str) -> float:
    value = doc.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


@dataclass(frozen=True)
class Artifact:
    """An image an exercise produced (a student's plot, a timing chart)."""

    title: str
    media_type: str  # "image/png"
    data: bytes = field(repr=False)

    @property
    def data_uri(self) -> str:
        return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode('ascii')}"

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "media_type": self.media_type, "bytes": len(self.data)}


@dataclass(frozen=True)
class NextStep:
    """What to do next with a lesson file: start at its first TODO, or go on to the next file."""

    command: str  # what to run: `grade exercises/03_jit.py`
    todo: SourceLine | None = None  # an untouched file's first TODO
    lesson: str = ""  # a file at full marks: the next lesson file to work on (catalog order)

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "todo": self.todo.to_json() if self.todo else None,
            "lesson": self.lesson,
        }

    @classmethod
    def from_json(cls, doc: Any) -> NextStep | None:
        if not isinstance(doc, dict):
            return None
        return cls(
            _text(doc, "command"), SourceLine.from_json(doc.get("todo")), _text(doc, "lesson")
        )


@dataclass(frozen=True)
class CheckResult:
    name: str  # what is checked, in words
    id: str  # the suite's function name: stable, for tools
    status: CheckStatus
    score: float
    max_score: float
    visibility: Visibility
    message: str  # empty when passed; never the fix
    hint: str  # help, level 1: a question, shown with a failure
    location: SourceLine | None = None
    duration_s: float = 0.0
    blocked_by: str | None = None  # the id of the check whose values this one waits for
    root_cause: str | None = None  # "Type|path|line|function": failures sharing it share a cause
    # Help, levels 2 and 3 (grader.hints): empty unless the student may see them.
    nudge: str = ""
    fix: str = ""
    hints_revealed: int = 0  # levels beyond the question the student asked for (`grade hint`)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "id": self.id,
            "status": self.status,
            "score": self.score,
            "max_score": self.max_score,
            "visibility": self.visibility,
            "message": self.message,
            "hint": self.hint,
            "location": self.location.to_json() if self.location else None,
            "duration_s": round(self.duration_s, 3),
            "blocked_by": self.blocked_by,
            "root_cause": self.root_cause,
            "nudge": self.nudge,
            "fix": self.fix,
            "hints_revealed": self.hints_revealed,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> CheckResult:
        status = doc.get("status")
        return cls(
            name=_text(doc, "name") or _text(doc, "id"),
            id=_text(doc, "id"),
            status=status if status in CHECK_STATUSES else "error",
            score=_number(doc, "score"),
            max_score=_number(doc, "max_score"),
            visibility="hidden" if doc.get("visibility") == "hidden" else "public",
            message=_text(doc, "message"),
            hint=_text(doc, "hint"),
            location=SourceLine.from_json(doc.get("location")),
            duration_s=_number(doc, "duration_s"),
            blocked_by=_optional_text(doc, "blocked_by"),
            root_cause=_optional_text(doc, "root_cause"),
            nudge=_text(doc, "nudge"),
            fix=_text(doc, "fix"),
            hints_revealed=int(_number(doc, "hints_revealed")),
        )


@dataclass(frozen=True)
class ExerciseResult:
    name: str  # the lesson file's stem: "03_jit"
    title: str
    status: ExerciseStatus
    checks: tuple[CheckResult, ...]
    message: str = ""  # exercise-level: import error, crash, timeout, missing file
    output: str = ""  # captured stdout/stderr, capped
    artifacts: tuple[Artifact, ...] = ()
    metrics: tuple[tuple[str, float], ...] = ()  # measured numbers a suite reported
    duration_s: float = 0.0
    next: NextStep | None = None  # what to do next (grader.next_step), when known

    @property
    def score(self) -> float:
        return round(sum(c.score for c in self.checks), 6)

    @property
    def max_score(self) -> float:
        return round(sum(c.max_score for c in self.checks), 6)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "status": self.status,
            "score": self.score,
            "max_score": self.max_score,
            "message": self.message,
            "checks": [c.to_json() for c in self.checks],
            "output": self.output,
            "artifacts": [a.to_json() for a in self.artifacts],
            "metrics": dict(self.metrics),
            "duration_s": round(self.duration_s, 3),
            "next": self.next.to_json() if self.next else None,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ExerciseResult:
        status = doc.get("status")
        checks = doc.get("checks")
        artifacts = doc.get("artifacts")
        metrics = doc.get("metrics")
        return cls(
            name=_text(doc, "name"),
            title=_text(doc, "title"),
            status=status if status in EXERCISE_STATUSES else "error",
            checks=tuple(CheckResult.from_json(c) for c in checks or () if isinstance(c, dict)),
            message=_text(doc, "message"),
            output=_text(doc, "output"),
            artifacts=tuple(
                Artifact(_text(a, "title"), _text(a, "media_type"), b"")
                for a in artifacts or ()
                if isinstance(a, dict)
            ),
            metrics=tuple(
                (str(k), float(v))
                for k, v in (metrics.items() if isinstance(metrics, dict) else ())
                if isinstance(v, int | float)
            ),
            duration_s=_number(doc, "duration_s"),
            next=NextStep.from_json(doc.get("next")),
        )


@dataclass(frozen=True)
class Report:
    exercises: tuple[ExerciseResult, ...]
    seed: int
    submission: str  # the graded path as the user gave it
    grader_version: str
    duration_s: float = 0.0
    # How far student code was kept apart (level in force, what was missing); None when
    # the report was not made by the runner.
    isolation: Isolation | None = None

    @property
    def score(self) -> float:
        return round(sum(e.score for e in self.exercises), 6)

    @property
    def max_score(self) -> float:
        return round(sum(e.max_score for e in self.exercises), 6)

    @property
    def fraction(self) -> float:
        return self.score / self.max_score if self.max_score else 0.0

    @property
    def hints_revealed(self) -> int:
        """Help levels the student asked for, over every check (`grade hint`)."""
        return sum(c.hints_revealed for _, c in self.checks())

    def checks(self) -> list[tuple[ExerciseResult, CheckResult]]:
        return [(e, c) for e in self.exercises for c in e.checks]

    def to_json(self) -> dict[str, Any]:
        doc = {
            "schema_version": SCHEMA_VERSION,
            "score": self.score,
            "max_score": self.max_score,
            "seed": self.seed,
            "submission": self.submission,
            "grader_version": self.grader_version,
            "exercises": [e.to_json() for e in self.exercises],
            "duration_s": round(self.duration_s, 3),
            "hints_revealed": self.hints_revealed,
        }
        if self.isolation is not None:
            doc["isolation"] = self.isolation.to_json()
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Report:
        """The report a results JSON document (`to_json`, schema_version 1) describes."""
        exercises = doc.get("exercises")
        isolation = doc.get("isolation")
        level = isolation.get("level") if isinstance(isolation, dict) else None
        missing = isolation.get("missing") if isinstance(isolation, dict) else None
        seed = doc.get("seed")
        return cls(
            exercises=tuple(
                ExerciseResult.from_json(e) for e in exercises or () if isinstance(e, dict)
            ),
            seed=seed if isinstance(seed, int) else 0,
            submission=_text(doc, "submission"),
            grader_version=_text(doc, "grader_version"),
            duration_s=_number(doc, "duration_s"),
            isolation=None
            if level not in LEVELS
            else Isolation(level, tuple(str(m) for m in missing or ())),
        )


def without_timings(doc: Any) -> Any:
    """The JSON document with measured values removed: what must be reproducible."""
    if isinstance(doc, dict):
        return {k: without_timings(v) for k, v in doc.items() if k not in MEASURED_KEYS}
    if isinstance(doc, list):
        return [without_timings(v) for v in doc]
    return doc
