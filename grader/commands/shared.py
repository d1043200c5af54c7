"""What several commands share: the grading options and how they become specs and Options."""

from __future__ import annotations

import argparse
from pathlib import Path

from grader import catalog, cli
from grader.runner import engine


def add_grading_options(parser: argparse.ArgumentParser) -> None:
    """`--suites`, `--only`, `--seed`, `--timeout`, `--memory`, as `grade` has them."""
    parser.add_argument("--suites", metavar="DIR",
                        help="grade with these suites (default: the suites installed with the grader)")
    parser.add_argument("--only", default="", metavar="NAME[,NAME...]",
                        help="only these lesson files, e.g. --only 03_jit,ex2_per_example_grads")
    parser.add_argument("--seed", type=int, default=0, help="seed for generated inputs (default 0)")
    parser.add_argument("--timeout", type=cli._positive, metavar="SECONDS",
                        help="time limit per lesson file (default: each suite's own)")
    parser.add_argument("--memory", type=cli._positive, default=4.0, metavar="GIB",
                        help="memory a grading process may allocate, in GiB (default 4)")


def specs(args: argparse.Namespace) -> list[catalog.ExerciseSpec]:
    """The exercises to grade, with `grade`'s own rules and messages for --suites/--only."""
    return cli._specs(args)


def suites_dir(args: argparse.Namespace) -> Path:
    return Path(args.suites).resolve() if args.suites else catalog.SUITES_DIR


def options(args: argparse.Namespace, jobs: int = 1) -> engine.Options:
    return engine.Options(
        seed=args.seed,
        timeout_s=args.timeout,
        memory_bytes=int(args.memory * 2**30),
        jobs=jobs,
    )


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
