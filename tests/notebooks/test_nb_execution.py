"""grader.notebooks.execution with real kernels: outcomes, timeouts, restarts, figures, cleanup."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.notebooks import execution
from grader.notebooks.source import Cell, python_of

pytestmark = pytest.mark.slow
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def cells(*sources: str, tags: dict[int, tuple[str, ...]] | None = None) -> list[Cell]:
    made = []
    for number, source in enumerate(sources, start=1):
        code, changes = python_of(source)
        made.append(Cell(number, "code", source, code, changes, (tags or {}).get(number, ())))
    return made


def run(tmp_path: Path, notebook: list[Cell], limits: execution.Limits) -> list[execution.Outcome]:
    return execution.run(
        notebook,
        cwd=tmp_path,
        env=execution.kernel_env(dict(os.environ)),
        limits=limits,
        log_path=tmp_path / "kernel.log",
    )


def test_one_run_through_errors_timeouts_a_stuck_kernel_and_a_crash(tmp_path: Path) -> None:
    notebook = cells(
        "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])",
        "def f(x):\n    return 1 / x",
        "x = 1\nf(0)",
        "while True:\n    pass",  # SIGINT stops it: the kernel goes on
        "print(x)",
        "y = sum(range(10**14))",  # one C call: deaf to SIGINT, the kernel is restarted
        "print(x + 1)",  # x again, as the earlier cells were run again
        "demo()",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
        "print(x + 2)\n!echo never",
        "for i in range(100_000):\n    print('flood' * 20)",  # kept output is capped; the run goes on
        "z = x + 3",
        tags={8: ("skip-execution",)},
    )
    outcomes = run(
        tmp_path, notebook, execution.Limits(cell_timeout_s=8, budget_s=200, interrupt_grace_s=3)
    )
    status = {o.cell.number: o.status for o in outcomes}
    assert status == {
        1: "ran",
        2: "ran",
        3: "raised",
        4: "timeout",
        5: "ran",
        6: "timeout",
        7: "ran",
        8: "skipped",
        9: "raised",
        10: "ran",
        11: "ran",
        12: "ran",
    }
    by = {o.cell.number: o for o in outcomes}
    assert len(by[1].images) == 1 and by[1].images[0].startswith(PNG_MAGIC)
    assert by[3].error == "ZeroDivisionError: division by zero"
    assert by[3].where == (2, 2)  # the innermost frame: f's line in cell 2
    assert "kernel died" in by[9].error
    assert by[4].seconds >= 8


def test_cells_past_the_budget_are_not_run(tmp_path: Path) -> None:
    notebook = cells(
        "import time", "time.sleep(1.5)", "time.sleep(1.5)", "time.sleep(1.5)", "z = 1"
    )
    outcomes = run(tmp_path, notebook, execution.Limits(cell_timeout_s=5, budget_s=3.5))
    assert [o.status for o in outcomes][:2] == ["ran", "ran"]
    assert outcomes[-1].status == "not_run"
    assert "time budget (3.5 s)" in outcomes[-1].reason


DRIVER = """
import os, sys
from pathlib import Path
from grader.notebooks import execution
from grader.notebooks.source import Cell
folder = Path(sys.argv[1])
code = f"import os\\nopen({str(folder / 'kernel.pid')!r}, 'w').write(str(os.getpid()))\\nwhile True:\\n    pass"
execution.run([Cell(1, "code", code, code)], cwd=folder, env=execution.kernel_env(dict(os.environ)),
              limits=execution.Limits(cell_timeout_s=300, budget_s=300), log_path=folder / "kernel.log")
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its reaper is gone too
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_the_kernel_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    """The worker SIGKILLs a child at the exercise's time limit: its kernel must not live on."""
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(tmp_path)], start_new_session=True)
    pid_file = tmp_path / "kernel.pid"
    try:
        deadline = time.monotonic() + 120
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.2)
        kernel = int(pid_file.read_text())
        assert _alive(kernel)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait()
    deadline = time.monotonic() + 10
    while _alive(kernel) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(kernel)


def test_outputs_past_the_caps_are_dropped_but_errors_kept() -> None:
    stream = {"output_type": "stream", "text": "x" * (execution.MAX_STREAM_CHARS + 1)}
    printed, error = {"msg_type": "stream"}, {"msg_type": "error"}
    assert execution._kept([], printed) and execution._kept([stream], error)
    assert not execution._kept([stream], printed)
    assert execution._kept([stream], {"msg_type": "display_data"})
    full = [{"output_type": "display_data"}] * execution.MAX_OUTPUTS
    assert not execution._kept(full, {"msg_type": "display_data"}) and execution._kept(full, error)
