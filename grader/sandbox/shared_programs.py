"""Programs compiled once for a whole class: a store every grading of a batch loads from,
which a process can read only for the programs it has itself.

Most of what a grading costs is XLA compiling (a correct lesson file's sandbox compiles the
same eager operations, probes and training steps as every other student's), and a batch
below `user` grades with no compilation cache at all, since a student could write a cache
folder the next student's grading loads (`grader.runner.cache`). This store is the part that
can be shared without that risk:

- **Written from trusted code only.** `grade batch` grades the course's own solutions once
  before the class (`grader.batch.warm`), with caches in folders of that grading alone, and
  builds the store from what its judges and sandboxes compiled (`write`). No student's
  grading ever adds to it.
- **Loaded once per warm worker, before any fork** (`from_environment`, in
  `grader.runner.worker`), and checked against the digest the parent computed when it wrote
  it: a file changed since (a sandbox at `basic` is the grader's own user) is not loaded,
  and grading goes on compiling. The worker's judges and sandboxes inherit it in their own
  memory: what one of them does to its copy no other process sees.
- **Readable only by key** (`get`). Each entry is stored under a hash of its key (JAX's
  cache key: a hash of the program, its compile options, the backend and JAX's version) and
  encrypted with a stream derived from the key (SHAKE-256), with a tag over key and value
  that is checked on the way out. A sandbox holds the whole store in its memory, but can
  open only the entries of programs it lowered itself: the compiled solutions are not
  handed to the students' code, just as the judge's cache folder lets a sandbox read an
  entry whose name it knows and list none (`grader.runner.cache.MODE`).
- **Changes no result.** A program loaded is the machine code the same compiler made from
  the same program, as JAX's own persistent cache loads it; `grade batch` grades a
  submission exactly as `grade` does (`tests/batch`).

The format: `MAGIC`, then for each entry the 32-byte index, the 32-byte tag, the value's
length (8 bytes, little-endian) and the encrypted value.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable

import numpy as np

ENV = "GRADE_SHARED_PROGRAMS"
"""Set by the parent in a batch worker's environment (`grader.runner.handle`): the store's
path and its SHA-256, separated by a space; removed by the worker as it loads the store."""
MAGIC = b"grade shared programs 1\n"
MAX_BYTES = 512 << 20
"""A store larger than this is not loaded (a course's solutions compile a few megabytes)."""

_INDEX, _STREAM, _TAG = b"grade-index\0", b"grade-stream\0", b"grade-tag\0"
_entries: dict[bytes, tuple[bytes, bytes]] = {}


def _index(key: bytes) -> bytes:
    return hashlib.sha256(_INDEX + key).digest()


def _tag(key: bytes, value: bytes) -> bytes:
    return hashlib.sha256(_TAG + key + b"\0" + value).digest()


def _xor(key: bytes, data: bytes) -> bytes:
    stream = hashlib.shake_256(_STREAM + key).digest(len(data))
    return np.bitwise_xor(np.frombuffer(data, np.uint8), np.frombuffer(stream, np.uint8)).tobytes()


def write(entries: Iterable[tuple[str, bytes]], path: str) -> str:
    """Write `entries` (JAX cache key, compiled program) to `path` as a store; its SHA-256."""
    digest = hashlib.sha256(MAGIC)
    with open(path, "wb") as out:
        out.write(MAGIC)
        for key, value in entries:
            raw = key.encode()
            record = (
                _index(raw) + _tag(raw, value) + len(value).to_bytes(8, "little") + _xor(raw, value)
            )
            out.write(record)
            digest.update(record)
    return digest.hexdigest()


def load(path: str, sha256: str) -> int:
    """Load the store at `path` into this process if its SHA-256 is `sha256`; how many
    entries (0 when it is missing, too large, changed or malformed: nothing is loaded)."""
    _entries.clear()
    try:
        if os.path.getsize(path) > MAX_BYTES:
            return 0
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return 0
    if hashlib.sha256(data).hexdigest() != sha256 or not data.startswith(MAGIC):
        return 0
    found: dict[bytes, tuple[bytes, bytes]] = {}
    at = len(MAGIC)
    while at < len(data):
        head = data[at : at + 72]
        if len(head) < 72:
            return 0
        size = int.from_bytes(head[64:72], "little")
        body = data[at + 72 : at + 72 + size]
        if len(body) != size:
            return 0
        found[head[:32]] = (head[32:64], body)
        at += 72 + size
    _entries.update(found)
    return len(found)


def from_environment() -> int:
    """In a warm worker, before its first fork: load the store `ENV` names (and forget the
    variable, so no judge or sandbox sees its path); how many entries."""
    named = os.environ.pop(ENV, "")
    path, _, sha256 = named.rpartition(" ")
    return load(path, sha256) if path and sha256 else 0


def get(key: str) -> bytes | None:
    """The compiled program stored for JAX's cache `key`, or None."""
    if not _entries:
        return None
    raw = key.encode()
    found = _entries.get(_index(raw))
    if found is None:
        return None
    tag, body = found
    value = _xor(raw, body)
    return value if _tag(raw, value) == tag else None


def loaded() -> bool:
    """Whether this process holds a store."""
    return bool(_entries)
