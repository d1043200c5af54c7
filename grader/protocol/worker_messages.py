"""What the parent asks the warm worker, and how a lesson file's grading ended.

One JSON line each way, on the worker's stdin and stdout:

    worker -> parent   Ready(pid)                  once, when JAX is imported
    parent -> worker   Request(suite, workdir, ...) one lesson file to grade
    worker -> parent   Started(pid)                the judge (grading child) was forked
    worker -> parent   Ended(exit_code, ...)       it ended, with its output and records

`Ended.records` are the judge's record lines as the worker read them from its
pipe (capped, not decoded): the parent decodes them with
`grader.protocol.records.decode`. The worker is the grader's own process, but
its replies are still checked: `decode` raises `ProtocolError` on anything
that is not exactly one of these messages.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from typing import Any, ClassVar, TypeVar, get_args

from grader.isolation_levels import LEVELS, Level
from grader.protocol.records import MAX_RECORDS

MAX_OUTPUT_CHARS = 1 << 20
"""A file's captured output in a reply: the worker keeps `Request.output_cap` bytes, at most this."""
MAX_RECORD_LINES = MAX_RECORDS
"""Record lines in a reply: the worker keeps no more (`grader.protocol.records`)."""


T = TypeVar("T")


class ProtocolError(ValueError):
    """A line that is not one of this protocol's messages."""


@dataclass(frozen=True)
class Request:
    """Grade one lesson file: run `suite` on the lesson files in `lesson_dir`."""

    kind: ClassVar[str] = "grade"

    suite: str  # the hidden suite's path
    workdir: str  # a private folder for this file (pytest.ini, cwd, tmp)
    lesson_dir: str  # the private copy of the lesson files
    seed: int
    timeout_s: float
    memory_bytes: int  # address space the child may add to the warm worker's
    output_cap: int  # bytes of output kept
    devices: int = 1  # simulated CPU devices
    notebook: str = ""  # the lesson's name when it was submitted as a notebook
    isolation: Level = "basic"  # how the sandbox drops privileges (detected by the parent)
    maxfail: int = 0  # stop the suite after this many failed checks (0: run every check)
    cache_dir: str = ""  # the judge's compilation cache (grader.runner.cache); "" for none
    sandbox_dir: str = ""  # where the judge makes its sandbox folders (the parent's: it removes
    # them after the judge ends, however it ends); "" for the system temp folder
    # A rerun of the checks an earlier judge of this file could not run (its sandbox ran out of
    # a check's time share or stopped): `only` them, the checks it passed (for gates), and the
    # student functions that stopped it (`Unrun.stopped`: not called again).
    check_share_s: float = 0.0  # how long each check may wait on the sandbox (0: the file's)
    only: tuple[str, ...] = ()
    passed: tuple[str, ...] = ()
    unjudged: tuple[str, ...] = ()  # checks with no verdict before (a time-out, an error)
    stopped: tuple[str, ...] = ()
    # checks already run again once because a signal from outside ended their sandbox
    # (`Unrun.retried`): a second such end is charged to the check as any other
    retried: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ready:
    """The worker imported what the suites need and waits for requests."""

    kind: ClassVar[str] = "ready"

    pid: int


@dataclass(frozen=True)
class Started:
    """The worker forked the judge for the current request (its process group is `pid`)."""

    kind: ClassVar[str] = "started"

    pid: int


@dataclass(frozen=True)
class Ended:
    """How the judge ended, as the worker saw it, and what it left."""

    kind: ClassVar[str] = "ended"

    exit_code: int | None = None
    signal: int | None = None  # the signal that killed it (not the worker's own, at the time limit)
    timed_out: bool = False
    output: str = ""  # the first `output_cap` bytes it printed
    output_bytes: int = 0  # how many it printed
    duration_s: float = 0.0
    memory_limit: int = 0  # its address-space limit, in bytes
    records: tuple[str, ...] = ()  # its record lines, undecoded
    records_dropped: int = 0  # record bytes over the cap (or an unfinished last line)
    leftovers: int = 0  # processes it left behind, killed after it ended


