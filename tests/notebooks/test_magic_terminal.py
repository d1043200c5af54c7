"""`%grade` in a terminal IPython, in a real pseudo-terminal: the verdict as plain text.

IPython runs with its stdin, stdout and stderr on the slave side of a pty (as in a
student's terminal); the test types 03_jit's functions as one-line cells, then
`%load_ext grader` and `%grade 03_jit`, and reads what IPython draws. It leaves with
`exit`, which ends the grading worker the kernel started.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CELLS = (
    "import jax.numpy as jnp; from jax import lax",
    "def piecewise(x): return lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)",
    "def running_sum(xs): xs = jnp.asarray(xs); "
    "return lax.scan(lambda t, x: (t + x, t + x), jnp.zeros((), xs.dtype), xs)",
    "def newton_sqrt(a, n_iters=20): a = jnp.asarray(a, jnp.float32); "
    "return lax.fori_loop(0, n_iters, lambda i, x: 0.5 * (x + a / x), (a + 1.0) / 2.0)",
    "%load_ext grader",
    "%grade 03_jit",
)
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][AB012]|\r")


class Terminal:
    def __init__(self, cwd: Path) -> None:
        self.master, slave = pty.openpty()
        env = {**os.environ, "TERM": "xterm", "COLUMNS": "120", "IPYTHONDIR": str(cwd / "ipy")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "IPython", "--no-banner", "--colors=NoColor", "--simple-prompt"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.seen = b""

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def wait_for(self, pattern: str, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        while not re.search(pattern, self.text()):
            left = deadline - time.monotonic()
            assert left > 0, f"no {pattern!r} in:\n{self.text()}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    self.seen += os.read(self.master, 1 << 16)
                except OSError:  # the other side closed
                    break
        return self.text()

    def text(self) -> str:
        return ESCAPES.sub("", self.seen.decode("utf-8", "replace"))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        os.close(self.master)


def test_grade_in_a_terminal_ipython_prints_the_verdict_as_text(tmp_path: Path) -> None:
    term = Terminal(tmp_path)
    try:
        term.wait_for(r"In \[1\]", 60)
        for number, cell in enumerate(CELLS, start=1):
            term.type(cell)
            term.wait_for(rf"In \[{number + 1}\]", 600)
        text = term.wait_for(r"isolation \w+", 60)
        verdict = text[text.index("%grade 03_jit") :]
        assert re.search(r"PASS +21/21  03_jit", verdict), verdict
        assert "Next: 03_jit is at full marks. Go on with 04_vmap" in verdict
        assert "<div" not in verdict and "text/html" not in verdict  # plain text only
        term.type("exit")
        term.proc.wait(timeout=60)  # the worker is closed as IPython leaves
    finally:
        term.close()
