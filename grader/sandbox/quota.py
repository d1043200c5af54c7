"""A quota per grading: the bytes and files a sandbox may write, in all its writable places.

`RLIMIT_FSIZE` caps each file; this caps them all together, so one lesson file cannot fill
the disk of a Gradescope container or a batch host and stop other students' reports:

- at `strict` the kernel holds it: every place the sandbox may write (its lesson files, its
  scratch folder and compilation cache, `/tmp`, `/dev/shm`) is a folder of one tmpfs of
  `QUOTA_BYTES` and `QUOTA_FILES` inodes (`isolation._build_root`); a write past it fails
  with ENOSPC;
- at every level a watchdog in the judge measures what the sandbox wrote, every
  `POLL_S`: the tmpfs's own counts at `strict` (`statvfs` through `/proc/PID/root`), the
  sandbox's writable folders walked at `user` and `basic`, plus, at every level, what its
  processes hold that no folder shows (`grader.sandbox.held`: files deleted while open or
  mapped, reserved blocks included). A sandbox at or past the quota is stopped (`launch`),
  and its check says why (`EXCEEDED`); the file's other checks are graded again on a fresh
  sandbox, as after any stop, and no other grading is touched.

The same watchdog counts the sandbox's shared memory (memfd files, System V segments) against
its memory limit (`held.memory_left`) and stops it past that (`held.OUT_OF_MEMORY`), and stops
a process that hides its descriptors from it (`HIDDEN`).

The bound, at `user` and `basic`: a sandbox holds at most the quota plus what it adds between
two polls (`POLL_S`, or 4x the time a measure takes when that is longer) and the kill: by
writing, the disk's write rate times that (about 0.2 GB at 1 GB/s); by `fallocate`, which
reserves blocks without writing them, `RLIMIT_FSIZE` (256 MiB, the judge's) per file, as many
files as it makes in that time, so only the disk's free space bounds it, for that fraction of a
second: the files are freed with the sandbox. At `strict` the tmpfs bounds it exactly; its
memfd files and segments are memory, counted at the same poll.

`GRADER_WRITE_QUOTA` ("BYTES,FILES" in the grader's environment) lowers the quota (tests).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from grader.sandbox import held

QUOTA_BYTES = 512 << 20
"""Everything one sandbox writes (the size a strict sandbox's /tmp had alone before)."""
QUOTA_FILES = 10_000
"""Files and folders one sandbox creates (a checkpoint exercise writes a few dozen)."""
POLL_S = 0.2
"""How often the watchdog measures (more rarely when measuring takes long)."""
SLACK_BYTES = 1 << 20
"""At `strict` the tmpfs refuses the last write: within this of the quota counts as full."""
ENV = "GRADER_WRITE_QUOTA"
EXCEEDED = "the files your code wrote reached the grading's quota"
"""How a stop for the quota is worded (the plugin recognises it)."""
HIDDEN = (
    "it hid its open files from the grader (a process made itself undumpable), so what they "
    "hold could not be counted against the grading's quota"
)


def limits() -> tuple[int, int]:
    """(bytes, files) of the quota: the defaults, or lower ones from `GRADER_WRITE_QUOTA`."""
    text = os.environ.get(ENV, "")
    try:
        size, files = (int(part) for part in text.split(","))
    except ValueError:
        return QUOTA_BYTES, QUOTA_FILES
    return min(max(size, 1 << 20), QUOTA_BYTES), min(max(files, 16), QUOTA_FILES)


def reason(size: int, files: int) -> str:
    return f"{EXCEEDED} ({size / (1 << 20):g} MiB or {files} files, in its folders and /tmp)"


def walked(folders: Iterable[str]) -> tuple[int, int]:
    """(bytes on disk, files and folders) under `folders`, links not followed."""
    size = count = 0
    stack = list(folders)
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            count += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            size += info.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return size, count


def mounted(path: str) -> tuple[int, int]:
    """(bytes, inodes) used on the file system holding `path` (the strict sandbox's tmpfs)."""
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_files - st.f_ffree


@dataclass
class Usage:
    """One measure of a sandbox: its disk (bytes, files) and its shared memory."""

    size: int
    files: int
    shared: int = 0  # memory held outside the serving process's address space
    memory_left: int | None = None  # what its address-space limit leaves (None: no limit)
    hidden: bool = False  # a process hid its descriptors
    pids: set[int] = field(default_factory=set)  # the processes measured


def verdict(usage: Usage, size: int, files: int) -> str:
    """Why the sandbox must stop ("" if it may go on) under a quota of `size` and `files`."""
    if usage.size >= size - SLACK_BYTES or usage.files >= files - 1:
        return reason(size, files)
    if usage.memory_left is not None and usage.shared > usage.memory_left:
        return held.out_of_memory(usage.shared, usage.memory_left)
    if usage.hidden:
        return HIDDEN
    return ""


class Watchdog(threading.Thread):
    """Calls `exceeded(reason)` once when `measure()` reaches the quota or the memory limit;
    stops at `stop()`. `seen` gathers every process it measured (`sysv.release`)."""

    def __init__(self, measure: Callable[[], Usage], exceeded: Callable[[str], None]) -> None:
        super().__init__(name="grader-write-quota", daemon=True)
        self._measure, self._exceeded = measure, exceeded
        self._stopped = threading.Event()
        self.size, self.files = limits()
        self.seen: set[int] = set()
        self.since = float("inf")  # when the sandbox started (`sysv.release`)

    def stop(self) -> None:
        self._stopped.set()

    def run(self) -> None:
        while not self._stopped.is_set():
            started = time.monotonic()
            try:
                usage = self._measure()
            except OSError:  # the sandbox has ended: nothing left to measure
                return
            self.seen |= usage.pids
            why = verdict(usage, self.size, self.files)
            if why:
                if not self._stopped.is_set():
                    self._exceeded(why)
                return
            self._stopped.wait(max(POLL_S, 4 * (time.monotonic() - started)))
