"""The judge/sandbox split's cost: one lesson file's grading before and after, against bare pytest.

    python tests/bench/bench_split.py [--repeat 3] [--only 03_jit,ex1_dropout,ex2_per_example_grads]
                                      [--base 50df443]

For each lesson file, four timings (median of `--repeat` runs, each a fresh process):
- `grade solutions/ --only NAME` and bare `pytest -p grader.plugin SUITE` on this tree
  (the suite and the student's module in two processes: judge and sandbox);
- the same two commands on `--base`, the last commit before the split (one process),
  checked out in a temporary git worktree and run with this venv.
It prints the engine's overhead over bare pytest on each tree (target after the split:
at most 1.1x) and what the split costs `grade` (after / before). Not a test: run it by
hand on an idle machine.
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
BEFORE_SPLIT = "50df443"
DEFAULT = "03_jit,ex1_dropout,ex2_per_example_grads"


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        sys.exit(
            f"{' '.join(cmd)} failed ({proc.returncode}) in {cwd}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )
    return elapsed


def commands(tree: Path, lesson: str, tmp: Path) -> dict[str, list[str]]:
    ini = tmp / "pytest.ini"
    ini.write_text("[pytest]\naddopts =\n")
    return {
        "grade": [
            sys.executable,
            "-m",
            "grader",
            str(tree / "solutions"),
            "-q",
            "--no-html",
            "--only",
            lesson,
            "--json",
            str(tmp / f"{lesson}.json"),
        ],
        "pytest": [
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
            str(tmp),
            "--lesson-dir",
            str(tree / "solutions"),
            str(tree / "grader" / "suites" / f"test_{lesson}.py"),
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default=DEFAULT)
    parser.add_argument("--base", default=BEFORE_SPLIT)
    args = parser.parse_args()
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": ""}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        base = tmp / "base"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(base), args.base],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        try:
            rows = []
            for lesson in args.only.split(","):
                medians = {}
                for label, tree in (("before", base), ("after", ROOT)):
                    for kind, cmd in commands(tree, lesson, tmp).items():
                        runs = [
                            timed(cmd, tree, {**env, "PYTHONPATH": str(tree)})
                            for _ in range(args.repeat)
                        ]
                        medians[(label, kind)] = statistics.median(runs)
                        print(
                            f"{lesson} {label:6} {kind:6} " + " ".join(f"{r:.1f}" for r in runs),
                            flush=True,
                        )
                rows.append((lesson, medians))
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, capture_output=True
            )
    print(
        f"\nmedians of {args.repeat} runs, seconds (before = {args.base}, one process; after = judge + sandbox)"
    )
    print(
        f"{'lesson file':24} {'pytest before':>13} {'grade before':>12} {'ratio':>6} "
        f"{'pytest after':>12} {'grade after':>11} {'ratio':>6} {'grade after/before':>18}"
    )
    for lesson, m in rows:
        print(
            f"{lesson:24} {m['before', 'pytest']:13.1f} {m['before', 'grade']:12.1f} "
            f"{m['before', 'grade'] / m['before', 'pytest']:6.2f} {m['after', 'pytest']:12.1f} "
            f"{m['after', 'grade']:11.1f} {m['after', 'grade'] / m['after', 'pytest']:6.2f} "
            f"{m['after', 'grade'] / m['before', 'grade']:18.2f}"
        )


if __name__ == "__main__":
    main()
