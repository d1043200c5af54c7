"""What the judge reports to the parent about a lesson file: one JSON line per record.

The judge (pytest with `grader.plugin`, in the grading child) writes records to
a pipe the worker gave it (`--grader-records-fd`), or to a file for a hand run
(`--grader-records`); the notebook step (`grader.notebooks.grading_step`) writes to
the same pipe before pytest starts. The worker caps what arrives and hands the
lines to the parent, which decodes each with `decode`:

    collected   the checks pytest collected            Collected(ids)
    import      the student's module imported or not   Import(lesson, ok, message, location,
                (grader_error: the sandbox ended before    grader_error)
                any of the student's code ran)
    skipped     the suite skipped itself               Skipped(message)
    suite_error the suite could not be imported or     SuiteError(message)
                collected (a grader error: no check counts)
    start       a check began                          Start(id)
    result      a check's outcome                      Result(id, status, fraction, message, fix, ...,
                (grader_error: the suite's own             grader_error)
                exception, no points counted)
    artifact    an image a check (or the notebook) made Artifact(id, title, data)
    metric      a number a check measured              Metric(id, name, value)
    uses        what of the student's module a check   Uses(id, names, gates, whole)
                reached (`grade watch` reuses a verdict
                whose code did not change)
    notebook    what the notebook's run left to say    Notebook(message)
    done        the session finished                   Done()

A line is `{"type": <kind>, <field>: <value>, ...}` with exactly the fields
below. Building a record clips its texts to their limits, so a writer never
sends more than a reader accepts; `decode` rejects anything else (unknown kind
or field, wrong type, a text over its limit, a fraction outside [0, 1], an
image that is not a PNG) by returning None. Points never travel this way: the
parent reads them from the suites' source.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any, ClassVar, TypeGuard

from grader.model import CHECK_STATUSES, CheckStatus, SourceLine

MAX_RECORDS = 10_000
"""Records read for one lesson file; the rest are dropped."""
MAX_RECORDS_BYTES = 32 << 20
"""Bytes of records kept for one lesson file (artifacts make the bulk)."""
MAX_LINE_BYTES = 4 << 20
"""One record's line (an artifact's base64 PNG is the largest)."""
MAX_ARTIFACTS = 8
"""Images kept for one lesson file, from its checks and its notebook together."""

NOTEBOOK_ID = "notebook"
"""The `id` of artifacts from a notebook's own run (no check's)."""
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PNG = "image/png"

MAX_CHECKS = 1000
"""Checks collected in one suite."""
MAX_ID_CHARS = 200
"""A check's id (the suite's function name)."""
MAX_MESSAGE_CHARS = 4000
"""Any message: a check's, an import error's, a skip's, the notebook's notes."""
MAX_LESSON_CHARS = 200
"""A lesson's name."""
MAX_PATH_CHARS = 200
"""A location's file, as the student named it."""
MAX_CODE_CHARS = 300
"""A location's line of code."""
MAX_TITLE_CHARS = 120
"""An artifact's title."""
MAX_METRIC_NAME_CHARS = 80
"""A metric's name."""
MAX_ARTIFACT_BYTES = 2_000_000
"""One image, decoded."""
MAX_DURATION_S = 366 * 24 * 3600.0
"""Longer than any grading: a duration above it is not one."""


class RecordError(ValueError):
    """A record that does not follow this protocol."""


def _clip(record: object, **limits: int) -> None:
    """Cut the named text fields of a frozen record to their limits (keeping the start)."""
    for name, limit in limits.items():
        value = getattr(record, name)
        if len(value) > limit:
            object.__setattr__(record, name, value[:limit])


# -- the records ----------------------------------------------------------------------


@dataclass(frozen=True)
class Collected:
    kind: ClassVar[str] = "collected"

    ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "ids", tuple(i[:MAX_ID_CHARS] for i in self.ids[:MAX_CHECKS]))


def location(line: SourceLine | None) -> SourceLine | None:
    """`line` with its texts clipped to the record limits."""
    if line is None:
        return None
    return SourceLine(line.path[:MAX_PATH_CHARS], line.line, line.code[:MAX_CODE_CHARS])


