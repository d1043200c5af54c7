"""Gradescope's autograder `results.json`, from a `Report`.

Follows Gradescope's documented autograder output format: a top-level `score`
(which Gradescope uses as the submission's score), `output` with its
`output_format`, `visibility`, `stdout_visibility`, and one entry in `tests`
per check with `name`, `number`, `score`, `max_score`, `status`
("passed"/"failed"), `output`, `tags`, `visibility` and `extra_data`.

Visibility: public checks are "visible"; hidden checks are "after_published",
so students see them, and the total, once the instructor publishes grades.
The top-level output only carries what is safe to show at once: per exercise
its points on public checks, exercise-level problems (import errors, crashes)
and the student's own captured output. Every text field is declared "text"
(shown verbatim), so nothing a submission prints is interpreted as HTML or
Markdown. The run's own stdout stays hidden: it is for instructors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from grader.model import CheckResult, ExerciseResult, Report, Visibility
from grader.reports import labels

GradescopeVisibility = Literal["hidden", "after_due_date", "after_published", "visible"]

VISIBILITY: dict[Visibility, GradescopeVisibility] = {
    "public": "visible",
    "hidden": "after_published",
}
TEXT = "text"
MAX_OUTPUT_CHARS = 4000  # of a student's captured output, in the top-level output


def _test(exercise: ExerciseResult, number: str, check: CheckResult) -> dict[str, Any]:
    return {
        "name": f"{exercise.name}: {check.name}",
        "name_format": TEXT,
        "number": number,
        "score": check.score,
        "max_score": check.max_score,
        "status": "passed" if check.status == "passed" else "failed",
        "output": labels.check_details(check, hint=not labels.is_consequence(exercise, check)),
        "output_format": TEXT,
        "tags": [exercise.name],
        "visibility": VISIBILITY[check.visibility],
        "extra_data": {"exercise": exercise.name, "id": check.id, "status": check.status},
    }


def _capped(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text.rstrip()
    cut = len(text) - MAX_OUTPUT_CHARS
    return text[:MAX_OUTPUT_CHARS].rstrip() + f"\n[... {cut} more characters not shown]"


def summary(report: Report) -> str:
    """The top-level output: public points per exercise and exercise-level problems."""
    lines = [f"Graded with seed {report.seed} (grader {report.grader_version})."]
    hidden = sum(1 for _, c in report.checks() if c.visibility == "hidden")
    if hidden:
        lines.append(
            f"{hidden} hidden check(s) are counted in your score and shown once grades are published."
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
        if exercise.message:
            lines.extend("  " + line for line in exercise.message.rstrip().splitlines())
        if exercise.output.strip():
            lines.append("  your program printed:")
            lines.extend("    " + line for line in _capped(exercise.output).splitlines())
    return "\n".join(lines)


def document(report: Report) -> dict[str, Any]:
    """The results.json document for `report`."""
    tests = [
        _test(exercise, f"{i}.{j}", check)
        for i, exercise in enumerate(report.exercises, start=1)
        for j, check in enumerate(exercise.checks, start=1)
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
    target.write_text(render(report), encoding="utf-8")
    return target
