"""The warm worker: imports JAX once, then forks one bounded child per exercise.

Started by the parent as `python -I -c "...worker import main; main()"`. It
imports the heavy libraries the suites use (JAX, optax, chex, pytest,
hypothesis, matplotlib, scikit-learn) without initialising a JAX backend, then
serves requests (`grader.protocol.worker_messages`), one JSON line each on stdin,
answering one JSON line each on stdout. For every request it forks a child, the
judge (see `grader.runner.child`), and supervises it: drains and caps its
output and its records (a pipe of their own: the judge never writes them to a
file a sandbox could find), enforces the wall-clock timeout by killing the
child's whole process group, and reports how the child ended.

Nothing outlives a file's grading: the worker is a subreaper, so a daemon that
student code double-forked is reparented to it; after the child has ended the
worker kills and reaps every process left, and only then replies.

A child is a copy of this warm process, so JAX is never imported from scratch
per exercise, yet each exercise runs in its own address space: what one
submission does (globals, monkeypatching, crashes) cannot reach another.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from grader.protocol import records, worker_messages
from grader.protocol.worker_messages import Ended, Message, Ready, Request, Started
from grader.runner import budget
from grader.sandbox import isolation, shared_programs, sysv

# Always imported before the first fork; the suites' own imports are added to these.
REAP_TIMEOUT_S = 10.0
"""How long the worker keeps killing what a file's grading left behind."""
PRELOAD = (
    "jax",
    "jax.numpy",
    "jax.extend",
    "numpy",
    "chex",
    "pytest",
    "hypothesis",
    "grader.plugin",
)


def preload(extra: list[str]) -> None:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("MPLBACKEND", "Agg")
    import importlib

    for name in (*PRELOAD, *extra):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    # The probes, which the sandbox runs (`grader.sandbox.probes.load_all`), not the check
    # kinds: a sandbox is forked from this process's heap, and the judge imports the checks
    # its suite uses itself, after its sandbox is forked (~0.01 s per judge).
    for name in ("grader.probes",):
        with contextlib.suppress(ImportError):
            pkg = importlib.import_module(name)
            for mod in sorted(os.listdir(os.path.dirname(pkg.__file__ or ""))):
                if mod.endswith(".py") and not mod.startswith("__"):
                    importlib.import_module(f"{name}.{mod[:-3]}")
    warm_up()


def no_local_constants() -> None:
    """Hypothesis draws now and then a constant found in the source of the "local" modules
    loaded (`hypothesis.internal.conjecture.providers._get_local_constants`: every module
    outside site-packages and the standard library), parsing each new one it sees: the
    grader's own modules when it runs from a checkout or `PYTHONPATH`, none when installed.
    So a derandomised search drew other inputs from a checkout than from an installation,
    and each judge parsed the modules it imported after the fork (~0.2 CPU-s). Here no
    module is local: every search draws as an installed grader's does."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:
        return
    empty = getattr(providers, "_local_constants", None)
    if empty is None or not hasattr(providers, "_get_local_constants"):
        return
    nothing = type(empty)()
    providers._get_local_constants = lambda: nothing


def warm_up() -> None:
    """Run once here what every judge would otherwise pay for on its first check: a
    Hypothesis search (its engine's first run costs ~0.2 s; a fork inherits it warm).

    NumPy only, so no JAX backend starts here (a judge sets its devices before its own);
    derandomized and without a database, so it changes no state a judge's search reads
    (each of those is derandomized or seeded on its own)."""
    try:
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import strategies as st
    except ImportError:
        return
    no_local_constants()

    @settings(
        max_examples=3,
        deadline=None,
        database=None,
        derandomize=True,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
    )
    @given(st.floats(-1, 1, width=32), st.lists(st.integers(0, 3), max_size=3))
    def search(x: float, xs: list[int]) -> None:
        pass

    with contextlib.suppress(Exception):
        search()
    warm_lapack()
    share_ir_contexts()


def warm_lapack() -> None:
    """Load JAX's LAPACK routines once here (`scipy.linalg`'s, found through `jaxlib`): every
    program a judge runs through `jax.export` (`grader.checks.exported`) asks for them on its
    first lowering, which cost each judge 0.2-0.4 s of importing SciPy. No backend starts."""
    with contextlib.suppress(Exception):
        from jax._src.lax import linalg

        linalg.initialize_lapack()  # type: ignore[no-untyped-call]


IR_CONTEXT_USES = 32
"""Lowerings one MLIR context serves (`share_ir_contexts`) before a fresh one is made: what
they leave uniqued in it (their types, their constants: closed-over arrays among them) is
kept until then, so a process holds at most this many lowerings' worth."""


