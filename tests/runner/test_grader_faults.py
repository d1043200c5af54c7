"""Faults of the grader are the grader's: a warm worker or a judge killed
from outside while a lesson file is graded is retried once on a fresh one, and the file
keeps the grade it deserves; a sandbox killed by a signal the judge did not send gives the
check it was running one more try on a fresh sandbox (the student's own `SIGKILL` looks the
same, so a second such end is charged: it gains nothing).

Real processes: the real `grade` on the command tests' small course, a lesson file that
sleeps at import (so its sandbox is alive for a while), and `SIGKILL` sent by the test to
the worker or the judge it finds among the descendants of the `grade` it started
(`/proc/<pid>/task/*/children`, never other processes). The judge never runs student code,
so at `strict` and `user`, where the sandbox can signal neither, such a kill is not the
student's; at `basic` the sandbox is the same user and could have sent it, so the file
is retried once and a second kill is the student's.
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
LEVELS = ["strict", "user", "basic"] if os.geteuid() == 0 else []

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


SLEEPS_AT_IMPORT = "import time\ntime.sleep(3)\n"
ADD_SLEEPS = """
import time

def add(a, b):
    time.sleep(3)
    return a + b
"""
ADD_KILLS_ITSELF = """
import os, signal

def add(a, b):
    os.kill(os.getpid(), signal.SIGKILL)
"""


def grade_and_kill(
    tmp_path: Path, level: str, depth: int, extra: str = SLEEPS_AT_IMPORT, after_s: float = 0.0
) -> tuple[dict, str]:
    """Grade alice's 01_sums with `extra` (default: it sleeps 3 s at import) and SIGKILL the
    process `depth` below `grade` (1: the worker, 2: the judge, 3: the sandbox: the
    namespace's first process at strict) `after_s` after the sandbox started; the results
    and what grade printed."""
    folder = tmp_path / "alice"
    folder.mkdir(mode=0o755)
    source = (COURSE / "submissions" / "alice" / "01_sums.py").read_text()
    (folder / "01_sums.py").write_text(
        extra + source if extra == SLEEPS_AT_IMPORT else source + extra
    )
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
    killed = depth == 0
    deadline = time.monotonic() + 60
    seen_at = None
    while not killed and proc.poll() is None and time.monotonic() < deadline:
        found = chain(proc.pid, 4)
        if len(found) >= 4 and seen_at is None:  # the sandbox is there
            seen_at = time.monotonic()
        if seen_at is not None and time.monotonic() - seen_at >= after_s:
            target = found[-1] if depth == 3 else found[depth]  # at strict: the inner one
            os.kill(target, signal.SIGKILL)
            killed = True
        time.sleep(0.05)
    stdout, stderr = proc.communicate(timeout=120)
    assert killed, "the sandbox never started"
    assert out.is_file(), stdout + stderr
    return json.loads(out.read_text()), stdout + stderr


@pytest.mark.parametrize("level", LEVELS[:1])
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


@pytest.mark.parametrize("level", LEVELS[::2])
def test_a_sandbox_killed_from_outside_during_a_check_is_given_that_check_again(tmp_path, level):
    """`add` sleeps 3 s; its sandbox is killed 1.5 s into the grading: the check runs again
    on a fresh sandbox (once), and the file keeps full marks."""
    results, output = grade_and_kill(tmp_path, level, 3, extra=ADD_SLEEPS, after_s=1.5)
    exercise = results["exercises"][0]
    assert exercise["score"] == exercise["max_score"] > 0, (exercise, output)


@pytest.mark.parametrize("level", LEVELS[:1])
def test_a_sandbox_that_kills_itself_gains_nothing_from_the_retry(tmp_path, level):
    """The student's own SIGKILL looks like one from outside: it is given the check once more,
    ends it again, and the check is charged; the file's other checks keep their points."""
    results, output = grade_and_kill(tmp_path, level, 0, extra=ADD_KILLS_ITSELF)
    checks = {c["id"]: c for c in results["exercises"][0]["checks"]}
    assert checks["test_add"]["score"] == 0 and checks["test_add"]["max_score"] > 0, output
    assert all(c["score"] == c["max_score"] for i, c in checks.items() if i != "test_add")
