"""Time `grade batch` on a class built from the course's own correct code, with the solutions
graded first (their programs shared, `grader.batch.warm`) and without (`--solutions none`).

    python tests/bench/bench_class.py [--students 12] [--mix copies|styles] [--only 03_jit,...]
                                      [--isolation basic] [--jobs N] [--json FILE]

`copies`: every student hands in solutions/. `styles`: a third each hand in solutions/,
tests/corpus/habits and tests/corpus/alternatives (correct code in other styles, whose
programs differ from the solutions'). Each run's wall and CPU seconds (the batch and every
process under it, from `os.wait4`) and each student's total; the two runs must give the same
totals. Run with the interpreter the grader is installed in. A
benchmark, never a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STYLES = (ROOT / "solutions", ROOT / "tests/corpus/habits", ROOT / "tests/corpus/alternatives")


def build(folder: Path, students: int, mix: str) -> None:
    for i in range(students):
        style = STYLES[i % 3] if mix == "styles" else STYLES[0]
        student = folder / f"s{i + 1:02d}"
        student.mkdir(parents=True)
        for source in (STYLES[0], style):  # the solutions, then the style's own files
            for path in source.glob("*.py"):
                shutil.copy(path, student / path.name)


def run(argv: list[str]) -> dict[str, float]:
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    said = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{said[-2000:]}")
    return {
        "wall_s": round(time.monotonic() - started, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
    }


def totals(out: Path) -> dict[str, str]:
    with open(out / "gradebook.csv", newline="") as file:
        return {r["student"]: r["total"] for r in csv.DictReader(file) if r["student"] != "maximum"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=12)
    parser.add_argument("--mix", choices=("copies", "styles"), default="styles")
    parser.add_argument("--only", default="")
    parser.add_argument("--isolation", default="basic")
    parser.add_argument("--jobs", default="")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-class-"))
    try:
        build(work / "class", args.students, args.mix)
        common = ["--isolation", args.isolation, "--require-isolation", args.isolation]
        common += ["--only", args.only] if args.only else []
        common += ["--jobs", args.jobs] if args.jobs else []
        found: dict[str, object] = {"students": args.students, "mix": args.mix}
        for name, solutions in (("shared", str(ROOT / "solutions")), ("alone", "none")):
            out = work / f"out-{name}"
            argv = [sys.executable, "-m", "grader", "batch", str(work / "class"), "--out", str(out)]
            found[name] = run([*argv, "--solutions", solutions, "-q", *common])
            found[f"{name}_totals"] = totals(out)
            print(name, found[name], flush=True)
        same = found["shared_totals"] == found["alone_totals"]
        print("same totals:", same)
        if args.json:
            Path(args.json).write_text(json.dumps(found, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
