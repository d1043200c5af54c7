"""Where one lesson file's grading spends its CPU, phase by phase: one judge and its sandbox.

    python tests/bench/judge_phases.py LESSON_FILE [--isolation strict|user|basic]
                                       [--sandbox-cache DIR] [--json]

Does what the warm worker and the judge do for one file (`grader.runner.worker.preload`
with the suite's imports, `gc.freeze`, then `grader.runner.child`'s pytest run with the
judge's compilation cache), in this process, and times with the CPU clock
(`time.process_time`, this process's threads; waiting costs nothing):

judge   startup (pytest's configuration, the plugin, forking the sandbox), collection
        (importing the suite and its checks), checks, teardown (after the last check);
        within the checks: Hypothesis searches (`values.assert_matches_reference`, the
        references included), exported-program verification (`exported.checked`: parse,
        rebuild, compile and run against the reference), and JAX lowering and compiling in
        the judge (every check kind);
sandbox the whole sandbox process (its rusage once reaped) and, from counters it writes
        after each request, JAX lowering and compiling there, the student's functions
        called (training runs included: 08_mlp, ex1, ex5 train in them) and the probes;
        what is left is its start and the lesson file's import.

Seconds overlap where one phase runs inside another (lowering inside an exported
verification): each line says what it is part of. Not a test; run it by hand or from
`bench_cpu.py`, which adds process start, the warm worker and the reports.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SANDBOX_MARK = "JUDGE_PHASES_SANDBOX "

_DEPTH: dict[tuple[int, str], int] = {}


def accumulate(totals: dict[str, float], key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, adding the CPU seconds of its outermost calls to `totals[key]`."""

    depth = (id(totals), key)

    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        outer = _DEPTH.get(depth, 0) == 0
        _DEPTH[depth] = _DEPTH.get(depth, 0) + 1
        started = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            _DEPTH[depth] -= 1
            if outer:
                totals[key] = totals.get(key, 0.0) + time.process_time() - started

    return timed


def time_jax(totals: dict[str, float]) -> None:
    """Lowering and compiling, wherever JAX does them in this process (and its forks)."""
    from jax._src import compiler
    from jax._src.interpreters import pxla

    pxla.lower_sharding_computation = accumulate(
        totals, "lowering", pxla.lower_sharding_computation
    )
    compiler.compile_or_get_cached = accumulate(totals, "compiling", compiler.compile_or_get_cached)


def time_sandbox() -> None:
    """In the sandbox (a fork of this process): its phases, written to stderr after each
    request (the judge kills it at the end: the last line counts)."""
    from grader.protocol import sandbox as proto
    from grader.sandbox import server

    totals: dict[str, float] = {}
    handle = server.Server.run

    def run(self: Any, request: Any) -> Any:
        kind = "calls" if isinstance(request, proto.Call) else "probes"
        kind = "transforms" if isinstance(request, proto.Transform) else kind
        try:
            return accumulate(totals, kind, handle)(self, request)
        finally:
            line = SANDBOX_MARK + json.dumps(totals) + "\n"
            with contextlib.suppress(OSError):
                os.write(2, line.encode())

    server.Server.run = run  # type: ignore[method-assign]
    time_jax(totals)


