"""`grade`, `grade batch` and `grade verify` in a real pseudo-terminal, in a pipe, and
with NO_COLOR.

The commands run as subprocesses whose stdin, stdout and stderr are the slave
side of a pty (100 columns), exactly as in a student's terminal; the test reads
everything they draw from the master side. A pipe is a pipe. The assertions
are on the bytes: colour escape sequences, the live progress bar, the plain
`[i/N]` lines.

Kept small: the demo suite (one lesson file, seconds) where the lesson does not
matter, and one real lesson file (01_arrays) for `grade` itself.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "tests" / "runner" / "submissions"
DEMO_SUITES = DEMO / "demo_suites"
BATCH = ROOT / "tests" / "commands" / "fixtures"
GRADE = [sys.executable, "-m", "grader"]
COLUMNS, ROWS = 100, 30

# SGR sequences that set a colour: 30-37/90-97 (foreground), 40-47/100-107
# (background), 38;.../48;... (256 colours and RGB). Bold or dim alone is no colour.
SGR = re.compile(rb"\x1b\[([0-9;]*)m")
BAR = "━".encode()  # rich's bar
HIDE_CURSOR = b"\x1b[?25l"  # a live display starts


def colours(output: bytes) -> list[bytes]:
    found = []
    for params in SGR.findall(output):
        codes = [int(p) for p in params.split(b";") if p]
        if any(30 <= c <= 38 or 40 <= c <= 48 or 90 <= c <= 97 or 100 <= c <= 107 for c in codes):
            found.append(params)
    return found


def plain(output: bytes) -> str:
    """The text without escape sequences (colours, cursor moves)."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output.decode("utf-8", "replace"))


def environment(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TTY_COMPATIBLE")
    }
    env.update(TERM="xterm-256color", PYTHONPATH=str(ROOT), **extra)
    return env


