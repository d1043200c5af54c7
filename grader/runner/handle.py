"""The parent's handle on one warm worker process (`grader.runner.worker`): its pipes.

The worker answers one JSON line per message on its stdout (`grader.protocol.worker_messages`);
beside that protocol it streams the judge's record lines to a pipe of their own as it
reads them (`WorkerHandle.run(..., on_records=)`: a preview, the reply holds them all),
and `cancel` stops the file being graded (its reply comes as usual).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

from grader.protocol import worker_messages
from grader.protocol.worker_messages import Ended, Ready, Request, Started
from grader.runner import budget, child
from grader.runner.policy import import_path
from grader.sandbox import shared_programs

WORKER_START_TIMEOUT_S = 120.0
REPLY_GRACE_S = 30.0

M = TypeVar("M", Ready, Started, Ended)


class WorkerLost(Exception):
    pass


OnRecords = Callable[[list[str]], None]
"""Gets the judge's record lines (undecoded) while a file is graded, a batch at a time."""


FOREIGN = ("PYTHON", "XLA_", "JAX_", "PYTEST_", "HYPOTHESIS_")
"""Variables of the caller's environment no grading sees: they would change what the judge
runs or how (`PYTEST_ADDOPTS=-x` stops the suite at the first failing check, `-k` deselects
them, `JAX_DISABLE_JIT=1` fails a correct file's jit checks, `JAX_ENABLE_X64=1` changes its
dtypes), so that a file gets the same verdicts wherever it is graded."""
CACHE_ONLY = ("JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE")
"""...except where JAX keeps compiled programs, which changes no result (`grader.runner.cache`
and `grader.sandbox.jax_cache` decide who may use it)."""


def _environment(threads: int | None, sandbox_cache: str, shared: str = "") -> dict[str, str]:
    """The worker's environment: this one's, without the `FOREIGN` variables."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(FOREIGN) or k.startswith(CACHE_ONLY)
    }
    env.update({"JAX_PLATFORMS": "cpu", "MPLBACKEND": "Agg", "TF_CPP_MIN_LOG_LEVEL": "2"})
    env.update(budget.environment(budget.share(1) if threads is None else threads))
    env.pop(child.SANDBOX_CACHE_ENV, None)  # only ever this worker's own argument
    env.pop(shared_programs.ENV, None)  # likewise
    if sandbox_cache:
        env[child.SANDBOX_CACHE_ENV] = sandbox_cache
    if shared:
        env[shared_programs.ENV] = shared
    return env


class WorkerHandle:
    """One warm worker process and its line protocol (see the module's docstring)."""

    def __init__(
        self,
        log_dir: Path,
        preload: tuple[str, ...] = (),
        sandbox_cache: str = "",
        threads: int | None = None,
        shared: str = "",
    ) -> None:
        """`sandbox_cache`: for one student's `grade watch` session only (or the course's
        solutions graded before a batch, `grader.batch.warm`), the folder every
        sandbox of this worker caches its compiled programs in (`cache.session_dir`), so a
        regrading loads what the one before compiled; never for a student of a batch.
        `threads`: each judge's and sandbox's share of the cores (`budget.share`; default:
        all of them). `shared`: a batch's store of programs compiled from the solutions
        (`grader.sandbox.shared_programs`), "PATH SHA256", loaded by the worker at start."""
        self.log_path = log_dir / f"worker-{time.monotonic_ns()}.log"
        self._log: IO[bytes] = open(self.log_path, "wb")  # noqa: SIM115
        paths = import_path()
        bootstrap = (
            f"import sys; wanted = {paths!r}; "
            "sys.path[:] = wanted + [p for p in sys.path if p not in wanted]; "
            "from grader.runner.worker import main; main()"
        )
        self._stream, stream_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-c", bootstrap, json.dumps(list(preload)), str(stream_w)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                env=_environment(threads, sandbox_cache, shared),
                cwd=log_dir,  # private: what a library writes relative (.hypothesis/) stays out of the user's folder
                start_new_session=True,
                pass_fds=(stream_w,),
            )
        finally:
            os.close(stream_w)
        os.set_blocking(self._stream, False)
        self._streamed = bytearray()
        self._on_records: OnRecords | None = None
        self._buffer = bytearray()
        self.child_pid: int | None = None
        self.cancelled = False  # `cancel` stopped the file being graded (`run` resets it)
        try:
            self._read(Ready, WORKER_START_TIMEOUT_S)
        except WorkerLost as exc:
            raise WorkerLost(
                f"the grading worker did not start ({exc}): {self.log_tail()}"
            ) from None

    def _read(self, kind: type[M], timeout_s: float) -> M:
        """The next message, which must be a `kind` (a reply may be megabytes of records)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        scanned = 0
        while (end := self._buffer.find(b"\n", scanned)) < 0:
            scanned = len(self._buffer)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerLost("the grading worker stopped answering")
            watched = [fd, self._stream] if self._on_records is not None else [fd]
            ready, _, _ = select.select(watched, [], [], remaining)
            if self._stream in ready:
                self._take_stream()
            if fd in ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise WorkerLost("the grading worker died")
                self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        try:
            return worker_messages.decode_as(line, kind)
        except worker_messages.ProtocolError as exc:
            raise WorkerLost(f"the grading worker sent something unexpected ({exc})") from None

    def _take_stream(self, discard: bool = False) -> None:
        """Read the streamed record lines; the complete ones go to `on_records`."""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self._stream, 1 << 16):
                self._streamed += chunk
        if discard:
            self._streamed.clear()
            return
        end = self._streamed.rfind(b"\n") + 1
        if end:
            lines = bytes(self._streamed[:end]).decode("utf-8", errors="replace").splitlines()
            del self._streamed[:end]
            if self._on_records is not None:
                self._on_records(lines)

    def run(self, request: Request, on_records: OnRecords | None = None) -> Ended:
        """Grade one file; `on_records` gets its record lines as they come (a preview:
        some may be missing, the reply's `Ended.records` has them all)."""
        assert self.proc.stdin is not None
        self._take_stream(discard=True)  # what an earlier file's grading left unread
        self._on_records = on_records
        self.cancelled = False
        try:
            self.proc.stdin.write(worker_messages.encode(request).encode())
            self.proc.stdin.flush()
        except OSError as exc:
            raise WorkerLost(f"the grading worker died ({exc})") from None
        deadline = request.timeout_s + REPLY_GRACE_S
        try:
            self.child_pid = self._read(Started, deadline).pid
            ended = self._read(Ended, deadline)
        finally:
            self.child_pid = None
            self._on_records = None
        return ended

    def cancel(self) -> bool:
        """Stop the file being graded: its judge's process group is killed (the worker reaps
        what it left and replies as usual, the judge killed by SIGKILL); False when no judge
        has been announced yet (call again: one may start in a moment). Safe from another
        thread than the one in `run`."""
        pid = self.child_pid
        if pid:
            self.cancelled = True  # the judge's end is ours: not a fault to retry (`engine`)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        return bool(pid)

    def log_tail(self, limit: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-limit:]
        except OSError:
            return ""

    def close(self, kill: bool = False) -> None:
        for pid in (self.child_pid, self.proc.pid) if kill else ():
            if pid:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        with contextlib.suppress(OSError):
            os.close(self._stream)
