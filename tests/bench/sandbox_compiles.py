"""Which check makes the sandbox compile what: one lesson file's XLA compiles, check by check.

    python tests/bench/sandbox_compiles.py LESSON_FILE [--isolation strict|user|basic]
                                           [--json F] [--top N]

Runs the file's judge and sandbox as `judge_phases.py` does (the warm worker's preload,
`gc.freeze`, `grader.runner.child`'s pytest run, the judge's compilation cache), and in
the sandbox wraps `jax._src.compiler.compile_or_get_cached` and
`pxla.lower_sharding_computation`: each call writes one line to the shared stderr (the
program's name, its argument shapes, CPU seconds by `time.process_time`, and whether the
persistent cache answered: JAX's `/jax/compilation_cache/cache_hits` event). The judge
writes the check it starts to the same file (`pytest_runtest_logstart`), so every line
after it is that check's (what comes before the first check is the sandbox's start and
the lesson's import). Prints the compiles by check, then by program (name and shapes), the
costliest first. Not a test; run it by hand.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
MARK = "SANDBOX_COMPILES "


def _emit(record: dict[str, Any]) -> None:
    record["pid"] = os.getpid()
    with contextlib.suppress(OSError):
        os.write(2, (MARK + json.dumps(record) + "\n").encode())


def instrument_sandbox() -> None:
    """Wrap JAX's lowering and compiling: the sandbox, forked from this process, inherits it."""
    import jax
    from jax._src import compiler
    from jax._src.interpreters import pxla

    hits = [0]

    def listen(event: str, **_: Any) -> None:
        if event == "/jax/compilation_cache/cache_hits":
            hits[0] += 1

    jax.monitoring.register_event_listener(listen)
    lower = pxla.lower_sharding_computation
    compile_ = compiler.compile_or_get_cached

    def lowering(closed_jaxpr: Any, api_name: str, fun_name: str, *args: Any, **kw: Any) -> Any:
        started = time.process_time()
        try:
            return lower(closed_jaxpr, api_name, fun_name, *args, **kw)
        finally:
            avals = ", ".join(a.str_short() for a in closed_jaxpr.in_avals)
            outs = ", ".join(a.str_short() for a in closed_jaxpr.out_avals)
            _emit({"kind": "lower", "name": fun_name, "avals": f"{avals[:300]} -> {outs[:100]}",
                   "cpu": time.process_time() - started})  # fmt: skip

    def compiling(backend: Any, computation: Any, *args: Any, **kw: Any) -> Any:
        before = hits[0]
        started = time.process_time()
        try:
            return compile_(backend, computation, *args, **kw)
        finally:
            try:
                name = str(computation.operation.attributes["sym_name"]).strip('"')
            except Exception:  # a name only
                name = "?"
            _emit({"kind": "compile", "name": name, "hit": hits[0] > before,
                   "cpu": time.process_time() - started})  # fmt: skip

    pxla.lower_sharding_computation = lowering
    compiler.compile_or_get_cached = compiling


class Checks:
    """A pytest plugin: the check the judge starts, written where the sandbox writes."""

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        _emit({"kind": "check", "name": nodeid.rsplit("::", 1)[-1]})


def grade(lesson: Path, isolation: str) -> tuple[int, str, float, int]:
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    from grader import catalog
    from grader.runner import engine, worker

    spec = next(s for s in catalog.exercises() if s.name == lesson.stem)
    worker.preload(list(engine.preload_for([spec])))
    import pytest

    from grader.protocol.worker_messages import Request
    from grader.runner import child, policy
    from grader.sandbox import jax_cache

    instrument_sandbox()
    gc.freeze()
    work = tempfile.mkdtemp(prefix="sandbox-compiles-")
    lessons = os.path.join(work, "lessons")
    os.makedirs(lessons)
    shutil.copy(lesson, os.path.join(lessons, lesson.name))
    for sub in ("cwd", "tmp"):
        os.makedirs(os.path.join(work, sub))
    with open(os.path.join(work, "pytest.ini"), "w", encoding="utf-8") as ini:
        ini.write("[pytest]\naddopts =\npython_files = test_*.py\n")
    sandboxes = tempfile.mkdtemp(prefix="grader-sandboxes-")
    os.chmod(sandboxes, 0o711)
    request = Request(
        suite=str(spec.suite), workdir=work, lesson_dir=lessons, seed=0,
        timeout_s=spec.timeout_s, memory_bytes=4 << 30, output_cap=32 << 10,
        devices=spec.devices, notebook="", isolation=isolation, maxfail=0,
        cache_dir=policy.cache_dir(policy.Options()), sandbox_dir=sandboxes,
        check_share_s=0.25 * spec.timeout_s,
    )  # fmt: skip
    if spec.devices > 1:
        import jax

        jax.config.update("jax_num_cpu_devices", spec.devices)  # type: ignore[no-untyped-call]
    if request.cache_dir:
        jax_cache.configure(request.cache_dir)
    records = os.open(os.path.join(work, "records"), os.O_WRONLY | os.O_CREAT, 0o600)
    err = tempfile.TemporaryFile()  # noqa: SIM115 (closed with the process)
    saved_err = os.dup(2)
    os.dup2(err.fileno(), 2)
    os.chdir(os.path.join(work, "cwd"))
    wall = time.perf_counter()
    code = pytest.main(child.pytest_args(request, records), plugins=[Checks()])
    wall = time.perf_counter() - wall
    os.dup2(saved_err, 2)
    err.seek(0)
    lines = err.read().decode(errors="replace")
    with open(os.path.join(work, "records"), encoding="utf-8") as fh:
        recorded = fh.read()
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(sandboxes, ignore_errors=True)
    passed = recorded.count('"status": "passed"')
    return int(code), lines, wall, passed


