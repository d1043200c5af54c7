"""A forked process keeps only the file descriptors it owns.

A fork inherits every descriptor of its parent, whatever `O_CLOEXEC` says: the warm
worker's reply pipe to `grade`, a judge's record pipe, the parent's stream of previews.
A judge (`grader.runner.child`) and a sandbox (`grader.sandbox.launch`) call `keep_only`
first thing after their fork, so nothing a sandbox holds reaches another process's pipes
(a stub that wrote a forged `Ended` into the inherited reply pipe scored full marks).

    keep_only({0, 1, 2, sock.fileno()})

Every other open descriptor is replaced by `/dev/null` rather than closed: Python objects
of the parent that wrapped it (a file, a socket) may still close or flush their number
later, and a closed number would by then be reused by a file the process opened itself.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable

_FD_FOLDER = "/proc/self/fd"


def open_descriptors() -> list[int]:
    """The descriptors open in this process now."""
    try:
        listed = [int(name) for name in os.listdir(_FD_FOLDER)]
    except (OSError, ValueError):  # no /proc: every number up to the limit
        listed = list(range(os.sysconf("SC_OPEN_MAX")))
    found = []
    for fd in listed:
        try:
            os.fstat(fd)  # the folder's own descriptor is closed by now
        except OSError:
            continue
        found.append(fd)
    return found


def keep_only(keep: Iterable[int]) -> list[int]:
    """Replace every open descriptor but `keep` with `/dev/null` (read and write); the
    descriptors replaced. Raises OSError if one could not be replaced."""
    kept = set(keep)
    others = [fd for fd in open_descriptors() if fd not in kept]
    if not others:
        return []
    null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    try:
        for fd in others:
            if fd != null:
                os.dup2(null, fd, inheritable=False)
    finally:
        if null not in kept:
            with contextlib.suppress(OSError):
                os.close(null)
    return others
