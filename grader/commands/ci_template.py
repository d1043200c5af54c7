# `grade ci-template`: its help is the docstring of grader.course.ci_template, where its logic is.
from __future__ import annotations

import argparse

from grader import grading
from grader.commands import course, shared
from grader.course import ci_template, lock
from grader.course.ci_template import DEFAULT_FAIL_UNDER, WORKFLOW

__doc__ = ci_template.__doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        metavar="FILE",
        help=f"where to write the workflow (default: the course's {WORKFLOW}; `-` prints it)",
    )
    course.add_argument(parser)
    parser.add_argument(
        "--fail-under",
        type=shared.percent,
        default=DEFAULT_FAIL_UNDER,
        metavar="PERCENT",
        help=f"fail the job below this score (default {DEFAULT_FAIL_UNDER:g})",
    )
    parser.add_argument(
        "--path",
        default=grading.DEFAULT_LESSONS,
        metavar="PATH",
        help=f"what the workflow grades (default {grading.DEFAULT_LESSONS})",
    )
    parser.add_argument(
        "--python",
        metavar="VERSION",
        help="Python version on the runner (default: the one requirements.lock is for)",
    )
    course.add_lock_arguments(parser, ci_template.DEFAULT_EXTRAS)
    parser.add_argument(
        "--timeout-minutes",
        type=int,
        default=ci_template.DEFAULT_TIMEOUT_MINUTES,
        metavar="N",
        help=f"the job's time limit (default {ci_template.DEFAULT_TIMEOUT_MINUTES})",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing workflow file")


def run(args: argparse.Namespace) -> int:
    out = course.part(args, None if args.out == "-" else args.out, WORKFLOW)
    repository = ci_template.repository_of(out, course.root(args))
    extras = tuple(e.strip() for e in args.extras.split(",") if e.strip())
    wheelhouse = course.wheelhouse(args)
    pinned, said = lock.for_course(repository, extras, wheelhouse)
    text = ci_template.workflow(
        fail_under=args.fail_under,
        path=args.path,
        python=args.python or pinned.python,
        timeout_minutes=args.timeout_minutes,
    )
    if args.out == "-":
        print(text, end="")
        return 0
    relock = wheelhouse is not None
    said = ci_template.write(out, text, repository, pinned, force=args.force, relock=relock) or said
    print(
        f"wrote {out}: grades {args.path} on every push, fails below {args.fail_under:g}%; {said}"
    )
    return 0
