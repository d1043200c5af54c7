"""What `grade` and its commands share: the grading options, declared once
(`add_grading_options`: --suites --only --seed --timeout --memory --isolation
--require-isolation; `add_jobs_option`: --jobs, `--workers` its deprecated alias), made
the exercises to grade (`specs`) and the engine's `Options`; the argument types; and
`UsageError`, the `grader.errors.GraderError` a command raises for bad input (exit 2, its
message printed, as for any other `GraderError`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grader import capacity, catalog, grading
from grader.arguments import percent as percent  # re-exported: the commands declare with it
from grader.arguments import positive as positive
from grader.arguments import positive_int as positive_int
from grader.capacity import Jobs
from grader.errors import GraderError
from grader.runner import policy
from grader.sandbox import isolation
from grader.sandbox.isolation import Level


class UsageError(GraderError):
    """Bad input from the user: the message names what was wrong and what to do."""


class _DeprecatedAlias(argparse.Action):
    """An old option name: still works, and says which name to use instead."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        self.instead: str = kwargs.pop("instead")
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        print(
            f"{parser.prog}: warning: {option_string} is deprecated; use {self.instead} "
            "(same meaning)",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def add_jobs_option(
    parser: argparse.ArgumentParser, *, what: str = "lesson files", workers_alias: bool = False
) -> None:
    """`--jobs N`: how many `what` are graded at once (default: `jobs(args)` decides).
    `workers_alias` keeps `--workers N` working, with a warning, where it was the name."""
    parser.add_argument(
        "--jobs",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"{what} graded at once (default: the number of CPUs, fewer when the memory "
        "available does not hold that many grading processes of --memory GiB)",
    )
    if workers_alias:
        parser.add_argument(
            "--workers",
            dest="jobs",
            type=positive_int,
            action=_DeprecatedAlias,
            instead="--jobs",
            metavar="N",
            help="deprecated: the same as --jobs",
        )


def jobs(args: argparse.Namespace) -> Jobs:
    """The `--jobs` asked for, or the automatic count (`grader.capacity`)."""
    return capacity.jobs(args.jobs, args.memory)


def add_isolation_option(
    parser: argparse.ArgumentParser, *, require: Level = policy.DEFAULT_REQUIRED
) -> None:
    """`--require-isolation LEVEL` (default `require`)."""
    parser.add_argument(
        "--require-isolation",
        choices=isolation.LEVELS[::-1],
        default=require,
        metavar="LEVEL",
        help="refuse to grade (exit 2) when this machine cannot keep student code apart at least "
        f"this well: strict, user or basic (default {require})",
    )


def add_grading_options(
    parser: argparse.ArgumentParser, *, require: Level = policy.DEFAULT_REQUIRED
) -> None:
    """The options every grading command has (see the module's docstring)."""
    parser.add_argument(
        "--suites",
        metavar="DIR",
        help="grade with these suites (default: the suites installed with the grader)",
    )
    parser.add_argument(
        "--only",
        default="",
        metavar="NAME[,NAME...]",
        help="grade only these lesson files, e.g. --only 03_jit,ex2_per_example_grads",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=policy.DEFAULT_SEED,
        help=f"seed for generated inputs (default {policy.DEFAULT_SEED})",
    )
    parser.add_argument(
        "--timeout",
        type=positive,
        metavar="SECONDS",
        help=f"time limit per lesson file (default: each suite's own, "
        f"{catalog.DEFAULT_TIMEOUT_S:g} s)",
    )
    parser.add_argument(
        "--memory",
        type=positive,
        default=float(policy.DEFAULT_MEMORY_GIB),
        metavar="GIB",
        help=f"memory a grading process may allocate, in GiB (default {policy.DEFAULT_MEMORY_GIB})",
    )
    parser.add_argument(
        "--isolation",
        choices=policy.ISOLATION_CHOICES,
        default=policy.DEFAULT_ISOLATION,
        help="how student code is kept apart: strict (a user of its own in its own namespaces), "
        "user (a user of its own), basic (a separate process); auto (default) takes the "
        "strongest this machine allows. Asking for more than it allows is an error",
    )
    add_isolation_option(parser, require=require)


def add_path_argument(parser: argparse.ArgumentParser) -> None:
    """The lesson files to grade, a folder or one file (default: `lessons_path`)."""
    parser.add_argument(
        "path",
        nargs="?",
        help=f"a folder of lesson files or one lesson file (default: {grading.DEFAULT_LESSONS}/, or "
        "the working folder when it holds lesson files itself)",
    )


def suites_dir(args: argparse.Namespace) -> Path:
    return Path(args.suites).resolve() if args.suites else catalog.SUITES_DIR


def specs(args: argparse.Namespace) -> list[catalog.ExerciseSpec]:
    """The exercises to grade: the suites in --suites, restricted to --only."""
    return grading.exercises(suites_dir(args), args.only)


def options(args: argparse.Namespace, jobs: int = 1) -> policy.Options:
    return policy.Options(
        seed=args.seed,
        timeout_s=args.timeout,
        memory_bytes=int(args.memory * 2**30),
        jobs=jobs,
        isolation=args.isolation,
        require_isolation=args.require_isolation,
    )