def in_pty(
    argv: list[str], cwd: Path, env: Mapping[str, str], timeout: float = 300
) -> tuple[int, bytes]:
    """Run `argv` with a pty for stdin/stdout/stderr; (exit code, every byte it wrote)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, start_new_session=True
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([master], [], [], max(0.0, left))
            if not ready:
                os.killpg(proc.pid, signal.SIGKILL)
                pytest.fail(f"{argv} still running after {timeout} s:\n{b''.join(chunks)!r}")
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every process holding the terminal has closed it
                break
            if not data:
                break
            chunks.append(data)
        return proc.wait(timeout=30), b"".join(chunks)
    finally:
        os.close(master)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def demo_grade(*extra: str) -> list[str]:
    return [*GRADE, str(DEMO / "demo_good"), "--suites", str(DEMO_SUITES), "--no-html", *extra]


@pytest.mark.slow
def test_grade_in_a_terminal_shows_colour_a_progress_bar_and_finishes(tmp_path: Path) -> None:
    code, out = in_pty(
        [*GRADE, "--only", "01_arrays", str(ROOT / "solutions"), "--no-html"],
        tmp_path,
        environment(),
    )
    text = plain(out)
    assert code == 0, text
    assert "Grading 1 lesson file in" in text and "with 1 job" in text
    assert HIDE_CURSOR in out and BAR in out and "0/1 lesson file" in text  # the live bar
    assert b"\x1b[32mPASS" in out  # the finished line and the summary, in colour
    assert re.search(r"01_arrays \(\d+\.\d s\)", text)
    assert "Total 18/18 (100%)" in text
    assert b"\x1b[?25h" in out  # the cursor is shown again at the end


@pytest.mark.slow
def test_the_live_line_names_the_running_file_and_its_time_left(tmp_path: Path) -> None:
    # running_sum never returns: the file runs for a while, its time limit counting down.
    code, out = in_pty(
        [*GRADE, "--only", "03_jit", str(DEMO / "infinite_loop"), "--no-html", "--timeout", "24"],
        tmp_path,
        environment(),
    )
    text = plain(out)
    assert code == 0, text
    left = [int(m) for m in re.findall(r"03_jit 0:(\d\d) left", text)]
    assert left and min(left) < max(left) <= 24, text[-2000:]  # counted down, within the limit
    assert "was still running when" in text


@pytest.mark.slow
@pytest.mark.parametrize("how", ["NO_COLOR=1", "--no-color"])
def test_no_color_in_a_terminal_has_no_colour_sequences(how: str, tmp_path: Path) -> None:
    env = environment(NO_COLOR="1") if how == "NO_COLOR=1" else environment()
    argv = demo_grade() if how == "NO_COLOR=1" else demo_grade("--no-color")
    code, out = in_pty(argv, tmp_path, env, timeout=120)
    assert code == 0, plain(out)
    assert colours(out) == []
    assert BAR in out  # still a terminal: the bar is drawn, without colour
    assert b"PASS" in out and b"Total 4/4" in out


@pytest.mark.slow
def test_grade_into_a_pipe_prints_plain_lines(tmp_path: Path) -> None:
    proc = subprocess.run(
        demo_grade(),
        capture_output=True,
        cwd=tmp_path,
        env=environment(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert b"\x1b" not in proc.stdout + proc.stderr  # no colour, no cursor movement
    lines = proc.stdout.decode().splitlines()
    assert lines[0].startswith("Grading 1 lesson file in ") and " with 1 job " in lines[0]
    assert re.fullmatch(r"\[1/1\] PASS +4/4  demo \(\d+\.\d s\)", lines[1]), lines[:3]


@pytest.mark.slow
def test_grade_batch_in_a_terminal_shows_its_progress_and_finishes(tmp_path: Path) -> None:
    submissions = tmp_path / "class"
    for student in ("alice", "bob", "erin"):  # erin's 01_sums loops until its limit
        shutil.copytree(BATCH / "submissions" / student, submissions / student)
    code, out = in_pty(
        [
            *GRADE,
            "batch",
            str(submissions),
            "--out",
            str(tmp_path / "out"),
            "--suites",
            str(BATCH / "suites"),
            "--timeout",
            "8",
        ],
        tmp_path,
        environment(),
        timeout=120,
    )
    text = plain(out)
    assert code == 0, text
    assert HIDE_CURSOR in out and BAR in out and "0/3 students" in text
    assert "alice: 100.0%" in text and re.search(r"bob: \d+\.\d%", text)
    # The live line names the student's lesson file being graded and the time its limit
    # leaves, counting down.
    left = [int(m) for m in re.findall(r"erin: 01_sums 0:(\d\d) left", text)]
    assert left and min(left) < max(left) <= 8, text[-2000:]
    assert "graded 3 student(s)" in text
    assert (tmp_path / "out" / "gradebook.csv").is_file()


def _slow_course(tmp_path: Path) -> Path:
    """The command-test course, its 01_sums solution taking 3 s to import."""
    course = tmp_path / "course"
    shutil.copytree(BATCH, course, ignore=shutil.ignore_patterns("__pycache__", "submissions"))
    solution = course / "solutions" / "01_sums.py"
    solution.write_text("import time\n\ntime.sleep(3)\n" + solution.read_text())
    return course


def _verify(course: Path) -> list[str]:
    return [*GRADE, "verify", "--suites", str(course / "suites"), "--runs", "1", "--timeout", "60"]


@pytest.mark.slow
def test_grade_verify_in_a_terminal_names_each_phase_and_its_time_left(tmp_path: Path) -> None:
    course = _slow_course(tmp_path)
    code, out = in_pty(_verify(course), course, environment(), timeout=180)
    text = plain(out)
    assert code in (0, 1), text  # the verdict does not matter here
    assert HIDE_CURSOR in out and BAR in out and "0/4 gradings" in text
    left = [int(m) for m in re.findall(r"run 1: 01_sums 0:(\d\d) left", text)]
    assert left and max(left) <= 60, text[-2000:]  # the phase, the file, its time left
    assert re.search(r"run 1: PASS +9/9 +01_sums", text) and re.search(r"stubs: TODO", text)
    assert "solutions/ run 1: 12/12 (100%)" in text and "exercises/ (stubs): 0/12" in text
    assert b"\x1b[?25h" in out


@pytest.mark.slow
def test_grade_verify_into_a_pipe_prints_plain_lines(tmp_path: Path) -> None:
    course = _slow_course(tmp_path)
    proc = subprocess.run(
        _verify(course), capture_output=True, cwd=course, env=environment(), timeout=180
    )
    out = proc.stdout + proc.stderr
    assert b"\x1b" not in out and b"\r" not in out  # a CI log: no redrawing
    lines = proc.stdout.decode().splitlines()
    assert lines[0].startswith("Verifying 2 lesson file(s): 1 run(s) of solutions/")
    graded = [line for line in lines if re.match(r"\[\d/4\] (run 1|stubs): ", line)]
    assert len(graded) == 4, lines
    assert any(re.fullmatch(r"\[\d/4\] run 1: PASS +9/9  01_sums \(\d+\.\d s\)", g) for g in graded)
    assert "solutions/ run 1: 12/12 (100%)" in proc.stdout.decode()
