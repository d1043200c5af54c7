"""What a sandbox holds that no folder shows, at every level.

Files deleted while open, blocks reserved with `fallocate` on a deleted file, memfd files and
System V segments: a sandbox that holds more than the quota (16 MiB here) or its shared
memory allowance (`GRADER_SHARED_MEMORY`, 24 MiB here) is stopped with the reason; the System V
objects of a sandbox are gone once it is closed; a sandbox that writes a few small files,
reads them back and deletes them is never stopped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.sandbox import held, quota, sysv

HERE = Path(__file__).parent
LEVELS = ["basic", "user", "strict"] if os.geteuid() == 0 else ["basic"]
QUOTA = f"{16 << 20},300"
SHARED = str(24 << 20)

pytestmark = pytest.mark.slow

PAYLOAD = """
import ctypes, os, time

_kept = []  # what the sandbox holds: descriptors of deleted files, memfds
_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
_libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
_libc.shmdt.argtypes = [ctypes.c_void_p]


def _hold(fd, reserve):
    _kept.append(fd)
    if reserve:
        os.posix_fallocate(fd, 0, 4 << 20)
    else:
        for _ in range(4):
            os.write(fd, b"x" * (1 << 20))


def _until_stopped(step):
    end = time.monotonic() + 20
    while time.monotonic() < end:
        try:
            step()
        except OSError as exc:
            return os.strerror(exc.errno)
        time.sleep(0.02)
    return "never stopped"


def unlinked(folder, reserve=False):
    os.makedirs(folder, exist_ok=True)
    return _until_stopped(lambda: unlinked_step(folder, reserve))


def orphan(folder):  # a double-forked daemon holds the files: reparented to the judge
    os.makedirs(folder, exist_ok=True)
    child = os.fork()
    if child == 0:
        if os.fork() == 0:
            _until_stopped(lambda: unlinked_step(folder))
        os._exit(0)
    os.waitpid(child, 0)
    return _until_stopped(lambda: None)


def unlinked_step(folder, reserve=False):
    path = os.path.join(folder, f"f{len(_kept)}")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.unlink(path)
    _hold(fd, reserve)


