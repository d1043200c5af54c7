"""The course repository the instructor commands work on: the working folder, or
`--course PATH`.

    solutions/       the marked reference solutions
    exercises/       the stubs `grade assign` writes from them
    pyproject.toml   `[tool.grade]`, the course's settings (show_fixes)
    .github/workflows/grade.yml   what `grade ci-template` writes

`--solutions DIR` and `--exercises DIR` (relative to the working folder) still name a
part on its own. The grader's own files (its package, suites and templates) come from
the installed grader, never from the course: see `grader.course.tree`.
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
