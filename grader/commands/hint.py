# `grade hint`: its help is the docstring of grader.ladder, where its logic is.
from __future__ import annotations

import argparse

from grader import ladder
from grader.reports import console

__doc__ = ladder.__doc__


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
    shown = ladder.reveal(args.lesson, args.check)
    out = console.stdout(no_color=args.no_color)
    for line in shown.lines:
        out.print(line, soft_wrap=not shown.wrap)
    return 0
