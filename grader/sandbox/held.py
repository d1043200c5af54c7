"""What a sandbox's processes hold that no folder shows: deleted files, memfd files, mappings.

A file written, then unlinked while kept open (or mapped), `O_TMPFILE`, and a `memfd_create`
file have no name in any folder the quota's watchdog walks, yet they hold disk or memory until
the last process holding them ends. The judge finds them through each process's descriptors
(`/proc/PID/fd`, stat through the link: `st_blocks` counts what is written and what
`fallocate` reserved) and mappings (`/proc/PID/maps`; a mapped file's size through
`/proc/PID/map_files` where the judge may follow those links, the mapping's length where not),
once per (device, inode):

- a deleted regular file is disk (`deleted`), counted with the quota (`grader.sandbox.quota`);
- a memfd file or System V segment is memory (`shared`): the address-space limit on the
  sandbox (`--memory`, `RLIMIT_AS`) counts it only while mapped, so what the sandbox's serving
  process holds without mapping it (`unmapped`) is counted as if it were (`memory_left`).

Reading another process's descriptors takes the right to trace it: the judge has it at
`basic` (same user, while the process stays dumpable) and where it is root with
`CAP_SYS_PTRACE` (`may_read_others`); where it has not (root without it, at `user`: a default
Docker container) only the folders count. Where it has it, a process whose descriptors it may
not read made itself undumpable to hide them (`hidden`): the watchdog stops it
(`quota.HIDDEN`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field

CAP_SYS_PTRACE = 19
SYSV = -1
"""The device in `Held.mapped` of a System V segment (its inode in the maps is its id)."""
MAPS_EVERY = 5
"""Polls between two reads of a process's mappings (`Tracker`)."""
ENV = "GRADER_SHARED_MEMORY"
"""Bytes: lowers what the sandbox may hold in shared memory (tests)."""
OUT_OF_MEMORY = "it ran out of memory"
"""How a stop for shared memory begins (as the memory limit's message does)."""


@dataclass
class Held:
    """What the processes hold, in bytes, and which processes they were."""

    deleted: int = 0  # deleted regular files, open or mapped (disk)
    deleted_files: int = 0  # how many (each holds an inode)
    shared: int = 0  # memfd files (memory); System V segments are added by `sysv`
    unmapped: int = 0  # the part of `shared` the serving process does not map
    hidden: bool = False  # a process whose descriptors the judge may not read
    pids: set[int] = field(default_factory=set)
    mapped: set[tuple[int, int]] = field(default_factory=set)  # (dev, ino) the server maps
    # ... a System V segment as (SYSV, its id)


def descendants(pid: int, thread: int = 0) -> list[int]:
    """`pid`'s children, their children, ... (each thread's `children` list), `pid` left out;
    `thread` (a thread of `pid`, while it lives): the only one of `pid`'s threads whose
    children are taken (the judge's thread that forked the sandbox, to which the sandbox's
    orphans are reparented)."""
    found: list[int] = []
    stack = [pid]
    while stack:
        parent = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        if parent == pid and str(thread) in tasks:
            tasks = [str(thread)]
        for task in tasks:
            with contextlib.suppress(OSError, ValueError):
                with open(f"/proc/{parent}/task/{task}/children", encoding="ascii") as fh:
                    kids = [int(p) for p in fh.read().split()]
                found += kids
                stack += kids
    return found


_Sizes = dict[tuple[int, int], int]
_Maps = tuple[_Sizes, _Sizes, set[tuple[int, int]]]


class Tracker:
    """Measures the same sandbox poll after poll; a process's mappings (`/proc/PID/maps`, some
    ms for a JAX process) are read on its first poll and every `MAPS_EVERY`-th after: what a
    mapping alone holds is counted within `MAPS_EVERY` polls (and is in the address space the
    limit counts meanwhile)."""

    def __init__(self) -> None:
        self._maps: dict[int, _Maps] = {}
        self._polls = 0

    def measure(self, pids: Iterable[int], serving: int, skip_dev: int = -1) -> Held:
        """What `pids` hold; `serving` runs the student's code; files on `skip_dev` (the strict
        sandbox's tmpfs, which the kernel counts itself) are left out of `deleted`."""
        fresh = self._polls % MAPS_EVERY == 0
        self._polls += 1
        held = Held()
        disk: _Sizes = {}
        shm: _Sizes = {}
        for pid in pids:
            if pid in held.pids:
                continue
            held.pids.add(pid)
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except PermissionError:
                held.hidden = True
                continue
            except OSError:  # ended
                continue
            for fd in fds:
                try:
                    _open_file(f"/proc/{pid}/fd/{fd}", disk, shm, skip_dev)
                except PermissionError:  # listed, not followed (root without CAP_SYS_PTRACE)
                    held.hidden = True
            if fresh or pid not in self._maps:
                self._maps[pid] = _mappings(pid, skip_dev)
            mapped_disk, mapped_shm, mapped = self._maps[pid]
            for key, size in mapped_disk.items():
                disk[key] = max(disk.get(key, 0), size)
            for key, size in mapped_shm.items():
                shm[key] = max(shm.get(key, 0), size)
            if pid == serving:
                held.mapped = mapped
        for gone in set(self._maps) - held.pids:
            del self._maps[gone]
        held.deleted, held.deleted_files = sum(disk.values()), len(disk)
        held.shared = sum(shm.values())
        held.unmapped = sum(size for key, size in shm.items() if key not in held.mapped)
        return held


