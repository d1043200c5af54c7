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

from grader import hints, ladder
from grader.commands import shared
from grader.reports import console


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


def run(args: argparse.Namespace) -> int:
    try:
        shown = ladder.reveal(args.lesson, args.check)
    except (hints.SettingError, ladder.NoSuchCheck, ladder.NothingGraded) as exc:
        raise shared.UsageError(str(exc)) from None
    out = console.stdout(no_color=args.no_color)
    for line in shown.lines:
        out.print(line, soft_wrap=not shown.wrap)
    return 0
