"""Grading overhead: `grade solutions/` versus the same suites in one plain pytest process.

    python tests/bench/bench_overhead.py [--repeat 3] [--only 03_jit,ex2_per_example_grads]

The floor is what the checks themselves cost: every suite run by plain pytest in
one process (JAX imported once, no isolation). `grade` adds the warm worker, a
fork per lesson file, limits, records and reports. The target is at most 30%
on top of the floor. Prints both medians and the overhead; not a test (a
timed assertion would be flaky), run by hand or in a benchmark job.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from grader import catalog  # noqa: E402


def timed(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        sys.exit(
            f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated lesson names (default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="grade --jobs")
    args = parser.parse_args()

    specs = [s for s in catalog.exercises() if not args.only or s.name in args.only.split(",")]
    devices = max(s.devices for s in specs)
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    floor_env = {**env, "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}"}
    with tempfile.TemporaryDirectory() as tmp:
        ini = Path(tmp) / "pytest.ini"
        ini.write_text("[pytest]\naddopts =\n")
        floor_cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "grader.plugin",
            "-p",
            "no:cacheprovider",
            "-c",
            str(ini),
            "--rootdir",
            tmp,
            "--lesson-dir",
            str(ROOT / "solutions"),
            *[str(s.suite) for s in specs],
        ]
        grade_cmd = [
            sys.executable,
            "-m",
            "grader",
            str(ROOT / "solutions"),
            "-q",
            "--no-html",
            "--jobs",
            str(args.jobs),
            "--json",
            str(Path(tmp) / "r.json"),
            "--only",
            ",".join(s.name for s in specs),
        ]
        floors, grades = [], []
        for i in range(args.repeat):
            floors.append(timed(floor_cmd, floor_env))
            grades.append(timed(grade_cmd, env))
            print(
                f"run {i + 1}: plain pytest {floors[-1]:.1f} s, grade {grades[-1]:.1f} s",
                flush=True,
            )
    floor, graded = statistics.median(floors), statistics.median(grades)
    print(f"lesson files: {len(specs)} ({', '.join(s.name for s in specs)})")
    print(f"plain pytest, one process (floor): {floor:.1f} s (median of {args.repeat})")
    print(f"grade, isolated (--jobs {args.jobs}):       {graded:.1f} s (median of {args.repeat})")
    print(f"overhead: {100 * (graded / floor - 1):+.0f}% (target: at most +30%)")


if __name__ == "__main__":
    main()