def many(folder):  # empty files, deleted and kept open: inodes, not bytes
    os.makedirs(folder, exist_ok=True)
    def step():
        for _ in range(20):
            path = os.path.join(folder, f"e{len(_kept)}")
            _kept.append(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
            os.unlink(path)
    return _until_stopped(step)


def memfd(own_limit=False):
    if own_limit:  # the address-space limit itself (as --memory sets it) 16 MiB above its size
        import resource
        with open("/proc/self/status") as fh:
            size = next(int(line.split()[1]) << 10 for line in fh if line.startswith("VmSize"))
        resource.setrlimit(resource.RLIMIT_AS, (size + (16 << 20), resource.RLIM_INFINITY))
    return _until_stopped(lambda: _hold(os.memfd_create(f"m{len(_kept)}"), False))


def segment(size):
    shmid = _libc.shmget(0, size, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
    if shmid < 0:
        raise OSError(ctypes.get_errno(), "shmget")
    address = _libc.shmat(shmid, None, 0)
    ctypes.memset(address, 1, size)  # its pages in memory
    _libc.shmdt(ctypes.c_void_p(address))
    _kept.append(shmid)
    return shmid


def segments():
    return _until_stopped(lambda: segment(4 << 20))


def small_segments():  # and a semaphore set and a message queue, never used: no pid in them
    made = [segment(1 << 20), segment(1 << 20)]
    made.append(_libc.semget(0, 4, 0o1600))
    made.append(_libc.msgget(0, 0o1600))
    return made


def hide():  # undumpable: a judge of the same user may no longer read its descriptors
    _libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    return _until_stopped(lambda: None)


def ok(folder):
    os.makedirs(folder, exist_ok=True)
    seen = []
    for n in range(5):
        path = os.path.join(folder, f"note{n}.txt")
        with open(path, "w") as fh:
            fh.write(f"note {n}\\n" * 100)
        with open(path) as fh:
            seen.append(fh.readline().strip())
    with open(os.path.join(folder, "gone.txt"), "w") as fh:  # deleted while open
        os.unlink(fh.name)
        fh.write("scratch")
    fd = os.memfd_create("small")
    os.write(fd, b"y" * 4096)
    os.close(fd)
    return seen
"""

DRIVER = """
import json, os, sys, time
sys.path.insert(0, sys.argv[3])
import drive_sandbox

level, folder, how = sys.argv[1], sys.argv[2], sys.argv[4]
if sys.argv[5:] == ["as-a-user"]:  # a judge without CAP_SYS_PTRACE, as a student's own grade
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable (x2)
    assert libc.capget(header, data) == 0
    data[0] &= ~(1 << 19)  # CAP_SYS_PTRACE out of the effective and permitted sets (the
    data[1] &= ~(1 << 19)  # sandbox, forked after, lacks it too: root judging root as a user)
    assert libc.capset(header, data) == 0
box, work = drive_sandbox.start(level, folder)
target = os.path.join(work, "scratch", "payload")
report = {}
calls = {
    "unlinked": lambda: box.module.unlinked(target),
    "fallocate": lambda: box.module.unlinked(target, reserve=True),
    "orphan": lambda: box.module.orphan(target),
    "many": lambda: box.module.many(target),
    "memfd": lambda: box.module.memfd(),
    "memfd_own_limit": lambda: box.module.memfd(own_limit=True),
    "segments": lambda: box.module.segments(),
    "small_segments": lambda: box.module.small_segments(),
    "ok": lambda: box.module.ok(target),
    "hide": lambda: box.module.hide(),
}
started = time.monotonic()
report["call"] = drive_sandbox.outcome(calls[how])
report["seconds"] = time.monotonic() - started
time.sleep(1.0)  # the watchdog's turn
report["again"] = drive_sandbox.outcome(lambda: box.module.ok(target))
box.close()
import shutil
shutil.rmtree(work, ignore_errors=True)
print(json.dumps(report))
"""


@pytest.fixture
def temp_dir() -> Iterator[Path]:
    """A temp folder of the test's own, for the sandbox's workdir (TMPDIR of the driver)."""
    folder = Path(tempfile.mkdtemp(prefix="grade-held-"))
    folder.chmod(0o711)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def drive(
    temp_dir: Path, level: str, how: str, shared: str = SHARED, *, as_a_user: bool = False
) -> dict:
    folder = temp_dir / "lesson"
    folder.mkdir()
    folder.chmod(0o755)
    (folder / "lesson.py").write_text(PAYLOAD)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, level, str(folder), str(HERE), how]
        + (["as-a-user"] if as_a_user and os.geteuid() == 0 else []),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=temp_dir,
        env={**os.environ, "TMPDIR": str(temp_dir), quota.ENV: QUOTA, held.ENV: shared},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def stopped_for(seen: dict, reason: str) -> None:
    assert seen["seconds"] < 10, seen  # stopped, not left to go on for its 20 s
    assert seen["again"]["gone"].startswith(
        "it had already stopped in an earlier check: " + reason
    ), seen


@pytest.mark.parametrize("how", ["unlinked", "fallocate", "orphan", "many"])
@pytest.mark.parametrize("level", LEVELS)
def test_deleted_files_held_open_count_against_the_quota(
    temp_dir: Path, level: str, how: str
) -> None:
    if level == "strict" and how == "orphan":
        pytest.skip("at strict the tmpfs holds every file, and orphans stay in its namespace")
    seen = drive(temp_dir, level, how)
    if level == "strict" and "value" in seen["call"]:  # the tmpfs refused it first
        assert seen["call"]["value"] == os.strerror(28), seen  # ENOSPC
        return
    assert seen["call"] == {"gone": quota.reason(16 << 20, 300)}, seen
    stopped_for(seen, quota.EXCEEDED)


@pytest.mark.parametrize("how", ["memfd", "segments"])
@pytest.mark.parametrize("level", LEVELS)
def test_shared_memory_counts_against_the_memory_limit(
    temp_dir: Path, level: str, how: str
) -> None:
    seen = drive(temp_dir, level, how)
    assert seen["call"]["gone"].startswith(held.OUT_OF_MEMORY), seen
    stopped_for(seen, held.OUT_OF_MEMORY)


@pytest.mark.parametrize("level", LEVELS)
def test_shared_memory_counts_against_the_address_space_limit(temp_dir: Path, level: str) -> None:
    """No allowance from the environment: the limit is what RLIMIT_AS leaves the sandbox."""
    seen = drive(temp_dir, level, "memfd_own_limit", shared="")
    assert seen["call"]["gone"].startswith(held.OUT_OF_MEMORY), seen
    left = re.search(r"left it \((\d+) MiB\)", seen["call"]["gone"])
    assert left is not None and 0 < int(left.group(1)) <= 16, seen
    stopped_for(seen, held.OUT_OF_MEMORY)


@pytest.mark.parametrize("level", LEVELS)
def test_system_v_objects_do_not_outlive_the_sandbox(temp_dir: Path, level: str) -> None:
    before = {(o.kind, o.id) for o in sysv.listed()}
    seen = drive(temp_dir, level, "small_segments")
    made = seen["call"]["value"]
    assert len(made) == 4 and min(made) >= 0, seen  # made, and small enough to go on
    assert "value" in seen["again"], seen
    ids = set(zip(["shm", "shm", "sem", "msg"], made, strict=True))
    after = {(o.kind, o.id) for o in sysv.listed()}
    if level == "strict":  # made in its own namespace (their ids may be this one's too)
        assert not after - before, after - before
    else:
        assert not ids & after, ids & after


@pytest.mark.parametrize("level", LEVELS)
def test_a_sandbox_writing_small_files_is_not_stopped(temp_dir: Path, level: str) -> None:
    seen = drive(temp_dir, level, "ok")
    notes = [f"note {n}" for n in range(5)]
    assert seen["call"] == {"value": notes}, seen
    assert seen["again"] == {"value": notes}, seen


@pytest.mark.parametrize("how", ["hide", "ok"])
def test_at_basic_a_process_hiding_its_descriptors_is_stopped(temp_dir: Path, how: str) -> None:
    """A judge that reads its sandbox's descriptors only as the same user (a student's laptop):
    a sandbox that makes itself undumpable is stopped; one that does not is graded."""
    seen = drive(temp_dir, "basic", how, as_a_user=True)
    if how == "ok":
        assert "value" in seen["call"] and "value" in seen["again"], seen
        return
    assert seen["call"] == {"gone": quota.HIDDEN}, seen
    stopped_for(seen, quota.HIDDEN)
