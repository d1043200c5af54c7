"""A bug in a suite is a grader error, end to end: `grade --suites` with a
copy of the real suites in tmp_path, bugs injected, against the correct solution.

The broken check is reported as a grader error naming the suite's file and line in every
output (terminal, JSON, Gradescope, JUnit), counts no points either way and shows no help;
the student's score for the other checks is untouched and the checks gated on the broken
one are judged. A suite that does not import is a grader error for the whole file. The
student's own exception is still the student's.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import grader

ROOT = Path(__file__).resolve().parents[2]
SUITE = "test_01_arrays.py"
SUITES = Path(grader.__file__).parent / "suites"
pytestmark = pytest.mark.slow


def copy_suites(tmp_path: Path, name: str = "suites") -> Path:
    suites = tmp_path / name
    installed = Path(grader.__file__).parent / "suites"
    shutil.copytree(installed, suites, ignore=shutil.ignore_patterns("__pycache__"))
    return suites


def inject(suite: Path, after: str, text: str) -> int:
    """Insert `text` (one line) after the line `after`; the inserted line's number."""
    lines = suite.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.rstrip("\n") == after)
    lines.insert(at + 1, text + "\n")
    suite.write_text("".join(lines))
    return at + 2


def replace_line(suite: Path, old: str, new: str) -> int:
    """Replace the one line holding `old` by itself with `new` in it; its line number."""
    lines = suite.read_text().splitlines(keepends=True)
    (at,) = [i for i, line in enumerate(lines) if old in line]
    lines[at] = lines[at].replace(old, new)
    suite.write_text("".join(lines))
    return at + 1


