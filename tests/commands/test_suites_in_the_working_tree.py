"""`grade --suites PATH` grades with the suites at PATH, as they are there.

A course author edits a suite in their checkout while the grader is installed (not
editable, as in CI): the checkout's `grader/suites/` is a package of the same name as the
installed one. The judge imports a suite from its own path (`--import-mode=importlib`) and
runs in a folder of its own (the suite's path is absolute); before, a relative `--suites
grader/suites` left every check "not run: the suite never reached this check", and a suite
beside an installed `grader` was the installed copy or an import mismatch.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import grader

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def test_an_edited_suite_in_a_checkout_is_what_grades(tmp_path: Path) -> None:
    checkout = tmp_path / "course"
    (checkout / "grader").mkdir(parents=True)
    (checkout / "grader" / "__init__.py").write_text("")
    suites = checkout / "grader" / "suites"
    installed = Path(grader.__file__).parent / "suites"
    shutil.copytree(installed, suites, ignore=shutil.ignore_patterns("__pycache__"))
    suite = suites / "test_01_arrays.py"
    text = suite.read_text()
    head = "def test_set_element_values(student: Remote, seed: int) -> None:\n"
    assert head in text
    suite.write_text(
        text.replace(
            head,
            head + '    raise fail("edited in the working tree", expected="-", observed="-")\n',
        )
    )
    if "from grader.checks.failure import fail" not in text:
        suite.write_text("from grader.checks.failure import fail\n" + suite.read_text())
    (checkout / "solutions").mkdir()
    shutil.copy(ROOT / "solutions" / "01_arrays.py", checkout / "solutions" / "01_arrays.py")
    checkout.chmod(0o755)
    tmp_path.chmod(0o755)
    proc = subprocess.run(
        [
            str(Path(sys.executable).parent / "grade"),  # not `-m`: the checkout's own
            "solutions/01_arrays.py", "--suites", "grader/suites",  # `grader/` is a stub here
            "--json", "out.json", "--no-html", "--no-color", "-q",
        ],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert (checkout / "out.json").is_file(), proc.stdout + proc.stderr
    checks = {
        c["id"]: c
        for c in json.loads((checkout / "out.json").read_text())["exercises"][0]["checks"]
    }
    edited = checks["test_set_element_values"]
    assert edited["status"] == "failed" and "edited in the working tree" in edited["message"]
    others = [
        c for i, c in checks.items() if i != "test_set_element_values" and not c.get("blocked_by")
    ]
    assert others and all(c["status"] == "passed" for c in others), others
