"""Start a real sandbox on a lesson folder and run a scenario against it; print JSON.

Run as a fresh process (`python drive_sandbox.py LEVEL FOLDER SCENARIO`): the sandbox is
a fork, and JAX must not have started its backend in the forking process.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time

from grader.sandbox import client, launch, probes


def start(
    level: str, folder: str, budget_s: float = 60.0, own_cache: str = ""
) -> tuple[launch.Sandbox, str]:
    """A sandbox on a copy of `folder` in a workdir of its own, as `grader.plugin` starts
    one; `own_cache` as `launch.start`'s. Returns it and the workdir (the caller deletes it)."""
    probes.load_all()
    work = tempfile.mkdtemp(prefix="grader-sandbox-test-")
    os.chmod(work, 0o711)
    os.makedirs(os.path.join(work, "lessons"))
    for name in os.listdir(folder):
        shutil.copy(os.path.join(folder, name), os.path.join(work, "lessons", name))
    box = launch.start(
        lesson="lesson",
        lesson_dir=os.path.join(work, "lessons"),
        level=level,  # type: ignore[arg-type]
        workdir=work,
        masked=(os.path.join(os.path.dirname(client.__file__), ".."),),
        budget_s=budget_s,
        own_cache=own_cache,
    )
    return box, work


def outcome(thunk):  # type: ignore[no-untyped-def]
    try:
        value = thunk()
        return {
            "value": value
            if isinstance(value, (int, float, str, list, dict, type(None)))
            else repr(value)
        }
    except client.StudentError as exc:
        return {
            "error": exc.info.type,
            "message": exc.info.message,
            "location": exc.info.location,
            "in_student": exc.info.in_student,
            "builtin": [c.__name__ for c in type(exc).__mro__],
        }
    except client.SandboxGone as exc:
        return {"gone": str(exc)}


def main() -> None:
    level, folder, scenario = sys.argv[1:4]
    box, work = start(level, folder, budget_s=float(sys.argv[4]) if len(sys.argv) > 4 else 60.0)
    report: dict[str, object] = {"hello_ok": box.hello.ok if box.hello else None}
    if box.hello is not None and box.hello.error is not None:
        report["hello_error"] = [box.hello.error.type, box.hello.error.location]
    m = box.module
    if box.hello is not None and box.hello.ok:
        for name in scenario.split(","):
            report[name] = outcome(lambda name=name: getattr(m, name)())
    uid_pid = None
    box.close()
    time.sleep(0.2)
    report["leftover"] = [p for p in os.listdir("/proc") if p.isdigit() and _owned_by_sandbox(p)]
    report["uid_pid"] = uid_pid
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report))


def _owned_by_sandbox(pid: str) -> bool:
    from grader.sandbox import isolation

    try:
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return False
    return uid == isolation.sandbox_uid(os.getpid())


if __name__ == "__main__":
    main()
