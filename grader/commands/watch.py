# `grade watch`: its help is the docstring of grader.watch.session, where its loop is.
from __future__ import annotations

import argparse

from grader import grading
from grader.commands import shared
from grader.reports import console as consoles
from grader.watch import session

__doc__ = session.__doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    shared.add_path_argument(parser)
    parser.add_argument("--no-color", action="store_true", help="plain text output")
    shared.add_grading_options(parser)


def run(args: argparse.Namespace) -> int:
    specs = shared.specs(args)
    path = grading.lessons_path(args.path, [s.name for s in specs])
    out = consoles.stdout(no_color=args.no_color)
    session.watch(specs, shared.suites_dir(args), path, shared.options(args), out)
    out.print("grade watch: stopped.")
    return 0
