"""`grade batch` throughput: submissions graded per minute with 1 and with 2 workers.

    python tests/bench/bench_batch.py [--students 6] [--only 01_arrays,05_pytrees]
                                      [--workers 1,2] [--repeat 1] [--suites DIR]

Builds a class of `--students` submissions in a temporary folder, alternating
copies of solutions/ (every check runs to the end) and of exercises/ (the
untouched stubs: every check stops at NotImplementedError), then times
`grade batch CLASS --out DIR --jobs N` end to end in a subprocess (worker
start-up, grading, per-student reports, gradebook, summary) for each N.
Prints the wall time and submissions per minute for each worker count, with
the machine's CPU count and load average (the numbers mean little on a busy
machine). Not a test: run by hand or in a benchmark job.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def make_class(folder: Path, students: int, lessons: list[str]) -> None:
    for i in range(students):
        source = ROOT / ("solutions" if i % 2 == 0 else "exercises")
        student = folder / f"student{i:02d}"
        student.mkdir(parents=True)
        for lesson in lessons:
            shutil.copy(source / f"{lesson}.py", student / f"{lesson}.py")


def timed_batch(klass: Path, out: Path, workers: int, only: str, suites: str | None) -> float:
    cmd = [
        sys.executable,
        "-m",
        "grader",
        "batch",
        str(klass),
        "--out",
        str(out),
        "--jobs",
        str(workers),
        "--only",
        only,
        "-q",
    ]
    if suites:
        cmd += ["--suites", suites]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["JAX_PLATFORMS"] = "cpu"
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"grade batch failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--students", type=int, default=6)
    parser.add_argument(
        "--only", default="01_arrays,05_pytrees", help="lesson files each submission holds"
    )
    parser.add_argument("--workers", default="1,2", help="worker counts to compare")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per worker count (median reported)"
    )
    parser.add_argument("--suites", help="suites folder (default: the grader's own)")
    args = parser.parse_args()
    lessons = [n.strip() for n in args.only.split(",") if n.strip()]

    print(
        f"{os.cpu_count()} CPU(s), load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"{args.students} submissions x {len(lessons)} lesson file(s) ({', '.join(lessons)})"
    )
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        klass = Path(tmp) / "class"
        make_class(klass, args.students, lessons)
        rates = {}
        for workers in (int(w) for w in args.workers.split(",")):
            times = []
            for run in range(args.repeat):
                out = Path(tmp) / f"out-{workers}-{run}"
                times.append(timed_batch(klass, out, workers, args.only, args.suites))
            with open(out / "gradebook.csv", newline="") as handle:
                graded = sum(1 for r in csv.DictReader(handle) if r["student"] != "maximum")
            wall = statistics.median(times)
            rates[workers] = 60 * graded / wall
            print(
                f"workers={workers}: {graded} submissions in {wall:.1f} s "
                f"(runs: {', '.join(f'{t:.1f}' for t in times)}) -> {rates[workers]:.1f} submissions/min",
                flush=True,
            )
        if len(rates) > 1:
            low, high = min(rates), max(rates)
            print(f"speed-up {high} vs {low} worker(s): {rates[high] / rates[low]:.2f}x")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
