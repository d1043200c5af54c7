"""Reveal the next level of help for a failing check of the last grading of a lesson.

    grade hint                               the first failing check of the first lesson
                                             file with one (in the last grading of each)
    grade hint 03_jit                        the first failing check of 03_jit
    grade hint 03_jit test_running_sum_scan  that check (its id or its name)

A check's help has up to three levels: the question (shown with every failure), a
nudge, then the fix. Each call shows what was revealed so far and one level more,
and stops at the last. What you revealed is remembered in `.grade/hints.json` of the
working folder and counted in the results (`hints_revealed`): your instructor sees it.
Your course may never show fixes (`[tool.grade] show_fixes = false` in its
pyproject.toml): hints then stop at the nudge. Run `grade` first: hints are for the
checks of the last grading of the lesson in this folder.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.text import Text

from grader import hints
from grader.commands import shared
from grader.model import CheckResult, ExerciseResult
from grader.reports import console, controls, groups, labels

INDENT = "    "
_STYLES = {hints.QUESTION: "yellow", hints.NUDGE: "cyan", hints.FIX: "green"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "lesson",
        nargs="?",
        default="",
        help="the lesson file, e.g. 03_jit (or exercises/03_jit.py); default: the first one "
        "with a failing check in its last grading",
    )
    parser.add_argument(
        "check",
        nargs="?",
        default="",
        help="the check: its id (test_running_sum_scan) or its name (default: the first "
        "failing check, as `grade` lists them)",
    )
    parser.add_argument("--no-color", action="store_true", help="plain text output")


def lesson_name(text: str) -> str:
    """`03_jit` from `03_jit`, `03_jit.py` or `exercises/03_jit.ipynb`."""
    name = Path(text).name
    for suffix in (".py", ".ipynb"):
        name = name.removesuffix(suffix)
    return name


def failing(exercise: ExerciseResult) -> list[CheckResult]:
    """The checks that need help, in the order `grade` shows them."""
    return [
        entry.check
        for entry in groups.entries(exercise)
        if entry.check.status in labels.PROBLEM_STATUSES
        and not labels.is_consequence(exercise, entry.check)
    ]


def choose(exercise: ExerciseResult, wanted: str) -> CheckResult | None:
    """The check to help with: `wanted` (id or name), or the first failing one."""
    if not wanted:
        found = failing(exercise)
        return found[0] if found else None
    for check in exercise.checks:
        if wanted in (check.id, f"test_{wanted}", check.name):
            return check
    known = ", ".join(c.id for c in failing(exercise)) or "none"
    raise shared.UsageError(f"{exercise.name} has no check {wanted!r}. Its failing checks: {known}")


def first_failing_lesson(folder: Path) -> str:
    """The first lesson (catalog order) whose last grading has a check that needs help."""
    graded = hints.last_lessons(folder)
    if not graded:
        raise shared.UsageError(
            "no grading in this folder yet: run `grade` first, then ask for a hint"
        )
    for lesson in graded:
        exercise = hints.last_result(folder, lesson)
        if exercise is not None and failing(exercise):
            return lesson
    return graded[0]


def run(args: argparse.Namespace) -> int:
    folder = Path.cwd()
    lesson = lesson_name(args.lesson) if args.lesson else first_failing_lesson(folder)
    try:
        setting = hints.show_fixes(folder)
    except hints.SettingError as exc:
        raise shared.UsageError(str(exc)) from None
    exercise = hints.last_result(folder, lesson)
    if exercise is None:
        raise shared.UsageError(
            f"no grading of {lesson} in this folder yet: run `grade --only {lesson}` "
            f"(or `grade exercises/{lesson}.py`) first, then ask for a hint"
        )
    exercise = controls.visible_in(exercise)
    out = console.stdout(no_color=args.no_color)
    check = choose(exercise, args.check)
    if check is None:
        out.print(_no_check(exercise), soft_wrap=True)
        return 0
    if check.status not in labels.PROBLEM_STATUSES:
        out.print(
            f"{lesson} > {check.name}: {labels.CHECK_PHRASES[check.status]}, nothing to hint."
        )
        return 0
    available = hints.levels(check, setting)
    seen = hints.load_revealed(folder).get(lesson, {}).get(check.id, hints.QUESTION)
    new = next((level for level in available if level.number > seen), None)
    if new is not None:
        hints.save_revealed(folder, lesson, check.id, new.number)
        seen = new.number
    for line in _account(exercise, check, [lv for lv in available if lv.number <= seen]):
        out.print(line, soft_wrap=True)
    out.print(_footer(lesson, check, available, seen, new is not None, setting), soft_wrap=True)
    return 0


def _no_check(exercise: ExerciseResult) -> str:
    if exercise.status in ("passed", "skipped"):
        return f"Every check of {exercise.name} passed in its last grading: nothing to hint."
    problem = labels.headline(exercise.message, 200)
    return (
        f"{exercise.name} did not run its checks in its last grading"
        + (f" ({problem})" if problem else "")
        + ": fix that first, then grade again. Hints are for failing checks."
    )


def _account(exercise: ExerciseResult, check: CheckResult, shown: list[hints.Level]) -> list[Text]:
    lines = [
        Text.assemble(
            (f"{exercise.name} > {check.name}", "bold"),
            f" ({labels.points(check.score, check.max_score)})",
        )
    ]
    lines += [Text(INDENT + line) for line in check.message.rstrip().splitlines()]
    where = labels.location_text(check)
    if where:
        lines.append(Text.assemble(INDENT, ("in your code: ", "cyan"), where))
    for level in shown:
        label = f"{level.name} ({level.number + 1}/{len(hints.LEVEL_NAMES)}): "
        body = level.text.splitlines() or [""]
        lines.append(Text.assemble(INDENT, (label, _STYLES[level.number]), body[0]))
        lines += [Text(INDENT * 2 + rest) for rest in body[1:]]
    return lines


def _footer(
    lesson: str,
    check: CheckResult,
    available: list[hints.Level],
    seen: int,
    revealed_now: bool,
    setting: hints.ShowFixes,
) -> str:
    later = [level for level in available if level.number > seen]
    if later:
        return (
            f"More help: `grade hint {lesson}` again shows the {later[0].name}. "
            f"Grade again with `grade --only {lesson}` once you changed your code."
        )
    prefix = "" if revealed_now else "No more help: "
    if setting == "never":
        return prefix + "this course does not show fixes; that was the last hint for this check."
    return prefix + f"that is all the help for `{check.name}`."
