# `grade gradescope-bundle`: its help is the docstring of grader.course.gradescope_bundle, where its logic is.
from __future__ import annotations

import argparse
from pathlib import Path

from grader import catalog, grading
from grader.commands import course, shared
from grader.course import gradescope_bundle
from grader.runner import policy

__doc__ = gradescope_bundle.__doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", metavar="OUT.zip", help="the bundle to write")
    parser.add_argument(
        "--suites", metavar="DIR", help="bundle these suites (default: the grader's own)"
    )
    parser.add_argument(
        "--only",
        default="",
        metavar="NAME[,NAME...]",
        help="bundle only these lesson files' suites: an assignment per lesson, e.g. "
        "--only 03_jit (default: every lesson file)",
    )
    course.add_argument(parser)
    course.add_lock_arguments(parser, "frameworks")
    parser.add_argument(
        "--timeout",
        type=shared.positive,
        metavar="SECONDS",
        help="time limit per lesson file (default: each suite's own)",
    )
    parser.add_argument("--seed", type=int, help="seed for generated inputs (default 0)")
    shared.add_isolation_option(parser, require=policy.CLASS_REQUIRED)
    parser.add_argument("--force", action="store_true", help="overwrite OUT.zip")


def run(args: argparse.Namespace) -> int:
    out, suites_dir = Path(args.out), shared.suites_dir(args)
    gradescope_bundle.check_target(out, suites_dir, args.force)
    built = gradescope_bundle.build(
        out,
        suites_dir,
        extras=args.extras,
        timeout=args.timeout,
        seed=args.seed,
        require_isolation=args.require_isolation,
        specs=grading.select(catalog.exercises(suites_dir), args.only),
        course_dir=course.root(args),
        wheelhouse=course.wheelhouse(args),
    )
    print(gradescope_bundle.summary(out, built))
    return 0
