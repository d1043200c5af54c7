"""`--course PATH`: the course repository the instructor commands work on (default: the
working folder), with solutions/, exercises/, pyproject.toml's `[tool.grade]` and the CI
workflow; `--solutions DIR` and `--exercises DIR` still name a part on its own. The
grader's own files come from the installed grader, never the course (`grader.course.tree`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.commands.shared import UsageError


def add_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--course",
        metavar="PATH",
        help="the course repository, with solutions/ and exercises/ (default: the working folder)",
    )


def root(args: argparse.Namespace) -> Path:
    """The course folder: `--course`, or the working folder."""
    folder = Path(args.course) if getattr(args, "course", None) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"--course {folder}: no such folder")
    return folder


def part(args: argparse.Namespace, given: str | None, name: str) -> Path:
    """A folder of the course: the one `given` on the command line, else `name` in it."""
    return Path(given) if given else root(args) / name