def grade(tmp_path: Path, lesson: Path, suites: Path) -> tuple[str, dict[str, Any], Any, Any]:
    """Grade `lesson` with `suites` (an absolute path): the terminal's text, the JSON
    results, Gradescope's results and the JUnit XML."""
    proc = subprocess.run(
        [
            sys.executable, "-m", "grader", str(lesson), "--suites", str(suites),
            "--json", "out.json", "--gradescope", "gs.json", "--junit", "junit.xml",
            "--no-html", "--no-color", "-q", "--isolation", "basic",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert (tmp_path / "out.json").is_file(), proc.stdout + proc.stderr
    return (
        proc.stdout,
        json.loads((tmp_path / "out.json").read_text()),
        json.loads((tmp_path / "gs.json").read_text()),
        ET.parse(tmp_path / "junit.xml"),
    )


def checks_of(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    (exercise,) = doc["exercises"]
    return {c["id"]: c for c in exercise["checks"]}


def junit_case(tree: Any, name_part: str) -> Any:
    (case,) = [c for c in tree.iter("testcase") if name_part in c.get("name", "")]
    return case


def test_a_bug_in_a_check_is_a_grader_error_at_its_line_in_every_output(tmp_path: Path) -> None:
    suites = copy_suites(tmp_path)
    suite = suites / SUITE
    zero = inject(
        suite,
        "def test_set_element_values(student: Remote, seed: int) -> None:",
        "    1 / 0  # an injected suite bug, before the student is called",
    )
    strategy = replace_line(
        suite,
        "x = draw(hnp.arrays(np.float32, n, elements=_QUARTERS))",
        "x = draw(hnp.arrays(np.float32, n, elements=st.floats(min_value=0.1, max_value=1.0, "
        "width=32)))",
    )
    terminal, doc, gradescope, junit = grade(tmp_path, ROOT / "solutions" / "01_arrays.py", suites)
    checks = checks_of(doc)
    broken = {"test_set_element_values": zero, "test_add_at_values": strategy}
    for check_id, line in broken.items():
        check = checks[check_id]
        assert check["status"] == "error", check
        assert (check["score"], check["max_score"]) == (0.0, 0.0)
        assert check["message"].startswith("grader error: the check's own code raised")
        assert f"({SUITE}, line {line})" in check["message"]
        assert check["hint"] == check["nudge"] == check["fix"] == ""
    assert "ZeroDivisionError" in checks["test_set_element_values"]["message"]
    assert "InvalidArgument" in checks["test_add_at_values"]["message"]
    others = {i: c for i, c in checks.items() if i not in broken}
    assert others and all(c["status"] == "passed" for c in others.values()), others
    assert all(c["score"] == c["max_score"] > 0 for c in others.values())
    # the checks standing on the broken ones were judged, not closed behind them
    assert others["test_set_element_pure"]["blocked_by"] is None
    assert others["test_add_at_jit"]["blocked_by"] is None
    full = sum(c["max_score"] for c in others.values())
    assert doc["score"] == doc["max_score"] == full

    for line in broken.values():
        assert f"{SUITE}, line {line}" in terminal, terminal
    assert "grader error" in terminal and "hint:" not in terminal

    tests = {t["extra_data"].get("id"): t for t in gradescope["tests"]}
    assert gradescope["score"] == full
    for check_id, line in broken.items():
        entry = tests[check_id]
        assert (entry["score"], entry["max_score"]) == (0.0, 0.0)
        assert "grader error" in entry["output"] and f"{SUITE}, line {line}" in entry["output"]
        assert "hint:" not in entry["output"]

    for name, line in (("set_element returns", zero), ("add_at adds", strategy)):
        case = junit_case(junit, name)
        error = case.find("error")
        assert error is not None and case.find("failure") is None
        assert f"{SUITE}, line {line}" in (error.text or "")


def test_a_suite_that_does_not_import_is_a_grader_error_for_the_file(tmp_path: Path) -> None:
    suites = copy_suites(tmp_path)
    line = inject(suites / SUITE, 'LESSON = "01_arrays"', "RATIO = 1 / 0  # an injected bug")
    terminal, doc, gradescope, junit = grade(tmp_path, ROOT / "solutions" / "01_arrays.py", suites)
    (exercise,) = doc["exercises"]
    assert exercise["status"] == "error"
    assert f"{SUITE}, line {line}: ZeroDivisionError" in exercise["message"]
    assert all(c["max_score"] == 0.0 and c["status"] == "error" for c in exercise["checks"])
    assert doc["max_score"] == 0.0 and gradescope["score"] == 0.0
    assert f"{SUITE}, line {line}" in terminal and "grader error" in terminal
    assert "not run: the suite never reached this check" not in json.dumps(doc)
    cases = list(junit.iter("testcase"))
    assert cases and all(c.find("error") is not None for c in cases)


def test_the_students_own_exception_is_still_the_students(tmp_path: Path) -> None:
    suites = copy_suites(tmp_path)
    lesson = tmp_path / "lesson" / "01_arrays.py"
    lesson.parent.mkdir()
    source = (ROOT / "solutions" / "01_arrays.py").read_text()
    line = "    x = jnp.asarray(x)\n    mean = jnp.mean(x, axis=axis, keepdims=True)\n"
    assert source.count(line) == 1
    lesson.write_text(source.replace(line, "    x = 1 / 0  # the student's own bug\n" + line))
    _, doc, gradescope, junit = grade(tmp_path, lesson, suites)
    checks = checks_of(doc)
    values = checks["test_standardize_values"]
    assert values["status"] == "failed" and values["max_score"] > 0 and values["score"] == 0.0
    assert "ZeroDivisionError" in values["message"]
    assert "grader error" not in json.dumps(doc)
    assert checks["test_set_element_values"]["status"] == "passed"
    tests = {t["extra_data"].get("id"): t for t in gradescope["tests"]}
    assert tests["test_standardize_values"]["max_score"] == values["max_score"]
    case = junit_case(junit, "standardize gives zero mean")
    assert case.find("failure") is not None and case.find("error") is None


@pytest.mark.parametrize("returned", ["lambda *a: 0", "type('Opaque', (), {})()"])
def test_what_the_students_functions_return_never_makes_a_check_count_no_points(
    tmp_path: Path, returned: str
) -> None:
    """A function that returns something that stays in the sandbox as a handle (a function,
    an object) where an array is due: whatever the suite then raises on it is the
    student's failure, never a grader error that would drop the check from the total."""
    lesson = tmp_path / "lesson" / "01_arrays.py"
    lesson.parent.mkdir()
    source = (ROOT / "solutions" / "01_arrays.py").read_text()
    body = re.compile(r"( +)### BEGIN SOLUTION\n.*?### END SOLUTION", re.S)
    assert len(body.findall(source)) == 3
    lesson.write_text(body.sub(lambda m: f"{m[1]}return {returned}", source))
    _, doc, gradescope, _ = grade(tmp_path, lesson, SUITES)
    (tmp_path / "full").mkdir()
    _, full, _, _ = grade(tmp_path / "full", ROOT / "solutions" / "01_arrays.py", SUITES)
    assert "grader error" not in json.dumps(doc)
    assert doc["max_score"] == full["max_score"] > 0
    assert doc["score"] < full["score"]
    assert gradescope["score"] == doc["score"]
