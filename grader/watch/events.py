"""Saves, keys and results as one stream of events for `grade watch`'s loop.

The loop waits on one `select`: the terminal (keys, read by `Keys`) and an
`Inbox`, a queue that threads fill (the file watcher, the grading thread) and
that wakes the loop through a pipe. `SaveWatcher` runs watchfiles on the
lesson folder (not on the file: editors that save by renaming replace it) and
posts a `Saved` for each lesson file written.
"""

from __future__ import annotations

import contextlib
import os
import queue
import sys
import termios
import threading
import tty
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import watchfiles

from grader.model import ExerciseResult
from grader.runner.submission import LESSON_SUFFIXES
from grader.watch.regrader import Job

STEP_MS = 50
"""A save is reported once the folder has been quiet this long (an editor's writes are one)."""


@dataclass(frozen=True)
class Saved:
    path: Path  # the lesson file written


@dataclass(frozen=True)
class Graded:
    job: Job
    result: ExerciseResult


@dataclass(frozen=True)
class Problem:
    """A result of `job` read from the judge's records as they came: its first failing
    check while the other checks still run (`grader.watch.regrader.preview`), or, when
    `complete`, every check's (`regrader.complete`: before the judge has exited)."""

    job: Job
    result: ExerciseResult
    complete: bool = False


@dataclass(frozen=True)
class Ready:
    """The warm worker has imported JAX."""


Event = Saved | Graded | Problem | Ready


class Inbox:
    """A queue the loop can `select` on (`fileno`)."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Event] = queue.SimpleQueue()
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)

    def put(self, event: Event) -> None:
        self._queue.put(event)
        with contextlib.suppress(BlockingIOError):  # a full pipe wakes the loop anyway
            os.write(self._write, b".")

    def fileno(self) -> int:
        return self._read

    def take(self) -> list[Event]:
        """Every event waiting, oldest first (never blocks)."""
        with contextlib.suppress(BlockingIOError):
            while os.read(self._read, 4096):
                pass
        events = []
        while True:
            try:
                events.append(self._queue.get_nowait())
            except queue.Empty:
                return events

    def close(self) -> None:
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)


class SaveWatcher:
    """Posts `Saved(path)` to `inbox` when one of `names` (lesson stems) is written in
    `folder`; a thread of its own until `close`."""

    def __init__(self, folder: Path, names: set[str], inbox: Inbox) -> None:
        self.folder, self.names, self.inbox = folder.resolve(), names, inbox
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="grade-watch-files", daemon=True)
        self._thread.start()

    def wanted(self, change: watchfiles.Change, path: str) -> bool:
        file = Path(path)
        return (
            change != watchfiles.Change.deleted
            and file.parent == self.folder
            and file.suffix in LESSON_SUFFIXES
            and file.stem in self.names
        )

    def _run(self) -> None:
        for changes in watchfiles.watch(
            self.folder,
            watch_filter=self.wanted,
            stop_event=self._stop,
            step=STEP_MS,
            recursive=False,
        ):
            for path in sorted({p for _, p in changes}):
                self.inbox.put(Saved(Path(path)))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)


class Keys:
    """The terminal's keys, one at a time and unechoed (cbreak: Ctrl-C still interrupts);
    restored on exit. `fileno` is None when standard input is not a terminal."""

    def __init__(self) -> None:
        self._fd = sys.stdin.fileno() if sys.stdin is not None and sys.stdin.isatty() else None
        self._saved: list[Any] | None = None

    def __enter__(self) -> Keys:
        if self._fd is not None:
            self._saved = termios.tcgetattr(self._fd)
            tty.setcbreak(self._fd)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd is not None and self._saved is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)

    def fileno(self) -> int | None:
        return self._fd

    def read(self) -> str:
        """The keys typed since the last read ("" at end of input)."""
        if self._fd is None:
            return ""
        return os.read(self._fd, 64).decode("utf-8", errors="replace")
