"""The judge's view of the sandbox: handles, student errors as exceptions, transforms.

A suite reads as it always did:

    student.piecewise(x)                          # Call: returns data, or raises StudentError
    fast = client.jit(student.newton_sqrt, static_argnames=("n_iters",))   # a new handle
    seen = client.probe(traces.count_traces, student.running_sum, ...)     # an observation

`student` is a `Remote` for the module; its attributes are `Remote`s (functions,
objects) or data (constants). Nothing the sandbox sends is a student object:
values are rebuilt from validated data, exceptions become `StudentError`s that
carry the student's type name, message and line.

For unit tests of the check kinds and for trusted code, `local(fn)` wraps a plain
function in an in-process sandbox (`server.Server`): the same requests, the same
encoding, no process boundary.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import select
import socket
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from grader.protocol import sandbox as proto
from grader.protocol import value_codec, wire
from grader.protocol.failure import CheckFailure
from grader.protocol.value_codec import HOLE, ErrorInfo, Public
from grader.sandbox import source_screen

__all__ = [
    "HOLE",
    "NotCalled",
    "Public",
    "Remote",
    "SandboxGone",
    "StudentError",
    "describe",
    "grad",
    "jit",
    "local",
    "partial",
    "probe",
    "value_and_grad",
    "vmap",
]


class SandboxGone(BaseException):
    """The sandbox died, stopped answering or broke the protocol: no more student code runs.

    A BaseException, like KeyboardInterrupt: a check's `except Exception` (one failing
    example among many, one case of several) must not swallow the end of the sandbox."""


ALREADY_GONE = "it had already stopped in an earlier check"
TIMED_OUT = "no answer before"
"""How every time-out's reason starts: the file's limit, or the check's share of it."""
FILE_LIMIT = TIMED_OUT + " the time limit"
CHECK_SHARE = TIMED_OUT + " the end of this check's share of the time limit"
PROTOCOL_BREAK = "the sandbox broke the protocol"
"""How the reason starts when the judge could not read what the sandbox sent (any error
while receiving or decoding a frame): the sandbox is stopped, as if it had ended."""


CPU_POLL_S = 0.25
"""How often the judge reads the sandbox's CPU time while it waits for an answer."""


@dataclass
class Reached:
    """What of the student's module the judge reached while it was being tracked (a check, or
    a run shared by several checks): the module's names it looked up, and `whole` when it
    handed the module itself to code in the sandbox (a probe that replaces one of its
    functions may reach any of it). `grade watch` reuses the verdicts of checks whose
    names' code did not change (`grader.runner.reuse`)."""

    names: set[str] = field(default_factory=set)
    whole: bool = False


class NotCalled(BaseException):
    """A student function that stopped an earlier sandbox of this file (it ran past a check's
    time share, or ended the process) is not called again: the check it is in is not judged.
    A BaseException, as `SandboxGone`: no check's `except Exception` may take it for a value."""

    def __init__(self, function: str) -> None:
        self.function = function
        super().__init__(function)


class StudentError(Exception):
    """An exception raised by student code in the sandbox, as the judge sees it."""

    info: ErrorInfo

    def __init__(self, info: ErrorInfo) -> None:
        super().__init__(info.message)
        self.info = info

    @property
    def type_name(self) -> str:
        return self.info.type

    def is_a(self, name: str) -> bool:
        return self.info.is_a(name)


_MIRRORED = (
    "ValueError",
    "TypeError",
    "NotImplementedError",
    "IndexError",
    "KeyError",
    "AttributeError",
    "ZeroDivisionError",
    "ArithmeticError",
    "OverflowError",
    "FloatingPointError",
    "RuntimeError",
    "RecursionError",
    "NameError",
    "UnboundLocalError",
    "LookupError",
    "MemoryError",
    "AssertionError",
    "OSError",
    "FileNotFoundError",
    "IsADirectoryError",
    "NotADirectoryError",
    "PermissionError",
    "FileExistsError",
    "EOFError",
    "ImportError",
    "ModuleNotFoundError",
)
_CLASSES: dict[str, type[StudentError]] = {}


