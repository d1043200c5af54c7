"""What each reader is shown of a graded report, the course's settings applied.

A report straight from the runner holds all of the help and the points as the checks
give them. Before anyone reads it:

    after_grading  the student who ran `grade` (`grade watch`, `%grade`): each file's next
                   step, the points as the course rounds them, the results kept in
                   `.grade/` for `grade hint`, the help the student revealed
    while_grading  the student watching a grading under way (`grade watch`): the same,
                   nothing kept
    for_course     a submission graded for the course (Gradescope): next steps and the
                   course's policy, nothing of the submission's own settings or state
    for_class      a class (`grade batch`): the course's policy, nothing revealed

The course's settings (`grader.settings`) are read where the policy is applied, so every
report of a grading (terminal, `grade watch`, HTML, JSON, Gradescope, JUnit, `%grade`)
shows the same points and the same help (`grader.hints.apply`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from grader import catalog, hints, next_step, rounding, settings, state
from grader.model import Report
from grader.runner.submission import Submission


def rounded_for(report: Report, folder: Path) -> Report:
    """`report`'s points as the course of `folder` counts them (`[tool.grade] round`)."""
    return rounding.rounded(report, settings.round_step_or_none(folder))


def _order(suites: Path | None) -> list[str]:
    """Every lesson of `suites` (default: the installed suites), in catalog order."""
    return [spec.name for spec in catalog.exercises(suites or catalog.SUITES_DIR)]


def after_grading(
    report: Report,
    submission: Submission,
    *,
    suites: Path | None = None,
    folder: Path | None = None,
) -> Report:
    """What a student sees of a grading run, its state kept in `folder` (default: the
    graded folder's, `state.state_folder(submission.root)`).

    Names each file's next step (the next lesson file in the catalog order of `suites`,
    default the installed suites), keeps the results for `grade hint` in `.grade/`, and
    applies the policy with the course's setting and what the student revealed. A
    folder that cannot be written to only loses the `grade hint` memory."""
    folder = state.state_folder(submission.root) if folder is None else folder
    setting = settings.show_fixes_or_never(folder)
    report = next_step.fill(report, submission, _order(suites))
    report = rounded_for(report, folder)
    with contextlib.suppress(OSError):
        state.remember(report, folder, setting)
    return hints.apply(report, state.load_revealed(folder), setting)


def while_grading(report: Report, submission: Submission, order: Sequence[str]) -> Report:
    """What a student sees of a grading under way (`grade watch`'s records as they come,
    `order`: every lesson in catalog order): next steps and the policy as `after_grading`
    applies them, in the graded folder's state; nothing is kept, and a malformed setting is
    said when the grading ends (`after_grading`)."""
    folder = state.state_folder(submission.root)
    setting = settings.show_fixes_or_never(folder, warn=False)
    report = next_step.fill(report, submission, order)
    report = rounded_for(report, folder)
    return hints.apply(report, state.load_revealed(folder), setting)


def for_course(
    report: Report,
    submission: Submission,
    *,
    suites: Path | None = None,
    course: Path | None = None,
) -> Report:
    """What a submission graded for the course shows (Gradescope): next steps, and the
    policy with the course's setting (the `pyproject.toml` of `course`, default the working
    folder: the course's source) and nothing revealed. Nothing of the submission's counts,
    neither its own `[tool.grade]` nor its `.grade/`, and nothing is written into it."""
    report = next_step.fill(report, submission, _order(suites))
    course = Path.cwd() if course is None else course
    report = rounded_for(report, course)
    return hints.apply(report, {}, settings.show_fixes_or_never(course))


def for_class(report: Report, folder: Path | None = None) -> Report:
    """The policy for a report no student revealed help in (`grade batch`, a class):
    fixes only when the course shows them always; points rounded as the course asks."""
    folder = Path.cwd() if folder is None else folder
    return hints.apply(rounded_for(report, folder), {}, settings.show_fixes_or_never(folder))
