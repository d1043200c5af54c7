"""Notebook submissions: the time to grade a lesson file as `.ipynb` versus the same code as `.py`.

    python tests/bench/bench_notebooks.py [--repeat 3] [--only 03_jit,ex2_per_example_grads]

Both folders hold the reference solutions: as `.py` files, and as the notebooks
`grade notebooks --from solutions` writes. A notebook costs what its `.py`
costs plus its run in a fresh Jupyter kernel (kernel start, the cells' own
imports, the cells) inside the grading child. Prints, per lesson file, the
median exercise time both ways and the kernel run's share, and the median wall
time of the whole `grade` run. Not a test (timings are not assertions); run
by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNEL_RUN = re.compile(r"run in a fresh kernel in ([0-9.]+) s")


def graded(
    folder: Path, only: str, out: Path, env: dict[str, str]
) -> tuple[float, dict[str, dict[str, float]]]:
    started = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            str(folder),
            "--only",
            only,
            "-q",
            "--no-html",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        sys.exit(
            f"grade {folder} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    per_file = {}
    for exercise in json.loads(out.read_text())["exercises"]:
        kernel = KERNEL_RUN.search(exercise["output"])
        per_file[exercise["name"]] = {
            "duration": exercise["duration_s"],
            "score": exercise["score"],
            "kernel": float(kernel.group(1)) if kernel else 0.0,
        }
    return wall, per_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--only", default="03_jit,ex2_per_example_grads", help="comma-separated lesson names"
    )
    args = parser.parse_args()
    lessons = [n.strip() for n in args.only.split(",") if n.strip()]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}

    with tempfile.TemporaryDirectory() as tmp:
        py, nb = Path(tmp) / "py", Path(tmp) / "nb"
        py.mkdir()
        for lesson in lessons:
            shutil.copy(ROOT / "solutions" / f"{lesson}.py", py)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "grader",
                "notebooks",
                "--from",
                str(ROOT / "solutions"),
                "--out",
                str(nb),
                "--only",
                args.only,
            ],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
        walls: dict[str, list[float]] = {"py": [], "ipynb": []}
        runs: dict[str, list[dict[str, dict[str, float]]]] = {"py": [], "ipynb": []}
        for i in range(args.repeat):
            for kind, folder in (("py", py), ("ipynb", nb)):
                wall, per_file = graded(folder, args.only, Path(tmp) / f"{kind}.json", env)
                walls[kind].append(wall)
                runs[kind].append(per_file)
            print(
                f"run {i + 1}: .py {walls['py'][-1]:.1f} s, .ipynb {walls['ipynb'][-1]:.1f} s",
                flush=True,
            )

    def median(kind: str, lesson: str, key: str) -> float:
        return statistics.median(run[lesson][key] for run in runs[kind])

    print(f"\nmedians of {args.repeat} runs (seconds)")
    print(f"{'lesson file':<24} {'.py':>7} {'.ipynb':>7} {'kernel run':>11} {'extra':>8}  scores")
    for lesson in lessons:
        as_py, as_nb = median("py", lesson, "duration"), median("ipynb", lesson, "duration")
        scores = f"{runs['py'][-1][lesson]['score']:g} / {runs['ipynb'][-1][lesson]['score']:g}"
        print(
            f"{lesson:<24} {as_py:7.1f} {as_nb:7.1f} {median('ipynb', lesson, 'kernel'):11.1f} "
            f"{100 * (as_nb / as_py - 1):+7.0f}%  {scores}"
        )
    wall_py, wall_nb = statistics.median(walls["py"]), statistics.median(walls["ipynb"])
    print(
        f"{'whole grade run':<24} {wall_py:7.1f} {wall_nb:7.1f} {'':>11} {100 * (wall_nb / wall_py - 1):+7.0f}%"
    )


if __name__ == "__main__":
    main()
