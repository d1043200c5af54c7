"""Faults of the grader are the grader's (issue 34 item 3): a warm worker or a judge killed
from outside while a lesson file is graded is retried once on a fresh one, and the file
keeps the grade it deserves.

Real processes: the real `grade` on the command tests' small course, a lesson file that
sleeps at import (so its sandbox is alive for a while), and `SIGKILL` sent by the test to
the worker or the judge it finds among the descendants of the `grade` it started
(`/proc/<pid>/task/*/children`, never other processes). The judge never runs student code,
so at `strict` and `user`, where the sandbox can signal neither, such a kill is not the
student's; at `basic` the sandbox is the same user and could have sent it, so the file
is retried but a second kill is charged as before.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "tests" / "commands" / "fixtures"
LEVELS = ["strict", "user"] if os.geteuid() == 0 else []

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not LEVELS, reason="needs root: a sandbox user the judge is safe from"),
]


def children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as fh:
                found += [int(p) for p in fh.read().split()]
    except (OSError, ValueError):
        pass
    return found


def chain(pid: int, depth: int) -> list[int]:
    """[grade, worker, judge, sandbox][:depth + 1], following the first child."""
    out = [pid]
    while len(out) <= depth:
        below = children(out[-1])
        if not below:
            return out
        out.append(below[0])
    return out


def grade_and_kill(tmp_path: Path, level: str, depth: int) -> tuple[dict, str]:
    """Grade alice's 01_sums (sleeping 3 s at import) and SIGKILL the process `depth` below
    `grade` (1: the worker, 2: the judge) once the sandbox runs; the results and stderr."""
    folder = tmp_path / "alice"
    folder.mkdir(mode=0o755)
    source = (COURSE / "submissions" / "alice" / "01_sums.py").read_text()
    (folder / "01_sums.py").write_text("import time\ntime.sleep(3)\n" + source)
    tmp_path.chmod(0o755)
    out = tmp_path / "results.json"
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "grader", str(folder), "--suites", str(COURSE / "suites"),
            "--only", "01_sums", "--json", str(out), "--no-html", "--no-color", "-q",
            "--isolation", level,
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )  # fmt: skip
    killed = False
    deadline = time.monotonic() + 60
    while not killed and proc.poll() is None and time.monotonic() < deadline:
        found = chain(proc.pid, 3)
        if len(found) == 4:  # the sandbox is there, importing the lesson file
            os.kill(found[depth], signal.SIGKILL)
            killed = True
        time.sleep(0.05)
    stdout, stderr = proc.communicate(timeout=120)
    assert killed, "the sandbox never started"
    assert out.is_file(), stdout + stderr
    return json.loads(out.read_text()), stdout + stderr


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("depth", [1, 2], ids=["worker", "judge"])
def test_a_worker_or_judge_killed_from_outside_is_retried(tmp_path, level, depth):
    results, output = grade_and_kill(tmp_path, level, depth)
    exercise = results["exercises"][0]
    assert exercise["status"] == "passed", (exercise["message"], output)
    assert exercise["score"] == exercise["max_score"] > 0
    shutil.rmtree(tmp_path / "alice", ignore_errors=True)


def test_a_file_the_grader_failed_on_every_try_counts_no_points():
    """What the reports get when the retry failed too: every check an error worth nothing
    either way, and a message that says it was the grader's (no real kill needed: the
    judge's verdict is `results.assemble` of what the engine saw)."""
    from grader import catalog
    from grader.runner import results

    spec = next(s for s in catalog.exercises(COURSE / "suites") if s.name == "01_sums")
    lost = results.Ending(
        lost="the worker stopped answering", grader_fault="the worker was lost", attempts=2
    )
    result = results.assemble(spec, lost, "01_sums.py")
    assert result.status == "error"
    assert "grader error, not yours: no points counted" in result.message
    assert "on each of 2 tries" in result.message
    assert all(c.max_score == 0 and c.score == 0 for c in result.checks)
    charged = results.assemble(spec, results.Ending(lost="the worker stopped"), "01_sums.py")
    assert sum(c.max_score for c in charged.checks) > 0  # a loss at basic stays counted