def measure(pids: Iterable[int], serving: int, skip_dev: int = -1) -> Held:
    """One poll's `Tracker.measure`, mappings read."""
    return Tracker().measure(pids, serving, skip_dev)


def _open_file(link: str, disk: _Sizes, shm: _Sizes, skip_dev: int) -> None:
    try:
        info = os.stat(link)
    except PermissionError:
        raise
    except OSError:  # closed since it was listed
        return
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 0:
        return  # a named file is in a folder (walked, or the installation's)
    key = (info.st_dev, info.st_ino)
    try:
        memfd = os.readlink(link).startswith("/memfd:")
    except OSError:
        memfd = False
    if memfd:
        shm[key] = info.st_blocks * 512
    elif info.st_dev != skip_dev:
        disk[key] = info.st_blocks * 512


def _mappings(pid: int, skip_dev: int) -> _Maps:
    """Deleted files and memfds mapped by `pid`, with their sizes, and the (dev, ino) of all
    its shared mappings (a System V segment's as (SYSV, its id))."""
    disk: _Sizes = {}
    shm: _Sizes = {}
    mapped: set[tuple[int, int]] = set()
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return disk, shm, mapped
    for line in lines:
        if not line.endswith(" (deleted)") and "/memfd:" not in line:
            continue
        parts = line.split(None, 5)
        if len(parts) < 6 or parts[4] == "0":
            continue
        try:
            major, minor = (int(x, 16) for x in parts[3].split(":"))
            start, end = (int(x, 16) for x in parts[0].split("-"))
            key = (os.makedev(major, minor), int(parts[4]))
        except ValueError:
            continue
        path = parts[5]
        if path.startswith("/SYSV"):  # counted from /proc/sysvipc (`sysv`)
            mapped.add((SYSV, key[1]))
            continue
        mapped.add(key)
        size = _mapped_size(f"/proc/{pid}/map_files/{parts[0]}", end - start)
        if path.startswith("/memfd:"):
            shm[key] = max(shm.get(key, 0), size)
        elif key[0] != skip_dev:
            disk[key] = max(disk.get(key, 0), size)
    return disk, shm, mapped


def _mapped_size(link: str, length: int) -> int:
    """The mapped file's blocks (following `map_files` takes CAP_SYS_ADMIN), else the length."""
    try:
        return os.stat(link).st_blocks * 512
    except OSError:
        return length


def may_read_others() -> bool:
    """Whether this process may read the descriptors of another user's processes."""
    if os.geteuid() != 0:
        return False
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            caps = next(line for line in fh if line.startswith("CapEff:"))
        return bool(int(caps.split()[1], 16) >> CAP_SYS_PTRACE & 1)
    except (OSError, StopIteration, ValueError, IndexError):
        return False


def memory_left(pid: int) -> int | None:
    """Address space `pid` may still map under its limit (`RLIMIT_AS` less its size), lowered
    by `GRADER_SHARED_MEMORY`; None when nothing limits it."""
    left: int | None = None
    with contextlib.suppress(OSError, ValueError):
        soft = _address_space_limit(pid)
        if soft is not None:
            left = max(0, soft - _vm_size(pid))
    with contextlib.suppress(ValueError):
        lowered = int(os.environ.get(ENV, ""))
        left = lowered if left is None else min(left, lowered)
    return left


def _address_space_limit(pid: int) -> int | None:
    """`pid`'s soft RLIMIT_AS, from `/proc/PID/limits` (readable by all, where `prlimit(2)`
    is refused for a process in another PID namespace)."""
    with open(f"/proc/{pid}/limits", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("Max address space"):
                soft = line[len("Max address space") :].split()[0]
                return None if soft == "unlimited" else int(soft)
    return None


def _vm_size(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def out_of_memory(shared: int, left: int) -> str:
    """The stop's reason: shared memory held past the memory limit (`OUT_OF_MEMORY` first)."""
    return (
        f"{OUT_OF_MEMORY}: the shared memory it held outside its address space (memfd files, "
        f"System V segments: {shared / (1 << 20):.0f} MiB) went past what the grader's memory "
        f"limit left it ({left / (1 << 20):.0f} MiB)"
    )
