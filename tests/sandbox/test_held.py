"""The pieces of the watchdog's count of what a sandbox holds (`held`, `sysv`, `quota.verdict`),
on a process of the test's own: what it holds through descriptors and mappings, once each."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.sandbox import held, quota, sysv

MiB = 1 << 20

HOLDER = """
import mmap, os, sys
folder = sys.argv[1]
kept = []
def deleted(name, size, reserve=False):
    path = os.path.join(folder, name)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.unlink(path)
    if reserve:
        os.posix_fallocate(fd, 0, size)
    else:
        os.write(fd, b"x" * size)
    return fd
kept.append(deleted("written", 2 << 20))
kept.append(deleted("reserved", 3 << 20, reserve=True))
fd = deleted("mapped", 5 << 20)  # held through a one-page mapping alone
kept.append(mmap.mmap(fd, 4096))
os.close(fd)
kept.append(os.memfd_create("open"))
os.write(kept[-1], b"y" * (7 << 20))
fd = os.memfd_create("mapped")
os.write(fd, b"z" * (11 << 20))
kept.append(mmap.mmap(fd, 11 << 20))
os.close(fd)
with open(os.path.join(folder, "named"), "wb") as fh:  # in a folder: the walk counts it
    fh.write(b"n" * (13 << 20))
kept.append(open(os.path.join(folder, "named"), "rb"))
print("ready", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[int]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # not pytest's capture file (deleted, open)
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield proc.pid
    proc.communicate("", timeout=10)


def test_deleted_files_and_memfds_are_counted_through_descriptors_and_mappings(
    holder: int,
) -> None:
    found = held.measure([holder, holder], holder)
    # 2 written + 3 reserved + 5 held by a mapping alone; the named file is the walk's
    assert (found.deleted, found.deleted_files) == (10 * MiB, 3), found
    assert found.shared == 18 * MiB, found  # 7 open + 11 mapped, each once
    assert found.unmapped == 7 * MiB, found  # the mapped one is in its address space already
    assert found.pids == {holder} and not found.hidden


def test_polls_between_reads_of_the_mappings_keep_what_they_found(holder: int) -> None:
    tracker = held.Tracker()
    polls = [tracker.measure([holder], holder) for _ in range(held.MAPS_EVERY + 1)]
    assert {(p.deleted, p.shared, p.unmapped) for p in polls} == {(10 * MiB, 18 * MiB, 7 * MiB)}


def test_the_strict_tmpfs_files_are_left_to_the_kernel(holder: int, tmp_path: Path) -> None:
    found = held.measure([holder], holder, skip_dev=tmp_path.stat().st_dev)
    assert found.deleted == 0 and found.shared == 18 * MiB, found


def test_an_ended_process_holds_nothing() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    found = held.measure([int(proc.stdout)], 0)
    assert (found.deleted, found.shared, found.hidden) == (0, 0, False)


def objects() -> list[sysv.Object]:
    return [
        sysv.Object("shm", 1, uid=1000123, cuid=1000123, pids=(50, 50), size=4 * MiB),
        sysv.Object("shm", 2, uid=0, cuid=0, pids=(60, 70), size=8 * MiB),
        sysv.Object("sem", 3, uid=1000123, cuid=1000123, pids=(), size=0),
        sysv.Object("msg", 4, uid=1000, cuid=1000, pids=(0, 70), size=MiB),
        sysv.Object("shm", 5, uid=1000, cuid=1000, pids=(90, 91), size=16 * MiB),
    ]


def test_the_sandbox_owns_what_its_uid_or_its_processes_made() -> None:
    at_user = sysv.owned(objects(), uid=1000123, pids={70})
    assert [o.id for o in at_user] == [1, 2, 3, 4]
    at_basic = sysv.owned(objects(), uid=None, pids={50, 70})
    assert [o.id for o in at_basic] == [1, 2, 4]  # a semaphore set names no process
    assert sysv.owned(objects(), uid=None, pids={0}) == []  # no process is not a process
    assert sysv.held(at_basic, mapped={2}) == 5 * MiB  # segment 2 is mapped: counted already


def test_at_basic_objects_naming_no_process_are_the_sandbox_s_if_made_while_it_ran() -> None:
    made = [
        sysv.Object("sem", 1, uid=1000, cuid=1000, pids=(), size=0, ctime=100),
        sysv.Object("msg", 2, uid=1000, cuid=1000, pids=(0, 0), size=0, ctime=200),
        sysv.Object("sem", 3, uid=1001, cuid=1001, pids=(), size=0, ctime=200),
        sysv.Object("msg", 4, uid=1000, cuid=1000, pids=(5, 0), size=0, ctime=200),
    ]
    mine = sysv.owned(made, uid=None, pids={50}, shared_uid=1000, since=150.5)
    assert [o.id for o in mine] == [2]  # 1 came before, 3 is another user's, 4 names a process
    assert sysv.owned(made, uid=None, pids={50}) == []  # no start known: none


def test_a_process_start_is_in_the_past() -> None:
    started = sysv.process_start(os.getpid())
    assert time.time() - 3600 < started <= time.time()
    assert sysv.process_start(-1) == float("inf")


def test_the_verdict_names_the_first_limit_passed() -> None:
    size, files = 16 * MiB, 300
    fine = quota.Usage(size=MiB, files=10, shared=8 * MiB, memory_left=24 * MiB)
    assert quota.verdict(fine, size, files) == ""
    unlimited = quota.Usage(size=MiB, files=10, shared=10 << 30, memory_left=None)
    assert quota.verdict(unlimited, size, files) == ""
    disk = quota.Usage(size=16 * MiB, files=10, shared=32 * MiB, memory_left=24 * MiB)
    assert quota.verdict(disk, size, files) == quota.reason(size, files)
    memory = quota.Usage(size=MiB, files=10, shared=32 * MiB, memory_left=24 * MiB)
    assert quota.verdict(memory, size, files) == held.out_of_memory(32 * MiB, 24 * MiB)
    assert held.out_of_memory(32 * MiB, 24 * MiB).startswith(held.OUT_OF_MEMORY)
    hidden = quota.Usage(size=MiB, files=10, hidden=True)
    assert quota.verdict(hidden, size, files) == quota.HIDDEN


def test_memory_left_is_the_address_space_limit_less_the_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30)); "
            "print('ready', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        monkeypatch.delenv(held.ENV, raising=False)
        left = held.memory_left(proc.pid)
        assert left is not None and 0 < left < 8 << 30
        monkeypatch.setenv(held.ENV, str(24 * MiB))
        assert held.memory_left(proc.pid) == 24 * MiB
    finally:
        proc.communicate("", timeout=10)