def _error_class(name: str, base: type[BaseException] | None) -> type[StudentError]:
    """A StudentError subclass *named* like the student's exception (so messages built with
    `type(exc).__name__` say `ValueError`, `ConcretizationTypeError`), and for the common
    builtins also a subclass of the builtin itself."""
    key = f"{name}/{base.__name__ if base else ''}"
    cls = _CLASSES.get(key)
    if cls is None:
        bases: tuple[type, ...] = (StudentError, base) if base is not None else (StudentError,)
        cls = type(
            name if name.isidentifier() else "StudentError", bases, {"__module__": "student"}
        )
        _CLASSES[key] = cls
    return cls


def student_error(info: ErrorInfo) -> StudentError:
    """A `StudentError` that is also the builtin exception the student raised (when it is one
    of the common ones), so `except NotImplementedError` in a check means what it says.

    Built by calling the class (`MemoryError.__new__` refuses to be called on another class's
    behalf); should the builtin refuse even that, a plain `StudentError` of the same name:
    whatever the student raised comes through as the student's error."""
    base = next((getattr(builtins, n) for n in (info.type, *info.bases) if n in _MIRRORED), None)
    try:
        return _error_class(info.type, base)(info)
    except Exception:
        return _error_class(info.type, None)(info)


MAX_IMPORTED_LESSONS = 32
"""Lesson files the judge reads for one module through its imports (`Channel.tampering`)."""


