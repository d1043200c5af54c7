"""The everyday path, end to end on the real lesson files.

A student part-way through: 01_arrays done, 02_grad untouched, 03_jit with `piecewise`
written and `running_sum` and `newton_sqrt` still the stub's NotImplementedError. What is
not started is `not_attempted` ("not started"), not failed, in every output; and every
command a report prints runs, as printed, from where the student stands (the course root
or inside exercises/)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from grader.reports import json_report

ROOT = Path(__file__).resolve().parents[2]
LESSONS = "01_arrays,02_grad,03_jit"
UNSTARTED = {
    "test_running_sum_values",
    "test_running_sum_jit",
    "test_running_sum_scan",
    "test_running_sum_no_growth",
    "test_newton_values",
    "test_newton_jit",
    "test_newton_loop_primitive",
    "test_newton_no_growth",
    "test_newton_steps",
}

pytestmark = pytest.mark.slow


def _student(root: Path) -> Path:
    """The student's repository: exercises/ as released, 01_arrays solved, 03_jit begun."""
    exercises = root / "exercises"
    exercises.mkdir(parents=True)
    for name in ("01_arrays", "02_grad", "03_jit", "04_vmap"):
        (exercises / f"{name}.py").write_text((ROOT / "exercises" / f"{name}.py").read_text())
    (exercises / "01_arrays.py").write_text((ROOT / "solutions" / "01_arrays.py").read_text())
    stub, solution = (
        (exercises / "03_jit.py").read_text(),
        (ROOT / "solutions/03_jit.py").read_text(),
    )
    start, s_start = stub.index("def piecewise(x):"), solution.index("def piecewise(x):")
    end, s_end = stub.index("\ndef ", start + 5), solution.index("\ndef ", s_start + 5)
    (exercises / "03_jit.py").write_text(stub[:start] + solution[s_start:s_end] + stub[end:])
    root.chmod(0o755)
    return exercises


def _grade(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grader", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _commands(text: str) -> list[str]:
    """Every `grade ...` command a text prints between backticks."""
    return re.findall(r"`(grade [^`]+)`", text)


def _runs_as_printed(cwd: Path, command: str, lesson: str) -> None:
    """`command`, run from `cwd` as printed, grades `lesson` (or reveals its help)."""
    argv = shlex.split(command)[1:]
    proc = _grade(cwd, *argv, *(["--no-color", "--no-html"] if argv[0] != "hint" else []))
    out = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), (cwd, command, out)
    assert "no such" not in out.lower() and "usage:" not in out, (cwd, command, out)
    assert lesson in out, (cwd, command, out)


def test_not_started_is_told_apart_from_failed_in_every_output(tmp_path: Path) -> None:
    _student(tmp_path)
    proc = _grade(
        tmp_path,
        "--only",
        LESSONS,
        "--no-color",
        "--json",
        "r.json",
        "--junit",
        "r.xml",
        "--html",
        "r.html",
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out

    doc = json.loads((tmp_path / "r.json").read_text())
    jsonschema.Draft202012Validator(json_report.schema()).validate(doc)
    by_name = {e["name"]: e for e in doc["exercises"]}
    assert by_name["02_grad"]["status"] == "not_attempted"
    assert {c["status"] for c in by_name["02_grad"]["checks"]} == {"not_attempted"}
    jit = {c["id"]: c for c in by_name["03_jit"]["checks"]}
    assert {i for i, c in jit.items() if c["status"] == "not_attempted"} == UNSTARTED
    assert all(jit[i]["score"] == 0 for i in UNSTARTED)
    assert jit["test_piecewise_cond"]["status"] == "passed"
    todo = by_name["03_jit"]["next"]["todo"]
    assert todo["path"] == "exercises/03_jit.py" and "NotImplementedError" in todo["code"]
    assert "running_sum" in todo["code"]  # the first function not started, not piecewise's TODO

    # terminal: not started is a note, not a failure to fix
    assert "Not started yet, not failed (functions still raising NotImplementedError): " in out
    assert "03_jit (9 checks)" in out
    fix_first = out.split("What to fix first:")[1].split("Not attempted yet")[0]
    assert "03_jit > running_sum returns" not in fix_first, fix_first
    assert "03_jit > newton_sqrt converges" not in fix_first, fix_first

    # JUnit: a failure of its own type, so CI stays red on unfinished work
    cases = ET.parse(tmp_path / "r.xml").getroot().iter("testcase")
    kinds = {c.get("name"): [(o.tag, o.get("type"), o.get("message")) for o in c] for c in cases}
    (tag, kind, message) = kinds["running_sum returns (total, partial_sums)"][0]
    assert (tag, kind) == ("failure", "not_attempted") and message.startswith("not started: ")

    # Gradescope (graded for the course, apart: it keeps no state): 0 points, told apart
    course = _grade(tmp_path, "exercises/03_jit.py", "--gradescope", "gs.json", "--no-html")
    assert course.returncode == 0, course.stdout + course.stderr
    tests = json.loads((tmp_path / "gs.json").read_text())["tests"]
    newton = next(t for t in tests if t["extra_data"].get("id") == "test_newton_values")
    assert newton["score"] == 0 and newton["extra_data"]["status"] == "not_attempted"

    html = (tmp_path / "r.html").read_text()
    assert '<span class="badge s-not_attempted">not started</span>' in html

    # every command printed runs from the course root as printed
    printed = _commands(out)
    assert "grade exercises/02_grad.py" in printed or "grade exercises/03_jit.py" in printed
    for command in printed:
        lesson = next(n for n in LESSONS.split(",") if n in command)
        _runs_as_printed(tmp_path, command, lesson)


def test_commands_run_as_printed_from_inside_exercises(tmp_path: Path) -> None:
    exercises = _student(tmp_path)
    hint = _grade(exercises, "hint", "04_vmap")  # nothing graded yet: it says what to run
    assert "grade 04_vmap.py" in hint.stdout + hint.stderr, hint.stdout + hint.stderr
    (command,) = _commands(hint.stdout + hint.stderr)
    _runs_as_printed(exercises, command, "04_vmap")

    proc = _grade(exercises, "--only", "01_arrays,03_jit", "--no-color", "--no-html")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    printed = _commands(out)
    assert "grade 03_jit.py" in printed, out
    for command in printed:
        _runs_as_printed(exercises, command, "03_jit")
    full = _grade(exercises, "01_arrays.py", "--no-color", "--no-html")
    (command,) = _commands(full.stdout)
    assert command == "grade 02_grad.py", full.stdout
    _runs_as_printed(exercises, command, "02_grad")


def test_the_hint_command_works_when_the_grading_was_of_a_folder_elsewhere(
    tmp_path: Path,
) -> None:
    """Graded as `grade alice/exercises/03_jit.py` from the folder above the repository:
    the `grade hint` it prints reads that grading (it said `grade hint 03_jit`, which
    looks in the working folder and found nothing)."""
    _student(tmp_path / "alice")
    proc = _grade(tmp_path, "alice/exercises/03_jit.py", "--no-color", "--no-html")
    out = proc.stdout + proc.stderr
    hint = next(c for c in _commands(out) if c.startswith("grade hint"))
    assert hint == "grade hint alice/exercises/03_jit.py", out
    shown = _grade(tmp_path, *shlex.split(hint)[1:])
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "nudge (2/3)" in shown.stdout, shown.stdout