@dataclass(frozen=True)
class Import:
    """Whether the lesson module imported; `message` and `location` say why not."""

    kind: ClassVar[str] = "import"

    lesson: str
    ok: bool
    message: str = ""
    location: SourceLine | None = None
    duration_s: float = 0.0
    grader_error: bool = False  # not imported through no fault of the student's: none of
    # their code ran (its sandbox ended before its first frame; `grader.plugin.sandbox_session`)

    def __post_init__(self) -> None:
        _clip(self, lesson=MAX_LESSON_CHARS, message=MAX_MESSAGE_CHARS)
        object.__setattr__(self, "location", location(self.location))


@dataclass(frozen=True)
class Skipped:
    kind: ClassVar[str] = "skipped"

    message: str

    def __post_init__(self) -> None:
        _clip(self, message=MAX_MESSAGE_CHARS)


@dataclass(frozen=True)
class SuiteError:
    """The suite itself failed to import or collect (a grader bug): what and where, said
    as a grader error (`grader.plugin.wording.suite_not_loaded`)."""

    kind: ClassVar[str] = "suite_error"

    message: str

    def __post_init__(self) -> None:
        if len(self.message) > MAX_MESSAGE_CHARS:  # the end says what went wrong
            object.__setattr__(self, "message", self.message[-MAX_MESSAGE_CHARS:])


@dataclass(frozen=True)
class Start:
    kind: ClassVar[str] = "start"

    id: str

    def __post_init__(self) -> None:
        _clip(self, id=MAX_ID_CHARS)


@dataclass(frozen=True)
class Result:
    """A check's outcome: `fraction` of its points (the parent knows how many)."""

    kind: ClassVar[str] = "result"

    id: str
    status: CheckStatus
    fraction: float = 0.0
    message: str = ""  # what was checked, expected, observed, the likely cause
    fix: str = ""  # how to fix it (the last level of help: reports show it when allowed)
    location: SourceLine | None = None
    not_implemented: bool = False  # it failed on a stub's NotImplementedError
    duration_s: float = 0.0
    blocked_by: str | None = None  # the check whose values this one waits for (a gate)
    root_cause: str | None = None  # "Type|path|line|function" of a student exception
    grader_error: bool = False  # the suite's own exception: the check counts no points

    def __post_init__(self) -> None:
        _clip(self, id=MAX_ID_CHARS, message=MAX_MESSAGE_CHARS, fix=MAX_MESSAGE_CHARS)
        object.__setattr__(self, "location", location(self.location))
        fraction = self.fraction if math.isfinite(self.fraction) else 0.0
        object.__setattr__(self, "fraction", min(max(float(fraction), 0.0), 1.0))


@dataclass(frozen=True)
class Artifact:
    """A PNG image a check attached (or a notebook cell drew: `id` is `NOTEBOOK_ID`)."""

    kind: ClassVar[str] = "artifact"

    id: str
    title: str
    data: bytes
    media_type: str = PNG

    def __post_init__(self) -> None:
        _clip(self, id=MAX_ID_CHARS, title=MAX_TITLE_CHARS)


@dataclass(frozen=True)
class Metric:
    kind: ClassVar[str] = "metric"

    id: str
    name: str
    value: float

    def __post_init__(self) -> None:
        _clip(self, id=MAX_ID_CHARS, name=MAX_METRIC_NAME_CHARS)


@dataclass(frozen=True)
class Uses:
    """What of the student's module a check reached: the module's `names` it looked up
    (through the module's handle, or in a run it shares with an earlier check), the checks
    whose verdicts it stood on (`gates`), and `whole` when it handed the module itself to
    code in the sandbox (which may reach any of it). `grade watch` grades again only the
    checks whose code changed (`grader.runner.reuse`); nothing else reads it."""

    kind: ClassVar[str] = "uses"

    id: str
    names: tuple[str, ...] = ()
    gates: tuple[str, ...] = ()
    whole: bool = False

    def __post_init__(self) -> None:
        _clip(self, id=MAX_ID_CHARS)
        for name in ("names", "gates"):
            value = getattr(self, name)
            object.__setattr__(self, name, tuple(i[:MAX_ID_CHARS] for i in value[:MAX_CHECKS]))


@dataclass(frozen=True)
class Notebook:
    """What a notebook's run left to say (empty when all went well)."""

    kind: ClassVar[str] = "notebook"

    message: str

    def __post_init__(self) -> None:
        _clip(self, message=MAX_MESSAGE_CHARS)


