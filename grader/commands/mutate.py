# `grade mutate`: its help is the docstring of grader.mutate, where its logic is.
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader import mutate
from grader.commands import course, shared
from grader.commands.shared import UsageError

__doc__ = mutate.__doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    course.add_argument(parser)
    course.add_part(parser, "solutions", "the reference solutions to mutate")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    shared.add_jobs_option(parser, what="mutants (one warm worker each)")
    parser.add_argument(
        "--limit",
        type=shared.positive_int,
        metavar="N",
        help="grade at most N mutants per lesson file, spread over the operators",
    )
    parser.add_argument(
        "--fail-under",
        type=shared.percent,
        metavar="PERCENT",
        help="exit 1 when a file's kill rate is below this percentage",
    )
    parser.add_argument(
        "--equivalent",
        metavar="FILE",
        help="the equivalent mutants, id -> reason (default: grader/mutate/equivalent.toml)",
    )
    parser.add_argument(
        "--operators",
        default="",
        metavar="NAME[,NAME...]",
        help="use only these operators (default: all; --list shows them)",
    )
    parser.add_argument(
        "--ids",
        default="",
        metavar="ID[,ID...]",
        help="grade (or --list) only the mutants with these ids (`--list` shows the ids)",
    )
    parser.add_argument(
        "--list", action="store_true", help="print the mutants (id, line, diff) and exit"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    shared.add_grading_options(parser)


def run(args: argparse.Namespace) -> int:
    try:
        import libcst  # noqa: F401
    except ImportError:
        raise UsageError(
            "grade mutate needs libcst: install the grader's mutate extra (in the course's "
            "folder: pip install '.[mutate]')"
        ) from None
    from grader.mutate import campaign, equivalent, report

    solutions = course.folder(args, args.solutions, "solutions")
    if args.json and not Path(args.json).parent.is_dir():
        raise UsageError(f"--json {args.json}: the folder {Path(args.json).parent} does not exist")
    request = campaign.Request(
        shared.specs(args),
        solutions,
        shared.options(args, jobs=shared.jobs(args).count),
        Path(args.equivalent) if args.equivalent else equivalent.DEFAULT,
        args.operators,
        [i.strip() for i in args.ids.split(",") if i.strip()],
        args.limit,
        args.list,
        Path(args.json) if args.json else None,
    )

    def say(text: str) -> None:
        if not args.quiet:
            print(text, flush=True)

    def warn(text: str) -> None:
        print(f"grade mutate: {text}", file=sys.stderr)

    done = campaign.run(request, say, warn)
    if args.list:
        print(report.listing(done.summaries), end="")
        return 0
    survivors = report.survivors_text(done.summaries)
    if survivors:
        print("\n" + survivors)
    for summary in done.summaries:
        if summary.problem:
            print(f"{summary.name}: not graded: {summary.problem}")
    print("\n" + report.table(done.summaries), end="")
    print(f"({done.took} elapsed)")
    if args.json:
        say(f"json report: {args.json}")
    below = [] if args.fail_under is None else report.below(done.summaries, args.fail_under)
    for line in below:
        print(f"grade mutate: {line}", file=sys.stderr)
    return 1 if below else 0