class Phases:
    """A pytest plugin: the judge's phases by the CPU clock."""

    def __init__(self) -> None:
        self.marks: dict[str, float] = {"start": time.process_time()}

    def pytest_collection(self) -> None:
        self.marks["collection"] = time.process_time()

    def pytest_collection_finish(self) -> None:
        self.marks["checks"] = time.process_time()

    def pytest_sessionfinish(self) -> None:
        self.marks["teardown"] = time.process_time()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("lesson", type=Path)
    parser.add_argument("--isolation", default="strict")
    parser.add_argument("--sandbox-cache", default="", help="a grade watch session's folder")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"

    from grader import catalog
    from grader.runner import engine, worker

    name = args.lesson.stem
    spec = next(s for s in catalog.exercises() if s.name == name)
    worker.preload(list(engine.preload_for([spec])))
    import pytest

    from grader.checks import exported, values
    from grader.protocol.worker_messages import Request
    from grader.runner import child, policy
    from grader.sandbox import jax_cache

    judge: dict[str, float] = {}
    time_jax(judge)
    exported.checked = accumulate(judge, "exported verification", exported.checked)
    values.assert_matches_reference = accumulate(
        judge, "hypothesis searches", values.assert_matches_reference
    )
    time_sandbox()  # the sandbox is forked from this process: it runs the patched server
    gc.freeze()

    work = tempfile.mkdtemp(prefix="judge-phases-")
    lessons = os.path.join(work, "lessons")
    os.makedirs(lessons)
    shutil.copy(args.lesson, os.path.join(lessons, args.lesson.name))
    for sub in ("cwd", "tmp"):
        os.makedirs(os.path.join(work, sub))
    with open(os.path.join(work, "pytest.ini"), "w", encoding="utf-8") as ini:
        ini.write("[pytest]\naddopts =\npython_files = test_*.py\n")
    sandboxes = tempfile.mkdtemp(prefix="grader-sandboxes-")
    os.chmod(sandboxes, 0o711)
    request = Request(
        suite=str(spec.suite), workdir=work, lesson_dir=lessons, seed=0,
        timeout_s=spec.timeout_s, memory_bytes=4 << 30, output_cap=32 << 10,
        devices=spec.devices, notebook="", isolation=args.isolation, maxfail=0,
        cache_dir=policy.cache_dir(policy.Options()), sandbox_dir=sandboxes,
        check_share_s=0.25 * spec.timeout_s,
    )  # fmt: skip
    if spec.devices > 1:
        import jax

        jax.config.update("jax_num_cpu_devices", spec.devices)  # type: ignore[no-untyped-call]
    if request.cache_dir:
        jax_cache.configure(request.cache_dir)
        if args.sandbox_cache:
            child._sandboxes_cache_in(args.sandbox_cache)
    records = os.open(os.path.join(work, "records"), os.O_WRONLY | os.O_CREAT, 0o600)
    err = tempfile.TemporaryFile()  # noqa: SIM115 (closed with the process)
    saved_err = os.dup(2)
    os.dup2(err.fileno(), 2)  # the sandbox's counters (and pytest's noise) go here
    os.chdir(os.path.join(work, "cwd"))
    phases = Phases()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    code = pytest.main(child.pytest_args(request, records), plugins=[phases])
    wall = time.perf_counter() - wall
    end = time.process_time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    os.dup2(saved_err, 2)
    err.seek(0)
    sandbox_lines = [
        line for line in err.read().decode(errors="replace").splitlines() if SANDBOX_MARK in line
    ]
    sandbox_parts: dict[str, float] = (
        json.loads(sandbox_lines[-1].split(SANDBOX_MARK, 1)[1]) if sandbox_lines else {}
    )
    with open(os.path.join(work, "records"), encoding="utf-8") as fh:
        recorded = fh.read()
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(sandboxes, ignore_errors=True)

    m = phases.marks
    sandbox_cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    requests = sum(sandbox_parts.get(k, 0.0) for k in ("calls", "probes", "transforms"))
    result = {
        "lesson": name,
        "exit": int(code),
        "passed": recorded.count('"status": "passed"'),
        "wall_s": round(wall, 3),
        "judge": {
            "startup": m.get("collection", end) - m["start"],
            "collection": m.get("checks", end) - m.get("collection", end),
            "checks": m.get("teardown", end) - m.get("checks", end),
            "teardown": end - m.get("teardown", end),
            "checks: hypothesis searches": judge.get("hypothesis searches", 0.0),
            "checks: exported verification": judge.get("exported verification", 0.0),
            "all: lowering": judge.get("lowering", 0.0),
            "all: compiling": judge.get("compiling", 0.0),
        },
        "sandbox": {
            "total": sandbox_cpu,
            "start and import": max(0.0, sandbox_cpu - requests),
            "student calls (training included)": sandbox_parts.get("calls", 0.0),
            "probes": sandbox_parts.get("probes", 0.0),
            "transforms": sandbox_parts.get("transforms", 0.0),
            "requests: lowering": sandbox_parts.get("lowering", 0.0),
            "requests: compiling": sandbox_parts.get("compiling", 0.0),
        },
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"{name}: exit {code}, wall {wall:.2f} s")
    for side in ("judge", "sandbox"):
        for key, value in result[side].items():
            print(f"  {side:8} {key:38} {value:6.2f} CPU-s")


if __name__ == "__main__":
    main()
