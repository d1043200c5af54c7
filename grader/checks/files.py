"""Files the student's code writes, seen and handled in the sandbox, never by the judge.

A check that has student code write files (a checkpoint, a log) gives it a path in
the sandbox's scratch folder (the `scratch` fixture) and does everything else to
those files here, through probes: make the folder, list what was written, damage a
file to see whether reading it fails loudly. The judge never opens a file the
sandbox could have replaced (by a symlink to one of the grader's files, or by a
FIFO that blocks whoever opens it); and these probes themselves follow no symlink
and open nothing that is not a regular file, so student code cannot turn them
against the sandbox's own files or make them hang.

    folder = files.make_folder(student, scratch)           # the check's own folder
    student.save_checkpoint(os.path.join(folder, "a.ckpt"), tree)
    [e.name for e in files.listing(student, folder)]       # ['a.ckpt']
    files.write_cut(student, f"{folder}/a.ckpt", f"{folder}/half.ckpt")   # cut in half
    files.write(student, f"{folder}/empty.ckpt", b"")

The first argument, a handle (the `student` module), names the sandbox the probe runs
in; for tests and trusted code, `files.IN_PROCESS` runs them in this process instead.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from typing import Any

from grader.sandbox import client
from grader.sandbox.probes import probe

MAX_ENTRIES = 1000
"""Entries `list_dir` reports (sorted by name) from one folder."""
MAX_COPY_BYTES = 64 << 20
"""Bytes `truncated_copy` reads from a file: a checkpoint of a lesson is far smaller."""

_KINDS = ("file", "dir", "symlink", "fifo", "other")


# -- in the sandbox ---------------------------------------------------------------------


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


# -- in the judge -----------------------------------------------------------------------

IN_PROCESS = None
"""`where` for tests and trusted code: the probes run in this process."""


@dataclass(frozen=True)
class Entry:
    """One entry of a folder in the sandbox."""

    name: str
    kind: str  # file, dir, symlink, fifo, other
    size: int


def listing(where: Any, path: str) -> list[Entry]:
    """The entries of the folder `path` in the sandbox of `where`, sorted by name (what the
    sandbox reports, checked to be well formed)."""
    raw = client.probe(list_dir, where, os.fspath(path))
    if not isinstance(raw, list):
        raise TypeError("the sandbox sent a malformed folder listing")
    entries = []
    for item in raw[:MAX_ENTRIES]:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and item.get("kind") in _KINDS
            and isinstance(item.get("size"), int)
        ):
            raise TypeError("the sandbox sent a malformed folder listing")
        entries.append(Entry(item["name"][:255], item["kind"], item["size"]))
    return entries


def make_folder(where: Any, path: str) -> str:
    """Create the folder `path` (and its parents) in the sandbox of `where`; returns `path`."""
    client.probe(make_dir, where, os.fspath(path))
    return os.fspath(path)


def write(where: Any, path: str, data: bytes) -> int:
    """Make `path`, in the sandbox of `where`, a regular file holding `data`; returns its size."""
    return int(client.probe(write_bytes, where, os.fspath(path), bytes(data)))


def write_cut(where: Any, source: str, target: str, fraction: float = 0.5) -> tuple[int, int]:
    """Write the first `fraction` of the file `source` to `target`, in the sandbox of `where`;
    returns (size of source, bytes written)."""
    seen = client.probe(
        truncated_copy, where, os.fspath(source), os.fspath(target), float(fraction)
    )
    if not (
        isinstance(seen, dict) and all(isinstance(seen.get(k), int) for k in ("source", "written"))
    ):
        raise TypeError("the sandbox sent a malformed copy report")
    return seen["source"], seen["written"]