Message = Request | Ready | Started | Ended
KINDS: dict[str, type[Message]] = {cls.kind: cls for cls in (Request, Ready, Started, Ended)}


def to_json(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {f.name: getattr(message, f.name) for f in fields(message)}
    if isinstance(message, Ended):
        out["records"] = list(message.records)
    out["type"] = message.kind
    return out


def encode(message: Message) -> str:
    """One line (with its newline)."""
    return json.dumps(to_json(message)) + "\n"


# -- reading --------------------------------------------------------------------------


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ProtocolError("expected an integer")
    return value


def _count(value: Any) -> int:
    if _int(value) < 0:
        raise ProtocolError("expected a count")
    return int(value)


def _optional_int(value: Any) -> int | None:
    return None if value is None else _int(value)


def _seconds(value: Any) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ProtocolError("expected seconds")
    return float(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ProtocolError("expected true or false")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ProtocolError("expected a text")
    return value


def _output(value: Any) -> str:
    if not isinstance(value, str) or len(value) > MAX_OUTPUT_CHARS:
        raise ProtocolError("output malformed")
    return value


def _lines(value: Any) -> tuple[str, ...]:
    if (
        not isinstance(value, list)
        or len(value) > MAX_RECORD_LINES
        or not all(isinstance(v, str) for v in value)
    ):
        raise ProtocolError("records malformed")
    return tuple(value)


def _names(value: Any) -> tuple[str, ...]:
    if (
        not isinstance(value, list | tuple)
        or len(value) > MAX_RECORD_LINES
        or not all(isinstance(v, str) for v in value)
    ):
        raise ProtocolError("expected a list of names")
    return tuple(value)


def _level(value: Any) -> Level:
    for level in LEVELS:
        if value == level:
            return level
    raise ProtocolError(f"unknown isolation level {value!r} (one of {', '.join(get_args(Level))})")


_FIELDS: dict[type[Message], dict[str, Any]] = {
    Request: {
        "suite": _text,
        "workdir": _text,
        "lesson_dir": _text,
        "seed": _int,
        "timeout_s": _seconds,
        "memory_bytes": _count,
        "output_cap": _count,
        "devices": _count,
        "notebook": _text,
        "isolation": _level,
        "maxfail": _count,
        "cache_dir": _text,
        "sandbox_dir": _text,
        "check_share_s": _seconds,
        "only": _names,
        "passed": _names,
        "unjudged": _names,
        "stopped": _names,
        "retried": _names,
    },
    Ready: {"pid": _int},
    Started: {"pid": _int},
    Ended: {
        "exit_code": _optional_int,
        "signal": _optional_int,
        "timed_out": _flag,
        "output": _output,
        "output_bytes": _count,
        "duration_s": _seconds,
        "memory_limit": _count,
        "records": _lines,
        "records_dropped": _count,
        "leftovers": _count,
    },
}


def from_json(doc: Any) -> Message:
    if not isinstance(doc, dict) or doc.get("type") not in KINDS:
        raise ProtocolError("not a worker message")
    cls = KINDS[doc["type"]]
    checks = _FIELDS[cls]
    extra = set(doc) - set(checks) - {"type"}
    if extra:
        raise ProtocolError(f"{cls.kind} has no field {sorted(extra)[0]!r}")
    try:
        message: Message = cls(
            **{name: check(doc[name]) for name, check in checks.items() if name in doc}
        )
    except TypeError as exc:  # a required field is missing
        raise ProtocolError(f"{cls.kind}: {exc}") from None
    return message


def decode(line: str | bytes) -> Message:
    """One line as a message; `ProtocolError` when it is not one."""
    try:
        doc = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    return from_json(doc)


def decode_as(line: str | bytes, cls: type[T]) -> T:
    """One line as a message of type `cls`; `ProtocolError` otherwise."""
    message = decode(line)
    if not isinstance(message, cls):
        raise ProtocolError(f"expected {cls.__name__}, got {type(message).__name__}")
    return message
