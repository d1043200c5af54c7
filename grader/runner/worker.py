"""The warm worker: imports JAX once, then forks one bounded child per exercise.

Started by the parent as `python -I -m grader.runner.worker`. It imports the
heavy libraries the suites use (JAX, optax, chex, pytest, hypothesis,
matplotlib, scikit-learn) without initialising a JAX backend, then serves
requests, one JSON line each on stdin, answering one JSON line each on stdout.
For every request it forks a child (see `grader.runner.child`) and supervises
it: drains and caps its output, enforces the wall-clock timeout by killing the
child's whole process group, and reports how the child ended.

A child is a copy of this warm process, so JAX is never imported from scratch
per exercise, yet each exercise runs in its own address space: what one
submission does (globals, monkeypatching, crashes) cannot reach another.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import time
from typing import Any

# Always imported before the first fork; the suites' own imports are added to these.
PRELOAD = ("jax", "jax.numpy", "jax.extend", "numpy", "chex", "pytest", "hypothesis", "grader.plugin")


def preload(extra: list[str]) -> None:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("MPLBACKEND", "Agg")
    import importlib

    for name in (*PRELOAD, *extra):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    for name in ("grader.checks",):
        with contextlib.suppress(ImportError):
            pkg = importlib.import_module(name)
            for mod in sorted(os.listdir(os.path.dirname(pkg.__file__ or ""))):
                if mod.endswith(".py") and not mod.startswith("__"):
                    importlib.import_module(f"{name}.{mod[:-3]}")


def vm_size() -> int:
    """This process's virtual memory size in bytes (children inherit it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def supervise(pid: int, out_fd: int, timeout_s: float, output_cap: int) -> dict[str, Any]:
    """Wait for the child, keeping the first `output_cap` bytes of its output."""
    started = time.monotonic()
    deadline = started + timeout_s
    kept = bytearray()
    total = 0
    status: int | None = None
    timed_out = False
    eof = False

    def take(chunk: bytes) -> None:
        nonlocal total
        total += len(chunk)
        room = output_cap - len(kept)
        if room > 0:
            kept.extend(chunk[:room])

    while status is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        if not eof:
            ready, _, _ = select.select([out_fd], [], [], min(remaining, 0.2))
            if ready:
                chunk = os.read(out_fd, 1 << 16)
                if chunk:
                    take(chunk)
                else:
                    eof = True
        else:
            time.sleep(min(remaining, 0.02))
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            status = raw
    # The child, and anything it started, goes now (it may already be gone).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    if status is None:
        _, status = os.waitpid(pid, 0)
    # Drain what is left without waiting on a pipe someone else may hold.
    os.set_blocking(out_fd, False)
    with contextlib.suppress(BlockingIOError, OSError):
        while chunk := os.read(out_fd, 1 << 16):
            take(chunk)
    os.close(out_fd)
    return {
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) and not timed_out else None,
        "timed_out": timed_out,
        "output": bytes(kept).decode("utf-8", errors="replace"),
        "output_bytes": total,
        "duration_s": time.monotonic() - started,
    }


def serve(request: dict[str, Any], base_vm: int, announce: Any) -> dict[str, Any]:
    from grader.runner import child

    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(out_r)
        child.run(request, out_w, base_vm)
    os.close(out_w)
    announce({"started": pid})
    reply = supervise(pid, out_r, float(request["timeout_s"]), int(request["output_cap"]))
    reply["pid"] = pid
    reply["memory_limit"] = base_vm + int(request["memory_bytes"])
    return reply


def main() -> None:
    # The protocol owns the real stdout; anything printed by accident goes to stderr.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    preload(json.loads(sys.argv[1]) if len(sys.argv) > 1 else [])
    base_vm = vm_size()
    protocol.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
    protocol.flush()

    def say(message: dict[str, Any]) -> None:
        protocol.write(json.dumps(message) + "\n")
        protocol.flush()

    for line in sys.stdin:
        if line.strip():
            say(serve(json.loads(line), base_vm, say))


if __name__ == "__main__":
    main()
