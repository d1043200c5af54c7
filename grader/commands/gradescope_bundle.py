"""Build a Gradescope autograder bundle (the zip Gradescope's "Zip file upload" takes).

    grade gradescope-bundle autograder.zip [--only LESSONS] [--extras frameworks]
                            [--timeout S] [--seed N] [--require-isolation LEVEL]
                            [--course PATH]

`--only 03_jit` makes the autograder of a one-lesson assignment: only that
lesson's suite goes into the bundle, so an upload is graded (and its maximum
counted) on that lesson file alone.

The zip holds, at its root:
- `setup.sh`: run once by Gradescope; installs the grader from the bundle into
  /autograder/venv (Python 3.10+ on Gradescope's Ubuntu image);
- `run_autograder`: run per submission; grades /autograder/submission (or its
  exercises/ folder when a whole repository was uploaded) with every check,
  hidden ones included, and writes /autograder/results/results.json
  (`grade --gradescope`). Hidden checks are shown to students after grades are
  published. It refuses to grade below `--require-isolation` (default `user`:
  student code runs as a user of its own; Gradescope runs the autograder as
  root). If grading cannot start it still writes a results file saying why;
- the grader itself, from the installed grader: `grader/` with the full
  suites and its templates, a `pyproject.toml` (carrying the course's
  `[tool.grade]`) and a README naming the lesson files. No solutions.

`run_autograder` honours AUTOGRADER_ROOT, AUTOGRADER_PYTHON and AUTOGRADER_ARGS
so it can be tried locally; the zip is reproducible (sorted, fixed dates).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grader import catalog
from grader.commands import course, shared
from grader.course import tree
from grader.course.gradescope_bundle import build


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
    parser.add_argument(
        "--extras",
        default="frameworks",
        metavar="NAME[,NAME...]",
        help="optional dependencies to install (default frameworks: Flax and "
        "Equinox for 11_frameworks; '' for none)",
    )
    parser.add_argument(
        "--timeout",
        type=shared.positive,
        metavar="SECONDS",
        help="time limit per lesson file (default: each suite's own)",
    )
    parser.add_argument("--seed", type=int, help="seed for generated inputs (default 0)")
    shared.add_isolation_option(parser, require="user")
    parser.add_argument("--force", action="store_true", help="overwrite OUT.zip")


def run(args: argparse.Namespace) -> int:
    out, suites_dir = Path(args.out), shared.suites_dir(args)
    if out.suffix != ".zip":
        raise shared.UsageError(f"{out}: give a file name ending in .zip")
    if out.exists() and not args.force:
        raise shared.UsageError(f"{out} exists; pass --force to overwrite it")
    if not out.parent.is_dir():
        raise shared.UsageError(f"{out.parent} does not exist; create it first")
    if not suites_dir.is_dir():
        raise shared.UsageError(f"--suites {suites_dir}: no such folder")
    try:
        names = build(
            out,
            suites_dir,
            extras=args.extras,
            timeout=args.timeout,
            seed=args.seed,
            require_isolation=args.require_isolation,
            specs=shared.select(catalog.exercises(suites_dir), args.only),
            course_dir=course.root(args),
        )
    except (tree.TreeError, catalog.CatalogError) as exc:
        raise shared.UsageError(str(exc)) from None
    suites = sum(n.startswith("grader/suites/test_") for n in names)
    print(
        f"wrote {out}: {len(names)} files, {suites} suite(s) with their hidden checks; "
        "upload it as the assignment's autograder (Configure Autograder > Zip file upload)"
    )
    return 0
