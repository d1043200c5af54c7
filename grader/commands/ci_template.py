"""Write a GitHub Actions workflow that grades a pushed submission.

    grade ci-template [--out .github/workflows/grade.yml] [--fail-under 60] [--path exercises]
                      [--course PATH]

The workflow (from `templates/github-workflow.yml.j2`) installs the
repository (`pip install .`), runs `grade PATH --html ... --json ... --junit
... --fail-under PERCENT`, uploads the HTML report, the JSON and the JUnit XML
as the `grade-report` artifact (also when grading fails), puts the score in
the job summary, and fails the job when the score is below the threshold
(`grade` exits 1). `grade release` writes the same workflow into the student
repository. `--out` is relative to the working folder, and defaults to the
course's (`--course PATH`) `.github/workflows/grade.yml`; `--out -` prints it
instead.
"""

from __future__ import annotations

import argparse

from grader.commands import course, shared
from grader.course.ci_template import DEFAULT_FAIL_UNDER, DEFAULT_PYTHON, WORKFLOW, workflow


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
        default="exercises",
        metavar="PATH",
        help="what the workflow grades (default exercises)",
    )
    parser.add_argument(
        "--python",
        default=DEFAULT_PYTHON,
        metavar="VERSION",
        help=f"Python version on the runner (default {DEFAULT_PYTHON})",
    )
    parser.add_argument(
        "--timeout-minutes",
        type=int,
        default=60,
        metavar="N",
        help="the job's time limit (default 60)",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing workflow file")


def run(args: argparse.Namespace) -> int:
    text = workflow(
        fail_under=args.fail_under,
        path=args.path,
        python=args.python,
        timeout_minutes=args.timeout_minutes,
    )
    if args.out == "-":
        print(text, end="")
        return 0
    out = course.part(args, args.out, WORKFLOW)
    if out.exists() and not args.force:
        raise shared.UsageError(f"{out} exists; pass --force to overwrite it")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}: grades {args.path} on every push, fails below {args.fail_under:g}%")
    return 0
