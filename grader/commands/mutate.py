"""Measure the hidden suites' strength with mutants of the reference solutions (instructors).

    grade mutate [--only NAMES] [--json FILE] [--jobs N] [--limit N] [--fail-under PERCENT]
                 [--course PATH] [--solutions DIR] [--equivalent FILE] [--operators NAMES]
                 [--ids IDS] [--list]

Each lesson file of `--solutions` (default: the course's solutions/) is mutated one
small defect at a time (`grader.mutate.operators`: a lax loop or branch replaced by Python, a key
split dropped or reused, an axis or sign changed, an update or returned state
dropped, jnp replaced by np, static_argnames removed, an off-by-one, ...). Every
mutant is graded with the hidden suites like a student's file, and is killed when
it scores below full marks (or errors, or times out). A survivor is a defect no
check sees, unless `--equivalent` (default grader/mutate/equivalent.toml) lists
it with the reason it behaves like the solution.

Prints every survivor with its diff and a table: file, mutants, killed,
equivalent, survivors, kill rate = killed / (mutants - equivalent).
`--limit N` grades at most N mutants per file (spread over the operators, the same
ones every run); `--ids ID[,ID...]` grades only the mutants with these ids (a survivor's
id, say, after a check was sharpened); `--list` prints the mutants and their ids without
grading (with `--ids`, only those: their diffs).

Exit codes: 0 done (and every file reached --fail-under), 1 a file's kill rate is
below --fail-under, 2 the command could not run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from grader.commands import course, shared
from grader.commands.shared import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    course.add_argument(parser)
    parser.add_argument(
        "--solutions",
        metavar="DIR",
        help="the reference solutions to mutate (default: the course's solutions/)",
    )
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
            "grade mutate needs libcst: pip install 'jax-lesson-grader[mutate]'"
        ) from None
    from grader.mutate import campaign, equivalent, report
    from grader.mutate.run import elapsed

    solutions = course.part(args, args.solutions, "solutions")
    if not solutions.is_dir():
        raise UsageError(f"--solutions {solutions}: no such folder")
    if args.json:
        parent = Path(args.json).parent
        if not parent.is_dir():
            raise UsageError(f"--json {args.json}: the folder {parent} does not exist")
    specs = shared.specs(args)
    wanted = [i.strip() for i in args.ids.split(",") if i.strip()]
    try:
        listed = equivalent.load(Path(args.equivalent) if args.equivalent else equivalent.DEFAULT)
    except equivalent.EquivalentFileError as exc:
        raise UsageError(f"the equivalent-mutants file is malformed: {exc}") from None
    try:
        ops = campaign.operators_named(args.operators)
        summaries, tasks = campaign.plan(
            specs, solutions, ops, listed, wanted=wanted, limit=args.limit
        )
    except campaign.CampaignError as exc:
        raise UsageError(str(exc)) from None
    for summary in summaries:
        for stale_id in summary.stale:
            print(
                f"grade mutate: stale entry in the equivalent-mutants file: [{summary.name}] "
                f"{stale_id!r} is no longer generated",
                file=sys.stderr,
            )
    if args.list:
        for summary in summaries:
            for mutant in summary.mutants:
                mark = " (equivalent)" if mutant.id in summary.equivalent else ""
                print(f"{summary.name} {mutant.id} line {mutant.line}{mark}\n{mutant.diff}")
            print(f"{summary.name}: {len(summary.mutants)} of {summary.generated} mutants")
        return 0

    jobs = shared.jobs(args).count
    options = shared.options(args, jobs=jobs)
    level = shared.check_isolation(options).level
    start = time.monotonic()

    def say(text: str) -> None:
        if not args.quiet:
            print(text, flush=True)

    say(
        f"Mutating {len(specs)} lesson file(s) in {solutions}: {len(tasks)} mutant(s) to grade "
        f"({jobs} job(s), isolation {level}) ..."
    )
    settings = campaign.Settings(options, level)
    campaign.grade(summaries, tasks, solutions, specs, settings, jobs, say, start)

    survivors = report.survivors_text(summaries)
    if survivors:
        print("\n" + survivors)
    for summary in summaries:
        if summary.problem:
            print(f"{summary.name}: not graded: {summary.problem}")
    print("\n" + report.table(summaries), end="")
    print(f"({elapsed(start)} elapsed)")
    if args.json:
        settings_doc = {
            "limit": args.limit,
            "seed": args.seed,
            "jobs": jobs,
            "isolation": level,
            "operators": [op.name for op in ops],
        }
        Path(args.json).write_text(
            json.dumps(report.document(summaries, settings_doc), indent=1) + "\n",
            encoding="utf-8",
        )
        say(f"json report: {args.json}")
    if args.fail_under is not None:
        below = [
            s for s in summaries if s.kill_rate is not None and s.kill_rate * 100 < args.fail_under
        ]
        for s in below:
            rate = s.kill_rate or 0.0
            print(
                f"grade mutate: {s.name} kill rate {rate * 100:.1f}% is below "
                f"--fail-under {args.fail_under:g}%",
                file=sys.stderr,
            )
        if below:
            return 1
    return 0
