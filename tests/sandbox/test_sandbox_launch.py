"""Real sandboxes, forked and isolated, driven from a fresh process per scenario."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader.sandbox import landlock

HERE = Path(__file__).parent
LEVELS = ["basic", "user", "strict"] if os.geteuid() == 0 else ["basic"]

LESSON = """
import os, socket, time

class Box:
    def __init__(self): self.n = 3
    def twice(self): return self.n * 2

def ok(): return [1, 2.5, "x"]
def broken(): return 1 / 0
def stub(): raise NotImplementedError
def make_box(): return Box()
def exits(): os._exit(7)
def spins():
    while True: pass
def whoami(): return os.getuid()
def read_repo():
    try:
        return len(open(REPO_FILE).read())
    except OSError as exc:
        return type(exc).__name__
def network():
    try:
        socket.create_connection(("10.0.0.1", 80), timeout=1)
        return "connected"
    except OSError as exc:
        return type(exc).__name__
def write_outside():
    try:
        open(OUTSIDE, "w").write("x")
        return "wrote"
    except OSError as exc:
        return type(exc).__name__
def read_classmate():
    try:
        return open(CLASSMATE).read()
    except OSError as exc:
        return type(exc).__name__
def signal_judge():
    try:
        os.kill(os.getppid(), 0)
        return "reached"
    except OSError as exc:
        return type(exc).__name__
def descriptors():
    found = []
    for fd in sorted(int(n) for n in os.listdir("/proc/self/fd")):
        try:
            found.append([fd, os.readlink("/proc/self/fd/%d" % fd)])
        except OSError:
            pass
    return found
def daemon():
    if os.fork() == 0:
        if os.fork() == 0:
            time.sleep(3)
            open(OUTSIDE, "w").write("daemon was here")
        os._exit(0)
    return "forked"
