"""Gradescope's autograder `results.json`, from a `Report`.

Follows Gradescope's documented autograder output format: a top-level `score`
(which Gradescope uses as the submission's score), `output` with its
`output_format`, `visibility`, `stdout_visibility`, and one entry in `tests`
per check with `name`, `number`, `score`, `max_score`, `status`
("passed"/"failed"), `output`, `tags`, `visibility` and `extra_data`.

Visibility: a public check is one "visible" test. A hidden check is two:
students get "03_jit: hidden check 1" ("after_published": its points and
whether it passed, once the instructor publishes grades; never its name,
message, hint or line), instructors get the check itself under its own name,
with everything, in a test that is "hidden" (never shown to students; it
carries no points, the top-level score already counts them). The top-level
output only carries what is safe to show at once: per exercise its points on
public checks, exercise-level problems (import errors, crashes; one that tells
of a hidden check is said without it) and the student's own captured output.
Every text field is declared "text" (shown verbatim), so nothing a submission
prints is interpreted as HTML or Markdown, and its control characters are made
visible (`controls.visible_in`). The run's own stdout stays hidden: it is for
instructors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from grader import atomic
from grader.model import CheckResult, ExerciseResult, Report
from grader.reports import controls, labels

GradescopeVisibility = Literal["hidden", "after_due_date", "after_published", "visible"]

PUBLIC: GradescopeVisibility = "visible"
HIDDEN_RESULT: GradescopeVisibility = "after_published"  # what students get of a hidden check
HIDDEN_DETAILS: GradescopeVisibility = "hidden"  # the check itself: instructors only
TEXT = "text"
MAX_OUTPUT_CHARS = 4000  # of a student's captured output, in the top-level output
SHOWN_TO_INSTRUCTORS = "(what happened is shown to instructors only)"
WITHHELD = f"a hidden check could not finish {SHOWN_TO_INSTRUCTORS}"


def _status(check: CheckResult) -> str:
    return "passed" if check.status == "passed" else "failed"


def _public_test(exercise: ExerciseResult, number: str, check: CheckResult) -> dict[str, Any]:
    return {
        "name": f"{exercise.name}: {check.name}",
        "name_format": TEXT,
        "number": number,
        "score": check.score,
        "max_score": check.max_score,
        "status": _status(check),
        "output": labels.check_details(check, hint=not labels.is_consequence(exercise, check)),
        "output_format": TEXT,
        "tags": [exercise.name],
        "visibility": PUBLIC,
        "extra_data": {"exercise": exercise.name, "id": check.id, "status": check.status},
    }


def _hidden_tests(
    exercise: ExerciseResult, number: str, check: CheckResult, nth: int
) -> list[dict[str, Any]]:
    """The `nth` hidden check of `exercise`: its result for students, itself for instructors."""
    result = {
        "name": f"{exercise.name}: hidden check {nth}",
        "name_format": TEXT,
        "number": number,
        "score": check.score,
        "max_score": check.max_score,
        "status": _status(check),
        "tags": [exercise.name],
        "visibility": HIDDEN_RESULT,
        "extra_data": {"exercise": exercise.name, "hidden": nth},
    }
    details = {
        "name": f"{exercise.name}: {check.name}",
        "name_format": TEXT,
        "number": f"{number}.1",
        "status": _status(check),
        "output": labels.check_details(check, hint=not labels.is_consequence(exercise, check)),
        "output_format": TEXT,
        "tags": [exercise.name, "hidden"],
        "visibility": HIDDEN_DETAILS,
        "extra_data": {
            "exercise": exercise.name,
            "id": check.id,
            "status": check.status,
            "score": check.score,
            "max_score": check.max_score,
            "shown_to_students_as": result["name"],
        },
    }
    return [result, details]


def _tests(exercise: ExerciseResult, index: int) -> list[dict[str, Any]]:
    tests: list[dict[str, Any]] = []
    hidden = 0
    for j, check in enumerate(exercise.checks, start=1):
        number = f"{index}.{j}"
        if check.visibility == "hidden":
            hidden += 1
            tests += _hidden_tests(exercise, number, check, hidden)
        else:
            tests.append(_public_test(exercise, number, check))
    return tests


def _public_message(exercise: ExerciseResult) -> str:
    """The exercise-level message with what it tells of a hidden check taken out.

    The runner names the check that could not finish and quotes its message; a
    hidden one becomes "a hidden check" and its message a notice. A message that
    names a hidden check without quoting its message verbatim is withheld whole.
    """
    message = exercise.message
    for check in exercise.checks:
        if check.visibility != "hidden" or not (check.name in message or check.id in message):
            continue
        if check.message.strip() and check.message not in message:
            return WITHHELD
        if check.message.strip():
            message = message.replace(check.message, SHOWN_TO_INSTRUCTORS)
        message = message.replace(check.name, "a hidden check").replace(check.id, "a hidden check")
    return message


def _capped(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text.rstrip()
    cut = len(text) - MAX_OUTPUT_CHARS
    return text[:MAX_OUTPUT_CHARS].rstrip() + f"\n[... {cut} more characters not shown]"


def summary(report: Report) -> str:
    """The top-level output: public points per exercise and exercise-level problems.

    Shown to students at once: it never names a hidden check or quotes its message.
    """
    lines = [f"Graded with seed {report.seed} (grader {report.grader_version})."]
    hidden = sum(1 for _, c in report.checks() if c.visibility == "hidden")
    if hidden:
        lines.append(
            f"{hidden} hidden check(s) are counted in your score; whether each passed is shown "
            "once grades are published (not what it checks)."
        )
    for exercise in report.exercises:
        public = [c for c in exercise.checks if c.visibility == "public"]
        score = sum(c.score for c in public)
        max_score = sum(c.max_score for c in public)
        lines.append("")
        lines.append(
            f"{exercise.name} ({exercise.title}): {labels.EXERCISE_PHRASES[exercise.status]}, "
            f"{labels.points(score, max_score)} on visible checks"
        )
        message = _public_message(exercise)
        if message:
            lines.extend("  " + line for line in message.rstrip().splitlines())
        if exercise.output.strip():
            lines.append("  your program printed:")
            lines.extend("    " + line for line in _capped(exercise.output).splitlines())
    return "\n".join(lines)


def document(report: Report) -> dict[str, Any]:
    """The results.json document for `report`."""
    report = controls.visible_in(report)
    tests = [
        test for i, exercise in enumerate(report.exercises, start=1) for test in _tests(exercise, i)
    ]
    return {
        "score": report.score,
        "output": summary(report),
        "output_format": TEXT,
        "test_output_format": TEXT,
        "test_name_format": TEXT,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {
            "max_score": report.max_score,
            "seed": report.seed,
            "grader_version": report.grader_version,
            "exercises": {e.name: e.status for e in report.exercises},
        },
        "tests": tests,
    }


def render(report: Report) -> str:
    return json.dumps(document(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write(report: Report, path: str | Path) -> Path:
    """Write results.json (Gradescope reads /autograder/results/results.json)."""
    target = Path(path)
    atomic.write_text(target, render(report))
    return target
