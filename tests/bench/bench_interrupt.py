"""`grade batch` interrupted: what a signal costs and what it keeps.

    python tests/bench/bench_interrupt.py [--students 15] [--after 1,5,10] [--jobs 2]
        [--suites DIR --submissions DIR --only 03_jit,06_random]

A class of N students (by default copies, under new names, of the fixture class of
tests/commands/fixtures: right, partial, `os._exit`, an endless loop, nothing) is graded
once without interruption (the reference), then, for each signal (SIGINT, SIGTERM, SIGINT
twice) and each point (after K students written), graded by `python -m grader batch` under a
subreaper and sent the signal: printed are the seconds from the signal to the batch's exit,
its exit code, the processes below it at the signal, those left 1 s after its exit (the
subreaper's children), the students kept, and for the re-run: how many it graded, its time,
and whether its gradebook equals the reference (the time of grading aside). Not a test:
nothing is asserted. Everything happens in a temporary folder.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "commands" / "fixtures"
sys.path.insert(0, str(ROOT / "tests" / "commands"))

from test_batch_interruption import REAPER  # noqa: E402

from grader.batch import interrupt  # noqa: E402

FIXTURE_CLASS = ("alice", "bob", "dave", "erin", "frank")


def make_class(folder: Path, students: int, source: Path | None) -> Path:
    """`students` folders: copies of `source`'s students (or the fixture class), renamed."""
    source = source or FIXTURES / "submissions"
    names = sorted(p.name for p in source.iterdir() if p.is_dir())
    names = [n for n in names if source != FIXTURES / "submissions" or n in FIXTURE_CLASS]
    klass = folder / "class"
    for i in range(students):
        shutil.copytree(source / names[i % len(names)], klass / f"s{i:02d}_{names[i % len(names)]}")
    return klass


def gradebook(out: Path) -> list[dict[str, str]]:
    rows = csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))
    return [{k: v for k, v in r.items() if k != "graded_at"} for r in rows]


def written(out: Path) -> int:
    return len(list((out / "resume").glob("*.json"))) if (out / "resume").is_dir() else 0


def interrupted(
    command: list[str], out: Path, log: Path, signum: int, after: int, twice: bool
) -> dict[str, object]:
    reaper = subprocess.Popen(
        [sys.executable, "-c", REAPER, str(log), sys.executable, "-m", "grader", *command],
        stdout=subprocess.PIPE,
        start_new_session=True,
        text=True,
    )
    assert reaper.stdout is not None
    pid = json.loads(reaper.stdout.readline())["pid"]
    while written(out) < after and reaper.poll() is None:
        time.sleep(0.05)
    running = len(interrupt.descendants(pid))
    sent = time.monotonic()
    os.kill(pid, signum)
    if twice:
        time.sleep(0.2)
        os.kill(pid, signum)
    end = json.loads(reaper.stdout.readline())
    reaper.wait()
    return {
        "exit_s": round(end["ended"] - sent, 2),
        "rc": end["rc"],
        "processes_at_signal": running,
        "left_after_1s": len(end["left"]),
        "kept": written(out),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=15)
    parser.add_argument("--after", default="1,5,10")
    parser.add_argument("--jobs", default="2")
    parser.add_argument("--timeout", default="6")
    parser.add_argument("--suites", default=str(FIXTURES / "suites"))
    parser.add_argument("--submissions", default="")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-interrupt-") as tmp:
        klass = make_class(
            Path(tmp), args.students, Path(args.submissions) if args.submissions else None
        )
        base = ["--suites", args.suites, "--timeout", args.timeout, "--jobs", args.jobs]
        base += ["--only", args.only] if args.only else []
        started = time.monotonic()
        ref_out = Path(tmp) / "reference"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "grader",
                "batch",
                str(klass),
                "--out",
                str(ref_out),
                *base,
                "-q",
            ],
            check=False,
            capture_output=True,
        )
        print(f"reference: {args.students} students in {time.monotonic() - started:.1f} s")
        reference = gradebook(ref_out)
        for name, signum, twice in (
            ("SIGINT", signal.SIGINT, False),
            ("SIGTERM", signal.SIGTERM, False),
            ("SIGINT x2", signal.SIGINT, True),
        ):
            for after in map(int, args.after.split(",")):
                out = Path(tmp) / f"out-{signum}-{twice}-{after}"
                command = ["batch", str(klass), "--out", str(out), *base]
                seen = interrupted(command, out, Path(tmp) / "log", signum, after, twice)
                started = time.monotonic()
                again = subprocess.run(
                    [sys.executable, "-m", "grader", *command],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                graded = next(
                    (
                        line.split()[1]
                        for line in again.stdout.splitlines()
                        if line.startswith("graded ")
                    ),
                    "?",
                )
                seen.update(
                    rerun_graded=graded,
                    rerun_s=round(time.monotonic() - started, 1),
                    rerun_rc=again.returncode,
                    same_gradebook=gradebook(out) == reference,
                )
                print(f"{name} after {after}: {json.dumps(seen)}", flush=True)


if __name__ == "__main__":
    main()
