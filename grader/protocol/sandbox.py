"""What the judge may ask the sandbox, and what comes back.

The judge sends one `Request` at a time and waits for its `Reply`; the sandbox
never speaks first except for the lesson file's source (sent before the student's
module runs, for the judge's own reading: `grader.sandbox.source_screen`) and its `Hello`
(the student's module imported, or why not). Targets and handles are numbers in the sandbox's table of objects;
handle 0 is the student's module.

    GetAttr(target, name)           -> the attribute (data, or a handle)
    Call(target, args, kwargs)      -> the return value (data, or handles inside)
    Transform(target, kind, opts)   -> a handle to jit/vmap/grad/... of the target
    Probe(name, args, kwargs)       -> what a registered probe observed (plain data)
    Describe(target)                -> name, type and parameters of the target
    Release(ids)                    -> forget handles

A reply is `Reply(value=...)`, `Reply(error=ErrorInfo)` when student code raised,
or `Reply(fault=...)` when the request itself was invalid (a grader bug).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grader.protocol.value_codec import DecodeError, ErrorInfo

MODULE_HANDLE = 0
TRANSFORMS = frozenset({"jit", "vmap", "grad", "value_and_grad", "partial", "eager"})
MAX_NAME_CHARS = 200


@dataclass(frozen=True)
class Handle:
    """The sandbox-side identity of a value that stayed there."""

    id: int


@dataclass(frozen=True)
class GetAttr:
    target: int
    name: str


@dataclass(frozen=True)
class Call:
    target: int
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Transform:
    target: int
    kind: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Probe:
    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Describe:
    target: int


@dataclass(frozen=True)
class Release:
    ids: tuple[int, ...]


Request = GetAttr | Call | Transform | Probe | Describe | Release


@dataclass(frozen=True)
class Reply:
    value: Any = None
    error: ErrorInfo | None = None
    fault: str = ""
    threads: int = 0  # Python threads the student's code started and left running (its word)


@dataclass(frozen=True)
class Hello:
    """The sandbox's first message: whether the student's module imported."""

    ok: bool
    error: ErrorInfo | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    threads: int = 0  # Python threads the import started and left running (its word)


@dataclass(frozen=True)
class Description:
    name: str
    type: str
    callable: bool
    params: tuple[tuple[str, str], ...]  # (name, kind) as inspect names them
    jitted: bool = False


# -- to and from the wire (values inside are encoded by grader.protocol.value_codec) --------------

_OPS: dict[str, type] = {
    "getattr": GetAttr,
    "call": Call,
    "transform": Transform,
    "probe": Probe,
    "describe": Describe,
    "release": Release,
}
_NAMES = {cls: name for name, cls in _OPS.items()}


def op_name(request: Request) -> str:
    return _NAMES[type(request)]


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_NAME_CHARS:
        raise DecodeError(f"{what} must be a non-empty string")
    return value


def _id(value: Any) -> int:
    if isinstance(value, Handle):
        return value.id
    raise DecodeError("target must be a handle")


def request_from(decoded: Any) -> Request:
    """Validate a decoded request dict (values already decoded) into its frozen type."""
    if not isinstance(decoded, dict) or decoded.get("op") not in _OPS:
        raise DecodeError("not a request")
    op = decoded["op"]
    if op == "getattr":
        return GetAttr(_id(decoded["target"]), _name(decoded["name"], "attribute"))
    if op == "call":
        args, kwargs = decoded.get("args", ()), decoded.get("kwargs", {})
        if (
            not isinstance(args, tuple)
            or not isinstance(kwargs, dict)
            or not all(isinstance(k, str) for k in kwargs)
        ):
            raise DecodeError("call arguments malformed")
        return Call(_id(decoded["target"]), args, kwargs)
    if op == "transform":
        kind = decoded.get("kind")
        options = decoded.get("options", {})
        if kind not in TRANSFORMS or not isinstance(options, dict):
            raise DecodeError(f"unknown transform {kind!r}")
        return Transform(_id(decoded["target"]), kind, options)
    if op == "probe":
        args, kwargs = decoded.get("args", ()), decoded.get("kwargs", {})
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise DecodeError("probe arguments malformed")
        return Probe(_name(decoded["name"], "probe"), args, kwargs)
    if op == "describe":
        return Describe(_id(decoded["target"]))
    ids = decoded.get("ids", ())
    if not isinstance(ids, tuple) or not all(isinstance(i, int) for i in ids):
        raise DecodeError("release ids malformed")
    return Release(ids)


def request_to(request: Request) -> dict[str, Any]:
    out: dict[str, Any] = {"op": op_name(request)}
    for key, value in vars(request).items():
        out[key] = Handle(value) if key == "target" else value
    return out


def _error(value: Any) -> ErrorInfo | None:
    """An error as sent (`ErrorInfo`), or as the receiver rebuilt it (an exception with `.info`)."""
    if value is None:
        return None
    info = getattr(value, "info", value)
    if not isinstance(info, ErrorInfo):
        raise DecodeError("error malformed")
    return info


def reply_from(decoded: Any) -> Reply:
    if not isinstance(decoded, dict):
        raise DecodeError("not a reply")
    error = _error(decoded.get("error"))
    fault = decoded.get("fault", "")
    if not isinstance(fault, str):
        raise DecodeError("reply fault malformed")
    return Reply(
        value=decoded.get("value"), error=error, fault=fault[:2000], threads=_threads(decoded)
    )


def _threads(decoded: dict[str, Any]) -> int:
    threads = decoded.get("threads", 0)
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 0:
        raise DecodeError("threads malformed")
    return threads


MAX_SOURCE_BYTES = 4 << 20


def source_to(source: bytes | None) -> dict[str, Any]:
    """The sandbox's first frame, sent before the student's module runs: the lesson file
    as it is about to be imported (None if it could not be read or is too large)."""
    return {"source": source if source is not None and len(source) <= MAX_SOURCE_BYTES else None}


def is_source(decoded: Any) -> bool:
    return isinstance(decoded, dict) and set(decoded) == {"source"}


def source_from(decoded: Any) -> bytes | None:
    source = decoded.get("source") if isinstance(decoded, dict) else None
    if source is not None and not isinstance(source, bytes):
        raise DecodeError("source malformed")
    return source


def hello_from(decoded: Any) -> Hello:
    if not isinstance(decoded, dict) or not isinstance(decoded.get("ok"), bool):
        raise DecodeError("not a hello")
    error = _error(decoded.get("error"))
    notes = decoded.get("notes", {})
    if not isinstance(notes, dict):
        raise DecodeError("hello malformed")
    return Hello(decoded["ok"], error, notes, _threads(decoded))


def description_from(decoded: Any) -> Description:
    if not isinstance(decoded, dict):
        raise DecodeError("not a description")
    params = decoded.get("params", ())
    if not isinstance(params, tuple) or not all(
        isinstance(p, tuple) and len(p) == 2 and all(isinstance(s, str) for s in p) for p in params
    ):
        raise DecodeError("description params malformed")
    return Description(
        name=_name(decoded.get("name") or "?", "name"),
        type=_name(decoded.get("type") or "?", "type"),
        callable=decoded.get("callable") is True,
        params=params,
        jitted=decoded.get("jitted") is True,
    )
