"""Files the student's code writes, seen and handled in the sandbox, never by the judge.

A check that has student code write files (a checkpoint, a log) gives it a path in
the sandbox's scratch folder (the `scratch` fixture) and does everything else to
those files through probes (`grader.probes.files`): make the folder, list what was written, damage a
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

import os
from dataclasses import dataclass
from typing import Any

from grader.probes.files import KINDS, MAX_ENTRIES, list_dir, make_dir, truncated_copy, write_bytes
from grader.sandbox import client

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
            and item.get("kind") in KINDS
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
