"""Time of `%grade` in one Jupyter kernel: the first (it starts the worker), then warm ones.

    python tests/bench/bench_magic.py [--runs 6] [--lesson 03_jit]

Starts a real kernel (nbclient, in a temporary folder), runs the lesson's reference
solution as cells (one per function), loads the extension, then runs `%grade LESSON`
N times. Between two gradings the cell holding the first function is run again,
alternately as the solution and with a line that breaks it, so every grading has new
code to grade and a different verdict. For each it measures the cell's time as the
notebook sees it (request sent to reply received) and reads the verdict's line. The
first run is reported apart (it starts the worker: JAX imported once per kernel); the
median of the others is the number to quote, with the load average (other processes
share the CPU). The target: under 1 s for 03_jit on a warm worker.

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

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
TARGET_S = 1.0
TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """CPU seconds of `pid` and of the descendants it has waited for (the kernel's warm
    worker waits for each judge, which waits for its sandbox: a grading's whole tree)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return sum(int(v) for v in fields[11:15]) * TICK_S  # utime stime cutime cstime


def cells(lesson: str) -> list[str]:
    source = (ROOT / "solutions" / f"{lesson}.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    head = [n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.ClassDef | ast.Expr)]
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    segments = ["\n".join(ast.get_source_segment(source, n) or "" for n in head)]
    return segments + [ast.get_source_segment(source, n) or "" for n in defs]


def broken(cell: str) -> str:
    """The function with its body's first statement replaced by `return None`."""
    lines = cell.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("def ")) + 1
    indent = re.match(r"\s*", lines[start]).group(0)  # type: ignore[union-attr]
    return "\n".join([*lines[:start], f"{indent}return None", *lines[start:]])


def worker_pid(client: NotebookClient) -> int:
    """The kernel's warm worker (started by the first `%grade`): the kernel's child.

    Found from outside the kernel: a cell asking the kernel would enter its history, and
    `%grade` grades that history, so the cell would be graded as the student's code."""
    kernel = getattr(getattr(client.km, "provisioner", None), "process", None)
    if kernel is None:
        return 0
    try:
        with open(f"/proc/{kernel.pid}/task/{kernel.pid}/children", encoding="ascii") as fh:
            children = [int(pid) for pid in fh.read().split()]
    except OSError:
        return 0
    return children[0] if children else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--lesson", default="03_jit")
    args = parser.parse_args()
    code = cells(args.lesson)
    folder = Path(tempfile.mkdtemp(prefix="bench-magic-"))
    client = NotebookClient(
        nbformat.v4.new_notebook(),
        timeout=900,
        kernel_name="python3",
        resources={"metadata": {"path": str(folder)}},
    )

    def run(text: str) -> tuple[float, str]:
        cell = nbformat.v4.new_code_cell(text)
        client.nb.cells.append(cell)
        started = time.monotonic()
        client.execute_cell(cell, len(client.nb.cells) - 1)
        seconds = time.monotonic() - started
        shown = [o for o in cell.outputs if o.output_type in ("display_data", "stream")]
        last = shown[-1] if shown else {}
        text_out = last["data"]["text/plain"] if "data" in last else last.get("text", "")
        return seconds, text_out.splitlines()[0] if text_out else repr(cell.outputs)[:200]

    timings: list[tuple[float, str]] = []
    cpu: list[float] = []
    worker = 0
    try:
        with client.setup_kernel():
            for text in code:
                run(text)
            run("%load_ext grader")
            for i in range(args.runs):
                if i:
                    run(code[1] if i % 2 == 0 else broken(code[1]))
                before = cpu_s(worker) if worker else 0.0
                timings.append(run(f"%grade {args.lesson}"))
                if worker:
                    cpu.append(cpu_s(worker) - before)
                else:
                    worker = worker_pid(client)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    load = os.getloadavg()
    first, *warm = timings
    print(f"%grade {args.lesson} in one kernel, {os.cpu_count()} CPUs, load {load[0]:.1f}")
    print(f"  first (starts the worker): {first[0]:6.2f} s  {first[1]}")
    for seconds, line in warm:
        print(f"  warm:                      {seconds:6.2f} s  {line}")
    if warm:
        median = statistics.median(s for s, _ in warm)
        verdict = "under" if median < TARGET_S else "over"
        print(f"  median warm: {median:.2f} s ({verdict} the {TARGET_S:g} s target)")
        print(
            f"  CPU per warm %grade (worker, judge, sandbox): median "
            f"{statistics.median(cpu):.2f} s: about the time on idle cores"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