def share_ir_contexts() -> None:
    """Let JAX lower up to IR_CONTEXT_USES programs in one MLIR context per process and thread.

    JAX makes a fresh context for every lowering (`mlir.make_ir_context`: its dialects loaded
    again, 4-6 ms each); a `grade watch` regrading of 03_jit lowers about 50 programs in its
    sandbox. The modules are the same text either way (one context holds many modules, each
    with its own symbols); what a context keeps (its uniqued types and attributes) is freed
    when it is replaced. A forked judge or sandbox makes its own on its first lowering (the
    key holds the process id), and so does each thread. The judge's own readings of the
    sandbox's modules (`grader.checks.exported`) call `jax.interpreters.mlir`'s function,
    which this leaves as it is: each of them gets a fresh context."""
    try:
        from jax._src.interpreters import mlir
    except ImportError:
        return
    make = mlir.make_ir_context
    if getattr(make, "shared", False):
        return
    made: dict[tuple[int, int], list[Any]] = {}

    def shared() -> Any:
        key = (os.getpid(), threading.get_ident())
        entry = made.get(key)
        if entry is None or entry[1] >= IR_CONTEXT_USES:
            if any(pid != key[0] for pid, _ in made):  # forked: the parent's are not ours
                made.clear()
            entry = made[key] = [make(), 0]
        entry[1] += 1
        return entry[0]

    shared.shared = True  # type: ignore[attr-defined]
    mlir.make_ir_context = shared
    with contextlib.suppress(Exception):  # the dialects' Python modules, imported once here
        make()


def vm_size() -> int:
    """This process's virtual memory size in bytes (children inherit it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@dataclass
class _Capped:
    """What one pipe delivered: the first `cap` bytes kept, all of them counted."""

    cap: int
    kept: bytearray = field(default_factory=bytearray)
    total: int = 0
    eof: bool = False

    def take(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept.extend(chunk[:room])

    def read(self, fd: int) -> None:
        chunk = os.read(fd, 1 << 16)
        if chunk:
            self.take(chunk)
        else:
            self.eof = True

    def drain(self, fd: int) -> None:
        """Read what is left without waiting on a writer that may remain, then close."""
        os.set_blocking(fd, False)
        with contextlib.suppress(OSError):  # BlockingIOError: nothing more for now
            while chunk := os.read(fd, 1 << 16):
                self.take(chunk)
        os.close(fd)

    def lines(self) -> tuple[tuple[str, ...], int]:
        """Complete lines (at most MAX_RECORDS) and the bytes dropped: over the cap, unfinished."""
        data = bytes(self.kept)
        end = data.rfind(b"\n") + 1
        lines = data[:end].splitlines()
        kept = lines[: records.MAX_RECORDS]
        used = sum(len(line) + 1 for line in kept)
        return tuple(line.decode("utf-8", errors="replace") for line in kept), self.total - used


def supervise(
    pid: int,
    out_fd: int,
    records_fd: int,
    timeout_s: float,
    output_cap: int,
    on_lines: Callable[[bytes], None] | None = None,
) -> Ended:
    """Wait for the child, keeping the first `output_cap` bytes of its output and its records.

    `on_lines` gets each batch of complete record lines as soon as it is read (the kept
    ones: what `Ended.records` will hold), so the parent can show a check's verdict before
    the file's grading ends. Then kill its process group and every process left behind (see `reap_leftovers`), and
    only then read what remains in the pipes: no writer is left to wait on."""
    started = time.monotonic()
    output = _Capped(output_cap)
    found = _Capped(records.MAX_RECORDS_BYTES)
    pipes = {out_fd: output, records_fd: found}
    status = _watch(pid, pipes, records_fd, started + timeout_s, on_lines)
    timed_out = status is None
    # The child, and anything it started, goes now (it may already be gone).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    if status is None:
        _, status = os.waitpid(pid, 0)
    leftovers = reap_leftovers()
    for fd, pipe in pipes.items():
        pipe.drain(fd)
    lines, dropped = found.lines()
    return Ended(
        exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) and not timed_out else None,
        timed_out=timed_out,
        output=bytes(output.kept).decode("utf-8", errors="replace"),
        output_bytes=output.total,
        duration_s=time.monotonic() - started,
        records=lines,
        records_dropped=dropped,
        leftovers=leftovers,
    )


def _watch(
    pid: int,
    pipes: dict[int, _Capped],
    records_fd: int,
    deadline: float,
    on_lines: Callable[[bytes], None] | None,
) -> int | None:
    """Read the child's pipes until it ends (its wait status) or `deadline` passes (None);
    `on_lines` gets the complete record lines as they come."""
    found = pipes[records_fd]
    sent = 0  # bytes of `found.kept` already given to `on_lines`
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        open_fds = [fd for fd, pipe in pipes.items() if not pipe.eof]
        if open_fds:
            ready, _, _ = select.select(open_fds, [], [], min(remaining, 0.2))
            for fd in ready:
                pipes[fd].read(fd)
            if on_lines is not None and records_fd in ready:
                end = found.kept.rfind(b"\n") + 1
                if end > sent:
                    on_lines(bytes(found.kept[sent:end]))
                    sent = end
        else:
            time.sleep(min(remaining, 0.02))
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            return raw


def _children_of(parent: int) -> list[int]:
    """Processes whose parent is `parent`, from /proc (zombies included)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as fh:
                for line in fh:
                    if line.startswith("PPid:"):
                        if int(line.split()[1]) == parent:
                            found.append(int(entry))
                        break
        except (OSError, ValueError):
            continue  # it ended while we looked
    return found


