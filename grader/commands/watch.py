"""Regrade a lesson file each time it is saved, on a worker kept warm between runs.

    grade watch [PATH] [--only NAMES] [--seed N] [--timeout S] [--memory GIB]
                [--isolation LEVEL] [--require-isolation LEVEL] [--no-color]

Watches PATH (a folder of lesson files, default exercises/, or one lesson file,
which is graded at once). Each save grades only the file saved, and the screen
shows its line (as `grade` prints it), its first failing check (with the checks
that share its cause), the hint, and what to do next; the first failing check is
drawn as soon as it fails, while the file's other checks still run. JAX is imported
once, when the command starts, and the session's sandboxes share a compilation
cache: a regrade costs the file's checks, with little compiling. A file saved while
it is being graded is graded again from the start; a syntax error is shown at
once, without a grading run. `q` or Ctrl-C leaves, and ends every process the
command started.

Exit codes: 0 left with q or Ctrl-C, 2 the command could not start (bad path or
option; the message says what to fix).
"""

from __future__ import annotations

import argparse

from grader.commands import shared
from grader.commands.shared import UsageError
from grader.reports import console as consoles
from grader.runner.submission import SubmissionError, find
from grader.watch.session import Session, quit_signals


def add_arguments(parser: argparse.ArgumentParser) -> None:
    shared.add_path_argument(parser)
    parser.add_argument("--no-color", action="store_true", help="plain text output")
    shared.add_grading_options(parser)


def run(args: argparse.Namespace) -> int:
    specs = shared.specs(args)
    path = shared.lessons_path(args.path, [s.name for s in specs])
    try:
        submission = find(path, [s.name for s in specs])
    except SubmissionError as exc:
        raise UsageError(str(exc)) from None
    options = shared.options(args)
    level = shared.check_isolation(options).level
    out = consoles.stdout(no_color=args.no_color)
    session = Session(specs, shared.suites_dir(args), path, submission, options, level, out)
    try:
        with quit_signals():
            session.loop()
    except KeyboardInterrupt:
        pass
    out.print("grade watch: stopped.")
    return 0
