"""Whole points where a course asks for them: `[tool.grade] round` in its pyproject.toml.

    [tool.grade]
    round = 1      # every check's score is rounded down to a whole point
    round = 0.5    # ... to a half point
    round = false  # (the default) scores as the checks give them: 0.67/1 for 2 of 3 parts

A check of several parts earns a share of its points for each part that passes (2 of 3
functions pure: 0.67 of 1 point), and its message says so. A course that grades in whole
points rounds each check's score DOWN to a multiple of `round`: a check short of full marks
never reads as full marks, and the checks still add up to the file's total and the totals
to the report's. A check whose score was rounded says so on its first line (the line a
grouped check shows: `grader.reports.groups.share_note`).

`grader.settings` reads the setting with the course's other `[tool.grade]` settings and
`grader.audience` applies `rounded` wherever the help policy is applied, so every report of
a grading (terminal, `grade watch`, HTML, JSON, Gradescope, JUnit, `%grade`) shows the same
points.
"""

from __future__ import annotations

import dataclasses
import math

from grader.model import CheckResult, ExerciseResult, Report

EPSILON = 1e-6
"""Scores within this of a multiple are that multiple (2/3 * 3 parts is 2.0, not 1.999...)."""


def step_of(value: object) -> float | None:
    """The step `value` of `[tool.grade] round` stands for: None (no rounding) for false,
    1.0 for true, the number for a positive number; ValueError for anything else."""
    if value is False or value is None:
        return None
    if value is True:
        return 1.0
    if isinstance(value, int | float) and math.isfinite(value) and value > 0:
        return float(value)
    raise ValueError("give a positive number of points (1 for whole points), true or false")


def rounded(report: Report, step: float | None) -> Report:
    """`report` with every check's score rounded down to a multiple of `step` (None: as it
    is)."""
    if step is None:
        return report
    exercises = tuple(_exercise(e, step) for e in report.exercises)
    return dataclasses.replace(report, exercises=exercises)


def rounded_exercise(exercise: ExerciseResult, step: float | None) -> ExerciseResult:
    """`exercise` as `rounded` rounds it, for a line shown before the report is whole."""
    return exercise if step is None else _exercise(exercise, step)


def _exercise(exercise: ExerciseResult, step: float) -> ExerciseResult:
    checks = tuple(_check(c, step) for c in exercise.checks)
    return dataclasses.replace(exercise, checks=checks)


def _check(check: CheckResult, step: float) -> CheckResult:
    score = math.floor(check.score / step + EPSILON) * step
    score = min(max(round(score, 6), 0.0), check.max_score)
    if math.isclose(score, check.score, abs_tol=EPSILON):
        return check
    first, _, rest = check.message.partition("\n")
    note = (
        f"the course counts points in steps of {step:g}, so "
        f"{check.score:.2f} is rounded down to {score:g}."
    )
    first = f"{first} ({note})" if first else note[0].upper() + note[1:]
    return dataclasses.replace(check, score=score, message=first + ("\n" + rest if rest else ""))
