"""JUnit XML, from a `Report`, for CI test reporters (GitHub Actions, GitLab, Jenkins).

Shape (the structure the common reporters accept; tests validate it against
`tests/reports/schemas/junit.xsd`):

    <testsuites name=... tests= failures= errors= time=>
      <testsuite name="03_jit" tests= failures= errors= skipped= time=>
        <properties> title, status, score, max_score, seed </properties>
        <testcase classname="03_jit" name="<check name>" time=...>
          <failure message=...>   a failed check, or one not started (type="not_attempted":
                                  its function still raises NotImplementedError; it scores 0
                                  and fails the run, as unfinished work should in CI)
          <error message=...>     a check that errored or timed out
          <skipped message=...>   a skipped check
        </testcase>
        <system-out> the exercise's captured output </system-out>
        <system-err> the exercise-level message (import error, crash) </system-err>
      </testsuite>
    </testsuites>

An exercise with no checks at all (its file failed to load, or it was skipped
before collection) gets one testcase named after the exercise, so the problem
shows up in the reporter instead of an empty suite. Control characters a
program printed or raised (NUL, ESC, ...: XML 1.0 cannot carry most of them)
are shown as in every report (`controls.visible`: `␀`, `␛[31m`); anything
else XML 1.0 cannot carry (a lone surrogate, U+FFFE) is written as `\\uNNNN`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from grader import atomic
from grader.model import CheckResult, ExerciseResult, Report
from grader.reports import controls, labels

SUITES_NAME = "jax-lesson-grader"
MESSAGE_CHARS = 200

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", controls.visible(text))


def _seconds(value: float) -> str:
    return f"{max(value, 0.0):.3f}"


def _counts(checks: tuple[CheckResult, ...]) -> tuple[int, int, int]:
    failures = sum(1 for c in checks if c.status in ("failed", "not_attempted"))
    errors = sum(1 for c in checks if c.status in ("error", "timeout"))
    skipped = sum(1 for c in checks if c.status == "skipped")
    return failures, errors, skipped


def _outcome(parent: ET.Element, tag: str, kind: str, message: str, body: str) -> None:
    element = ET.SubElement(
        parent,
        tag,
        {"type": kind, "message": _xml_text(labels.headline(message, MESSAGE_CHARS))},
    )
    element.text = _xml_text(body)


def _testcase(suite: ET.Element, exercise: ExerciseResult, check: CheckResult) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        {
            "classname": _xml_text(exercise.name),
            "name": _xml_text(check.name),
            "time": _seconds(check.duration_s),
        },
    )
    details = labels.check_details(check, hint=not labels.is_consequence(exercise, check))
    summary = check.message or labels.CHECK_PHRASES[check.status]
    if check.status == "failed":
        _outcome(case, "failure", "failed", summary, details)
    elif check.status == "not_attempted":
        _outcome(case, "failure", "not_attempted", f"not started: {summary}", details)
    elif check.status in ("error", "timeout"):
        _outcome(case, "error", check.status, summary, details)
    elif check.status == "skipped":
        _outcome(case, "skipped", "skipped", summary, details)


def _exercise_case(suite: ET.Element, exercise: ExerciseResult) -> tuple[int, int, int]:
    """The stand-in testcase of an exercise without checks; returns its counts."""
    case = ET.SubElement(
        suite,
        "testcase",
        {"classname": _xml_text(exercise.name), "name": _xml_text(exercise.name), "time": "0.000"},
    )
    message = exercise.message or labels.EXERCISE_PHRASES[exercise.status]
    if exercise.status == "error":
        _outcome(case, "error", "error", message, exercise.message)
        return 0, 1, 0
    if exercise.status in ("failed", "not_attempted"):
        _outcome(case, "failure", exercise.status, message, exercise.message)
        return 1, 0, 0
    if exercise.status == "skipped":
        _outcome(case, "skipped", "skipped", message, exercise.message)
        return 0, 0, 1
    return 0, 0, 0


def _testsuite(root: ET.Element, exercise: ExerciseResult, seed: int) -> tuple[int, int, int, int]:
    suite = ET.SubElement(root, "testsuite", {"name": _xml_text(exercise.name)})
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("title", exercise.title),
        ("status", exercise.status),
        ("score", labels.number(exercise.score)),
        ("max_score", labels.number(exercise.max_score)),
        ("seed", str(seed)),
    ):
        ET.SubElement(props, "property", {"name": name, "value": _xml_text(value)})
    if exercise.checks:
        for check in exercise.checks:
            _testcase(suite, exercise, check)
        tests = len(exercise.checks)
        failures, errors, skipped = _counts(exercise.checks)
    else:
        tests = 1
        failures, errors, skipped = _exercise_case(suite, exercise)
    if exercise.output:
        ET.SubElement(suite, "system-out").text = _xml_text(exercise.output)
    if exercise.message:
        ET.SubElement(suite, "system-err").text = _xml_text(exercise.message)
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    suite.set("time", _seconds(exercise.duration_s))
    return tests, failures, errors, skipped


def render(report: Report) -> str:
    """The JUnit XML document as text (UTF-8 declared, indented, trailing newline)."""
    root = ET.Element("testsuites", {"name": SUITES_NAME})
    totals = [0, 0, 0, 0]
    for exercise in report.exercises:
        counts = _testsuite(root, exercise, report.seed)
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
    root.set("tests", str(totals[0]))
    root.set("failures", str(totals[1]))
    root.set("errors", str(totals[2]))
    root.set("time", _seconds(report.duration_s))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def write(report: Report, path: str | Path) -> Path:
    target = Path(path)
    atomic.write_text(target, render(report))
    return target