@dataclass(frozen=True)
class Unrun:
    """Checks this judge could not run: its sandbox stopped in an earlier check (that check's
    time share ran out, or the process ended). `stopped`: the student functions that were
    running when it stopped. The parent grades `ids` again on a fresh judge and sandbox, with
    the time left, never calling `stopped` again (`grader.runner.engine.grade_one`).
    `retried`: checks among `ids` whose own sandbox a signal from outside ended (not the
    judge's, not an exit of the student's code): run again once, then charged as any other."""

    kind: ClassVar[str] = "unrun"

    ids: tuple[str, ...] = ()
    stopped: tuple[str, ...] = ()
    retried: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("ids", "stopped", "retried"):
            value = getattr(self, name)
            object.__setattr__(self, name, tuple(i[:MAX_ID_CHARS] for i in value[:MAX_CHECKS]))


@dataclass(frozen=True)
class Done:
    """The pytest session finished: whatever is missing after this was not a crash."""

    kind: ClassVar[str] = "done"


Record = (
    Collected
    | Import
    | Skipped
    | SuiteError
    | Start
    | Result
    | Artifact
    | Metric
    | Uses
    | Notebook
    | Unrun
    | Done
)
KINDS: dict[str, type[Record]] = {
    cls.kind: cls
    for cls in (
        Collected,
        Import,
        Skipped,
        SuiteError,
        Start,
        Result,
        Artifact,
        Metric,
        Uses,
        Notebook,
        Unrun,
        Done,
    )
}


# -- writing --------------------------------------------------------------------------


def _field_json(value: Any) -> Any:
    if isinstance(value, SourceLine):
        return value.to_json()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, tuple):
        return list(value)
    return value


def to_json(record: Record) -> dict[str, Any]:
    """The record as the JSON object on the wire."""
    out = {f.name: _field_json(getattr(record, f.name)) for f in fields(record)}
    out["type"] = record.kind
    return out


def encode(record: Record) -> bytes:
    """One line: the record's JSON, keys sorted, and a newline."""
    return (json.dumps(to_json(record), sort_keys=True) + "\n").encode()


