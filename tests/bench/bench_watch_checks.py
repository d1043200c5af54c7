"""Where a `grade watch` regrading's time goes, check by check, on its warm worker.

    python tests/bench/bench_watch_checks.py [--lesson 03_jit] [--saves 6] [--broken FILE]

Runs `grade watch`'s own grading thread (`grader.watch.regrader.Regrader`: one warm
worker, the session's sandbox compilation cache) in this process, without the terminal,
and grades a temporary copy of one lesson file N times, alternating the reference
solution (PASS) and a broken version (FAIL). For each grading it prints the time from the
request to the first problem shown (`on_problem`, FAIL), to the complete verdict, and the
judge's own duration of every check; then, per check, the median over the PASS gradings
after the first (the warm ones). `bench_watch.py` measures the same through the real
terminal; this one says which checks the time is spent in.

Not a test (a timed assertion would be flaky): run it by hand.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from grader import catalog, grading  # noqa: E402
from grader.model import ExerciseResult  # noqa: E402
from grader.runner import policy  # noqa: E402
from grader.runner.submission import find  # noqa: E402
from grader.watch.regrader import Job, Regrader  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--saves", type=int, default=6, help="gradings after the first")
    parser.add_argument("--lesson", default="03_jit")
    parser.add_argument(
        "--broken",
        type=Path,
        default=ROOT / "tests/fixtures/03_jit/python_loop_running_sum/03_jit.py",
    )
    args = parser.parse_args()
    fixed = (ROOT / "solutions" / f"{args.lesson}.py").read_text()
    broken = args.broken.read_text()
    options = policy.Options()
    level = grading.isolation(options).level
    spec = next(s for s in catalog.exercises() if s.name == args.lesson)
    preload = tuple(sorted(spec.imports))
    done = threading.Event()
    times: dict[str, float] = {}

    def on_result(job: Job, result: ExerciseResult) -> None:
        times["reply"] = time.monotonic()
        times["result"] = result  # type: ignore[assignment]
        done.set()

    def on_problem(job: Job, result: ExerciseResult, complete: bool) -> None:
        times.setdefault("complete" if complete else "problem", time.monotonic())

    ready = threading.Event()
    rows: list[tuple[str, ExerciseResult, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        lesson = Path(tmp) / f"{args.lesson}.py"
        with Regrader(options, level, preload, on_result, ready.set, on_problem) as regrader:
            ready.wait(300)
            for i in range(args.saves + 1):
                passing = i % 2 == 0
                lesson.write_text(fixed if passing else broken)
                submission = find(lesson, [args.lesson])
                done.clear()
                times.clear()
                asked = time.monotonic()
                regrader.submit(spec, submission)
                done.wait(300)
                result: ExerciseResult = times["result"]  # type: ignore[assignment]
                shown = times.get("problem", times.get("complete", times["reply"])) - asked
                whole = times.get("complete", times["reply"]) - asked
                word = "PASS" if passing else "FAIL"
                rows.append((word, result, shown, whole))
                print(
                    f"{i:>2} {word} {result.score:g}/{result.max_score:g} first verdict {shown:.2f} s, "
                    f"complete {whole:.2f} s, judge {result.duration_s:.2f} s, "
                    f"load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
                for c in result.checks:
                    print(f"     {c.duration_s:6.3f} {c.status:8} {c.id}")
    for word in ("PASS", "FAIL"):
        warm = [r for r in rows[1:] if r[0] == word]
        if not warm:
            continue
        print(
            f"{word}: first verdict median {statistics.median(r[2] for r in warm):.2f} s, "
            f"complete median {statistics.median(r[3] for r in warm):.2f} s over {len(warm)}"
        )
        ids = [c.id for c in warm[0][1].checks]
        for cid in ids:
            ds = [next(c.duration_s for c in r[1].checks if c.id == cid) for r in warm]
            print(f"   {statistics.median(ds):6.3f} {cid}")
    shutil.rmtree(Path(tmp), ignore_errors=True)


if __name__ == "__main__":
    main()
