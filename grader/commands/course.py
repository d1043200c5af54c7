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


def folder(args: argparse.Namespace, given: str | None, name: str) -> Path:
    """`part`, which must exist."""
    found = part(args, given, name)
    if not found.is_dir():
        raise UsageError(f"{found}: no such folder")
    return found


def add_part(parser: argparse.ArgumentParser, name: str, what: str) -> None:
    """`--NAME DIR`: a part of the course given on its own (default: the course's NAME/)."""
    parser.add_argument(f"--{name}", metavar="DIR", help=f"{what} (default: the course's {name}/)")


def add_lock_arguments(parser: argparse.ArgumentParser, extras: str) -> None:
    """`--extras` and `--wheelhouse`: what a requirements.lock made here pins (a committed
    one is used as it is; `grader.course.lock`)."""
    parser.add_argument(
        "--extras",
        default=extras,
        metavar="NAME[,NAME...]",
        help=f"the grader's extras a lock made here covers (default {extras}: Flax and Equinox "
        "for 11_frameworks; '' for none); a committed requirements.lock is used as it is",
    )
    parser.add_argument(
        "--wheelhouse",
        metavar="DIR",
        help="a folder of the pinned packages' wheel files: the lock gets their sha256 and "
        "installs are hash-checked (default: versions only)",
    )


def wheelhouse(args: argparse.Namespace) -> Path | None:
    return Path(args.wheelhouse) if args.wheelhouse else None
