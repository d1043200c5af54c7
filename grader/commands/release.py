# `grade release`: its help is the docstring of grader.course.release, where its logic is.
from __future__ import annotations

import argparse
from pathlib import Path

from grader.commands import course, shared
from grader.course import ci_template
from grader.course import release as course_release

__doc__ = course_release.__doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "out", metavar="OUT", help="the folder to write (must not exist, or be empty)"
    )
    course.add_argument(parser)
    course.add_part(parser, "solutions", "the reference solutions, to check exercises/ against")
    course.add_part(parser, "exercises", "the stubs to release")
    parser.add_argument(
        "--suites", metavar="DIR", help="the full suites to cut (default: the grader's own)"
    )
    parser.add_argument(
        "--fail-under",
        type=shared.percent,
        default=ci_template.DEFAULT_FAIL_UNDER,
        metavar="PERCENT",
        help="the score below which the students' CI workflow fails "
        f"(default {ci_template.DEFAULT_FAIL_UNDER:g})",
    )
    parser.add_argument(
        "--url",
        metavar="URL",
        help="where the release is served, as pip installs it (git+https://github.com/COURSE/"
        "RELEASE); recorded for the notebooks' setup cell (default: the course's "
        "[tool.grade] release_url)",
    )
    parser.add_argument("--force", action="store_true", help="replace an earlier release in OUT")


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    solutions = course.part(args, args.solutions, "solutions")
    exercises = course.part(args, args.exercises, "exercises")
    suites_dir = shared.suites_dir(args)
    for folder in (solutions, exercises, suites_dir):
        if not folder.is_dir():
            raise shared.UsageError(f"{folder}: no such folder")
    released = course_release.release(
        out,
        solutions,
        exercises,
        suites_dir,
        args.fail_under,
        args.force,
        course_dir=course.root(args),
        url=args.url,
    )
    print(course_release.summary(out, released))
    return 0
