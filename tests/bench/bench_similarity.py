"""The similarity step of `grade batch` on a class with one huge lesson file: its time and
peak memory as the file grows (a held-out 6 MB file took the batch from
34 s to 151 s and 1.8 GiB).

    python tests/bench/bench_similarity.py [--students 15] [--sizes 0,1.9,2.5,6,20]

For each size (MB) a class of `--students` is built in a temporary folder (copies of
solutions/03_jit.py and 06_random.py, every other one renamed), and one student's 03_jit.py
padded with never-called functions to that size (0: no padded file); then, in a fresh
process, `pool.similar_pairs` is timed over the class and its peak resident memory
read (`ru_maxrss`). A file up to the grading limit (2 MB) is compared, its first
`similarity.MAX_BYTES` only; one over it is not compared at all. Prints one line per size,
with the machine's load. Not a test: run by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ["03_jit", "06_random"]

MEASURE = """
import json, resource, sys, time
from pathlib import Path
from grader.batch import pool
folder = Path(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
jobs = [pool.job_for(folder, n, %r) for n in pool.students(folder)]
pairs = pool.similar_pairs(jobs, Path(%r))
took = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"s": took, "peak_mib": peak / 1024, "import_mib": before / 1024,
                  "suspicious": sum(p.suspicious for p in pairs)}))
"""


def pad(path: Path, size: int) -> None:
    """Append never-called functions to `path` until it holds `size` bytes, a block at a
    time (this process stays small: a child inherits its peak memory as its own)."""
    i = 0
    with path.open("a") as fh:
        while fh.tell() < size:
            fh.write(
                f"\n\ndef helper_{i}(a, b={i}):\n"
                f"    return [a * {i} + b - k for k in range({i % 9 + 1})]\n"
            )
            i += 1


def make_class(folder: Path, students: int, huge_mb: float) -> None:
    for i in range(students):
        student = folder / f"s{i:02d}"
        student.mkdir(parents=True)
        for lesson in LESSONS:
            source = (ROOT / "solutions" / f"{lesson}.py").read_text()
            if i % 2:
                source = source.replace("x", "xx").replace("# ", "# note: ")
            (student / f"{lesson}.py").write_text(source)
    if huge_mb:
        pad(folder / "s00" / "03_jit.py", int(huge_mb * 1e6))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=15)
    parser.add_argument("--sizes", default="0,1.9,2.5,6,20")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; {args.students} students")
    for size in [float(s) for s in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "class"
            make_class(folder, args.students, size)
            code = MEASURE % (LESSONS, str(ROOT / "exercises"))
            ran = subprocess.run(
                [sys.executable, "-c", code, str(folder)],
                capture_output=True,
                text=True,
                check=True,
            )
            got = json.loads(ran.stdout)
            print(
                f"padded file {size:5.1f} MB: similarity {got['s']:6.2f} s, peak "
                f"{got['peak_mib']:6.0f} MiB (after imports {got['import_mib']:.0f} MiB), "
                f"{got['suspicious']} suspicious pair(s)"
            )
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
