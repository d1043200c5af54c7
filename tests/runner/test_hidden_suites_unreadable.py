"""The installed hidden suites are out of the sandbox's reach, at every level, wherever the
grader is installed.

A lesson file graded end to end by the real `grade` tries, at import, to read an installed
suite by every path that leads there (the package's folder, the venv's `lib64 -> lib` link
`python3 -m venv` makes, `/proc/self/root`, the prefix's `lib` and `lib64`) and raises with
what it read: the text reaches the report through the import error's message if any read
succeeds. In CI the grader is installed in a fresh venv (`.ci/run`), the layout users have.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LEVELS = ["strict", "user", "basic"] if os.geteuid() == 0 else ["basic"]

pytestmark = pytest.mark.slow

PEEK = """
import os, sys
import grader

_suite = "test_01_arrays.py"
_package = os.path.dirname(grader.__file__)
_where = os.path.join("python%d.%d" % sys.version_info[:2], "site-packages", "grader", "suites")
_paths = [
    os.path.join(_package, "suites", _suite),
    os.path.join(os.path.realpath(_package), "suites", _suite),
    "/proc/self/root" + os.path.join(os.path.realpath(_package), "suites", _suite),
]
for _prefix in {sys.prefix, sys.base_prefix, os.path.realpath(sys.prefix)}:
    for _lib in ("lib", "lib64"):
        _paths.append(os.path.join(_prefix, _lib, _where, _suite))
_seen = []
for _path in _paths:
    try:
        with open(_path) as _fh:
            _seen.append("READ " + _path + " " + _fh.read(200).replace(chr(10), " "))
    except OSError as _exc:
        _seen.append("refused " + type(_exc).__name__)
raise RuntimeError(" | ".join(_seen))
"""


def installed_suites() -> Path:
    out = subprocess.run(
        [sys.executable, "-c", "import grader, os; print(os.path.dirname(grader.__file__))"],
        capture_output=True,
        text=True,
        cwd="/",
        check=True,
    )
    return Path(out.stdout.strip()) / "suites"


@pytest.mark.parametrize("level", LEVELS)
def test_a_sandbox_reads_no_installed_suite_by_any_path(tmp_path, level):
    assert (installed_suites() / "test_01_arrays.py").is_file()
    tmp_path.chmod(0o755)
    folder = tmp_path / "submission"
    folder.mkdir(mode=0o755)
    (folder / "01_arrays.py").write_text(PEEK)
    out = tmp_path / "out"
    out.mkdir(mode=0o755)
    proc = subprocess.run(
        [
            sys.executable, "-m", "grader", str(folder), "--only", "01_arrays", "--json",
            str(out / "results.json"), "--no-color", "--isolation", level,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=out,
    )  # fmt: skip
    assert (out / "results.json").is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    exercise = json.loads((out / "results.json").read_text())["exercises"][0]
    message = exercise["message"]
    assert "READ " not in message and "Hidden checks" not in message, message
    assert "refused" in message, message  # the peek ran and reported
    assert exercise["score"] == 0
