"""The sandbox's side: import the student's module, then answer the judge, one request at a time.

Runs in the forked sandbox process after `grader.sandbox.isolation` has dropped
its privileges. Objects that are not data stay here in a table and cross as
handles; exceptions raised by student code cross as `ErrorInfo`, with the
student's own line found here (the judge never sees a traceback). Nothing here
decides a grade: the judge does, from what comes back.
"""

from __future__ import annotations

import concurrent.futures.thread
import functools
import importlib.machinery
import importlib.util
import inspect
import linecache
import os
import socket
import sys
import sysconfig
import threading
import time
import traceback
import types
from collections.abc import Callable
from typing import Any

from grader.protocol import sandbox as proto
from grader.protocol import value_codec, wire
from grader.protocol.value_codec import HOLE, DecodeError, ErrorInfo, Hole, Public
from grader.sandbox import decoding

MAX_HANDLES = 100_000


class Server:
    """The table of objects and the operations on them. `Server(module_or_none, lesson_dir)`;
    `handle_frame(msg, buffers)` answers one request (also used in-process by
    `client.local`, so unit tests of the check kinds go through the same code)."""

    def __init__(
        self,
        module: Any,
        lesson_dir: str,
        registry: dict[str, Callable[..., Any]] | None = None,
    ) -> None:
        self.lesson_dir = os.path.realpath(lesson_dir) + os.sep if lesson_dir else ""
        # The probes as they were before the student's module ran (`serve` takes the copy
        # then): a module that rewrites the registry afterwards changes nothing here.
        self.registry = registry
        self.baseline: frozenset[int] | None = None  # the threads before the import (`serve`)
        self.persisting = False  # a thread outlived THREAD_GRACE_S (`threads`)
        self.objects: dict[int, Any] = {proto.MODULE_HANDLE: module}
        self.ids: dict[int, int] = {}  # id(obj) -> handle, so one object keeps one handle
        self.next_id = 1
        global CURRENT
        CURRENT = self

    # -- values ---------------------------------------------------------------------
    def register(self, obj: Any) -> int:
        found = self.ids.get(id(obj))
        if found is not None and self.objects.get(found) is obj:
            return found
        if len(self.objects) >= MAX_HANDLES:
            raise TypeError("too many live handles")
        hid = self.next_id
        self.next_id += 1
        self.objects[hid] = obj
        self.ids[id(obj)] = hid
        return hid

    def _handle_tag(self, obj: Any) -> dict[str, Any]:
        return {
            "t": "handle",
            "id": self.register(obj),
            "type": type(obj).__name__[:100],
            "name": _name(obj)[:100],
            "callable": callable(obj),
        }

    def encode(self, value: Any) -> tuple[Any, list[bytes | memoryview]]:
        enc = value_codec.Encoder(self._handle_tag)
        return enc.encode(value), enc.buffers

    def decode(self, msg: Any, buffers: list[memoryview]) -> Any:
        def handle(tag: dict[str, Any]) -> Any:
            hid = tag["id"]
            if hid not in self.objects:
                raise DecodeError(f"no handle {hid}")
            return proto.Handle(hid)

        return value_codec.Decoder(
            buffers, handle, allow=frozenset({"handle", "hole", "public"})
        ).decode(msg)

    def resolve(self, value: Any) -> Any:
        """Handles to their objects and public inputs to the objects they name, all the way down."""
        if isinstance(value, proto.Handle):
            return self.objects[value.id]
        if isinstance(value, Public):
            from grader.sandbox import public_inputs

            return public_inputs.build(
                value.name, self.resolve(value.args), self.resolve(dict(value.kwargs))
            )
        if type(value) in (tuple, list):
            return type(value)(self.resolve(v) for v in value)
        if type(value) is dict:
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return type(value)(*(self.resolve(v) for v in value))
        return value

    # -- one request ------------------------------------------------------------------
    def handle_frame(
        self, msg: Any, buffers: list[memoryview]
    ) -> tuple[Any, list[bytes | memoryview]]:
        try:
            request = proto.request_from(self.decode(msg, buffers))
        except (DecodeError, KeyError) as exc:
            return self.encode({"fault": f"invalid request: {exc}"})
        try:
            value = self.run(request)
        except Exception as exc:  # student code raised: the judge gets it as data
            return self.encode({"error": self.error_info(exc), "threads": self.threads()})
        except BaseException as exc:  # SystemExit, KeyboardInterrupt, pytest's outcomes
            return self.encode({"error": self.error_info(exc), "threads": self.threads()})
        try:
            return self.encode({"value": value, "threads": self.threads()})
        except TypeError as exc:
            return self.encode({"fault": f"the result could not be sent: {exc}"})

    def run(self, request: proto.Request) -> Any:
        if isinstance(request, proto.GetAttr):
            return getattr(self.objects[request.target], request.name)
        if isinstance(request, proto.Call):
            fn = self.objects[request.target]
            return ready(fn(*self.resolve(request.args), **self.resolve(request.kwargs)))
        if isinstance(request, proto.Transform):
            return _transform(
                self.objects[request.target], request.kind, self.resolve(request.options)
            )
        if isinstance(request, proto.Probe):
            from grader.sandbox.probes import REGISTRY

            fn = (self.registry if self.registry is not None else REGISTRY).get(request.name)
            if fn is None:
                raise LookupError(f"no probe {request.name!r}")
            return fn(*self.resolve(request.args), **self.resolve(request.kwargs))
        if isinstance(request, proto.Describe):
            return describe(self.objects[request.target])
        for hid in request.ids:
            if hid != proto.MODULE_HANDLE:
                obj = self.objects.pop(hid, None)
                self.ids.pop(id(obj), None)
        return None

    def threads(self) -> int:
        """Python threads running now that were not running before the student's module
        was imported (0 for an in-process server). Threads still running are given
        `THREAD_GRACE_S` to end (a library's background thread finishing a save: orbax's);
        once one has outlived it, the count is taken at once from then on."""
        if self.baseline is None:
            return 0
        deadline = 0.0
        while True:
            running = len(thread_ids() - self.baseline)
            if not running or self.persisting:
                return running
            now = _monotonic()
            if not deadline:
                deadline = now + THREAD_GRACE_S
            elif now >= deadline:
                self.persisting = True
                return running
            _sleep(0.005)

    # -- exceptions as data ---------------------------------------------------------------
    def error_info(self, exc: BaseException) -> ErrorInfo:
        location, function = None, ""
        for link in _chain(exc):
            frames = [
                f for f in traceback.extract_tb(link.__traceback__) if self._is_student(f.filename)
            ]
            if frames:
                last = frames[-1]
                path = (
                    os.path.realpath(last.filename)[len(self.lesson_dir) :]
                    if self.lesson_dir
                    else os.path.basename(last.filename)
                )
                code = (last.line or linecache.getline(last.filename, last.lineno or 0)).strip()
                location = (path, int(last.lineno or 0), code)
                function = "" if last.name == "<module>" else last.name
                break
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        in_student = tb is not None and self._is_student(tb.tb_frame.f_code.co_filename)
        message = _message(exc)
        return ErrorInfo(
            type=type(exc).__name__,
            bases=tuple(c.__name__ for c in type(exc).__mro__[1:]),
            message=message,
            location=location,
            function=function,
            in_student=in_student,
        )

    def _is_student(self, filename: str) -> bool:
        """A line of the lesson file; for an in-process server (no lesson folder: tests of the
        check kinds), any line outside Python, the installed libraries and the grader."""
        if self.lesson_dir:
            return os.path.realpath(filename).startswith(self.lesson_dir)
        return not is_library(filename)


