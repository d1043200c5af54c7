# `grade export`: its help is the docstring of grader.batch.export, where its logic is.
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.batch import export
from grader.classroom import lms, matching

__doc__ = export.__doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("lms", choices=lms.FORMATS, help="the LMS whose import format to write")
    parser.add_argument("grades", metavar="GRADES_DIR", help="the --out folder of `grade batch`")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="the CSV to write")
    parser.add_argument(
        "--roster",
        metavar="FILE",
        help="canvas: the gradebook CSV exported from Canvas, to match student folders "
        "(by SIS Login ID, SIS User ID, ID or name) to Canvas's students",
    )
    parser.add_argument(
        "--match-by",
        choices=tuple(matching.BY),
        help="canvas: the folder names are the students' SIS user IDs (sis-user) or, with "
        "--roster, SIS login IDs (sis-login): the one roster column they are compared with",
    )
    parser.add_argument(
        "--percent",
        action="store_true",
        help="scores as percentages of each lesson file's maximum, not points",
    )


def run(args: argparse.Namespace) -> int:
    done = export.export(
        args.lms,
        Path(args.grades),
        Path(args.output),
        roster_file=args.roster or None,
        match_by=args.match_by,
        percent=args.percent,
    )
    print(f"{args.lms}: {done.students} student(s) -> {args.output}")
    if done.missing:
        print(
            f"grade export: not in the roster, left out: {', '.join(done.missing)}", file=sys.stderr
        )
        return 1
    return 0
