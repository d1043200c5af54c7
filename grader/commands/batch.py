# `grade batch`: its help is the docstring of grader.batch.run, where its logic is.
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from grader import grading
from grader.batch import interrupt, warm
from grader.batch import run as class_run
from grader.commands import shared
from grader.reports import controls
from grader.runner import policy

__doc__ = class_run.__doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "submissions",
        metavar="SUBMISSIONS_DIR",
        help="a folder with one folder of lesson files per student",
    )
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="where the reports and the gradebook go"
    )
    shared.add_jobs_option(parser, what="students' lesson files", workers_alias=True)
    parser.add_argument(
        "--student",
        action="append",
        default=[],
        metavar="NAME",
        help="grade only this student (repeatable) and update the gradebook",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="grade on a dask.distributed cluster, e.g. tcp://10.0.0.5:8786",
    )
    parser.add_argument(
        "--stubs",
        metavar="DIR",
        default=grading.DEFAULT_LESSONS,
        help="the stubs handed out (default: exercises/): their code is not counted when "
        "comparing students' files",
    )
    parser.add_argument(
        "--regrade",
        action="store_true",
        help="grade every student again, also those whose results are for their files now "
        "(by default they are kept: an interrupted batch resumes)",
    )
    parser.add_argument("--solutions", metavar="DIR", help=warm.HELP)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    shared.add_grading_options(parser, require=policy.CLASS_REQUIRED)


def run(args: argparse.Namespace) -> int:
    # Ctrl-C and SIGTERM are the batch's from here (`grader.batch.interrupt`)
    stop = interrupt.Stop(on_exit=lambda: print(class_run.AT_ONCE, file=sys.stderr))
    with stop.handling():
        try:
            with stop.waiting():
                request = _request(args)
            outcome = class_run.run(request, _say(args.quiet), stop)
        except interrupt.Interrupted as exc:  # before any student was graded
            interrupt.end_descendants()
            print(f"grade batch: interrupted ({exc}) before grading began", file=sys.stderr)
            return interrupt.EXIT_CODE
        print(class_run.summary(outcome))
        for problem in outcome.problems:
            print(f"grade batch: {controls.visible(problem)}", file=sys.stderr)
        stopped = class_run.stopped(outcome)
        if stopped:
            print(controls.visible(stopped), file=sys.stderr)
    if outcome.write_failed:
        return 2
    if outcome.interrupted:
        return interrupt.EXIT_CODE
    return 1 if any(p for p in outcome.problems) else 0


def _request(args: argparse.Namespace) -> class_run.Request:
    submissions = Path(args.submissions)
    if not submissions.is_dir():
        raise shared.UsageError(
            f"{submissions}: no such folder (give the folder holding one folder per student)"
        )
    return class_run.Request(
        submissions,
        Path(args.out),
        shared.specs(args),
        shared.options(args),
        Path(args.stubs),
        [n for arg in args.student for n in arg.split(",") if n],
        args.scheduler,
        shared.jobs(args).count,
        args.quiet,
        args.regrade,
        warm.solutions(args.solutions),
    )


def _say(quiet: bool) -> Callable[[str], None]:
    def say(text: str) -> None:
        if not quiet:
            print(text, file=sys.stderr, flush=True)

    return say