"""


def drive(
    tmp_path: Path,
    level: str,
    scenario: str,
    budget_s: float = 60.0,
    source: str = LESSON,
    pass_fds: tuple[int, ...] = (),
) -> dict:
    folder = tmp_path / "lesson"
    folder.mkdir(exist_ok=True)
    folder.chmod(0o755)
    outside = tmp_path / "outside.txt"
    (folder / "lesson.py").write_text(
        source + f"\nREPO_FILE = {str(Path(__file__).resolve())!r}\nOUTSIDE = {str(outside)!r}\n"
        f"CLASSMATE = {str(tmp_path / 'classmate' / '03_jit.py')!r}\n"
    )
    (tmp_path / "classmate").mkdir(exist_ok=True)
    (tmp_path / "classmate" / "03_jit.py").write_text("a classmate's work\n")
    proc = subprocess.run(
        [
            sys.executable,
            str(HERE / "drive_sandbox.py"),
            level,
            str(folder),
            scenario,
            str(budget_s),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        pass_fds=pass_fds,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("level", LEVELS)
def test_calls_errors_and_handles_cross_as_data(tmp_path, level):
    seen = drive(tmp_path, level, "ok,broken,stub,make_box,whoami")
    assert seen["hello_ok"] is True
    assert seen["ok"] == {"value": [1, 2.5, "x"]}
    assert seen["broken"]["error"] == "ZeroDivisionError"
    assert seen["broken"]["location"][0] == "lesson.py" and "1 / 0" in seen["broken"]["location"][2]
    assert (
        "ZeroDivisionError" in seen["broken"]["builtin"]
    )  # `except ZeroDivisionError` works in the judge
    assert seen["stub"]["error"] == "NotImplementedError" and seen["stub"]["in_student"] is True
    assert seen["make_box"]["value"].startswith("<student Box")  # an object stays in the sandbox
    assert (seen["whoami"]["value"] != 0) == (level != "basic")
    assert seen["leftover"] == []


@pytest.mark.slow
@pytest.mark.parametrize("level", LEVELS)
def test_a_sandbox_that_exits_is_gone_for_the_following_requests(tmp_path, level):
    seen = drive(tmp_path, level, "exits,ok")
    assert "ended" in seen["exits"]["gone"]
    assert seen["ok"]["gone"].startswith("it had already stopped")


@pytest.mark.slow
@pytest.mark.parametrize("level", LEVELS)
def test_a_sandbox_holds_only_its_own_descriptors(tmp_path, level):
    """Issue 33: a descriptor of the process that starts the sandbox (here a pipe the driver
    inherits, as a judge holds its record pipe and the worker's reply pipe) is not in the
    sandbox: it finds its socket, its stack pipe, the standard streams and /dev/null only."""
    read_end, write_end = os.pipe()
    try:
        seen = drive(tmp_path, level, "descriptors", pass_fds=(read_end, write_end))
        inherited = f"pipe:[{os.fstat(write_end).st_ino}]"
    finally:
        os.close(read_end)
        os.close(write_end)
    held = seen["descriptors"]["value"]
    targets = [target for _, target in held]
    assert inherited not in targets, held
    assert sum(t.startswith("socket:") for t in targets) == 1, held  # its channel to the judge
    others = [t for fd, t in held if fd > 2 and not t.startswith("socket:")]
    # its stack pipe (the judge asks for its stack) and /dev/null where others were
    assert sum(t.startswith("pipe:") for t in others) == 1, held
    assert all(t.startswith("pipe:") or t == "/dev/null" for t in others), held


@pytest.mark.slow
def test_an_endless_call_is_stopped_at_the_deadline(tmp_path):
    seen = drive(tmp_path, LEVELS[-1], "spins,ok", budget_s=12.0)
    assert seen["spins"]["gone"].startswith("no answer before the time limit")
    assert seen["leftover"] == []


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="strict isolation needs root")
def test_strict_sees_no_repository_no_network_and_writes_nowhere_else(tmp_path):
    seen = drive(tmp_path, "strict", "read_repo,network,write_outside")
    assert seen["read_repo"]["value"] == "FileNotFoundError"
    assert seen["network"]["value"] in (
        "OSError",
        "ConnectionRefusedError",
    )  # unreachable: no route
    assert seen["write_outside"]["value"] in ("FileNotFoundError", "PermissionError", "OSError")
    assert not (tmp_path / "outside.txt").exists()


@pytest.mark.slow
@pytest.mark.skipif(landlock.abi() == 0, reason="Landlock is not in this kernel")
@pytest.mark.parametrize("level", [lv for lv in LEVELS if lv != "strict"])
def test_without_namespaces_landlock_keeps_the_sandbox_to_its_own_files(tmp_path, level):
    # Everything here is readable and writable by the sandbox's user at `basic`, and open to
    # every user at `user` (pytest's own folder is root's alone: a folder of the test's own
    # that others may enter): Landlock alone keeps the sandbox out.
    base = Path(tempfile.mkdtemp(prefix="grader-landlock-test-"))
    try:
        base.chmod(0o777)
        (base / "classmate").mkdir(mode=0o777)
        (base / "classmate").chmod(0o777)
        seen = drive(base, level, "read_classmate,read_repo,write_outside,signal_judge,ok")
        assert (base / "classmate" / "03_jit.py").stat().st_mode & 0o004  # world-readable
        assert seen["read_classmate"]["value"] == "PermissionError", seen
        assert seen["read_repo"]["value"] == "PermissionError", seen
        assert seen["write_outside"]["value"] == "PermissionError", seen
        assert not (base / "outside.txt").exists()
        if landlock.abi() >= 6:  # signals are scoped to the sandbox's own processes
            assert seen["signal_judge"]["value"] == "PermissionError", seen
        assert seen["ok"] == {"value": [1, 2.5, "x"]}  # and it still works
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
@pytest.mark.isolation("user")
def test_user_level_cannot_write_into_root_owned_folders(tmp_path):
    tmp_path.chmod(0o755)
    seen = drive(tmp_path, "user", "write_outside")
    assert seen["write_outside"]["value"] == "PermissionError"


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="strict isolation needs root")
def test_a_daemon_started_by_student_code_dies_with_a_strict_sandbox(tmp_path):
    import time

    seen = drive(tmp_path, "strict", "daemon")
    assert seen["daemon"]["value"] == "forked"
    time.sleep(4)
    assert not (tmp_path / "outside.txt").exists()


@pytest.mark.slow
@pytest.mark.parametrize("level", LEVELS)
def test_an_import_error_is_reported_with_the_students_line(tmp_path, level):
    seen = drive(tmp_path, level, "ok", source="x = 1\ny = undefined_name\n")
    assert seen["hello_ok"] is False
    assert seen["hello_error"][0] == "NameError" and seen["hello_error"][1][1] == 2
