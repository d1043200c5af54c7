"""Where the CPU goes, per phase, for `grade`, `grade watch` and `grade batch`, beside the floor.

    python tests/bench/bench_cpu.py [--repeat 3] [--students 4] [--jobs N]
                                    [--only 03_jit,...] [--skip-batch] [--json FILE]

Run from the project's root with the project's Python (`.venv/bin/python`); needs
`../shared/floor16` beside the project for the floor and nothing else (no root: every
grading runs at the strongest isolation the machine allows, `--isolation` is not forced).
Every figure is CPU seconds (user + system, the processes' own accounting: `os.wait4`'s
rusage, or `time.process_time` inside one), with the wall time beside it; each is the
median of `--repeat` runs with the min and max, since a shared machine is noisy.

1. The floor, measured in the same run: `FLOOR_LESSONS=solutions python -m pytest -q
   -p no:cacheprovider ../shared/floor16` (49 plain value checks, each training run once).
2. `grade solutions --no-html --json F` as a whole, and what it is made of: the parent's
   process start (`import grader.cli`), the warm worker's start (`worker.preload` and its
   warm-up: JAX, the suites' imports, a Hypothesis search, LAPACK), each lesson file's judge
   and sandbox by phase (`judge_phases.py`: pytest start and collection, checks, Hypothesis
   searches, exported-program verification, lowering and compiling in the judge; in the
   sandbox its start and the lesson's import, the student's calls with the trainings,
   probes, lowering and compiling), and the reports (JSON and HTML of the whole lesson).
3. `grade watch`'s regrading of 03_jit: the same phases for a judge whose sandboxes share
   a session's compilation cache (the second and later gradings), and the save-to-verdict
   times (`bench_watch.py` measures those in a real terminal; run it for the latency).
4. `grade batch` of `--students` copies of solutions/ with `--jobs` (default: the
   machine's): whole-process CPU and wall, per student.

Not a test (timed figures are not assertions). The note that quotes it says which
machine, the load, and the date.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FLOOR = ROOT.parent / "shared" / "floor16"
PY = sys.executable


def run(
    cmd: Sequence[str], env: dict[str, str] | None = None, cwd: Path = ROOT
) -> tuple[float, float, str]:
    """(CPU seconds of the command's whole process tree, wall seconds, its stdout)."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd), cwd=cwd, env={**os.environ, **(env or {})}, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{text[-3000:]}")
    return usage.ru_utime + usage.ru_stime, wall, text


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f} (min {min(values):.2f}, max {max(values):.2f})"


def repeat(n: int, measure: Callable[[], tuple[float, float]]) -> tuple[list[float], list[float]]:
    cpu, wall = [], []
    for _ in range(n):
        c, w = measure()
        cpu.append(c)
        wall.append(w)
    return cpu, wall


def floor(where: Path = FLOOR) -> tuple[float, float]:
    cmd = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(where)]
    cpu, wall, _ = run(cmd, {"FLOOR_LESSONS": "solutions"})
    return cpu, wall


def lessons(only: str) -> list[Path]:
    files = sorted((ROOT / "solutions").glob("*.py"))
    wanted = {n.strip() for n in only.split(",") if n.strip()}
    return [f for f in files if not wanted or f.stem in wanted]


def phases(lesson: Path, session: str = "") -> dict[str, Any]:
    cmd = [PY, str(ROOT / "tests/bench/judge_phases.py"), str(lesson), "--json"]
    if session:
        cmd += ["--sandbox-cache", session]
    _, _, text = run(cmd)
    return dict(json.loads(text.strip().splitlines()[-1]))


def summed(results: list[dict[str, Any]]) -> dict[str, float]:
    total: dict[str, float] = {}
    for r in results:
        for side in ("judge", "sandbox"):
            for key, value in r[side].items():
                total[f"{side}: {key}"] = total.get(f"{side}: {key}", 0.0) + value
    return total


