"""Write the student repository: what students clone, with nothing they must not see.

    grade release OUT [--course PATH] [--fail-under PERCENT]

OUT gets the course's stubs (exercises/), the installed grader's package with
the PUBLIC part of every suite (hidden checks, and the helpers only they used,
cut out; each suite records how many checks and points it lost as
`HIDDEN = {...}`) and its templates, a pyproject.toml (see
`grader.course.tree`), the lesson spec (`docs/lesson-spec.md` of the course, when it
has one: the contract students write against), a README for students, a .gitignore
(which keeps `.grade/hints.json`: the hints a student revealed go with their work, for
`grade batch`) and a GitHub Actions workflow that grades every push. The instructor's part of the grader
stays out: the commands only instructors run (all but `grade`, `watch`, `hint`
and `notebooks`), `grader/mutate/` (its `equivalent.toml` describes the
solutions) and the templates of what instructors write. No solutions/, no tests/, no hidden
check. Before finishing, the tree is searched for every hidden check's name,
id and hint (unless a public check has the same hint) and for every solution
body; any hit is an error and OUT is removed. (A hidden check's message is made
when it runs: what it is built from goes with the check's code.)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grader import catalog, hints
from grader.commands import course, shared
from grader.course import assign, ci_template, public, tree
from grader.course.release import ReleaseError, release
from grader.reports import labels


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "out", metavar="OUT", help="the folder to write (must not exist, or be empty)"
    )
    course.add_argument(parser)
    parser.add_argument(
        "--solutions",
        metavar="DIR",
        help="the reference solutions, to check exercises/ against "
        "(default: the course's solutions/)",
    )
    parser.add_argument(
        "--exercises",
        metavar="DIR",
        help="the stubs to release (default: the course's exercises/)",
    )
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
    parser.add_argument("--force", action="store_true", help="replace an earlier release in OUT")


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    solutions = course.part(args, args.solutions, "solutions")
    exercises = course.part(args, args.exercises, "exercises")
    suites_dir = shared.suites_dir(args)
    for folder in (solutions, exercises, suites_dir):
        if not folder.is_dir():
            raise shared.UsageError(f"{folder}: no such folder")
    try:
        released = release(
            out,
            solutions,
            exercises,
            suites_dir,
            args.fail_under,
            args.force,
            course_dir=course.root(args),
        )
    except (
        ReleaseError,
        public.PublicSuiteError,
        assign.MarkerError,
        tree.TreeError,
        catalog.CatalogError,
        hints.SettingError,
    ) as exc:
        raise shared.UsageError(str(exc)) from None
    public_checks = sum(len(s.checks) for s in released)
    hidden_checks = sum(s.hidden_checks for s in released)
    hidden_points = labels.number(sum(s.hidden_points for s in released))
    print(
        f"wrote the student repository {out}: {len(released)} lesson file(s), {public_checks} public "
        f"check(s); {hidden_checks} hidden check(s) ({hidden_points} point(s)) left out"
    )
    return 0
