"""Save-to-verdict time of `grade watch`: a lesson file saved under the real watcher.

    python tests/bench/bench_watch.py [--saves 6] [--lesson 03_jit] [--broken FILE]
                                      [--edit FUNCTION | --whole-file]

Starts `grade watch` in a pseudo-terminal on a temporary copy of one lesson file
(`tests/commands/test_watch.py`'s `WatchTerminal`: a real pty, the real watcher,
the real suite), waits until the warm worker is ready, then saves the file N
times, alternating the reference solution (PASS) and a broken version (FAIL), so
each save changes the verdict on screen. The broken version is what a student's edit
gives: the solution with one function (`--edit`, running_sum) as the broken file writes
it; `--whole-file` saves the broken file as it is instead (a fixture: every line of the
file differs, so `grade watch` keeps no verdict, `grader.runner.reuse`). For each save it measures the time from
the write to the first verdict line drawn in the terminal (for a broken file, the
first failing check, drawn while the other checks still run: `FAIL ... so far`)
and to the complete verdict, and reads the grading's own duration from the
complete line (`PASS 21/21 03_jit (4.2 s)`): the rest is the watcher, the parent
and the screen. The CPU seconds each save cost (the warm worker's
process tree) say what it would take on idle cores. The first save is reported apart (the first fork of a
fresh worker), and the median of the others is the number to quote, with the
load average (other processes share the CPU). The target is 0.5 s for 03_jit, both directions.

Not a test (a timed assertion would be flaky): run it by hand or in a benchmark job.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "commands"))

from test_watch import WatchTerminal  # noqa: E402

TARGET_S = 0.5
TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """CPU seconds of `pid` and of its descendants it has waited for (the warm worker
    waits for each judge, which waits for its sandbox: a grading's whole tree)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return sum(int(v) for v in fields[11:15]) * TICK_S  # utime stime cutime cstime


def worker_of(pid: int) -> int:
    """The warm worker: the watch's child."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        return int(entry)
            except (OSError, ValueError):
                continue
    raise SystemExit("grade watch has no worker")


def _function(source: str, name: str) -> str:
    """The lines of the top-level function `name` in `source`."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            lines = source.splitlines(keepends=True)
            return "".join(lines[node.lineno - 1 : node.end_lineno])
    raise SystemExit(f"no function {name} to edit")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--saves", type=int, default=6, help="saves measured after the first")
    parser.add_argument("--lesson", default="03_jit")
    parser.add_argument(
        "--broken",
        type=Path,
        default=ROOT / "tests/fixtures/03_jit/python_loop_running_sum/03_jit.py",
        help="a failing version of the lesson file (default: a 03_jit fixture)",
    )
    parser.add_argument("--edit", default="running_sum", help="the function the edit breaks")
    parser.add_argument("--whole-file", action="store_true", help="save --broken as it is")
    args = parser.parse_args()
    fixed = (ROOT / "solutions" / f"{args.lesson}.py").read_text()
    broken = args.broken.read_text()
    if not args.whole_file:
        broken = fixed.replace(_function(fixed, args.edit), _function(broken, args.edit))

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "exercises"
        folder.mkdir()
        lesson = folder / f"{args.lesson}.py"
        shutil.copyfile(ROOT / "exercises" / f"{args.lesson}.py", lesson)
        term = WatchTerminal("exercises", "--only", args.lesson, cwd=Path(tmp))
        started = time.monotonic()
        try:
            term.wait_for(r"Ready: save a lesson file", timeout=180)
            print(f"worker ready {time.monotonic() - started:.1f} s after start")
            worker = worker_of(term.proc.pid)
            rows = []
            for i in range(args.saves + 1):
                passing = i % 2 == 0
                word = "PASS" if passing else "FAIL"
                since = term.mark()
                cpu_before = cpu_s(worker) + cpu_s(term.proc.pid)
                saved = time.monotonic()
                lesson.write_text(fixed if passing else broken)
                term.wait_for(rf"{word}\b[^\n]*{re.escape(args.lesson)} \(", since, 300)
                first = time.monotonic() - saved
                shown = term.wait_for(
                    rf"{word}\s+\S+\s+{re.escape(args.lesson)} \(([\d.]+) s\)", since, 300
                )
                seen = time.monotonic() - saved
                match = re.search(rf"{word}\s+\S+\s+{re.escape(args.lesson)} \(([\d.]+) s\)", shown)
                graded = float(match.group(1)) if match else float("nan")
                # The verdict is drawn from the judge's records, before the judge has exited:
                # its CPU time is the worker's once it has been reaped.
                deadline = time.monotonic() + 30
                while term.grading_processes() and time.monotonic() < deadline:
                    time.sleep(0.02)
                time.sleep(0.2)
                cpu = cpu_s(worker) + cpu_s(term.proc.pid) - cpu_before
                rows.append((word, seen, graded, cpu, first))
                label = "first" if i == 0 else f"{i:>5}"
                print(
                    f"save {label}  {word}  first verdict line {first:5.2f} s  "
                    f"complete {seen:5.2f} s  "
                    f"(grading {graded:4.1f} s, watcher + screen {seen - graded:+5.2f} s, "
                    f"CPU {cpu:4.2f} s)  load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
            term.type(b"q")
            term.wait_for(r"grade watch: stopped\.", timeout=30)
        finally:
            term.close()

    measured = rows[1:]
    median = statistics.median(seen for _, seen, _, _, _ in measured)
    first = statistics.median(f for _, _, _, _, f in measured)
    overhead = statistics.median(seen - graded for _, seen, graded, _, _ in measured)
    cpu = statistics.median(c for _, _, _, c, _ in measured)
    for word in ("PASS", "FAIL"):
        times = [(f, seen) for w, seen, _, _, f in measured if w == word]
        if times:
            print(
                f"{word} saves: first verdict line median "
                f"{statistics.median(f for f, _ in times):.2f} s, complete median "
                f"{statistics.median(s for _, s in times):.2f} s over {len(times)}"
            )
    load = os.getloadavg()
    print(
        f"{args.lesson}: save-to-first-verdict-line median {first:.2f} s, save-to-complete "
        f"median {median:.2f} s over {len(measured)} saves (target {TARGET_S} s); watcher + parent + screen median {overhead:+.2f} s; "
        f"CPU seconds per save median {cpu:.2f} s; "
        f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
