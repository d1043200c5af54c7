"""A check's help in levels, and the one policy on what of it a report shows.

Every check's help is levelled data:

    level 0  question  the check's `hint` (a question, literal in the suite): shown with
                       every failure
    level 1  nudge     the check's `nudge` (literal in the suite, optional); without one,
                       where the failure points: the student's line and the likely cause
    level 2  fix       the failure's `fix` (from the check that failed): often the code

`grade hint LESSON [CHECK]` reveals the next level for the first failing check of the
last grading of that lesson (`grader.ladder`); what a student revealed is kept in the
graded folder's `.grade/` (`grader.state`) and counted in the results (`hints_revealed`,
per check and in total), so an instructor sees how much help was asked for. Whether
fixes are ever shown is the course's `[tool.grade] show_fixes` (`grader.settings`).

`apply` is the one place that decides what of the help a report holds: every report
(terminal, HTML, JSON, Gradescope, JUnit) renders what the model has, so none shows
more than it allows. A result straight from the runner holds all of the help;
`grader.audience` applies the policy for whoever reads the report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from grader.model import CheckResult, Report
from grader.settings import DEFAULT_SHOW_FIXES, ShowFixes

QUESTION, NUDGE, FIX = 0, 1, 2
LEVEL_NAMES = ("question", "nudge", "fix")


@dataclass(frozen=True)
class Level:
    number: int  # QUESTION, NUDGE or FIX: what `hints_revealed` counts
    name: str
    text: str


def fallback_nudge(check: CheckResult) -> str:
    """Level 1 for a check without an authored nudge: the line to look at, asked as a
    question (the likely cause is in the failure's message already; never repeated here).
    Nothing without a line: the next level is then the fix."""
    where = check.location
    if where is None:
        return ""
    return (
        f"Look at {where.path} line {where.line} (`{where.code.strip()}`): what does it do with "
        "the input shown above, against what the check expected?"
    )


def levels(check: CheckResult, setting: ShowFixes = DEFAULT_SHOW_FIXES) -> list[Level]:
    """The help a failed check has, level by level (empty levels left out)."""
    found = [
        Level(QUESTION, "question", check.hint.strip()),
        Level(NUDGE, "nudge", (check.nudge or fallback_nudge(check)).strip()),
        Level(FIX, "fix", "" if setting == "never" else check.fix.strip()),
    ]
    return [level for level in found if level.text]


def shown(check: CheckResult, revealed: int, setting: ShowFixes) -> CheckResult:
    """`check` holding only the help the student may see, and how much they revealed."""
    revealed = min(max(revealed, QUESTION), FIX)
    show_fix = setting == "always" or (setting == "on-request" and revealed >= FIX)
    return dataclasses.replace(
        check,
        nudge=check.nudge if revealed >= NUDGE else "",
        fix=check.fix if show_fix else "",
        hints_revealed=revealed,
    )


def apply(report: Report, revealed: Mapping[str, Mapping[str, int]], setting: ShowFixes) -> Report:
    """The one policy: `report` with each check's nudge and fix kept only where allowed."""
    exercises = tuple(
        dataclasses.replace(
            e,
            checks=tuple(
                shown(c, revealed.get(e.name, {}).get(c.id, 0), setting) for c in e.checks
            ),
        )
        for e in report.exercises
    )
    return dataclasses.replace(report, exercises=exercises)
