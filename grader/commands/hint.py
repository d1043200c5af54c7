"""Reveal the next level of help for a failing check of the last grading of a lesson.

    grade hint                               the first failing check of the first lesson
                                             file with one (in the last grading of each)
    grade hint 03_jit                        the first failing check of 03_jit
    grade hint 03_jit test_running_sum_scan  that check: its id, a part of it (test_scan,
                                             running_sum_scan) or words of its name
    grade hint solutions/03_jit.py           the last grading of the lesson files in solutions/

A check's help has up to three levels: the question (shown with every failure), a
nudge, then the fix. Each call shows what was revealed so far and one level more;
once a check's help is all shown, `grade hint` (without a check) moves on to the next
failing check that has help left, and a named check stops at its last level.

What you revealed is remembered in `.grade/hints.json` of the graded folder's state
(your repository: the folder above `exercises/`), goes with your work (the release's
`.gitignore` keeps it) and is counted in the results (`hints_revealed`): your instructor
sees it, as self-reported by your machine. Your course may never show fixes
(`[tool.grade] show_fixes = false` in its pyproject.toml): hints then stop at the nudge.
Run `grade` first: hints are for the checks of the last grading of the lesson.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.text import Text

from grader import hints, ladder
from grader.commands import shared
from grader.model import CheckResult, ExerciseResult
from grader.reports import console, controls, labels

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
        help="the check: its id (test_running_sum_scan), a part of it (test_scan) or words of "
        "its name (default: the first failing check, as `grade` lists them)",
    )
    parser.add_argument("--no-color", action="store_true", help="plain text output")


def state_folder(lesson: str) -> Path:
    """Where the last gradings are kept: the state folder of the lesson file's folder when
    `lesson` is a path (`solutions/03_jit.py`), else of what `grade` grades here."""
    parent = Path(lesson).parent
    return hints.state_folder(parent) if str(parent) != "." else hints.state_folder_here()


def run(args: argparse.Namespace) -> int:
    folder = state_folder(args.lesson)
    try:
        setting = hints.show_fixes(folder)
    except hints.SettingError as exc:
        raise shared.UsageError(str(exc)) from None
    try:
        return _reveal(args, folder, setting)
    except (ladder.NoSuchCheck, ladder.NothingGraded) as exc:
        raise shared.UsageError(str(exc)) from None


def _reveal(args: argparse.Namespace, folder: Path, setting: hints.ShowFixes) -> int:
    """The next level of help for the check `args` name (or the ladder's next), printed."""
    if args.lesson:
        lesson = ladder.lesson_name(args.lesson)
    else:
        lesson = ladder.first_failing_lesson(folder, setting)
    exercise = hints.last_result(folder, lesson)
    if exercise is None:
        raise shared.UsageError(
            f"no grading of {lesson} in this folder yet: run `grade --only {lesson}` "
            f"(or `grade exercises/{lesson}.py`) first, then ask for a hint"
        )
    exercise = controls.visible_in(exercise)
    out = console.stdout(no_color=args.no_color)
    revealed = hints.load_revealed(folder).get(lesson, {})
    check = ladder.choose(exercise, args.check, revealed, setting)
    if check is None:
        out.print(_no_check(exercise), soft_wrap=True)
        return 0
    if check.status not in labels.PROBLEM_STATUSES:
        out.print(
            f"{lesson} > {check.name}: {labels.CHECK_PHRASES[check.status]}, nothing to hint."
        )
        return 0
    available = hints.levels(check, setting)
    seen = revealed.get(check.id, hints.QUESTION)
    new = next((level for level in available if level.number > seen), None)
    if new is not None:
        hints.save_revealed(folder, lesson, check.id, new.number)
        seen = new.number
    problems = ladder.failing(exercise)
    done = [] if args.check else problems[: problems.index(check)]
    if done:
        out.print(
            f"All the help for {', '.join(f'`{c.name}`' for c in done)} is shown "
            f"(`grade hint {lesson} {done[-1].id}` shows it again); the next failing check:",
            soft_wrap=True,
        )
    for line in _account(exercise, check, [lv for lv in available if lv.number <= seen]):
        out.print(line, soft_wrap=True)
    after = [
        c
        for c in problems
        if c is not check and ladder.has_more(c, revealed.get(c.id, hints.QUESTION), setting)
    ]
    footer = _footer(lesson, check, available, seen, new is not None, setting)
    if not any(level.number > seen for level in available) and after:
        footer += f" `grade hint {lesson}` again moves on to `{after[0].name}`."
    out.print(footer, soft_wrap=True)
    out.print(Text(recorded(folder), "dim"), soft_wrap=True)
    return 0


def recorded(folder: Path) -> str:
    """Where the levels revealed are kept, and that the instructor sees them as reported."""
    path = hints.revealed_path(folder)
    try:
        shown = path.relative_to(Path.cwd().resolve())
    except ValueError:
        shown = path
    return (
        f"Hints revealed are recorded in {controls.visible(str(shown))}, which goes with your work: your instructor "
        "sees how many you revealed, self-reported by this machine."
    )


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