def reap_leftovers(timeout_s: float = REAP_TIMEOUT_S) -> int:
    """SIGKILL and reap every child of this worker, until none is left; returns how many.

    The worker is a subreaper (`main`): a daemon that student code double-forked is
    reparented here when its parent ends, so each pass kills the children, whose own
    children then become ours for the next pass."""
    me = os.getpid()
    killed: set[int] = set()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        children = _children_of(me)
        if not children:
            break
        for pid in children:
            killed.add(pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        _reap(deadline)
    return len(killed)


def _reap(deadline: float) -> None:
    """Wait for the children just killed (each pass gives them until the deadline)."""
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if not _children_of(os.getpid()):
                return
            time.sleep(0.005)


def serve(
    request: Request,
    base_vm: int,
    announce: Callable[[Message], None],
    stream: Stream | None = None,
) -> Ended:
    from grader.runner import child

    out_r, out_w = os.pipe()
    records_r, records_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(out_r)
        os.close(records_r)
        if stream is not None:
            os.close(stream.fd)  # the parent's: no judge or sandbox may write previews
        child.run(request, out_w, records_w, base_vm)
    os.close(out_w)
    os.close(records_w)
    announce(Started(pid))
    cap = min(request.output_cap, worker_messages.MAX_OUTPUT_CHARS)  # what a reply may carry
    ended = supervise(pid, out_r, records_r, request.timeout_s, cap, stream)
    if request.isolation == "user":  # a judge killed at the time limit never closed its
        # sandbox: the System V objects of the sandbox's own user go now (`sysv.release`)
        with contextlib.suppress(OSError):
            sysv.release("user", isolation.sandbox_uid(pid), (), float("inf"))
    return replace(ended, memory_limit=base_vm + request.memory_bytes)


class Stream:
    """Record lines written to `fd` (the parent's stream pipe, `handle.WorkerHandle`) as they come.

    A preview only (the reply's `Ended.records` is what counts), so it never holds the
    grading up: when the parent does not read, what does not fit is dropped (the parent
    decodes only whole, valid lines). Never inherited by a judge (`serve` closes it there)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.broken = False
        os.set_blocking(fd, False)

    def __call__(self, lines: bytes) -> None:
        if self.broken:
            return
        try:
            os.write(self.fd, lines)
        except BlockingIOError:
            pass  # the parent is not reading: a preview lost, the reply still complete
        except OSError:
            self.broken = True  # the parent closed it


def main() -> None:
    # The protocol owns the real stdout; anything printed by accident goes to stderr.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    stream = Stream(int(sys.argv[2])) if len(sys.argv) > 2 else None
    # Orphans of the children become the worker's, so none outlives its file (reap_leftovers).
    isolation.make_subreaper()
    preload(json.loads(sys.argv[1]) if len(sys.argv) > 1 else [])
    # A batch's programs compiled from the course's solutions, inherited by every fork.
    shared_programs.from_environment()
    # What is loaded now lives as long as the worker: out of the collector's reach, each
    # judge and sandbox forked from here skips it in every collection (a judge's collections
    # took ~0.8 s of a 03_jit grading, ~0.1 s after this).
    gc.freeze()
    # The limit counts from here, plus what this process's threads reserve and never use
    # (their stacks and malloc arenas: budget.headroom), so it measures memory on any core count.
    base_vm = vm_size() + budget.headroom(budget.threads_of_this_process())

    def say(message: Message) -> None:
        protocol.write(worker_messages.encode(message))
        protocol.flush()

    say(Ready(os.getpid()))
    for line in sys.stdin:
        if line.strip():
            say(serve(worker_messages.decode_as(line, Request), base_vm, say, stream))


if __name__ == "__main__":
    main()
