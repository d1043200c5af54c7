"""Drive a real sandbox against a judge's compilation cache; print what it saw as JSON.

Run as a fresh process (the sandbox is a fork, and JAX must not have started its backend
in the forking process):

    python drive_cache.py seed JUDGE LESSONS          the judge compiles lesson.seed()
    python drive_cache.py sandbox LEVEL JUDGE LESSONS [OWN]  a sandbox runs lesson.SCENARIO

    python drive_cache.py shared LEVEL STORE LESSONS  a sandbox of a judge without a cache,
                                                     forked after the store is loaded

JUDGE `-` is a judge without a cache (turned off, or `grade batch` below `user`). STORE is
a store of shared programs (`grader.sandbox.shared_programs`) and its SHA-256, "PATH SHA256",
loaded as a batch's warm worker loads it.

`seed` stands for a judge that compiled a program before (it imports the lesson file
itself: test code, not a submission). `sandbox` configures the judge's cache as the
grader's child does, starts the sandbox as `grader.plugin` does (its own workdir, which
it deletes afterwards) and calls each function named in the lesson's `SCENARIO`,
reporting their answers; OWN, if given, is the folder it caches in (`launch.start`'s
`own_cache`: a `grade watch` session's), else a fresh one in its workdir.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

from grader.sandbox import client, jax_cache, shared_programs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sandbox"))
import drive_sandbox  # tests/sandbox: how a test starts a real sandbox

NONE = "-"


def seed(judge: str, lessons: str) -> None:
    jax_cache.configure(judge)
    spec = importlib.util.spec_from_file_location("lesson", os.path.join(lessons, "lesson.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    print(json.dumps({"seed": module.seed()}))


def sandbox(level: str, judge: str, lessons: str, own: str = "") -> None:
    if judge != NONE:  # before the sandbox is forked, as the grader's child does
        jax_cache.configure(judge)
    box, work = drive_sandbox.start(level, lessons, budget_s=120.0, own_cache=own)
    report: dict[str, object] = {"hello_ok": box.hello.ok if box.hello else None}
    if box.hello is not None and box.hello.error is not None:
        report["hello_error"] = [box.hello.error.type, box.hello.error.message]
    if box.hello is not None and box.hello.ok:
        answers = []
        for name in box.module.SCENARIO:
            try:
                answers.append([name, getattr(box.module, name)()])
            except client.StudentError as exc:
                answers.append([name, {"error": exc.info.type, "message": exc.info.message}])
        report["answers"] = answers
    box.close()
    shutil.rmtree(work, ignore_errors=True)  # as grader.plugin's stop_sandbox does
    print(json.dumps(report))


def main() -> None:
    if sys.argv[1] == "seed":
        seed(*sys.argv[2:4])
    elif sys.argv[1] == "shared":
        level, store, lessons = sys.argv[2:5]
        os.environ[shared_programs.ENV] = store
        loaded = shared_programs.from_environment()  # as the warm worker does, before a fork
        if loaded:  # as the grader's child does for a judge without a folder
            jax_cache.in_memory()
        sys.stderr.write(f"shared programs loaded: {loaded}\n")
        sandbox(level, NONE, lessons)
    else:
        sandbox(*sys.argv[2:])


if __name__ == "__main__":
    main()