class Channel:
    """Requests to one sandbox and their replies (one at a time)."""

    def __init__(
        self,
        sock: socket.socket | None,
        *,
        call_timeout_s: float = 600.0,
        on_timeout: Callable[[], None] | None = None,
        on_break: Callable[[], None] | None = None,
        deadline: float | None = None,
    ) -> None:
        self._sock = sock
        self.call_timeout_s = call_timeout_s
        self.deadline = deadline  # time.monotonic() by which every answer must be in
        self._on_timeout = on_timeout
        self._on_break = on_break  # stops the sandbox after a protocol break (`launch`)
        self.stop_reason = ""  # why the judge itself stopped the sandbox (its write quota)
        self.killed_here = False  # the judge sent the signal that ended it (`launch`)
        self.lessons = ""  # the lesson files as the judge got them (the sandbox's are a copy)
        self.gone: str = ""
        self.module = Remote(self, proto.MODULE_HANDLE, "module", "module", False)
        self.check_deadline: float | None = None  # the running check's share ends (the plugin)
        self.cpu_seconds: Callable[[], float] | None = None  # the sandbox's CPU time (launch)
        self.cpu_limit: float | None = None  # the running check's CPU share ends at this reading
        self.calling = ""  # the student function a request in flight runs
        self.lost_in = ""  # the one that was running when the sandbox stopped
        self.stopped: frozenset[str] = frozenset()  # functions not to call (`NotCalled`)
        self.stuck: tuple[tuple[str, int, str], ...] = ()  # (path, line, function) when a
        # share ran out: the sandbox's own stack, innermost first (`launch`; its word only)
        self.source: bytes | None = None  # the lesson file, sent before the student's code ran
        self.threads_started = 0  # Python threads its code left running (the sandbox's word)
        self.answers = 0  # replies that brought the judge something of the student's: every
        # reply but a function looked up by name (the plugin: whose exception a check raised)
        self._screened: list[source_screen.Finding] | None = None
        self._reaching: list[Reached] = []  # the check's, then the shared runs' within it

    # -- what a check reaches (`Reached`) ------------------------------------------------
    def reach(self) -> Reached:
        """Track what the module's handle reaches from now on (a check begins), afresh."""
        reached = Reached()
        self._reaching = [reached]
        return reached

    @contextlib.contextmanager
    def reaching(self) -> Iterator[Reached]:
        """Track what is reached inside the block on its own as well (a run that later
        checks share: `note` gives it to each of them)."""
        inner = Reached()
        self._reaching.append(inner)
        try:
            yield inner
        finally:
            self._reaching.remove(inner)

    def note(self, names: Iterable[str] = (), whole: bool = False) -> None:
        """Count `names` (and the `whole` module) as reached by what is tracked now."""
        names = tuple(names)
        for reached in self._reaching:
            reached.names.update(names)
            reached.whole = reached.whole or whole

    def replay(self) -> None:
        """A check reads what the student's code gave an earlier check (a run shared by
        several checks): it counts as an answer of this check, so that an exception the
        suite raises on it stays the student's (`grader.plugin.blame`)."""
        self.answers += 1

    # -- encoding -------------------------------------------------------------------------
    def _encode(self, value: Any) -> tuple[Any, list[bytes | memoryview]]:
        def other(obj: Any) -> dict[str, Any]:
            if isinstance(obj, Remote):
                if obj._channel is not self:
                    raise TypeError("a handle of another sandbox cannot be sent here")
                if obj._id == proto.MODULE_HANDLE:
                    self.note(whole=True)
                return {"t": "handle", "id": obj._id}
            if isinstance(obj, proto.Handle):  # a request's target
                return {"t": "handle", "id": obj.id}
            return self._local_object(obj)

        enc = value_codec.Encoder(other)
        return enc.encode(value), enc.buffers

    def _local_object(self, obj: Any) -> dict[str, Any]:
        raise TypeError(
            f"{type(obj).__name__} objects of the judge cannot be sent to the sandbox: pass data, "
            "a handle (student.fn), client.partial(...) or client.Public(name, ...)"
        )

    def _decode(self, msg: Any, buffers: list[memoryview]) -> Any:
        def handle(tag: dict[str, Any]) -> Remote:
            def text(key: str) -> str:
                v = tag.get(key, "")
                return v[:100] if isinstance(v, str) else ""

            return Remote(self, tag["id"], text("name"), text("type"), tag.get("callable") is True)

        return value_codec.Decoder(
            buffers, handle, allow=frozenset({"handle", "error"}), error=student_error
        ).decode(msg)

    # -- transport ------------------------------------------------------------------------
    def _exchange(
        self, msg: Any, buffers: list[bytes | memoryview], timeout_s: float
    ) -> tuple[Any, list[memoryview]]:
        if self.stop_reason and not self.gone:  # stopped between requests (`stop_reason`)
            self.gone = self.stop_reason
        if self.gone:
            raise SandboxGone(f"{ALREADY_GONE}: {self.gone}")
        assert self._sock is not None
        until = time.monotonic() + timeout_s
        if self.deadline is not None:
            until = min(until, self.deadline)
        share_binds = self.check_deadline is not None and self.check_deadline < until
        if self.check_deadline is not None:
            until = min(until, self.check_deadline)
        try:
            wire.send(self._sock, msg, buffers)
        except OSError as exc:
            self._lose(f"the sandbox process ended ({exc})")
        try:
            if self.cpu_limit is not None and self._over_cpu_share(until):
                self._lose(CHECK_SHARE, timeout=True)
            return wire.receive(self._sock, until)
        except wire.Timeout:
            self._lose(CHECK_SHARE if share_binds else FILE_LIMIT, timeout=True)
        except (wire.Closed, OSError) as exc:
            self._lose(f"the sandbox process ended ({exc})")
        except Exception as exc:  # a frame we cannot read (RecursionError in its JSON, ...)
            self._break(exc)
        raise AssertionError("unreachable")

    def _break(self, exc: Exception) -> None:
        """What the sandbox sent cannot be read: its fault; it is stopped like a crash."""
        self._lose(f"{PROTOCOL_BREAK} ({type(exc).__name__}: {str(exc)[:200]})", stop=True)

    def _over_cpu_share(self, until: float) -> bool:
        """Wait for the answer to start (not past `until`), watching the sandbox's CPU time:
        True when it used up the running check's CPU share first. CPU time, not wall time, so
        a loaded machine (a batch, a busy laptop) slows a correct check without failing it."""
        assert self._sock is not None and self.cpu_seconds is not None
        while (left := until - time.monotonic()) > 0:
            ready, _, _ = select.select([self._sock], [], [], min(left, CPU_POLL_S))
            if ready:
                return False
            limit = self.cpu_limit
            if limit is not None and self.cpu_seconds() > limit:
                return True
        return False

    def _lose(self, why: str, *, timeout: bool = False, stop: bool = False) -> None:
        why = self.stop_reason or why
        self.gone = why
        self.lost_in = self.calling
        if timeout and self._on_timeout is not None:
            self._on_timeout()
        elif stop and self._on_break is not None:
            self._on_break()
        if self._sock is not None:
            self._sock.close()
        raise SandboxGone(why)

    def hello(self, timeout_s: float) -> proto.Hello:
        if self._sock is None:
            return proto.Hello(True)
        until = time.monotonic() + timeout_s
        if self.deadline is not None:
            until = min(until, self.deadline)
        try:
            msg, buffers = wire.receive(self._sock, until)
            decoded = self._decode(msg, buffers)
            if proto.is_source(decoded):  # the first frame: sent before the student's code ran
                self.source = proto.source_from(decoded)
                msg, buffers = wire.receive(self._sock, until)
                decoded = self._decode(msg, buffers)
            hello = proto.hello_from(decoded)
            self.threads_started = hello.threads
            return hello
        except wire.Timeout:
            self._lose(
                FILE_LIMIT + ": the lesson file did not finish importing",
                timeout=True,
            )
        except (wire.Closed, OSError) as exc:
            self._lose(f"the sandbox process ended while importing the lesson file ({exc})")
        except Exception as exc:  # a hello we cannot read
            self._break(exc)
        raise AssertionError("unreachable")

    def request(self, request: proto.Request, timeout_s: float | None = None) -> Any:
        """Send `request`; its value, or raise `StudentError` / `SandboxGone`."""
        try:
            msg, buffers = self._encode(proto.request_to(request))
        except TypeError as exc:
            raise TypeError(f"cannot send to the sandbox: {exc}") from None
        raw, out = self._exchange(msg, buffers, timeout_s or self.call_timeout_s)
        try:
            reply = proto.reply_from(self._decode(raw, out))
        except Exception as exc:  # DecodeError, or anything a forged frame makes decoding raise
            self._break(exc)
            raise AssertionError("unreachable") from None
        looked_up = (  # a function of the lesson's, looked up: the call to it is the answer
            isinstance(request, proto.GetAttr)
            and isinstance(reply.value, Remote)
            and reply.value._callable
        )
        if reply.error is not None or reply.fault or not looked_up:
            self.answers += 1
        if reply.threads > self.threads_started:  # the student's code started a thread
            self.threads_started = reply.threads
            self._screened = None
        if reply.error is not None:
            raise student_error(reply.error)
        if reply.fault:
            raise RuntimeError(f"grader: the sandbox refused a request: {reply.fault}")
        return reply.value

    @contextlib.contextmanager
    def running(self, function: str) -> Iterator[None]:
        """A request that runs the student's `function` (what a time-out or a crash names);
        `NotCalled` if it stopped an earlier sandbox of this file."""
        if function in self.stopped:
            raise NotCalled(function)
        outer, self.calling = self.calling, function or self.calling
        try:
            yield
        finally:
            self.calling = outer

    def tampering(self) -> list[source_screen.Finding]:
        """What in the student's module can change what a probe observes (`source_screen`): the
        judge's own reading of the source, and threads its import left running."""
        if self._sock is None:  # a local channel: trusted code only
            return []
        if self._screened is None:
            found = source_screen.findings(self.source) + self._imported_lessons()
            if self.threads_started:
                found.append(
                    source_screen.Finding(
                        0, f"left {self.threads_started} thread(s) running beside it"
                    )
                )
            self._screened = found
        return self._screened

    def _imported_lessons(self) -> list[source_screen.Finding]:
        """Another lesson file the module imports runs in the same process: its text, read
        by the judge from its own copy (`lessons`, which the sandbox cannot write), is
        screened too, and whatever it imports in turn."""
        if not self.lessons:
            return []
        out: list[source_screen.Finding] = []
        seen: set[str] = set()
        todo: list[tuple[bytes | None, int]] = [(self.source, -1)]
        while todo and len(seen) < MAX_IMPORTED_LESSONS:
            source, via = todo.pop()
            for line, root in source_screen.imported(source):
                path = os.path.join(self.lessons, f"{root}.py")
                if root in seen or not os.path.isfile(path):
                    continue
                seen.add(root)
                try:
                    with open(path, "rb") as fh:
                        data = fh.read(source_screen.MAX_SOURCE_BYTES + 1)
                except OSError:
                    data = None
                for found in source_screen.findings(data):
                    where = line if via < 0 else via
                    out.append(source_screen.Finding(where, f"imports `{root}.py`, whose {found}"))
                todo.append((data, line if via < 0 else via))
        return out

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self.gone = self.gone or "closed"