def is_library(filename: str) -> bool:
    """A frame of Python, an installed library or the grader (or generated code: `<...>`)."""
    return filename.startswith("<") or os.path.realpath(filename).startswith(_LIBRARY_ROOTS)


_LIBRARY_ROOTS = tuple(
    {
        os.path.realpath(p) + os.sep
        for p in (
            sysconfig.get_paths()["stdlib"],
            sysconfig.get_paths()["purelib"],
            sysconfig.get_paths()["platlib"],
            os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
    }
)


CURRENT: Server | None = None
"""The server of this process (probes use it to turn exceptions into data)."""


def _message(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # a hostile __str__
        text = "<unprintable>"
    return text[:4000]


def _chain(exc: BaseException) -> list[BaseException]:
    out, seen = [], set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _name(obj: Any) -> str:
    while isinstance(obj, functools.partial):
        obj = obj.func
    try:
        return str(
            getattr(inspect.unwrap(obj), "__name__", None)
            or getattr(obj, "__name__", "")
            or type(obj).__name__
        )
    except Exception:
        return type(obj).__name__


def ready(value: Any) -> Any:
    """Wait for JAX's asynchronous results, so their errors surface here."""
    jax = sys.modules.get("jax")
    if jax is not None:
        return jax.block_until_ready(value)
    return value


def describe(obj: Any) -> dict[str, Any]:
    params: list[tuple[str, str]] = []
    try:
        sig = inspect.signature(obj)
        params = [(p.name, p.kind.name) for p in sig.parameters.values()]
    except (TypeError, ValueError):
        pass
    jitted = callable(getattr(obj, "_cache_size", None)) and hasattr(obj, "lower")
    return {
        "name": _name(obj) or "?",
        "type": type(obj).__name__ or "?",
        "callable": callable(obj),
        "params": tuple(params),
        "jitted": jitted,
    }


def _transform(fn: Any, kind: str, options: dict[str, Any]) -> Any:
    import jax

    if kind == "jit":
        return jax.jit(fn, **_pick(options, "static_argnames", "static_argnums", "donate_argnums"))
    if kind == "vmap":
        return jax.vmap(fn, **_pick(options, "in_axes", "out_axes", "axis_name", "axis_size"))
    if kind == "grad":
        return jax.grad(fn, **_pick(options, "argnums", "has_aux"))
    if kind == "value_and_grad":
        return jax.value_and_grad(fn, **_pick(options, "argnums", "has_aux"))
    if kind == "eager":
        return fn
    return _partial(fn, tuple(options.get("args", ())), dict(options.get("kwargs", {})))


def _pick(options: dict[str, Any], *names: str) -> dict[str, Any]:
    unknown = set(options) - set(names)
    if unknown:
        raise TypeError(f"unknown transform options {sorted(unknown)}")
    return dict(options)


def _partial(
    fn: Callable[..., Any], bound: tuple[Any, ...], kwargs: dict[str, Any]
) -> Callable[..., Any]:
    """`fn` with some positional arguments bound and the `HOLE`s left for the caller."""
    holes = sum(isinstance(a, Hole) for a in bound)

    @functools.wraps(fn)
    def bound_fn(*args: Any, **more: Any) -> Any:
        it = iter(args[:holes])
        filled = [next(it) if isinstance(a, Hole) else a for a in bound]
        return fn(*filled, *args[holes:], **kwargs, **more)

    return bound_fn


# -- the sandbox process ------------------------------------------------------------------


def values_encode(value: Any) -> tuple[Any, list[bytes | memoryview]]:
    """Plain data (no handles) encoded for the wire."""

    def no_handles(obj: Any) -> dict[str, Any]:
        raise TypeError(f"{type(obj).__name__} is not data")

    enc = value_codec.Encoder(no_handles)
    return enc.encode(value), enc.buffers


class LessonLoader(importlib.machinery.SourceFileLoader):
    """The lesson file's loader: its bytes decoded as `python3 lesson.py` decodes them
    (`grader.sandbox.decoding`: PEP 263, a byte that is not of the file's encoding is
    Python's SyntaxError), then compiled. No bytecode is read or written: the code run is
    always the file's."""

    def get_code(self, fullname: str) -> types.CodeType:
        path = self.get_filename(fullname)
        source = decoding.text(self.get_data(path), os.path.basename(path))
        return compile(source, path, "exec", dont_inherit=True)


def import_lesson(
    lesson: str, lesson_dir: str
) -> tuple[types.ModuleType | None, BaseException | None]:
    path = os.path.join(lesson_dir, f"{lesson}.py")
    if not os.path.isfile(path):
        return None, FileNotFoundError(f"no {lesson}.py in {lesson_dir}")
    if lesson_dir not in sys.path:  # last: no lesson folder file shadows an installed module
        sys.path.append(lesson_dir)
    spec = importlib.util.spec_from_file_location(lesson, path, loader=LessonLoader(lesson, path))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[lesson] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # SystemExit included: the judge reports it
        sys.modules.pop(lesson, None)
        return None, exc
    return module, None


def read_source(lesson: str, lesson_dir: str) -> bytes | None:
    """The lesson file's bytes as they are before it is imported (None if unreadable or
    larger than the judge reads)."""
    try:
        with open(os.path.join(lesson_dir, f"{lesson}.py"), "rb") as fh:
            data = fh.read(proto.MAX_SOURCE_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= proto.MAX_SOURCE_BYTES else None


def thread_ids() -> frozenset[int]:
    """The Python threads running now, read through a reference bound before the student's
    module ran (`serve` compares them before and after its import), less the idle workers
    of a library's thread pool (`idle_pool_worker`)."""
    return frozenset(tid for tid, top in _current_frames().items() if not idle_pool_worker(top))


def idle_pool_worker(top: Any) -> bool:
    """Whether a thread whose innermost Python frame is `top` is a `concurrent.futures` pool
    worker running only library code: its stack is the standard library's thread start, the
    pool's `_worker` loop (compared by code object, bound before the student's module ran)
    and, above it, frames of files in the Python installation alone (waiting for work, or
    finishing a library's task: orbax's checkpointers keep such a pool and complete their
    futures there). A thread running any code of the lesson file has one of its frames."""
    frames = []
    frame = top
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    frames.reverse()  # outermost first
    starts = 0
    while starts < len(frames) and frames[starts].f_code in _THREAD_START:
        starts += 1
    if starts == 0 or starts >= len(frames) or frames[starts].f_code is not _POOL_WORKER:
        return False
    return all(f.f_code.co_filename.startswith(_INSTALLATION_ROOTS) for f in frames[starts + 1 :])


_current_frames = sys._current_frames
_monotonic = time.monotonic  # bound before the student's module runs, as above
_sleep = time.sleep
THREAD_GRACE_S = 0.25
_POOL_WORKER = concurrent.futures.thread._worker.__code__
_THREAD_START = frozenset(
    getattr(threading.Thread, name).__code__ for name in ("_bootstrap", "_bootstrap_inner", "run")
)
# The Python installation alone (not the grader): what a library's pool worker may run.
_INSTALLATION_ROOTS = tuple(
    {
        os.path.join(os.path.realpath(sysconfig.get_paths()[key]), "")
        for key in ("stdlib", "platstdlib", "purelib", "platlib")
    }
    | {os.path.join(os.path.dirname(os.path.realpath(concurrent.futures.thread.__file__)), "")}
)


def serve(
    sock: socket.socket, lesson: str, lesson_dir: str, notes: dict[str, Any] | None = None
) -> None:
    """Send the lesson file's source, import the lesson, say hello, answer requests until
    the judge hangs up. The source and the probes are taken before the student's module
    runs: what it does afterwards cannot change what the judge reads or which code a probe
    runs."""
    from grader.sandbox.probes import REGISTRY

    registry = dict(REGISTRY)
    first, first_buffers = values_encode(proto.source_to(read_source(lesson, lesson_dir)))
    wire.send(sock, first, first_buffers)
    before = thread_ids()
    module, exc = import_lesson(lesson, lesson_dir)
    server = Server(module, lesson_dir, registry)
    server.baseline = before
    hello: dict[str, Any] = {"ok": exc is None, "notes": notes or {}, "threads": server.threads()}
    if exc is not None:
        hello["error"] = server.error_info(exc)
    first, first_buffers = server.encode(hello)
    wire.send(sock, first, first_buffers)
    while True:
        try:
            msg, buffers = wire.receive(sock)
        except wire.WireError:
            return
        reply, out = server.handle_frame(msg, buffers)
        try:
            wire.send(sock, reply, out)
        except wire.WireError as err:
            wire.send(sock, *server.encode({"fault": str(err)}))
        except OSError:
            return


__all__ = ["HOLE", "Server", "describe", "import_lesson", "ready", "serve"]