def tally(lines: str) -> list[dict[str, Any]]:
    """The sandbox's records in order (the judge's own compiles, in this process, left
    out), each compile and lowering with the check it ran under."""
    check = "(start and import)"
    out: list[dict[str, Any]] = []
    for line in lines.splitlines():
        if MARK not in line:
            continue
        record = json.loads(line.split(MARK, 1)[1])
        if record["kind"] != "check" and record["pid"] == os.getpid():
            continue
        if record["kind"] == "check":
            check = record["name"]
            continue
        record["check"] = check
        out.append(record)
    return out


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    by_check: dict[str, dict[str, float]] = collections.defaultdict(
        lambda: {"compiles": 0, "hits": 0, "compile_cpu": 0.0, "lowerings": 0, "lower_cpu": 0.0}
    )
    by_program: dict[tuple[str, str, str], dict[str, float]] = collections.defaultdict(
        lambda: {"compiles": 0, "hits": 0, "compile_cpu": 0.0}
    )
    pending: dict[str, str] = {}
    for r in records:
        row = by_check[r["check"]]
        if r["kind"] == "lower":
            row["lowerings"] += 1
            row["lower_cpu"] += r["cpu"]
            pending[r["name"]] = r["avals"]
        else:
            row["compiles"] += 1
            row["hits"] += int(r["hit"])
            row["compile_cpu"] += r["cpu"]
            fun = r["name"].removeprefix("jit_")
            key = (r["check"], r["name"], pending.get(fun, pending.get(r["name"], "")))
            prog = by_program[key]
            prog["compiles"] += 1
            prog["hits"] += int(r["hit"])
            prog["compile_cpu"] += r["cpu"]
    checks = sorted(by_check.items(), key=lambda kv: -kv[1]["compile_cpu"])
    programs = sorted(by_program.items(), key=lambda kv: -kv[1]["compile_cpu"])
    total = {
        k: sum(v[k] for _, v in checks)
        for k in ("compiles", "hits", "compile_cpu", "lowerings", "lower_cpu")
    }
    return {
        "total": total,
        "checks": [{"check": c, **v} for c, v in checks],
        "programs": [{"check": c, "program": n, "avals": a, **v} for (c, n, a), v in programs],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("lesson", type=Path)
    parser.add_argument("--isolation", default="strict")
    parser.add_argument("--json", default="", help="write the summary and records here")
    parser.add_argument("--top", type=int, default=15, help="programs to print")
    args = parser.parse_args()
    lesson = args.lesson.resolve()
    load = os.getloadavg()[0]
    code, lines, wall, passed = grade(lesson, args.isolation)
    records = tally(lines)
    result = summary(records)
    result.update(
        lesson=lesson.stem, exit=code, passed=passed, wall_s=round(wall, 2), load=round(load, 2)
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({**result, "records": records}, fh, indent=1)
    t = result["total"]
    print(
        f"{lesson.stem}: exit {code}, {passed} passed, load {load:.1f}, wall {wall:.1f} s; sandbox "
        f"{t['compiles']} compiles ({t['hits']} cache hits) {t['compile_cpu']:.2f} CPU-s, "
        f"{t['lowerings']} lowerings {t['lower_cpu']:.2f} CPU-s"
    )
    for row in result["checks"]:
        print(
            f"  {row['compile_cpu']:6.2f} s {row['compiles']:4} compiles ({row['hits']:3} hits)"
            f" {row['lower_cpu']:5.2f} s {row['lowerings']:4} lowerings  {row['check']}"
        )
    print("  programs:")
    for row in result["programs"][: args.top]:
        print(
            f"  {row['compile_cpu']:6.2f} s {row['compiles']:3}x ({row['hits']} hits)"
            f"  {row['check']}: {row['program']}({row['avals'][:90]})"
        )


if __name__ == "__main__":
    main()
