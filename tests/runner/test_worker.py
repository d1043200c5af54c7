"""The warm worker and the judge, graded for real: isolation levels, the record pipe,
and nothing left running after a file's grading.

`submissions/probe_suites/test_whoami.py` asks the sandbox who it is: its uid and
namespaces must match the level `grade --isolation` asked for, and it must not
hold the judge's record pipe. A lesson file that starts a double-forked daemon
shows that the worker (a subreaper) kills what student code leaves behind.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from grader.runner import worker
from grader.sandbox import isolation

SUBMISSIONS = Path(__file__).parent / "submissions"
SUITES = SUBMISSIONS / "probe_suites"
HERE = isolation.detect()


def level_param(level: isolation.Level, *rest: Any) -> Any:
    """A parameter that needs `level`: skipped where this machine does not allow it."""
    allowed = isolation.at_least(HERE.level, level)
    return pytest.param(
        level, *rest, marks=pytest.mark.skipif(not allowed, reason=f"no {level} here")
    )


DAEMON = """
import time

if {hang}:
    def ids():  # the judge waits for it until the worker kills it at the time limit
        while True:
            time.sleep(1)

if os.fork() == 0:  # a daemon: fork, new session, fork again, the middle one exits
    os.setsid()
    if os.fork() == 0:
        print(f"DAEMON_PID={{os.getpid()}}", flush=True)  # the output the grading captures
        try:  # where the level lets the sandbox write outside its folders (not under Landlock)
            with open({pidfile!r}, "w") as fh:
                fh.write(str(os.getpid()))
        except OSError:
            pass
        time.sleep(60)
        try:
            with open({marker!r}, "w") as fh:
                fh.write("the daemon outlived its grading")
        except OSError:
            pass
        os._exit(0)
    os._exit(0)
os.wait()
"""


def grade(
    folder: Path, *extra: str, cwd: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            str(folder),
            "--suites",
            str(SUITES),
            "--json",
            "r.json",
            "--no-html",
            "--no-color",
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc: dict[str, Any] = json.loads((cwd / "r.json").read_text())
    return proc, doc


@pytest.mark.slow
@pytest.mark.parametrize("level", [level_param("strict"), level_param("user"), "basic"])
def test_the_sandbox_runs_at_the_level_asked_for(level: str, tmp_path: Path) -> None:
    proc, doc = grade(SUBMISSIONS / "whoami", "--isolation", level, cwd=tmp_path)
    checks = {c["id"]: c for c in doc["exercises"][0]["checks"]}
    assert {k: c["status"] for k, c in checks.items()} == {
        "test_level": "passed",
        "test_record_pipe": "passed",
        "test_thread_budget": "passed",
    }, checks
    assert doc["isolation"]["level"] == level
    assert bool(doc["isolation"]["missing"]) == (level != "strict")  # strict lacks nothing
    assert f"Isolation: {level}" in proc.stdout and f"isolation {level}" in proc.stdout


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder a sandbox of another user can write to (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="grade-daemon-"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("level", "hang"),
    [level_param("user", False), ("basic", False), level_param("user", True), ("basic", True)],
)
def test_nothing_outlives_a_files_grading(
    level: str, hang: bool, tmp_path: Path, shared_tmp: Path
) -> None:
    """Strict is left out: its PID namespace ends with the sandbox. With `hang` the judge is
    killed at the time limit and cannot clean up: its sandbox and the daemon are the worker's."""
    pidfile, marker = shared_tmp / "daemon.pid", shared_tmp / "marker"
    folder = tmp_path / "submission"
    folder.mkdir()
    base = (SUBMISSIONS / "whoami" / "whoami.py").read_text()  # its ids() and open_files()
    (folder / "whoami.py").write_text(
        base + DAEMON.format(pidfile=str(pidfile), marker=str(marker), hang=hang)
    )
    _, doc = grade(folder, "--isolation", level, "--timeout", "10", cwd=tmp_path)
    statuses = [c["status"] for c in doc["exercises"][0]["checks"]]
    # (hanging: the first check runs out of its share; too little time is left to rerun the rest)
    assert statuses == (["timeout", "error", "error"] if hang else ["passed"] * 3), doc
    said = re.findall(r"DAEMON_PID=(\d+)", doc["exercises"][0]["output"])
    assert said or pidfile.is_file(), "the daemon started"
    pid = int(said[0]) if said else int(pidfile.read_text())
    assert not Path(f"/proc/{pid}").exists(), f"the daemon {pid} outlived its grading"
    time.sleep(0.5)
    assert not marker.exists()