def reports_cpu(lesson: Path) -> float:
    """CPU seconds to write the JSON and HTML reports of a grading of `lesson` (in process)."""
    code = (
        "import sys, time, tempfile, pathlib\n"
        "from grader import catalog\n"
        "from grader.runner import engine, policy\n"
        "from grader.runner.submission import find\n"
        "from grader.reports import html, json_report\n"
        f"p = pathlib.Path({str(lesson)!r})\n"
        "specs = [s for s in catalog.exercises() if s.name == p.stem]\n"
        "report = engine.grade(specs, find(p, [p.stem]), policy.Options())\n"
        "out = pathlib.Path(tempfile.mkdtemp())\n"
        "t = time.process_time()\n"
        "json_report.write(report, out / 'r.json'); html.write(report, out / 'r.html')\n"
        "print(time.process_time() - t)\n"
    )
    _, _, text = run([PY, "-c", code])
    return float(text.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--students", type=int, default=4, help="copies for grade batch")
    parser.add_argument("--jobs", type=int, default=0, help="grade batch --jobs (0: default)")
    parser.add_argument("--only", default="", help="lesson files for the phases (default all)")
    parser.add_argument("--floor", type=Path, default=FLOOR, help="default ../shared/floor16")
    parser.add_argument("--skip-batch", action="store_true")
    parser.add_argument(
        "--batch-isolation",
        default="",
        help="grade batch's --require-isolation (default: the command's, user; give basic "
        "where the grader cannot switch users, e.g. not root)",
    )
    parser.add_argument("--json", type=Path, help="write every figure here too")
    args = parser.parse_args()
    args.batch_level = ["--require-isolation", args.batch_isolation] if args.batch_isolation else []
    found: dict[str, Any] = {"cpus": os.cpu_count(), "load": os.getloadavg()}
    n = args.repeat

    def show(label: str, cpu: list[float], wall: list[float]) -> None:
        found[label] = {"cpu": cpu, "wall": wall}
        print(f"{label:58} CPU-s {spread(cpu)}   wall-s {spread(wall)}", flush=True)

    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; medians of {n} runs", flush=True)
    show("floor: pytest ../shared/floor16 (solutions)", *repeat(n, lambda: floor(args.floor)))
    grade = [PY, "-m", "grader"]
    with tempfile.TemporaryDirectory() as tmp:
        report = str(Path(tmp) / "r.json")
        whole = [*grade, "solutions", "--no-html", "--json", report, "-q"]
        show("grade solutions (whole process)", *repeat(n, lambda: run(whole)[:2]))
    show("floor again (same run)", *repeat(n, lambda: floor(args.floor)))
    show(
        "  process start: import grader.cli",
        *repeat(n, lambda: run([PY, "-c", "import grader.cli"])[:2]),
    )
    start = "from grader.runner import worker, engine; worker.preload([])"
    show("  warm worker start: preload + warm-up", *repeat(n, lambda: run([PY, "-c", start])[:2]))

    files = lessons(args.only)
    per_run = [summed([phases(f) for f in files]) for _ in range(n)]
    print(f"  judges and sandboxes of {len(files)} lesson file(s), summed (CPU-s):")
    for key in per_run[0]:
        values = [r[key] for r in per_run]
        found[f"grade phases: {key}"] = values
        print(f"    {key:54} {spread(values)}", flush=True)
    rep = [reports_cpu(ROOT / "solutions" / "03_jit.py") for _ in range(n)]
    found["reports (03_jit, JSON + HTML)"] = rep
    print(f"  reports of 03_jit (JSON + HTML){'':24} {spread(rep)}")

    session = tempfile.mkdtemp(prefix="bench-cpu-session-")
    os.chmod(session, 0o755)
    try:
        jit = ROOT / "solutions" / "03_jit.py"
        phases(jit, session)  # the session's first grading fills its cache
        watch = [phases(jit, session) for _ in range(n)]
    finally:
        shutil.rmtree(session, ignore_errors=True)
    print("grade watch: a regrading of 03_jit (session cache warm), CPU-s:")
    for key in summed(watch):
        per = [summed([w])[key] for w in watch]
        found[f"watch phases: {key}"] = per
        print(f"    {key:54} {spread(per)}")

    if not args.skip_batch:
        with tempfile.TemporaryDirectory() as tmp:
            subs = Path(tmp) / "class"
            for i in range(args.students):
                shutil.copytree(ROOT / "solutions", subs / f"student{i}")
            jobs = ["--jobs", str(args.jobs)] if args.jobs else []

            def one_batch() -> tuple[float, float]:
                out = Path(tmp) / "out"
                shutil.rmtree(out, ignore_errors=True)
                cmd = [*grade, "batch", str(subs), "--out", str(out), *jobs, *args.batch_level]
                cpu, wall, _ = run([*cmd, "-q"])
                return cpu / args.students, wall / args.students

            show(f"grade batch of {args.students} x solutions, per student", *repeat(n, one_batch))
        show("floor again (after batch)", *repeat(n, lambda: floor(args.floor)))
    if args.json:
        args.json.write_text(json.dumps(found, indent=1) + "\n")


if __name__ == "__main__":
    main()
