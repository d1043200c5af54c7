"""A lesson file the grader could not import (its sandbox ended before any of the student's
code ran: `rec.Import.grader_error`) reads as the grader's error in every report: the
terminal, our results JSON, Gradescope's and JUnit's; no check counts points. The same
file failing to import through the student's code stays the student's, with its points."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from grader.catalog import read_suite
from grader.model import Report
from grader.plugin import wording
from grader.protocol.worker_messages import Ended
from grader.reports import gradescope, json_report, junit, terminal
from grader.runner.results import NOT_GRADED, Ending, assemble
from grader.sandbox.client import SandboxGone

SUITE = """
LESSON = "demo"
TITLE = "Demo"
from grader.authoring import check

@check("first", points=2, hint="h1")
def test_a(student): pass

@check("second", points=3, hint="h2", hidden=True)
def test_b(student): pass
"""

GONE = SandboxGone("the sandbox process ended while importing the lesson file")


def report_of(tmp_path: Path, *, grader_error: bool) -> Report:
    path = tmp_path / "test_demo.py"
    path.write_text(SUITE)
    spec = read_suite(path)
    said = wording.not_started if grader_error else wording.import_message
    imported = {
        "type": "import",
        "lesson": "demo",
        "ok": False,
        "message": said("demo", GONE),
        "grader_error": grader_error,
    }
    lines = (json.dumps({"type": "collected", "ids": ["test_a", "test_b"]}), json.dumps(imported))
    exercise = assemble(spec, Ending(Ended(exit_code=0, records=lines)))
    return Report(exercises=(exercise,), seed=0, submission="demo.py", grader_version="t")


@pytest.fixture
def graders(tmp_path: Path) -> Report:
    return report_of(tmp_path, grader_error=True)


@pytest.fixture
def students(tmp_path: Path) -> Report:
    return report_of(tmp_path, grader_error=False)


def test_no_check_counts_points_and_each_says_why(graders: Report, students: Report) -> None:
    (exercise,) = graders.exercises
    assert exercise.status == "error"
    assert exercise.message.startswith("grader error: the grader could not start the process")
    assert [(c.status, c.score, c.max_score) for c in exercise.checks] == [("error", 0, 0)] * 2
    assert all(c.message == NOT_GRADED for c in exercise.checks)
    assert (students.score, students.max_score) == (0, 5)  # the student's: its points count


def test_the_terminal_says_it_is_the_graders(graders: Report, students: Report) -> None:
    text = terminal.render(graders, color=False)
    assert "ERROR" in text and "grader error: the grader could not start" in text
    assert "Total 0/0" in text
    assert "grader error" not in terminal.render(students, color=False)


def test_the_results_json_says_it_is_the_graders(graders: Report) -> None:
    doc = json.loads(json_report.render(graders))
    (exercise,) = doc["exercises"]
    assert (exercise["status"], exercise["max_score"]) == ("error", 0)
    assert exercise["message"].startswith("grader error:")
    assert {c["status"] for c in exercise["checks"]} == {"error"}


def test_gradescope_says_it_is_the_graders(graders: Report) -> None:
    doc: dict[str, Any] = gradescope.document(graders)
    assert "demo (Demo): error" in doc["output"]
    assert "grader error: the grader could not start" in doc["output"]
    assert doc["score"] == 0
    assert all(t.get("max_score", 0) == 0 for t in doc["tests"])


def test_junit_reports_an_error_not_a_failure(graders: Report, students: Report) -> None:
    root = ET.fromstring(junit.render(graders).encode("utf-8"))
    assert root.findall(".//failure") == []
    errors = root.findall(".//error")
    assert errors and all(e.get("message") for e in errors)
    assert "grader error" in ET.tostring(root, encoding="unicode")