class Writer:
    """Writes records to a file descriptor (the worker's pipe, or a file opened for appending)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def to_path(cls, path: str) -> Writer:
        return cls(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))

    def emit(self, record: Record) -> None:
        view = memoryview(encode(record))
        while view:  # a pipe may take a long line in parts
            view = view[os.write(self.fd, view) :]


# -- reading --------------------------------------------------------------------------


def _is_text(value: Any, limit: int) -> TypeGuard[str]:
    return isinstance(value, str) and len(value) <= limit


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _text(limit: int) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not _is_text(value, limit):
            raise RecordError(f"expected a text of at most {limit} characters")
        return value

    return check


def _optional(check: Callable[[Any], str]) -> Callable[[Any], str | None]:
    def optional(value: Any) -> str | None:
        return None if value is None else check(value)

    return optional


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise RecordError("expected true or false")
    return value


def _seconds(value: Any) -> float:
    if not _is_number(value) or not 0 <= value <= MAX_DURATION_S:
        raise RecordError("expected a duration in seconds")
    return float(value)


def _fraction(value: Any) -> float:
    if not _is_number(value) or not 0 <= value <= 1:
        raise RecordError("expected a fraction in [0, 1]")
    return float(value)


def _finite(value: Any) -> float:
    if not _is_number(value):
        raise RecordError("expected a finite number")
    return float(value)


def _status(value: Any) -> CheckStatus:
    for status in CHECK_STATUSES:
        if value == status:
            return status
    raise RecordError(f"unknown check status {value!r}")


def _location(value: Any) -> SourceLine | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"path", "line", "code"}:
        raise RecordError("a location is {path, line, code}")
    line = value["line"]
    if not isinstance(line, int) or isinstance(line, bool) or line < 0:
        raise RecordError("a location's line is a number")
    return SourceLine(
        _text(MAX_PATH_CHARS)(value["path"]), line, _text(MAX_CODE_CHARS)(value["code"])
    )


def _ids(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > MAX_CHECKS:
        raise RecordError(f"expected a list of at most {MAX_CHECKS} ids")
    return tuple(_text(MAX_ID_CHARS)(v) for v in value)


def _png(value: Any) -> bytes:
    if not _is_text(value, 4 * (MAX_ARTIFACT_BYTES // 3 + 1)):
        raise RecordError("an image is base64 text")
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise RecordError("an image is base64 text") from None
    if not data.startswith(PNG_MAGIC) or len(data) > MAX_ARTIFACT_BYTES:
        raise RecordError("an image is a PNG of at most MAX_ARTIFACT_BYTES")
    return data


def _media_type(value: Any) -> str:
    if value != PNG:
        raise RecordError("an image is image/png")
    return PNG


# kind -> field -> (validator, required)
_FIELDS: dict[type[Record], dict[str, tuple[Callable[[Any], Any], bool]]] = {
    Collected: {"ids": (_ids, True)},
    Import: {
        "lesson": (_text(MAX_LESSON_CHARS), True),
        "ok": (_flag, True),
        "message": (_text(MAX_MESSAGE_CHARS), False),
        "location": (_location, False),
        "duration_s": (_seconds, False),
        "grader_error": (_flag, False),
    },
    Skipped: {"message": (_text(MAX_MESSAGE_CHARS), True)},
    SuiteError: {"message": (_text(MAX_MESSAGE_CHARS), True)},
    Start: {"id": (_text(MAX_ID_CHARS), True)},
    Result: {
        "id": (_text(MAX_ID_CHARS), True),
        "status": (_status, True),
        "fraction": (_fraction, False),
        "message": (_text(MAX_MESSAGE_CHARS), False),
        "fix": (_text(MAX_MESSAGE_CHARS), False),
        "location": (_location, False),
        "not_implemented": (_flag, False),
        "duration_s": (_seconds, False),
        "blocked_by": (_optional(_text(MAX_ID_CHARS)), False),
        "root_cause": (_optional(_text(MAX_ID_CHARS * 4)), False),
        "grader_error": (_flag, False),
    },
    Artifact: {
        "id": (_text(MAX_ID_CHARS), True),
        "title": (_text(MAX_TITLE_CHARS), True),
        "data": (_png, True),
        "media_type": (_media_type, False),
    },
    Metric: {
        "id": (_text(MAX_ID_CHARS), True),
        "name": (_text(MAX_METRIC_NAME_CHARS), True),
        "value": (_finite, True),
    },
    Uses: {
        "id": (_text(MAX_ID_CHARS), True),
        "names": (_ids, False),
        "gates": (_ids, False),
        "whole": (_flag, False),
    },
    Notebook: {"message": (_text(MAX_MESSAGE_CHARS), True)},
    Unrun: {"ids": (_ids, True), "stopped": (_ids, False), "retried": (_ids, False)},
    Done: {},
}


def from_json(doc: Any) -> Record:
    """The record a decoded JSON object describes; `RecordError` when it is not exactly one."""
    if (
        not isinstance(doc, dict)
        or not isinstance(doc.get("type"), str)
        or doc["type"] not in KINDS
    ):
        raise RecordError("not a record")
    cls = KINDS[doc["type"]]
    spec = _FIELDS[cls]
    extra = set(doc) - set(spec) - {"type"}
    if extra:
        raise RecordError(f"{cls.kind} has no field {sorted(extra)[0]!r}")
    values: dict[str, Any] = {}
    for name, (check, required) in spec.items():
        if name in doc:
            values[name] = check(doc[name])
        elif required:
            raise RecordError(f"{cls.kind} needs {name!r}")
    record: Record = cls(**values)
    return record


def decode(line: str | bytes) -> Record | None:
    """One line as a record, or None when it is not valid (never raises)."""
    if len(line) > MAX_LINE_BYTES:
        return None
    try:
        return from_json(json.loads(line))
    except (RecordError, ValueError, RecursionError):
        return None


def decode_all(lines: Iterable[str | bytes]) -> list[Record]:
    """The valid records among the first `MAX_RECORDS` lines."""
    out: list[Record] = []
    for count, line in enumerate(lines):
        if count >= MAX_RECORDS:
            break
        record = decode(line)
        if record is not None:
            out.append(record)
    return out


def check_status(value: str) -> CheckStatus:
    """`value` as a check status; "error" for anything that is not one (a writer's bug)."""
    try:
        return _status(value)
    except RecordError:
        return "error"
