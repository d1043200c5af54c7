# `grade assign`: its help is the docstring of grader.course.assign, where its logic is.
from __future__ import annotations

import argparse

from grader.commands import course
from grader.course import assign

__doc__ = assign.__doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    course.add_argument(parser)
    course.add_part(parser, "solutions", "the marked reference solutions")
    parser.add_argument(
        "--out", metavar="DIR", help="where the stubs go (default: the course's exercises/)"
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 listing the files that differ"
    )


def run(args: argparse.Namespace) -> int:
    solutions = course.part(args, args.solutions, "solutions")
    exercises = course.part(args, args.out, "exercises")
    if args.check:
        problems = assign.differences(solutions, exercises)
        for problem in problems:
            print(problem)
        if problems:
            print(
                f"\n{len(problems)} stub(s) out of sync: run `grade assign` to regenerate "
                f"{exercises}/ from {solutions}/"
            )
            return 1
        print(f"{exercises}/ is in sync with {solutions}/")
        return 0
    changed = assign.write(solutions, exercises)
    for path in changed:
        print(f"wrote {path}")
    print(f"{len(changed)} stub(s) changed; {exercises}/ is in sync with {solutions}/")
    return 0
