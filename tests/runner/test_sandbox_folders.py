"""A judge's sandbox folders go when the judge ends, however it ends.

The judge (`grader.plugin`) removes its sandbox folder when it closes its sandbox; a
judge killed at the time limit, by `grade watch` cancelling its grading, or by a
SIGKILL from outside cannot. The engine then removes what it left: nothing named
`grader-sandbox-*` remains in the temp folder, at any isolation level.

The temp folder is one of the test's own (both the engine's and the warm worker's), so
what other gradings on this machine leave or remove does not count; it is traversable
(0711) so a sandbox of another user can reach its folders at `user` level.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from grader import catalog
from grader.runner import engine, handle, policy
from grader.runner.submission import find
from grader.sandbox import isolation

SUBMISSIONS = Path(__file__).parent / "submissions"
SUITES = SUBMISSIONS / "probe_suites"
HERE = isolation.detect()
PREFIX = "grader-sandbox"  # the judge's grader-sandbox-*, the engine's grader-sandboxes-*
TIMEOUT_S = 8.0
"""The file's time limit: long enough for a judge on a loaded machine to start its sandbox."""

pytestmark = pytest.mark.slow


def level_param(level: isolation.Level) -> object:
    allowed = isolation.at_least(HERE.level, level)
    return pytest.param(level, marks=pytest.mark.skipif(not allowed, reason=f"no {level} here"))


@pytest.fixture
def temp_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The temp folder of this process and of the worker it starts (after pytest's own
    `tmp_path` is made: that one stays where pytest keeps it)."""
    folder = Path(tempfile.mkdtemp(prefix="grade-folders-"))
    folder.chmod(0o711)
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def sandboxes(folder: Path) -> list[Path]:
    """Every sandbox folder under `folder` (at any depth: the engine may nest them)."""
    return [p for p in folder.rglob(f"{PREFIX}*") if p.is_dir()]


def hanging(tmp_path: Path) -> Path:
    folder = tmp_path / "hangs"
    folder.mkdir(exist_ok=True)
    base = (SUBMISSIONS / "whoami" / "whoami.py").read_text()
    (folder / "whoami.py").write_text(base + "\nimport time\n\ntime.sleep(600)\n")
    return folder


def when_sandboxed(folder: Path, act: Callable[[], None], seen: list[Path]) -> threading.Thread:
    """A thread that waits until a sandbox has its lessons in `folder`, notes it, then acts."""

    def run() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = [p for p in sandboxes(folder) if (p / "lessons").is_dir()]
            if found:
                seen.extend(found)
                act()
                return
            time.sleep(0.05)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.parametrize("level", [level_param("strict"), level_param("user"), "basic"])
def test_a_killed_judge_leaves_no_sandbox_folder(
    level: isolation.Level, temp_dir: Path, tmp_path: Path
) -> None:
    spec = next(s for s in catalog.exercises(SUITES) if s.name == "whoami")
    options = policy.Options(timeout_s=TIMEOUT_S, cache_dir="")
    submission = find(hanging(tmp_path), ["whoami"])
    worker: handle.WorkerHandle | None = handle.WorkerHandle(tmp_path, engine.preload_for([spec]))
    serving: list[handle.WorkerHandle] = []  # the worker grading now (a lost one is replaced)

    def cancel() -> None:  # what `grade watch` does when a file is saved again
        serving[-1].cancel()

    def kill_judge() -> None:  # a SIGKILL from outside, to the judge alone
        pid = serving[-1].child_pid
        if pid:
            os.kill(pid, signal.SIGKILL)

    try:
        for how, act in (
            ("time limit", lambda: None),
            ("cancelled", cancel),
            ("SIGKILL", kill_judge),
        ):
            assert worker is not None
            serving.append(worker)
            seen: list[Path] = []
            watcher = when_sandboxed(temp_dir, act, seen)
            started = time.monotonic()
            result, worker = engine.grade_one(
                worker, spec, submission, options, level, tmp_path / "scratch", ()
            )
            watcher.join()
            assert seen, f"{how}: no sandbox folder was made in the temp folder"
            assert result.status in ("error", "timeout"), (how, result)
            if how == "cancelled":  # a SIGKILL from outside is retried (the file hangs again)
                assert time.monotonic() - started < TIMEOUT_S, how  # it was killed, not timed out
            left = sandboxes(temp_dir)
            assert not left, f"{how} at {level}: {left} left behind"
    finally:
        if worker is not None:
            worker.close()
