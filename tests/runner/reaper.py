"""Run a command as a child subreaper; say what it left behind and what changed after it ended.

    python reaper.py RESULT.json LINGER_S WATCHED[:WATCHED...] -- COMMAND...

Every process the command leaves behind (a daemon that double-forked and called setsid
included) is re-parented to this one instead of to the machine's init, so the test learns of
its own run's leftovers without looking at any other process on the machine. After the command
ends, this waits LINGER_S seconds, then writes to RESULT.json: the command's exit code, the
pids of its leftovers (then kills them), and which WATCHED files changed while it waited.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def _contents(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _children() -> list[int]:
    with open(f"/proc/self/task/{os.getpid()}/children", encoding="ascii") as fh:
        return [int(p) for p in fh.read().split()]


def main() -> None:
    result, linger, watched = sys.argv[1], float(sys.argv[2]), sys.argv[3].split(":")
    command = sys.argv[sys.argv.index("--") + 1 :]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    code = subprocess.call(command)
    before = {path: _contents(path) for path in watched}
    time.sleep(linger)
    _reap()
    left = _children()
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    changed = [path for path in watched if _contents(path) != before[path]]
    with open(result, "w", encoding="utf-8") as fh:
        json.dump({"returncode": code, "leftover": left, "changed": changed}, fh)


if __name__ == "__main__":
    main()
