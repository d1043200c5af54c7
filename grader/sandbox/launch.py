"""The judge starts its sandbox: a fork taken before the judge's JAX backend starts.

    box = launch.start(lesson="03_jit", lesson_dir=..., level="strict", workdir=...)
    student = box.module          # a client.Remote for the student's module
    ...
    box.close()                   # every process the sandbox started is gone after this

The fork happens in `pytest_configure` of the judge (see `grader.plugin`), before
the suite is imported, so the sandbox holds no reference, no suite and no record
file: only the grader's public code, the lesson files and what it is sent.
For `strict` the forked process enters new namespaces and forks the namespace's
first process, which does the work; killing the first kills the whole namespace.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import re
import select
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from grader.protocol import wire
from grader.sandbox import (
    client,
    descriptors,
    held,
    isolation,
    jax_cache,
    quota,
    server,
    sysv,
)

HELLO_TIMEOUT_S = 120.0
"""Importing the student's module (it may compute at import) before the first request."""
KILL_TIMEOUT_S = 5.0
"""Longest the judge keeps killing what a sandbox started (a fork bomb) before going on."""
JUDGE_MARGIN_S = 10.0
"""Time the judge keeps, before the file's limit, to record what ran out of time."""
END_WAIT_S = 1.0
"""How long the judge waits for a sandbox whose socket closed to end (`outside_signal`)."""


@dataclass
class Sandbox:
    pid: int
    channel: client.Channel
    level: isolation.Level
    hello: Any
    watchdog: quota.Watchdog | None = None
    stack_fd: int = -1  # the read end of the sandbox's stack pipe (`where_stuck`)

    @property
    def module(self) -> client.Remote:
        return self.channel.module

    def outside_signal(self, wait_s: float = END_WAIT_S) -> int | None:
        """The signal from outside that ended the sandbox (None: none did): it died of a
        signal the judge did not send (a time share, the quota, a broken protocol, `close`
        send theirs), waited for at most `wait_s` (a sandbox that only closed its socket is
        alive, and no outside signal ended it). The student's code may signal itself: a
        caller gives such an end one more try at most. Reaps the sandbox when it ended."""
        if self.channel.killed_here:
            return None
        until = time.monotonic() + wait_s
        while True:
            try:
                done, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return None
            if done:
                return os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
            if time.monotonic() >= until:
                return None
            time.sleep(0.01)

    def close(self) -> None:
        """Kill the sandbox and everything it started; reap it; remove the System V objects
        it left (at `strict` its IPC namespace goes once the watchdog's thread left it)."""
        seen, since = {self.pid}, float("inf")
        if self.watchdog is not None:
            self.watchdog.stop()
            seen, since = seen | self.watchdog.seen, self.watchdog.since
        self.channel.close()
        kill_tree(self.pid)
        if self.watchdog is not None:
            self.watchdog.join(KILL_TIMEOUT_S)
        sysv.release(self.level, isolation.sandbox_uid(os.getpid()), seen, since)
        if self.stack_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.stack_fd)
            self.stack_fd = -1


