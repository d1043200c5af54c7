"""Check the course's invariants before students see it.

    grade verify [--course PATH] [--runs 2] [--only NAMES] [--jobs N] [--spec FILE]
    grade verify --list-checks [--only NAMES]

- every suite has a solution and a stub, every solution has a suite;
- every exercise is worth points and every check has a hint and a nudge;
- every check cites, verbatim, the words of the lesson spec it enforces (`--spec`,
  default the course's docs/lesson-spec.md), from its lesson file's section or the
  spec's conventions (`grader.spec`);
- exercises/ is what `grade assign` generates from solutions/;
- the reference solutions score 100%, run after run: the results JSON
  without timings is identical over `--runs` gradings;
- every untouched stub imports cleanly and scores 0 (status not_attempted).

With `--only`, only the lesson files it names are looked at (their suites, solutions and
stubs); the other files of the course are neither graded nor reported. Exit 0 when all
hold, 1 with the list of violations otherwise. `--list-checks` grades nothing: it prints
each check with its points and the spec's words it enforces.

While it grades, a terminal shows a live line: the gradings done of all (each lesson file
of each run of the solutions, and of the stubs) and what is being graded now with the
time its limit leaves ("run 1: 03_jit 0:41 left, stubs: 04_vmap 0:55 left"); each
graded file gets its line (`run 1: PASS 21/21 03_jit (3.1 s)`), each phase its total. In
a pipe or a file (a CI log) the same lines, plain (`[3/45] run 1: ...`), nothing redrawn.
"""

from __future__ import annotations

import argparse
import concurrent.futures
from pathlib import Path

from rich.text import Text

from grader import catalog
from grader.commands import course, shared
from grader.course.verify import (
    solution_problems,
    spec_problems,
    stability_problems,
    static_problems,
    stub_problems,
    submission,
)
from grader.model import ExerciseResult, Report
from grader.reports import console, labels, results, terminal
from grader.runner import engine


def add_arguments(parser: argparse.ArgumentParser) -> None:
    course.add_argument(parser)
    parser.add_argument(
        "--solutions",
        metavar="DIR",
        help="the reference solutions (default: the course's solutions/)",
    )
    parser.add_argument(
        "--exercises",
        metavar="DIR",
        help="the student stubs (default: the course's exercises/)",
    )
    parser.add_argument(
        "--runs",
        type=shared.positive_int,
        default=2,
        metavar="N",
        help="grade the solutions N times and compare (default 2)",
    )
    parser.add_argument(
        "--spec",
        metavar="FILE",
        help="the lesson spec the checks cite (default: the course's docs/lesson-spec.md)",
    )
    parser.add_argument(
        "--list-checks",
        action="store_true",
        help="print every check with its points and the spec's words it enforces; grade nothing",
    )
    shared.add_jobs_option(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="only the verdict")
    shared.add_grading_options(parser)


def list_checks(specs: list[catalog.ExerciseSpec]) -> None:
    for exercise in specs:
        print(f"{exercise.name} ({labels.points(exercise.max_score, exercise.max_score)})")
        for check in exercise.checks:
            print(f"  {check.id} ({check.points:g}): {check.name}")
            print(f"      spec: {check.spec or '(none)'}")


def run(args: argparse.Namespace) -> int:
    if args.list_checks:
        list_checks(shared.specs(args))
        return 0
    solutions = course.part(args, args.solutions, "solutions")
    exercises = course.part(args, args.exercises, "exercises")
    for folder in (solutions, exercises):
        if not folder.is_dir():
            raise shared.UsageError(f"{folder}: no such folder")
    specs = shared.specs(args)
    jobs = shared.jobs(args)
    options = shared.options(args, jobs=jobs.count)

    def say(text: str) -> None:
        if not args.quiet:
            print(text, flush=True)

    problems = static_problems(specs, solutions, exercises, selected=bool(args.only))
    problems += spec_problems(
        specs, Path(args.spec) if args.spec else course.root(args) / "docs" / "lesson-spec.md"
    )

    say(
        f"Verifying {len(specs)} lesson file(s): {args.runs} run(s) of {solutions}/, one of "
        f"{exercises}/, with {min(jobs.count, len(specs))} job(s) ..."
    )
    out = console.stdout()
    color = console.has_color(out)
    total = len(specs) * (args.runs + 1)
    with (
        console.Progress(
            total, out, description="verify", unit="grading", quiet=args.quiet
        ) as live,
        concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool,
    ):

        def grade(folder: Path, label: str, phase: str) -> Report:
            """Grade `folder`, each lesson file's line and the phase's total said as they
            come; `phase` ("run 1", "stubs") names what runs on the live line."""

            def done(index: int, count: int, result: ExerciseResult) -> None:
                line = Text.from_ansi(terminal.done_line(result, color=color))
                live.advance(Text.assemble(f"{phase}: ", line), f"{phase}: {result.name}")

            def starting(name: str, limit_s: float) -> None:
                live.start(f"{phase}: {name}", limit_s)

            report = engine.grade(
                specs, submission(folder, specs), options, done, on_start=starting
            )
            live.note(
                f"{label}: {labels.points(report.score, report.max_score)} "
                f"({labels.percent(report.score, report.max_score)}) in {report.duration_s:.1f} s"
            )
            return report

        stubs = pool.submit(grade, exercises, f"{exercises}/ (stubs)", "stubs")
        runs = [
            grade(solutions, f"{solutions}/ run {i + 1}", f"run {i + 1}") for i in range(args.runs)
        ]
        stub_report = stubs.result()
    problems += solution_problems(runs[0])
    problems += stability_problems([results.document(r) for r in runs])
    problems += stub_problems(stub_report)

    checks = sum(len(s.checks) for s in specs)
    if problems:
        print(f"\ngrade verify: {len(problems)} violation(s):")
        for problem in problems:
            print(("      " if problem.startswith("    ") else "  - ") + problem.strip())
        return 1
    print(
        f"\ngrade verify: OK. {len(specs)} lesson file(s), {checks} check(s): solutions 100% and "
        f"stable over {args.runs} run(s), stubs 0 and importing, hints, nudges, points and spec citations present, "
        f"{exercises}/ in sync with {solutions}/"
    )
    return 0
