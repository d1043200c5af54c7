"""The sandbox's System V IPC objects: counted as memory while it runs, removed when it ends.

A shared-memory segment, a semaphore set and a message queue outlive the process that made
them: a sandbox's would outlive its grading. Which are the sandbox's:

- at `strict` it has an IPC namespace of its own: every object in it, all destroyed with the
  namespace when its last process ends. The watchdog's thread joins that namespace to list
  them (`enter`; it holds the namespace until that thread ends);
- at `user` its uid is its alone: every object that uid owns or created;
- at `basic` (the student's own uid): the segments and queues a process of the sandbox created
  or last used (`cpid`/`lpid`, `lspid`/`lrpid`, among the processes the watchdog saw), and the
  semaphore sets and unused queues (which name no process) of that uid created (`ctime`) while
  the sandbox ran. A segment made by a process that ended within one poll and that no process
  of the sandbox used after is missed there.

Objects are read from `/proc/sysvipc` and removed with `shmctl`, `semctl` and `msgctl`
(`IPC_RMID`) through libc.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
from collections.abc import Collection
from dataclasses import dataclass

CLONE_NEWIPC = 0x08000000
IPC_RMID = 0

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


@dataclass(frozen=True)
class Object:
    kind: str  # "shm", "sem" or "msg"
    id: int
    uid: int
    cuid: int
    pids: tuple[int, ...]  # the processes it names (creator, last user)
    size: int  # bytes it holds in memory (a segment's resident and swapped pages, a queue's)
    ctime: int = 0  # when it was made (or last changed by IPC_SET), seconds since the epoch


def listed() -> list[Object]:
    """Every System V object of this thread's IPC namespace."""
    found: list[Object] = []
    for kind in ("shm", "sem", "msg"):
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as fh:
                header, *rows = fh.read().splitlines()
        except (OSError, ValueError):
            continue
        names = header.split()
        for row in rows:
            cell = dict(zip(names, row.split(), strict=False))
            with contextlib.suppress(KeyError, ValueError):
                found.append(_object(kind, cell))
    return found


def _object(kind: str, cell: dict[str, str]) -> Object:
    ident = cell["shmid" if kind == "shm" else "semid" if kind == "sem" else "msqid"]
    pids = {"shm": ("cpid", "lpid"), "msg": ("lspid", "lrpid"), "sem": ()}[kind]
    if kind == "shm":
        size = int(cell.get("rss", "0")) + int(cell.get("swap", "0"))
    else:
        size = int(cell.get("cbytes", "0"))
    return Object(
        kind,
        int(ident),
        int(cell["uid"]),
        int(cell["cuid"]),
        tuple(int(cell[name]) for name in pids),
        size,
        int(cell.get("ctime", "0")),
    )


def owned(
    objects: list[Object],
    *,
    uid: int | None,
    pids: Collection[int],
    shared_uid: int | None = None,
    since: float = float("inf"),
) -> list[Object]:
    """The sandbox's: owned or created by its own `uid` (None at `basic`, where the uid is the
    student's), naming one of its processes `pids`, or naming none, created by `shared_uid`
    (the student's, at `basic`) at `since` (the sandbox's start) or later."""
    return [
        o
        for o in objects
        if (uid is not None and uid in (o.uid, o.cuid))
        or any(p in pids for p in o.pids if p)
        or (o.cuid == shared_uid and not any(o.pids) and o.ctime >= int(since))
    ]


def process_start(pid: int) -> float:
    """When `pid` started, in seconds since the epoch (inf when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat", encoding="ascii") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith("btime"))
    except (OSError, ValueError, IndexError, StopIteration):
        return float("inf")
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def remove(objects: list[Object]) -> int:
    """Remove `objects` (IPC_RMID); how many went. A segment still attached goes once its
    last process detaches (here: once the sandbox's processes are killed)."""
    gone = 0
    for o in objects:
        if o.kind == "shm":
            result = _libc.shmctl(o.id, IPC_RMID, None)
        elif o.kind == "sem":
            result = _libc.semctl(o.id, 0, IPC_RMID)
        else:
            result = _libc.msgctl(o.id, IPC_RMID, None)
        gone += result == 0
    return gone


def enter(pid: int) -> bool:
    """Move the calling thread (only it) into the IPC namespace of `pid`; False if refused."""
    try:
        fd = os.open(f"/proc/{pid}/ns/ipc", os.O_RDONLY)
    except OSError:
        return False
    try:
        return bool(_libc.setns(fd, CLONE_NEWIPC) == 0)
    finally:
        os.close(fd)


def held(objects: list[Object], mapped: Collection[int]) -> int:
    """Bytes `objects` hold in memory, less the segments in `mapped` (ids the serving process
    maps: its address-space limit counts those already)."""
    return sum(o.size for o in objects if not (o.kind == "shm" and o.id in mapped))


def release(level: str, uid: int, pids: Collection[int], since: float) -> int:
    """Remove what the ended sandbox left (`uid` its user at `user`; `pids` its processes;
    `since` its start); at `strict` its namespace took them. How many objects went."""
    if level == "strict":
        return 0
    if level == "user":
        return remove(owned(listed(), uid=uid, pids=pids))
    return remove(owned(listed(), uid=None, pids=pids, shared_uid=os.getuid(), since=since))
