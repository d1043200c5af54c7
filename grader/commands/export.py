"""Write a graded class's gradebook in the CSV format an LMS imports.

    grade export canvas GRADES_DIR -o FILE [--roster CANVAS_EXPORT.csv] [--percent]
    grade export moodle GRADES_DIR -o FILE [--percent]

GRADES_DIR is the `--out` folder of `grade batch` (its students/ results). Canvas
gets its gradebook CSV (Student, ID, SIS User ID, SIS Login ID, Section, one
column per lesson file, a Points Possible row); give `--roster` the gradebook
Canvas exports to match each student folder to its Canvas row. Moodle gets a
student column and one column per lesson file, mapped when importing. Scores are
points, or percentages of each lesson file's maximum with `--percent`. The
README's `grade export` section gives the import steps.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.classroom import lms, roster
from grader.commands import shared


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
        "--percent",
        action="store_true",
        help="scores as percentages of each lesson file's maximum, not points",
    )


def run(args: argparse.Namespace) -> int:
    grades = Path(args.grades)
    if not (grades / roster.STUDENTS).is_dir():
        raise shared.UsageError(
            f"{grades}: no {roster.STUDENTS}/ folder in it; give the --out folder of `grade batch`"
        )
    students = roster.load(grades)
    if not students:
        raise shared.UsageError(f"{grades / roster.STUDENTS} holds no results")
    if args.roster and args.lms != "canvas":
        raise shared.UsageError("--roster is for canvas; Moodle maps students when importing")
    missing: list[str] = []
    if args.lms == "canvas":
        people = None
        if args.roster:
            try:
                people = lms.read_canvas_roster(Path(args.roster).read_text(encoding="utf-8"))
            except (OSError, lms.RosterError) as exc:
                raise shared.UsageError(f"--roster {args.roster}: {exc}") from None
        text, missing = lms.canvas(students, percent=args.percent, people=people)
    else:
        text = lms.moodle(students, percent=args.percent)
    Path(args.output).write_text(text, encoding="utf-8")
    print(f"{args.lms}: {len(students) - len(missing)} student(s) -> {args.output}")
    if missing:
        print(
            f"grade export: not in the roster, left out: {', '.join(missing)}",
            file=sys.stderr,
        )
        return 1
    return 0