class Remote:
    """A value that stayed in the sandbox: call it, read its attributes, pass it back."""

    __slots__ = ("_callable", "_channel", "_id", "_name", "_type")

    def __init__(
        self, channel: Channel, hid: int, name: str, type_name: str, is_callable: bool
    ) -> None:
        self._channel = channel
        self._id = hid
        self._name = name
        self._type = type_name
        self._callable = is_callable

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        with self._channel.running(self._name):
            return self._channel.request(proto.Call(self._id, args, kwargs))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if self._id == proto.MODULE_HANDLE:
            self._channel.note((name,))
        try:
            return self._channel.request(proto.GetAttr(self._id, name))
        except StudentError as exc:
            if exc.is_a("AttributeError"):
                raise AttributeError(
                    f"{self._name or 'the module'} has no attribute {name!r}"
                ) from None
            raise

    @property
    def __name__(self) -> str:
        return self._name or "fn"

    @property
    def is_function(self) -> bool:
        """Whether the object in the sandbox is callable (a function, a jitted function)."""
        return self._callable

    @property
    def type_name(self) -> str:
        """The name of the object's type in the sandbox ("generator", "function", ...)."""
        return self._type

    def __repr__(self) -> str:
        return f"<student {self._type} {self._name}>"

    def __reduce__(self) -> Any:
        raise TypeError("a sandbox handle cannot be copied or pickled")

    def __deepcopy__(self, memo: Any) -> Remote:
        return self

    def __copy__(self) -> Remote:
        return self