def kill_tree(pid: int) -> None:
    """SIGKILL the sandbox `pid` and everything it started, and reap them. For `strict`,
    killing its child (the namespace's first process) ends the whole namespace; at every
    level, what the sandbox started and abandoned was reparented to this process (a
    subreaper): those are killed and reaped until none is left."""
    for child in _children(pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    deadline = time.monotonic() + KILL_TIMEOUT_S
    while time.monotonic() < deadline:
        left = _children(os.getpid())
        for child in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
        while True:
            try:
                done, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if done == 0:
                break
        if not left:
            return
        time.sleep(0.01)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as fh:
                found += [int(p) for p in fh.read().split()]
    except (OSError, ValueError):
        pass
    return found


def start(
    *,
    lesson: str,
    lesson_dir: str,
    level: isolation.Level,
    workdir: str,
    masked: tuple[str, ...] = (),
    close_fds: tuple[int, ...] = (),
    prepare: Callable[[], dict[str, Any]] | None = None,
    budget_s: float = 600.0,
    own_cache: str = "",
) -> Sandbox:
    """Fork the sandbox for `lesson` (in `lesson_dir`); `close_fds` are the judge's own
    (its record pipe) and are closed in the sandbox before anything else. `prepare`, if
    given, runs in the sandbox before the import (a notebook's kernel) and returns notes.
    `own_cache`, if given, is the folder the sandbox caches its compiled programs in (one
    student's `grade watch` session: `cache.session_dir`); else a fresh one in `workdir`."""
    judge_end, sandbox_end = wire.socketpair()
    caches = _Caches.of(workdir, own_cache)
    plan = _plan(lesson_dir, level, workdir, masked, caches)
    sys.stdout.flush()
    sys.stderr.flush()
    isolation.make_subreaper()  # what the sandbox starts and abandons stays ours to kill and reap
    stack_r, stack_w = os.pipe()  # where the sandbox writes its stack when asked (SIGUSR1)
    pid = os.fork()
    if pid == 0:
        judge_end.close()
        os.close(stack_r)
        _sandbox_main(
            sandbox_end, lesson, lesson_dir, level, plan, close_fds, prepare, caches, stack_w
        )
    sandbox_end.close()
    os.close(stack_w)
    return _connect(pid, level, plan, judge_end, stack_r, lesson_dir, budget_s)


@dataclass(frozen=True)
class _Caches:
    """The compilation caches a sandbox uses ("" for none: the judge's is off)."""

    judge: str  # the judge's folder, which the sandbox reads and never writes
    own: str  # the sandbox's own folder, the only one it writes

    @classmethod
    def of(cls, workdir: str, own_cache: str) -> _Caches:
        """The judge's compilation cache: bound read-only into a strict sandbox, which loads
        the judge's programs (a jnp.sin it compiled too) and never writes there; it writes its
        own programs into a folder of its own in `workdir`, when the judge's cache is on
        (grader.sandbox.jax_cache)."""
        judge = jax_cache.configured_dir()
        own = os.path.realpath(own_cache or jax_cache.private_dir(workdir)) if judge else ""
        return cls(judge, own)


def _plan(
    lesson_dir: str,
    level: isolation.Level,
    workdir: str,
    masked: tuple[str, ...],
    caches: _Caches,
) -> isolation.Plan:
    """Where the sandbox may read and write: its lessons, its own cache, its scratch folder
    (created here), the installation and the judge's cache to read."""
    scratch = os.path.join(workdir, "scratch")
    os.makedirs(scratch, mode=0o700, exist_ok=True)  # its user's alone (chowned at user, strict)
    limits = quota.limits() if level == "strict" else (0, 0)  # the kernel's, at strict
    shared = (os.path.realpath(caches.judge),) if caches.judge else ()
    return isolation.Plan(
        uid=isolation.sandbox_uid(os.getpid()),
        writable=(os.path.realpath(lesson_dir),)
        + ((caches.own,) if caches.own else ())
        + (os.path.realpath(scratch),),
        readable=isolation.python_paths() + shared,
        masked=masked,
        newroot=os.path.join(workdir, "root"),
        quota_bytes=limits[0],
        quota_files=limits[1],
    )


def _connect(
    pid: int,
    level: isolation.Level,
    plan: isolation.Plan,
    judge_end: socket.socket,
    stack_r: int,
    lesson_dir: str,
    budget_s: float,
) -> Sandbox:
    """The judge's side of the sandbox `pid`, once its hello came (or it is gone)."""
    # Answers must be in a little before the file's time limit, so the judge itself can say
    # which check ran out of time (and record every other check) before it is killed.
    deadline = time.monotonic() + budget_s - min(JUDGE_MARGIN_S, 0.1 * budget_s)

    def timed_out() -> None:  # where the student's code was, then kill it all
        channel.stuck = where_stuck(pid, level, stack_r, lesson_dir)
        channel.killed_here = True
        kill_tree(pid)

    def broke() -> None:
        channel.killed_here = True
        kill_tree(pid)

    channel = client.Channel(judge_end, on_timeout=timed_out, on_break=broke, deadline=deadline)
    channel.cpu_seconds = lambda: cpu_seconds(pid)
    try:
        hello = channel.hello(HELLO_TIMEOUT_S)
    except client.SandboxGone:
        return Sandbox(pid, channel, level, None, stack_fd=stack_r)
    return Sandbox(
        pid, channel, level, hello, _watch_writes(pid, level, plan, channel), stack_fd=stack_r
    )


def _watch_writes(
    pid: int, level: isolation.Level, plan: isolation.Plan, channel: client.Channel
) -> quota.Watchdog:
    """The quota's watchdog, from the hello on (at `strict` the sandbox's root is built by
    then): what the sandbox wrote in its places and holds in its processes (deleted files,
    memfds, System V segments), measured from here."""
    read_fds = level == "basic" or held.may_read_others()  # else only its folders count
    in_namespace = False  # at strict: this thread lists the sandbox's own IPC objects
    tracker, forker = held.Tracker(), threading.get_native_id()  # this thread forked it

    def measure() -> quota.Usage:
        nonlocal in_namespace
        serving = _serving_pid(pid, level)
        skip_dev = -1
        if level == "strict":  # the tmpfs all its writable places are on
            size, files = quota.mounted(f"/proc/{serving}/root/tmp")
            skip_dev = os.stat(f"/proc/{serving}/root/tmp").st_dev
            in_namespace = in_namespace or sysv.enter(serving)
        else:
            size, files = quota.walked(plan.writable)
        pids = [pid, *held.descendants(os.getpid(), forker)]  # its orphans come to `forker`
        found = tracker.measure(pids, serving, skip_dev) if read_fds else held.Held(pids=set(pids))
        objects = sysv.listed() if level != "strict" or in_namespace else []
        if level != "strict":
            uid = plan.uid if level == "user" else None
            objects = sysv.owned(objects, uid=uid, pids=found.pids | watchdog.seen)
        ids = {ino for dev, ino in found.mapped if dev == held.SYSV}
        return quota.Usage(
            size=size + found.deleted,
            files=files + found.deleted_files,
            shared=found.unmapped + sysv.held(objects, ids),
            memory_left=held.memory_left(serving),
            hidden=found.hidden,
            pids=found.pids,
        )

    def exceeded(why: str) -> None:
        channel.stop_reason = why
        channel.killed_here = True
        kill_tree(pid)

    watchdog = quota.Watchdog(measure, exceeded)
    watchdog.since = sysv.process_start(pid)
    watchdog.start()
    return watchdog


SANDBOX_HOME_VARIABLES = (
    "XDG_RUNTIME_DIR",
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "JUPYTER_RUNTIME_DIR",
    "JUPYTER_DATA_DIR",
    "JUPYTER_CONFIG_DIR",
    "IPYTHONDIR",
    "MPLCONFIGDIR",
)
"""Unset in the sandbox: their defaults lie in its home."""
STACK_WAIT_S = 0.5
"""How long the judge waits for the sandbox's stack once it asked for it."""
MAX_STACK_BYTES = 64 << 10
_FRAME = re.compile(r'^\s*File "([^"\n]{1,400})", line (\d{1,7}) in ([A-Za-z_][A-Za-z0-9_]{0,99})')


def _serving_pid(pid: int, level: isolation.Level) -> int:
    """The process that runs the student's code: at `strict`, the namespace's first process."""
    if level != "strict":
        return pid
    inner = _children(pid)
    return inner[0] if inner else pid


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads, children it waited for) of the sandbox `pid` and
    of the processes it runs now (at `strict`, the namespace's first process); 0 when gone."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for each in (pid, *_children(pid)):
        try:
            with open(f"/proc/{each}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += sum(int(v) for v in fields[11:15]) / tick
        except (OSError, ValueError, IndexError):
            continue
    return total


def where_stuck(
    pid: int, level: isolation.Level, stack_fd: int, lessons: str
) -> tuple[tuple[str, int, str], ...]:
    """The frames of the lesson files in the sandbox's stack, innermost first, as (file name,
    line, function): asked with SIGUSR1 (`faulthandler`, which answers even from inside
    compiled code). The sandbox's own word: a message may quote it, no verdict reads it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(_serving_pid(pid, level), signal.SIGUSR1)
    data = bytearray()
    until = time.monotonic() + STACK_WAIT_S
    os.set_blocking(stack_fd, False)
    while len(data) < MAX_STACK_BYTES and (left := until - time.monotonic()) > 0:
        ready, _, _ = select.select([stack_fd], [], [], left)
        if not ready:
            break
        try:
            chunk = os.read(stack_fd, MAX_STACK_BYTES - len(data))
        except BlockingIOError:
            continue
        except OSError:
            break
        if not chunk:
            break
        data += chunk
        # faulthandler ends each thread's stack with a blank line; the thread running the
        # student's code may come after JAX's own threads, so stop early only once it came
        if b"\n\n" in data and _lesson_frames(data, lessons):
            until = min(until, time.monotonic() + 0.05)
    return _lesson_frames(data, lessons)[:20]


def _lesson_frames(data: bytes | bytearray, lessons: str) -> tuple[tuple[str, int, str], ...]:
    """(file name, line, function) of the stack lines in `data` that are in a lesson file."""
    frames = []
    prefixes = {p.rstrip(os.sep) + os.sep for p in (lessons, os.path.realpath(lessons))}
    for line in bytes(data).decode("utf-8", errors="replace").splitlines():
        found = _FRAME.match(line)
        path = found.group(1) if found else ""
        prefix = next((p for p in prefixes if path.startswith(p)), "")
        if found and prefix and os.sep not in path[len(prefix) :]:
            frames.append((path[len(prefix) :], int(found.group(2)), found.group(3)))
    return tuple(frames)


def _sandbox_main(
    sock: socket.socket,
    lesson: str,
    lesson_dir: str,
    level: isolation.Level,
    plan: isolation.Plan,
    close_fds: tuple[int, ...],
    prepare: Callable[[], dict[str, Any]] | None,
    caches: _Caches,
    stack_fd: int,
) -> NoReturn:
    code = 0
    try:
        # Only its own descriptors: its socket, its stack pipe and the standard streams; the
        # judge's record pipe (`close_fds`) and anything else the judge inherited are gone.
        descriptors.keep_only({0, 1, 2, sock.fileno(), stack_fd} - set(close_fds))
        jax_cache.disable()  # until privileges are dropped: then its own cache (below)
        if level == "strict":
            _enter_namespaces()
        isolation.enter(level, plan)
        if level != "strict":  # no mount namespace: Landlock gives the same allow-list
            isolation.confine_files(plan)
        jax_cache.private(caches.own, caches.judge)
        _move_in(level, plan)
        if stack_fd >= 0:  # the judge asks for this process's stack when a time share ends
            faulthandler.register(signal.SIGUSR1, file=stack_fd, all_threads=True)
        notes = prepare() if prepare is not None else {}
        server.serve(sock, lesson, lesson_dir, notes)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 70
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _enter_namespaces() -> None:
    """At `strict`: new namespaces, and fork their first process, which returns here to do
    the work; this process waits for it and exits (killing it kills the namespace)."""
    isolation.unshare(
        isolation.CLONE_NEWNS
        | isolation.CLONE_NEWPID
        | isolation.CLONE_NEWNET
        | isolation.CLONE_NEWIPC
        | isolation.CLONE_NEWUTS
    )
    inner = os.fork()
    if inner != 0:  # the namespace's parent: wait for its first process, then end as it did
        status = 0
        with contextlib.suppress(ChildProcessError):
            _, status = os.waitpid(inner, 0)
        if os.WIFSIGNALED(status):  # so the judge sees the signal (`Sandbox.outside_signal`)
            with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
                signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
            os.kill(os.getpid(), os.WTERMSIG(status))
        os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0)
    isolation.prctl(isolation.PR_SET_PDEATHSIG, signal.SIGKILL)


def _move_in(level: isolation.Level, plan: isolation.Plan) -> None:
    """Work, home and temp folder in the sandbox's scratch folder (at `strict`, its /tmp)."""
    os.chdir(plan.writable[-1])
    os.environ.update(
        {
            "HOME": plan.writable[-1],
            "TMPDIR": "/tmp" if level == "strict" else plan.writable[-1],
        }
    )
    # Per-user folders the grader's environment may name (a desktop's XDG_RUNTIME_DIR,
    # Jupyter's and Matplotlib's): the sandbox's own home instead, the only place it may
    # write (a notebook's kernel writes its connection file in the runtime folder).
    for name in SANDBOX_HOME_VARIABLES:
        os.environ.pop(name, None)
    tempfile.tempdir = None  # found again from TMPDIR (the judge's answer is cached)
