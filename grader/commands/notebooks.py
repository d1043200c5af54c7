# `grade notebooks`: its help is the docstring of grader.notebooks.convert, where the work is.
from __future__ import annotations

import argparse
from pathlib import Path

from grader import grading, state
from grader.notebooks import convert

__doc__ = convert.__doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from",
        dest="source",
        default=grading.DEFAULT_LESSONS,
        metavar="DIR",
        help=f"the lesson files to convert: {grading.DEFAULT_LESSONS} (default) or solutions, "
        "or any folder",
    )
    parser.add_argument(
        "--out",
        default=state.NOTEBOOKS,
        metavar="DIR",
        help=f"where to write the notebooks (default: {state.NOTEBOOKS}/; created if needed)",
    )
    parser.add_argument(
        "--only",
        default="",
        metavar="NAME[,NAME...]",
        help="convert only these lesson files, e.g. --only 03_jit,ex2_per_example_grads",
    )
    parser.add_argument(
        "--install",
        default=None,
        metavar="SPEC",
        help="what the notebooks' first cell pip-installs on a kernel without the grader "
        "(default: the release `grade release --url` recorded, `[tool.grade] release_url` "
        "here; with none, nothing: the cell asks for a kernel with the grader installed)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite notebooks that already exist (default: keep them)",
    )


def run(args: argparse.Namespace) -> int:
    done = convert.convert(
        Path(args.source),
        Path(args.out),
        only=args.only,
        install=args.install,
        force=args.force,
    )
    print(done.summary())
    return 0