# -- operations on handles ---------------------------------------------------------------


class _Local(Channel):
    """An in-process sandbox for trusted functions (tests of the check kinds, public inputs):
    the same requests and encoding as a real one."""

    def __init__(self) -> None:
        from grader.sandbox.server import Server

        super().__init__(None)
        self.server = Server(None, "")

    def _local_object(self, obj: Any) -> dict[str, Any]:
        return {"t": "handle", "id": self.server.register(obj)}

    def _exchange(
        self, msg: Any, buffers: list[bytes | memoryview], timeout_s: float
    ) -> tuple[Any, list[memoryview]]:
        # Through the real codec both ways: the server decodes what the judge encoded.
        reply, out = self.server.handle_frame(msg, [memoryview(bytes(b)) for b in buffers])
        return reply, [memoryview(bytes(b)) for b in out]


_LOCAL: _Local | None = None


def local(obj: Any) -> Remote:
    """`obj` (a trusted, in-process function or object) as a handle of the local sandbox."""
    global _LOCAL
    if _LOCAL is None:
        _LOCAL = _Local()
    return Remote(
        _LOCAL, _LOCAL.server.register(obj), _callable_name(obj), type(obj).__name__, callable(obj)
    )


def _callable_name(obj: Any) -> str:
    from grader.sandbox.server import _name

    return _name(obj)


def handle(fn: Any) -> Remote:
    """`fn` as a handle: itself if it is one, else a local handle (trusted code only)."""
    return fn if isinstance(fn, Remote) else local(fn)


def channel_of(*trees: Any) -> Channel:
    """The sandbox the handles in `trees` belong to (the in-process one when none)."""
    return _channel_of(*trees)


def _channel_of(*trees: Any) -> Channel:
    found: list[Channel] = []

    def walk(v: Any, depth: int = 0) -> None:
        if isinstance(v, Remote):
            found.append(v._channel)
        elif depth < 8 and isinstance(v, list | tuple):
            for x in v:
                walk(x, depth + 1)
        elif depth < 8 and isinstance(v, dict):
            for x in v.values():
                walk(x, depth + 1)

    for t in trees:
        walk(t)
    channels = {id(c): c for c in found}
    if len(channels) > 1:
        raise TypeError("handles of two sandboxes in one request")
    if channels:
        return found[0]
    local(None)
    assert _LOCAL is not None
    return _LOCAL


