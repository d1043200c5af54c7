# `grade new`: its help is the docstring of grader.course.new, where its logic is.
from __future__ import annotations

import argparse
from pathlib import Path

from grader.commands import course
from grader.course import new
from grader.course.layout import Course

__doc__ = new.__doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help="the lesson file's name, e.g. ex6_schedules")
    parser.add_argument(
        "--title", default="", metavar="TEXT", help="the title students see in their reports"
    )
    course.add_argument(parser)
    parser.add_argument(
        "--suites",
        metavar="DIR",
        help="write the suite here (default: the course's grader/suites/)",
    )
    parser.add_argument(
        "--spec",
        metavar="FILE",
        help="the lesson spec to add the section to (default: the course's docs/lesson-spec.md)",
    )


def run(args: argparse.Namespace) -> int:
    the_course = Course.at(
        course.root(args),
        suites=Path(args.suites) if args.suites else None,
        spec=Path(args.spec) if args.spec else None,
    )
    written = new.create(the_course, args.name, args.title)
    print(new.summary(the_course, args.name, written), end="")
    return 0
