# `grade verify`: its help is the docstring of grader.course.verify, where its logic is.
from __future__ import annotations

import argparse
from pathlib import Path

from grader.commands import course, shared
from grader.course import rules, verify
from grader.course.layout import Course
from grader.reports import console

__doc__ = verify.__doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    course.add_argument(parser)
    course.add_part(parser, "solutions", "the reference solutions")
    course.add_part(parser, "exercises", "the student stubs")
    parser.add_argument(
        "--runs",
        type=shared.positive_int,
        default=verify.DEFAULT_RUNS,
        metavar="N",
        help=f"grade the solutions N times and compare (default {verify.DEFAULT_RUNS})",
    )
    parser.add_argument(
        "--spec",
        metavar="FILE",
        help="the lesson spec the checks cite (default: the course's docs/lesson-spec.md)",
    )
    parser.add_argument(
        "--rules",
        action="store_true",
        help="print the rules a lesson must follow (grader.course.rules); check nothing",
    )
    parser.add_argument(
        "--list-checks",
        action="store_true",
        help="print every check with its points and the spec's words it enforces; grade nothing",
    )
    shared.add_jobs_option(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="only the verdict")
    shared.add_grading_options(parser)


def run(args: argparse.Namespace) -> int:
    if args.rules:
        print(rules.markdown(), end="")
        return 0
    if args.list_checks:
        print(verify.list_checks(shared.specs(args)), end="")
        return 0
    solutions = course.folder(args, args.solutions, "solutions")
    exercises = course.folder(args, args.exercises, "exercises")
    specs = shared.specs(args)
    the_course = Course.at(
        course.root(args),
        suites=shared.suites_dir(args),
        solutions=solutions,
        exercises=exercises,
        spec=Path(args.spec) if args.spec else None,
    )
    request = verify.Request(
        specs,
        the_course,
        shared.options(args, jobs=shared.jobs(args).count),
        args.runs,
        selected=bool(args.only),
    )

    def say(text: str) -> None:
        if not args.quiet:
            print(text, flush=True)

    problems = verify.verify(request, console.stdout(), say, quiet=args.quiet)
    if problems:
        print(f"\ngrade verify: {len(problems)} violation(s):")
        for problem in problems:
            print(("      " if problem.startswith("    ") else "  - ") + problem.strip())
        return 1
    checks = sum(len(s.checks) for s in specs)
    print(
        f"\ngrade verify: OK. {len(specs)} lesson file(s), {checks} check(s): solutions 100% and "
        f"stable over {args.runs} run(s), stubs 0 and importing, and the other "
        f"{len(rules.RULES) - sum(r.graded for r in rules.RULES)} rules hold "
        "(`grade verify --rules` lists them)"
    )
    return 0
