"""The judge's sandbox: the one process that imports the student's lesson file.

Forked in `pytest_configure`, before any suite is imported, in a folder of its own (made
in the runner's folder for sandboxes, which it removes once the judge has ended, however
it ends), on a copy of the lesson folder's regular files; closed when pytest ends. For a
notebook, the sandbox first runs it in a kernel (`notebook_step`).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from grader.plugin import wording
from grader.protocol import records
from grader.protocol import sandbox as proto
from grader.sandbox import client, isolation, launch
from grader.sandbox.client import SandboxGone

WALL_PER_CPU_SHARE = 2.0
"""A check's wall-time share, in multiples of its CPU share (`--grader-check-share`)."""
MAX_LESSON_BYTES = 64 << 20
"""A lesson file larger than this is not copied into the sandbox (it is not a lesson)."""


class LessonImportError(Exception):
    """The student's lesson file could not be imported."""


class SandboxNotStarted(SandboxGone):
    """The sandbox ended before it sent the lesson file's source, its first frame, sent just
    before the student's module is imported: none of the student's code ran there (it could
    not start, import the grader's own modules or read the installation). The grader's
    failure, never the student's."""


class SandboxSession:
    """The sandbox of one judge: `lesson` (None: no lesson, no sandbox) imported from a
    copy of `lesson_dir`, isolated at `level`; `stopped` are the student functions that
    stopped an earlier sandbox of this file (not called again: `client.NotCalled`)."""

    def __init__(
        self,
        *,
        lesson: str | None,
        lesson_dir: str,
        level: isolation.Level,
        sandboxes: str | None = None,
        stopped: frozenset[str] = frozenset(),
    ) -> None:
        self.lesson, self.lesson_dir, self.level = lesson, lesson_dir, level
        self._sandboxes, self._stopped = sandboxes, stopped
        self.sandbox: launch.Sandbox | None = None
        self.folder = ""  # the sandbox's own folder (its lessons, its scratch space)
        self._unreadable = ""  # why a notebook could not be graded
        self._prepared = False  # a step ran in the sandbox before its first frame (a notebook)

    @property
    def channel(self) -> client.Channel | None:
        return self.sandbox.channel if self.sandbox is not None else None

    def start(
        self,
        timeout_s: float,
        prepare: Callable[[], dict[str, Any]] | None = None,
        close_fds: tuple[int, ...] = (),
    ) -> None:
        """Fork the sandbox that imports the student's lesson file (before any suite is
        imported); `close_fds` are the judge's own (its records)."""
        if self.lesson is None:
            return
        self._prepared = prepare is not None
        self.folder = tempfile.mkdtemp(prefix="grader-sandbox-", dir=self._sandboxes)
        os.chmod(self.folder, 0o711)
        lessons = os.path.join(self.folder, "lessons")
        copy_regular_files(self.lesson_dir, lessons)
        self.sandbox = launch.start(
            lesson=self.lesson,
            lesson_dir=lessons,
            level=self.level,
            workdir=self.folder,
            masked=masked_paths(),
            close_fds=close_fds,
            prepare=prepare,
            budget_s=timeout_s,
        )
        self.sandbox.channel.stopped = self._stopped
        self.sandbox.channel.lessons = self.lesson_dir  # the judge's copy, not the sandbox's

    def stop(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = ""

    def scrub(self, message: str) -> str:
        """Messages name the student's files, never the grader's private folders."""
        text = wording.scrub(message, self.lesson_dir)
        if self.folder:
            text = wording.scrub(text, os.path.join(self.folder, "lessons"))
            text = text.replace(self.folder + os.sep, "")
        return text

    def scratch(self, check_id: str) -> str:
        """A folder name in the sandbox's scratch space, unique to the check `check_id`."""
        return os.path.join(self.folder, "scratch", re.sub(r"\W", "_", check_id))

    def record_notebook(self, writer: records.Writer | None) -> None:
        """The notes of the notebook the sandbox ran, as records (and whether it could)."""
        from grader.notebooks import grading_step

        hello = self.sandbox.hello if self.sandbox is not None else None
        if hello is None:
            return
        unreadable = (
            grading_step.emit_notes(dict(hello.notes), self.lesson or "", writer)
            if writer is not None
            else None
        )
        if unreadable is not None:
            self._unreadable = unreadable

    def import_error(self) -> BaseException | None:
        """Why the student's module is not there (None when it imported)."""
        if self._unreadable:
            return FileNotFoundError(self._unreadable)
        box = self.sandbox
        if box is None:
            return FileNotFoundError(f"no sandbox for this suite (lesson {self.lesson!r})")
        if box.hello is None:
            why = box.channel.gone or "the sandbox did not start"
            return SandboxNotStarted(why) if self._never_ran_student_code() else SandboxGone(why)
        if not box.hello.ok:
            assert box.hello.error is not None
            return client.student_error(box.hello.error)
        return None

    def _never_ran_student_code(self) -> bool:
        """Whether the sandbox, which ended before its hello, ended before any of the
        student's code could run: it sent no source frame (the one sent just before the
        import) though the lesson file was one it sends (`proto.MAX_SOURCE_BYTES`: a larger
        file's frame is empty and tells nothing), and no step ran before that frame (a
        notebook's kernel runs the student's cells there)."""
        box = self.sandbox
        if box is None or self._prepared or self.lesson is None or box.channel.source is not None:
            return False
        try:
            size = os.path.getsize(os.path.join(self.folder, "lessons", f"{self.lesson}.py"))
        except OSError:
            return False
        return size <= proto.MAX_SOURCE_BYTES

    def load(self, lesson: str) -> client.Remote:
        """The student's module `lesson`, as a handle into the sandbox."""
        if lesson != self.lesson or self.sandbox is None:
            raise pytest.UsageError(
                f"the sandbox imported {self.lesson!r}, this suite grades {lesson!r}"
            )
        exc = self.import_error()
        if isinstance(exc, SandboxNotStarted):
            raise LessonImportError(wording.not_started(lesson, exc))
        if exc is not None:
            raise LessonImportError(wording.import_message(lesson, exc))
        return self.sandbox.module

    def share_time(self, share_s: float) -> None:
        """The check starting now may use `share_s` of CPU time of the student's code (a
        loaded machine slows it without failing it), and `WALL_PER_CPU_SHARE` times that in
        wall time: one endless function costs its own checks, not the file (`Unrun`)."""
        if self.sandbox is None or share_s <= 0:
            return
        channel = self.sandbox.channel
        channel.check_deadline = time.monotonic() + WALL_PER_CPU_SHARE * share_s
        if channel.cpu_seconds is not None:
            channel.cpu_limit = channel.cpu_seconds() + share_s


def notebook_step(
    lesson: str, suites: Sequence[str], timeout_s: float
) -> Callable[[], dict[str, Any]]:
    """What the sandbox runs before the import: the notebook, in a kernel it starts.
    `suites`: pytest's arguments, whose suites name the lesson's functions they use."""
    from grader.notebooks import grading_step

    paths = [a.split("::")[0] for a in suites]
    paths = [p for p in paths if os.path.basename(p).startswith("test_")]
    expected = set().union(*(grading_step.expected_names(Path(p)) for p in paths))
    devices = int(jax_devices())

    def step() -> dict[str, Any]:
        lessons = Path(os.getcwd()).parent / "lessons"
        return grading_step.run(
            lesson,
            lessons,
            timeout_s=timeout_s,
            devices=devices,
            expected=expected,
            log_path=Path(os.getcwd()) / "kernel.log",
        )

    return step


def jax_devices() -> int:
    """The simulated CPU device count set for this run (a notebook's kernel gets the same)."""
    import jax

    try:
        count = int(getattr(jax.config, "jax_num_cpu_devices", 1))
    except (TypeError, ValueError):
        return 1
    return count if count > 0 else 1


def lesson_of(item: pytest.Item) -> str:
    """The lesson file a check's suite grades (its module's LESSON)."""
    module = getattr(item, "module", None)
    lesson = getattr(module, "LESSON", None)
    if not isinstance(lesson, str):
        raise pytest.UsageError(f"{item.nodeid}: the suite module must define LESSON = '<name>'")
    return lesson


def lesson_from_args(args: Sequence[str]) -> str | None:
    """The lesson of the first suite named in pytest's arguments (`test_<lesson>.py`)."""
    for arg in args:
        name = os.path.basename(arg.split("::")[0])
        if name.startswith("test_") and name.endswith(".py"):
            return name[len("test_") : -3]
    return None


def copy_regular_files(source: str, target: str) -> None:
    """The lesson folder's regular files (no links, folders or FIFOs) into a fresh folder."""
    os.makedirs(target, mode=0o700)
    for entry in os.scandir(source):
        if (
            entry.is_file(follow_symlinks=False)
            and entry.stat(follow_symlinks=False).st_size <= MAX_LESSON_BYTES
        ):
            shutil.copyfile(entry.path, os.path.join(target, entry.name), follow_symlinks=False)


def masked_paths() -> tuple[str, ...]:
    """What a strict sandbox must not see even inside the installation: the hidden suites."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return (os.path.realpath(os.path.join(package, "suites")),)