def _transform(fn: Any, kind: str, **options: Any) -> Remote:
    h = handle(fn)
    value = h._channel.request(proto.Transform(h._id, kind, options))
    assert isinstance(value, Remote)
    return value


def jit(fn: Any, **options: Any) -> Remote:
    """`jax.jit(fn, **options)`, built in the sandbox."""
    return _transform(fn, "jit", **options)


def vmap(fn: Any, **options: Any) -> Remote:
    return _transform(fn, "vmap", **options)


def grad(fn: Any, **options: Any) -> Remote:
    return _transform(fn, "grad", **options)


def value_and_grad(fn: Any, **options: Any) -> Remote:
    return _transform(fn, "value_and_grad", **options)


def partial(fn: Any, *args: Any, **kwargs: Any) -> Remote:
    """`fn` with arguments bound in the sandbox; `HOLE` marks a positional argument the
    caller fills: `partial(student.dropout, HOLE, x, 0.3)(key)` is `dropout(key, x, 0.3)`."""
    return _transform(fn, "partial", args=args, kwargs=kwargs)


def describe(fn: Any) -> proto.Description:
    h = handle(fn)
    return proto.description_from(h._channel.request(proto.Describe(h._id)))


def probe(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run the registered probe `fn` in the sandbox that owns the handles among `args`
    (in-process for local values) and return what it observed.

    An observation is credited only where the judge's own reading of the student's module
    finds nothing that could tamper with it (`require_observable`); a probe whose result
    the judge verifies itself (`probes.judged`) is run whatever the module does."""
    __tracebackhide__ = True
    from grader.sandbox.probes import JUDGED, REGISTRY, name_of

    name = name_of(fn)
    if REGISTRY.get(name) is not fn:
        raise TypeError(f"{name} is not a registered probe (decorate it with @probe)")
    channel = _channel_of(args, kwargs)
    if name not in JUDGED:
        require_observable(channel)
    if isinstance(channel, _Local):
        args, kwargs = _localise((args, kwargs))
    studied = next((a._name for a in (*args, *kwargs.values()) if isinstance(a, Remote)), "")
    with channel.running(studied):
        seen = channel.request(proto.Probe(name, args, kwargs))
    if name not in JUDGED:  # a thread the student's code started while it was observed
        require_observable(channel)
    return seen


def require_observable(where: Any) -> None:
    """Raise the check's failure (`ObservationRefused`) when the student's module (of
    `where`: a channel, or a handle of it) can tamper with what the sandbox observes: no
    credit for observations. It is raised before the probe runs, so a result a suite keeps
    for later checks (`grader.suites._shared.once`) is the refusal itself, raised again
    to each of them."""
    __tracebackhide__ = True
    channel = where if isinstance(where, Channel) else _channel_of(where)
    found = channel.tampering()
    if found:
        raise refusal(found)


class ObservationRefused(CheckFailure):
    """A check's evidence is observed in the sandbox beside a module that can tamper with
    it (`source_screen`): no credit for it, and no verdict on what it would have shown
    (`grader.plugin.gates` says so rather than "values are wrong")."""


def refusal(found: list[source_screen.Finding]) -> ObservationRefused:
    """The failure of a check whose observations `found` withhold credit from."""
    return ObservationRefused(
        "the grader's observation of your code, made in the process that runs it",
        expected="a lesson file that leaves the grader, JAX's functions and the process "
        "alone, so what runs beside your code can be believed",
        observed=f"your module {source_screen.message(found)}",
        cause="this check's evidence is observed inside the process running your module, and "
        "what your module does there can change what is observed; the grader gives no credit "
        "for such observations (your values are still checked, in the grader)",
        fix="remove it: a lesson file needs no threads, no frames, no reassigned library "
        "functions and no reach into the grader or the interpreter",
    )


def _localise(tree: Any) -> Any:
    """Plain callables among a local probe's arguments become local handles."""
    if isinstance(tree, Remote):
        return tree
    if callable(tree) and not isinstance(tree, type):
        return local(tree)
    if type(tree) in (tuple, list):
        return type(tree)(_localise(v) for v in tree)
    if type(tree) is dict:
        return {k: _localise(v) for k, v in tree.items()}
    return tree
