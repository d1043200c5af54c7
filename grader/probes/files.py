"""The probes of `grader.checks.files`: files the student's code wrote, listed, written
and cut short in the sandbox. They follow no symlink and open nothing that is not a
regular file, so student code cannot turn them against the sandbox's own files or make
them hang. The first argument of each (`where`) only names the sandbox it runs in.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Any

from grader.sandbox.probes import probe

MAX_ENTRIES = 1000
"""Entries `list_dir` reports (sorted by name) from one folder."""
MAX_COPY_BYTES = 64 << 20
"""Bytes `truncated_copy` reads from a file: a checkpoint of a lesson is far smaller."""

KINDS = ("file", "dir", "symlink", "fifo", "other")


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    return "other"


@probe
def list_dir(where: Any, path: str) -> list[dict[str, Any]]:
    """In the sandbox: the entries of the folder `path` (not following symlinks), sorted by
    name, each as {"name", "kind" (file, dir, symlink, fifo, other), "size" (bytes)}."""
    entries: list[dict[str, Any]] = []
    with os.scandir(os.fspath(path)) as it:
        for entry in it:
            st = entry.stat(follow_symlinks=False)
            entries.append({"name": entry.name, "kind": _kind(st.st_mode), "size": int(st.st_size)})
    entries.sort(key=lambda e: e["name"])
    return entries[:MAX_ENTRIES]


@probe
def make_dir(where: Any, path: str) -> None:
    """In the sandbox: create the folder `path` and its missing parents."""
    os.makedirs(os.fspath(path), exist_ok=True)


def _open_regular(path: str, flags: int) -> int:
    """A descriptor of the regular file at `path`, never through a symlink, never blocking on
    a FIFO (`O_NONBLOCK`); an `OSError` for anything else."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@probe
def write_bytes(where: Any, path: str, data: bytes) -> int:
    """In the sandbox: make `path` a regular file holding exactly `data` (replacing what was
    there, unless it is a symlink, a folder or a FIFO: then `OSError`). Returns its size."""
    fd = _open_regular(os.fspath(path), os.O_WRONLY | os.O_CREAT)
    try:
        os.ftruncate(fd, 0)
        _write_all(fd, bytes(data))
    finally:
        os.close(fd)
    return len(data)


@probe
def truncated_copy(where: Any, source: str, target: str, fraction: float = 0.5) -> dict[str, int]:
    """In the sandbox: write the first `fraction` of the regular file `source` to `target` (a
    file cut short, as a crash mid-save leaves it). Returns {"source": size, "written": size}."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be in [0, 1], not {fraction}")
    fd = _open_regular(os.fspath(source), os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        want = min(int(size * fraction), MAX_COPY_BYTES)
        chunks, got = [], 0
        while got < want:
            chunk = os.read(fd, min(want - got, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    finally:
        os.close(fd)
    written = write_bytes(where, target, b"".join(chunks))
    return {"source": int(size), "written": written}
