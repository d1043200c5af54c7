"""engine.Pool: warm workers shared by the gradings of a batch, JAX imported once per worker.

Two students graded one after the other on a pool of one: both are graded in full, by
the same warm worker process (one start for the class), and a worker that dies while
grading is replaced for the next student.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest

from grader import catalog
from grader.runner import engine, policy
from grader.runner.submission import find

SUBMISSIONS = Path(__file__).parent / "submissions"
SUITES = SUBMISSIONS / "demo_suites"

pytestmark = pytest.mark.slow


def student(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(SUBMISSIONS / "demo_good", folder)
    folder.chmod(0o755)
    return folder


def test_students_share_a_warm_worker_and_a_lost_one_is_replaced(tmp_path: Path) -> None:
    specs = list(catalog.exercises(SUITES))
    options = policy.Options(timeout_s=60, cache_dir="")
    with engine.Pool(1, engine.preload_for(specs)) as pool:
        seen = []
        for name in ("ann", "bo"):
            submission = find(student(tmp_path, name), [s.name for s in specs])
            report = engine.grade(specs, submission, options, pool=pool)
            assert report.fraction == 1.0, report
            seen.append(pool.acquire())
            pool.release(seen[-1])
        first, second = seen
        assert first is not None and first is second and pool.started == 1

        os.kill(first.proc.pid, signal.SIGKILL)  # the next grading finds it dead
        first.proc.wait()
        submission = find(student(tmp_path, "cy"), [s.name for s in specs])
        lost = engine.grade(specs, submission, options, pool=pool)
        # the lost worker was the machine's fault: the file is graded again on a fresh one
        assert lost.fraction == 1.0 and pool.started == 2, lost
        again = engine.grade(specs, submission, options, pool=pool)
        assert again.fraction == 1.0 and pool.started == 2
    assert not pool.log_dir.exists()
