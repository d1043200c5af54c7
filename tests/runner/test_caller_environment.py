"""The caller's environment does not reach the grading: a correct file gets full marks with
variables a CI or a student's shell commonly sets, and a hardened umask, at every isolation
level.

`PYTEST_ADDOPTS` reached the judge's pytest (`-k` deselected every check, `-x` stopped the
suite at the first failure) and `JAX_DISABLE_JIT=1` the sandbox (a correct 03_jit lost 7 of 21
points); `grader.runner.handle.FOREIGN` keeps them out of every worker. Under `umask 077` a
`strict` sandbox could not reach its own folders (the new root's folders were made closed to
its user): the grader error "could not start the process that imports 03_jit.py".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LEVELS = ["strict", "user", "basic"] if os.geteuid() == 0 else ["basic"]
FOREIGN = {
    "PYTEST_ADDOPTS": "-x -k nothing_at_all",
    "JAX_DISABLE_JIT": "1",
    "JAX_ENABLE_X64": "1",
    "HYPOTHESIS_STORAGE_DIRECTORY": "elsewhere",
}


@pytest.mark.parametrize("level", LEVELS)
def test_a_correct_file_gets_full_marks_whatever_the_caller_set(tmp_path: Path, level: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "solutions" / "03_jit.py", work / "03_jit.py")
    if level != "basic":  # the sandbox's user reads the lesson file from its folder
        os.chmod(tmp_path, 0o755)
        os.chmod(work, 0o755)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(FOREIGN, JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "03_jit.py", "--isolation", level, "--json", "r.json",
         "--no-html", "-q", "--no-color"],
        cwd=work, env=env, capture_output=True, text=True, timeout=600,
        preexec_fn=lambda: os.umask(0o077),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads((work / "r.json").read_text())
    (lesson,) = result["exercises"]
    assert lesson["score"] == lesson["max_score"] > 0, [
        (c["id"], c["status"], c["message"][:200])
        for c in lesson["checks"]
        if c["status"] != "passed"
    ]
