"""Ctrl-C and SIGTERM during `grade batch`: stop, end every process, keep what is done.

The first SIGINT or SIGTERM raises `Interrupted` where the batch waits for its next
student (`Stop.waiting`; a signal that comes while a student's files are written is raised
once they are): the grader stops starting gradings, ends every process of the grading
(`end_descendants`) and rebuilds the class's files from the students graded. A second
signal ends the process at once: the processes ended, the files being written aside removed
(`grader.atomic`) and the grading's temporary folder (`scratch`), exit 130; what was renamed
into place before stays whole.

Every process of the grading descends from `grade batch` (warm workers, their judges and
sandboxes, whatever student code left to the worker, a subreaper), so ending the batch's
descendants ends the grading; the batch becomes a subreaper itself first, so no process
orphaned while they end escapes to PID 1.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

from grader import atomic
from grader.sandbox import held

EXIT_CODE = 130  # 128 + SIGINT, as a shell reports a Ctrl-C
SIGNALS = (signal.SIGINT, signal.SIGTERM)
END_WITHIN_S = 3.0
"""Longest the batch keeps ending processes while its gradings notice they are gone."""
_PR_SET_CHILD_SUBREAPER = 36


class Interrupted(BaseException):
    """The first SIGINT or SIGTERM (a BaseException, as KeyboardInterrupt: no `except
    Exception` of the grading catches it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def descendants(pid: int) -> list[int]:
    """The live processes below `pid` (its children's children included), from
    /proc/PID/task/*/children (`grader.sandbox.held.descendants`); zombies left out."""
    return [child for child in held.descendants(pid) if _alive(child)]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :][:1] not in ("Z", "X")


def _become_subreaper() -> None:
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, ctypes.c_ulong(1), 0, 0, 0)


def end_descendants(until: Callable[[], bool] = lambda: True, within_s: float = 0.0) -> int:
    """SIGKILL every process below this one, again while new ones appear (a thread of the
    grading may start one before it notices), until `until()` holds and none is left, for
    at most `within_s` seconds beyond the first round. Returns how many were killed."""
    _become_subreaper()
    me = os.getpid()
    killed: set[int] = set()
    deadline = time.monotonic() + within_s
    while True:
        found = descendants(me)
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        if (not found and until()) or time.monotonic() >= deadline:
            return len(killed)
        time.sleep(0.02)


_scratch: list[Path] = []  # the batch's temporary folders (`scratch`)


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """One temporary folder for everything the grading makes in the system's (the engine's
    copies of lesson files, its sandboxes' folders, its workers' logs: `tempfile.tempdir`
    points here while inside), removed when the grading ends, and by `Stop.now` when the
    process must end at once, when no thread of the grading removes its own. Traversable
    (0711), as the system's is, for the sandboxes' users to reach their own folders."""
    folder = Path(tempfile.mkdtemp(prefix="grade-batch-"))
    os.chmod(folder, 0o711)
    before, tempfile.tempdir = tempfile.tempdir, str(folder)
    _scratch.append(folder)
    try:
        yield folder
    finally:
        tempfile.tempdir = before
        shutil.rmtree(folder, ignore_errors=True)
        _scratch.remove(folder)


class Stop:
    """The signals `grade batch` was sent, and what they do (the module's docstring).

    stop = Stop(on_exit=lambda: print("..."))
    with stop.handling():
        with stop.waiting():
            outcome = next(outcomes)   # Interrupted raised here
    """

    def __init__(self, on_exit: Callable[[], None] = lambda: None) -> None:
        self.signals: list[int] = []
        self._waiting = False
        self._on_exit = on_exit  # a last word before the process ends at once

    @property
    def requested(self) -> bool:
        return bool(self.signals)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.signals.append(signum)
        if len(self.signals) > 1:
            self.now()
        if self._waiting:
            self._waiting = False
            raise Interrupted(signum)

    def now(self) -> None:
        """End at once: every process below this one killed, the files aside removed, the
        temporary folder too (the grading's threads, still running, may make some of it
        again before the end: removed a few times); the last word said before, nothing
        after (a thread's complaint about its folder gone)."""
        with contextlib.suppress(Exception):
            self._on_exit()
            sys.stderr.flush()
        with contextlib.suppress(OSError):
            quiet = os.open(os.devnull, os.O_WRONLY)
            os.dup2(quiet, sys.stderr.fileno())
        end_descendants()
        atomic.discard_pending()
        for _ in range(3):
            for folder in list(_scratch):
                shutil.rmtree(folder, ignore_errors=True)
            time.sleep(0.02)
        end_descendants()
        os._exit(EXIT_CODE)

    @contextlib.contextmanager
    def handling(self) -> Iterator[None]:
        """SIGINT and SIGTERM handled as the module says, while inside (main thread only;
        elsewhere nothing changes)."""
        try:
            before: dict[int, Any] = {
                s: signal.signal(s, self._handle)
                for s in SIGNALS
                if signal.getsignal(s) != signal.SIG_IGN  # ignored by who started us: kept so
            }
        except ValueError:  # not the main thread: signals are not ours to take
            yield
            return
        try:
            yield
        finally:
            for signum, handler in before.items():
                # interrupted: on its way out, another signal changes nothing (no traceback)
                signal.signal(signum, signal.SIG_IGN if self.signals else handler)

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """Where `Interrupted` may be raised: at once when a signal came before."""
        if self.signals:
            raise Interrupted(self.signals[0])
        self._waiting = True
        try:
            yield
        finally:
            self._waiting = False
