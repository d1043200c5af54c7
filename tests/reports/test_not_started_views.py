"""A check not started (`not_attempted`: its function still raises the stub's
NotImplementedError) is told apart from a failed one in every view of a partly done file:
the terminal, JUnit, HTML, the JSON contract, `grade watch`'s screen and `%grade`."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from grader import ladder, next_step
from grader.model import CheckResult, ExerciseResult, NextStep, Report, SourceLine
from grader.notebooks import inline, kernel, magic
from grader.reports import html, json_report, junit, terminal
from grader.runner.submission import Submission
from grader.watch import display

RAISE = SourceLine(
    "03_jit.py", 56, 'raise NotImplementedError("running_sum is not implemented yet")'
)


def _check(id: str, status: str, **fields: object) -> CheckResult:
    values: dict[str, object] = {
        "name": id.replace("_", " "),
        "id": id,
        "status": status,
        "score": 2.0 if status == "passed" else 0.0,
        "max_score": 2.0,
        "visibility": "public",
        "message": "" if status == "passed" else f"{id}: it went wrong",
        "hint": f"What does {id} need?",
    }
    values.update(fields)
    return CheckResult(**values)  # type: ignore[arg-type]


def _begun(*, failing: bool) -> ExerciseResult:
    """03_jit with piecewise written, running_sum not started (and, when `failing`, a
    newton_sqrt that is wrong)."""
    checks = [
        _check("piecewise_values", "passed"),
        _check(
            "running_sum_values",
            "not_attempted",
            message="`running_sum` is not implemented yet: it still raises NotImplementedError.",
            location=RAISE,
        ),
        _check("running_sum_scan", "not_attempted", blocked_by="running_sum_values"),
    ]
    if failing:
        checks.append(_check("newton_values", "failed", message="newton_sqrt(4.0) is 3.0"))
    return ExerciseResult(
        "03_jit",
        "jit",
        "failed",
        tuple(checks),
        duration_s=1.0,
        next=NextStep("grade exercises/03_jit.py", todo=RAISE),
    )


def _report(exercise: ExerciseResult) -> Report:
    return Report((exercise,), seed=0, submission="exercises", grader_version="0", duration_s=1.0)


@pytest.mark.parametrize("failing", [False, True], ids=["only-unstarted", "and-a-failure"])
def test_the_terminal_says_not_started_not_failed(failing: bool) -> None:
    exercise = _begun(failing=failing)
    text = terminal.render(_report(exercise), color=False)
    assert "Not started yet, not failed (functions still raising NotImplementedError): " in text
    assert "03_jit (2 checks)" in text
    assert "03_jit > running sum values" not in text  # no failure block for it
    assert "Next: go on with 03_jit at 03_jit.py line 56:" in text
    word = "FAIL" if failing else "TODO"
    assert terminal.done_line(exercise).split()[0] == word
    assert text.splitlines()[0].split()[0] == word  # the summary's line for the file
    if failing:
        assert "03_jit > newton values" in text


def test_junit_reports_a_failure_of_its_own_type() -> None:
    root = ET.fromstring(junit.render(_report(_begun(failing=True))))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("failures") == "3"  # 2 not started, 1 failed
    kinds = {c.get("name"): [(o.tag, o.get("type")) for o in c] for c in suite.iter("testcase")}
    assert kinds["running sum values"] == [("failure", "not_attempted")]
    assert kinds["newton values"] == [("failure", "failed")]
    assert kinds["piecewise values"] == []


def test_html_and_json_show_the_status() -> None:
    report = _report(_begun(failing=True))
    page = html.render(report)
    assert '<span class="badge s-not_attempted">not started</span>' in page
    assert "2 not started" in " ".join(page.split())
    # the summary of what to fix lists it apart, after the failure, with its line
    rows = [(f.status, f.what) for f in html.fixes(report.exercises[0])]
    assert rows == [
        ("failed", "newton values"),
        (
            "not_attempted",
            "not started yet: functions that still raise NotImplementedError, line 56",
        ),
    ]
    doc = json.loads(json_report.render(report))
    jsonschema.Draft202012Validator(json_report.schema()).validate(doc)
    statuses = [c["status"] for c in doc["exercises"][0]["checks"]]
    assert statuses == ["passed", "not_attempted", "not_attempted", "failed"]
    back = Report.from_json(doc).exercises[0].checks[1]
    assert back.status == "not_attempted"  # read back as such, not as an error


def _part(page: str, start: str, end: str) -> str:
    begin = page.index(start)
    return page[begin : page.index(end, begin)]


@pytest.mark.parametrize("failing", [False, True], ids=["only-unstarted", "and-a-failure"])
def test_the_html_badge_of_a_begun_file_says_what_the_terminal_says(failing: bool) -> None:
    exercise = _begun(failing=failing)
    word = terminal.done_line(exercise).split()[0]
    badge = {
        "TODO": '<span class="badge s-not_attempted">to do</span>',
        "FAIL": '<span class="badge s-failed">failed</span>',
    }[word]
    assert word == ("FAIL" if failing else "TODO")
    page = html.render(_report(exercise))
    assert badge in _part(page, 'aria-label="Exercises"', "</table>")  # the table of files
    assert badge in _part(page, 'id="ex-03_jit"', "</summary>")  # the file's own section
    assert ('"badge s-failed"' in page) is failing and (">failed</span>" in page) is failing
    inline_page = inline.Inline(exercise=exercise)._repr_html_()
    assert badge in inline_page
    assert (">failed</span>" in inline_page) is failing


def test_an_untouched_file_s_badge_still_says_not_attempted() -> None:
    untouched = ExerciseResult(
        "03_jit", "jit", "not_attempted", (_check("piecewise_values", "not_attempted"),)
    )
    assert terminal.done_line(untouched).split()[0] == "TODO"
    badge = '<span class="badge s-not_attempted">not attempted</span>'
    page = html.render(_report(untouched))
    assert badge in _part(page, 'aria-label="Exercises"', "</table>")
    assert badge in _part(page, 'id="ex-03_jit"', "</summary>")
    assert badge in inline.Inline(exercise=untouched)._repr_html_()


def test_watch_offers_the_next_function_when_nothing_failed() -> None:
    exercise = _begun(failing=False)
    shown = display.result(exercise).plain
    assert shown.startswith("TODO")
    assert "Not started yet, not failed: 2 check(s)" in shown
    line = display.next_step(exercise, Path("exercises/03_jit.py")).plain
    assert line == f"Next: go on at 03_jit.py line 56: {RAISE.code} (then save)."
    failed = display.next_step(_begun(failing=True), Path("exercises/03_jit.py")).plain
    assert 'fix "newton values"' in failed  # a real failure first


def test_percent_grade_says_not_started() -> None:
    exercise = _begun(failing=False)
    text = str(inline.Inline(exercise=exercise))
    assert "Not started yet, not failed: 2 check(s)" in text
    page = inline.Inline(exercise=exercise)._repr_html_()
    assert "not started yet, not failed" in page
    built = kernel.Built("03_jit", "", "", "", None)
    assert "functions not started yet" in magic.next_line(exercise, built)
    assert 'fix "newton values"' in magic.next_line(_begun(failing=True), built)


def test_grade_hint_helps_with_a_function_not_started_after_the_failures() -> None:
    assert [c.id for c in ladder.failing(_begun(failing=True))] == [
        "newton_values",
        "running_sum_values",  # not the check waiting for it
    ]


def test_a_begun_file_s_next_step_is_its_first_unstarted_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not the first `# TODO` comment, which a student may leave above finished code."""
    exercises = tmp_path / "exercises"
    exercises.mkdir()
    lesson = exercises / "03_jit.py"
    lesson.write_text("# TODO: piecewise\ndef piecewise(x):\n    return x\n" + "\n" * 52 + "x\n")
    monkeypatch.chdir(tmp_path)
    exercise = _begun(failing=False)
    step = next_step.step(exercise, Submission(exercises, {"03_jit": lesson}), ["03_jit"])
    assert step is not None and step.todo is not None
    assert (step.todo.path, step.todo.line) == ("exercises/03_jit.py", 56)
    assert step.command == "grade exercises/03_jit.py"
    passed = ExerciseResult("03_jit", "jit", "failed", (_check("a", "failed"),))
    assert next_step.step(passed, Submission(exercises, {"03_jit": lesson}), ["03_jit"]) is None