def test_reap_leftovers_kills_what_a_subreaper_inherited(tmp_path: Path) -> None:
    """In a fresh process made a subreaper: a double-forked daemon is reparented to it,
    and `reap_leftovers` kills and reaps it."""
    script = f"""
import os, sys, time
sys.path.insert(0, {str(Path(worker.__file__).parents[2])!r})
from grader.runner import worker
from grader.sandbox import isolation
isolation.make_subreaper()
if os.fork() == 0:
    if os.fork() == 0:
        os.setsid()
        time.sleep(60)
        os._exit(0)
    os._exit(0)
os.wait()
time.sleep(0.2)
orphans = worker._children_of(os.getpid())
print(len(orphans), worker.reap_leftovers(), len(worker._children_of(os.getpid())))
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert proc.stdout.split() == ["1", "1", "0"], proc.stdout + proc.stderr


def test_a_partial_record_line_is_dropped() -> None:
    capped = worker._Capped(cap=40)
    capped.take(b'{"type": "done"}\n{"type": "start", "id": "test_a"}\n')
    lines, dropped = capped.lines()
    assert lines == ('{"type": "done"}',)
    assert dropped == capped.total - len(lines[0]) - 1 > 0


@pytest.mark.slow
def test_a_warm_worker_streams_a_files_records_and_cancels_its_grading(tmp_path: Path) -> None:
    """`handle.WorkerHandle.run(on_records=)` gets the judge's records while the file is graded
    (what `grade watch` draws early), and `cancel` stops a grading that would not end."""
    from grader import catalog
    from grader.runner import engine, handle, policy, results
    from grader.runner.submission import find

    spec = next(s for s in catalog.exercises(SUITES) if s.name == "whoami")
    ids = [c.id for c in spec.checks]
    options = policy.Options(timeout_s=60)
    worker: handle.WorkerHandle | None = handle.WorkerHandle(tmp_path, engine.preload_for([spec]))
    try:
        streamed: list[str] = []
        submission = find(SUBMISSIONS / "whoami", ["whoami"])
        result, worker = engine.grade_one(
            worker,
            spec,
            submission,
            options,
            "basic",
            tmp_path / "a",
            (),
            on_records=streamed.extend,
        )
        assert result.status == "passed", result
        parsed = results.read_records(streamed, ids)
        assert parsed.done and set(parsed.results) == set(ids)  # every record, as they came

        folder = tmp_path / "hangs"
        folder.mkdir()
        base = (SUBMISSIONS / "whoami" / "whoami.py").read_text()
        (folder / "whoami.py").write_text(base + "\nimport time\n\ntime.sleep(600)\n")
        assert worker is not None and not worker.cancel()  # nothing to stop between files
        cancelled: list[bool] = []

        def cancel() -> None:
            deadline = time.monotonic() + 30
            while not (worker is not None and worker.cancel()) and time.monotonic() < deadline:
                time.sleep(0.05)
            cancelled.append(True)

        started = time.monotonic()
        stopper = threading.Thread(target=cancel)
        stopper.start()
        result, worker = engine.grade_one(
            worker, spec, find(folder, ["whoami"]), options, "basic", tmp_path / "b", ()
        )
        stopper.join()
        assert cancelled and time.monotonic() - started < 30  # not the 60 s time limit
        assert result.status == "error", result  # killed (SIGKILL) wherever it was
        assert "SIGKILL" in result.message or "signal 9" in result.message, result.message
        assert worker is not None  # the same warm worker serves the next file
        again, _ = engine.grade_one(worker, spec, submission, options, "basic", tmp_path / "c", ())
        assert again.status == "passed"
    finally:
        if worker is not None:
            worker.close()
