"""`grade`: the command line.

    grade [PATH] [--only NAMES] [--json F] [--html F] [--gradescope F] [--junit F]
          [--fail-under PERCENT] [--seed N] [--timeout S] [--jobs N]
          [--isolation LEVEL] [--require-isolation LEVEL] ...
    grade COMMAND ...   (see `grade --help` for the commands)
    grade --version

PATH defaults to exercises/, or to the working folder when it holds lesson files
itself (`grade` run inside exercises/). `--json -` (or `--gradescope -`, `--junit -`)
writes that report to standard output; the terminal report then goes to standard
error, so the output can be piped.

Exit codes: 0 a report was produced (and the score reached --fail-under),
1 the score is below --fail-under, 2 the grader could not run (bad path or
option, or less isolation than --isolation/--require-isolation ask for; the
message says what to fix). The grading options `grade` shares with its
commands are defined once, in `grader.commands.shared`.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from rich.text import Text

from grader import capacity, grading
from grader.commands import shared
from grader.commands.shared import UsageError
from grader.errors import GraderError
from grader.model import ExerciseResult, Report
from grader.reports import console, controls
from grader.runner.submission import find
from grader.version import __version__

# Further commands: name -> module with `add_arguments(parser)` and `run(args) -> int`.
COMMANDS: dict[str, str] = {
    "assign": "grader.commands.assign",
    "new": "grader.commands.new",
    "verify": "grader.commands.verify",
    "batch": "grader.commands.batch",
    "export": "grader.commands.export",
    "release": "grader.commands.release",
    "ci-template": "grader.commands.ci_template",
    "gradescope-bundle": "grader.commands.gradescope_bundle",
    "notebooks": "grader.commands.notebooks",
    "mutate": "grader.commands.mutate",
    "watch": "grader.commands.watch",
    "hint": "grader.commands.hint",
}

EXIT_OK, EXIT_BELOW, EXIT_USAGE = 0, 1, 2
STDOUT = grading.STDOUT  # `--json -`: the report is written to standard output


def installed(command: str) -> bool:
    """Whether this grader has the command: a student repository (`grade release`) holds
    only the students' commands."""
    return importlib.util.find_spec(COMMANDS[command]) is not None


def grade_parser(prog: str = "grade") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Grade lesson files of the 'Introduction to JAX' lesson with the hidden checks.",
        epilog="Commands: "
        + (", ".join(sorted(c for c in COMMANDS if installed(c))) or "(none)")
        + ". `grade COMMAND --help`.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    shared.add_path_argument(parser)
    parser.add_argument(
        "--json",
        metavar="FILE",
        help="write the results as JSON (schema_version 1); `-`: to standard output",
    )
    parser.add_argument(
        "--html",
        metavar="FILE",
        default=grading.DEFAULT_HTML,
        help=f"write the self-contained HTML report here (default: {grading.DEFAULT_HTML})",
    )
    parser.add_argument("--no-html", action="store_true", help="do not write the HTML report")
    parser.add_argument(
        "--gradescope", metavar="FILE", help="write Gradescope's results.json (`-`: to stdout)"
    )
    parser.add_argument("--junit", metavar="FILE", help="write JUnit XML (`-`: to stdout)")
    parser.add_argument(
        "--fail-under",
        type=shared.percent,
        metavar="PERCENT",
        help="exit 1 when the score is below this percentage of the maximum",
    )
    shared.add_jobs_option(parser)
    shared.add_grading_options(parser)
    parser.add_argument(
        "--no-color", action="store_true", help="no colour (also when NO_COLOR is set)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    return parser


def _outputs(args: argparse.Namespace) -> dict[str, Path]:
    outputs: dict[str, Path] = {}
    for kind in ("json", "gradescope", "junit"):
        if getattr(args, kind):
            outputs[kind] = Path(getattr(args, kind))
    if args.html and not args.no_html:
        outputs["html"] = Path(args.html)
    piped = [kind for kind, path in outputs.items() if path == STDOUT]
    if "html" in piped:
        raise UsageError("--html -: the HTML report needs a file; give a file name")
    if len(piped) > 1:
        raise UsageError(
            f"{' and '.join('--' + k + ' -' for k in piped)}: only one report can go to "
            "standard output; give the others a file name"
        )
    for kind, path in outputs.items():
        if path == STDOUT:
            continue
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.is_dir():
            raise UsageError(
                f"--{kind} {path}: the folder {parent} does not exist; create it first"
            )
        if path.is_dir():
            raise UsageError(f"--{kind} {path} is a folder; give a file name")
    return outputs


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def run_grade(argv: Sequence[str]) -> int:
    from grader.reports import terminal

    args = grade_parser().parse_args(argv)
    try:
        specs = shared.specs(args)
        outputs = _outputs(args)
        path = grading.lessons_path(args.path, [s.name for s in specs])
        submission = find(path, [s.name for s in specs])
        if submission.single is not None:
            specs = [s for s in specs if s.name == submission.single]
        jobs = shared.jobs(args)
        options = shared.options(args, jobs=jobs.count)
        level = grading.isolation(options, specs, grading.private(submission)).level
    except GraderError as exc:
        print(f"grade: error: {controls.visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE

    # What people read goes to standard error when a report goes to standard output.
    piped = STDOUT in outputs.values()
    out = (console.stderr if piped else console.stdout)(no_color=args.no_color)
    color = console.has_color(out)
    human = sys.stderr if piped else sys.stdout
    if not args.quiet:
        out.print(_heading(args, path, len(specs), jobs, level), soft_wrap=True)

    progress = console.Progress(len(specs), out, unit="lesson file", quiet=args.quiet)
    hidden = (sum(s.hidden_checks for s in specs), sum(s.hidden_points for s in specs))

    def on_result(index: int, total: int, result: ExerciseResult) -> None:
        progress.advance(Text.from_ansi(terminal.done_line(result, color=color)), result.name)

    def shown(report: Report) -> None:
        print(file=human)
        text = terminal.render(
            report, color=color, hidden_checks=hidden[0], hidden_points=hidden[1]
        )
        print(text, end="", file=human)

    graded = grading.run(
        specs,
        submission,
        options,
        suites=shared.suites_dir(args),
        outputs=outputs,
        on_result=on_result,
        on_start=progress.start,
        live=progress,
        shown=shown,
    )
    return _finish(args, outputs, graded, human)


def _heading(
    args: argparse.Namespace, path: Path, files: int, jobs: capacity.Jobs, level: str
) -> str:
    """What `grade` grades, where, with how many jobs, at which isolation."""
    where = "the working folder" if path == Path(".") else controls.visible(str(path))
    running = min(jobs.count, files)
    why = f"; {jobs.why}" if jobs.why and running == jobs.count else ""
    return (
        f"Grading {_plural(files, 'lesson file')} in {where} with "
        f"{_plural(running, 'job')} (seed {args.seed}, isolation {level}{why}) ..."
    )


def _finish(
    args: argparse.Namespace, outputs: dict[str, Path], graded: grading.Graded, human: TextIO
) -> int:
    """The reports written (or why not), and the exit code."""
    report, errors = graded.report, graded.errors
    for kind, target in outputs.items():
        if not args.quiet and target != STDOUT and not any(str(target) in e for e in errors):
            print(f"{kind} report: {target}", file=human)
    for error in errors:
        print(f"grade: error: {error}", file=sys.stderr)
    if errors:
        return EXIT_USAGE
    if args.fail_under is not None and report.fraction * 100 < args.fail_under:
        print(
            f"grade: score {report.fraction * 100:.1f}% is below --fail-under {args.fail_under:g}%",
            file=sys.stderr,
        )
        return EXIT_BELOW
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS and not installed(argv[0]):
        print(
            f"grade {argv[0]}: error: an instructor's command, left out of this student "
            "repository; run it where the course is written, with the full grader",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if argv and argv[0] in COMMANDS:
        module = importlib.import_module(COMMANDS[argv[0]])
        parser = argparse.ArgumentParser(
            prog=f"grade {argv[0]}",
            description=module.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(parser)
        try:
            return int(module.run(parser.parse_args(argv[1:])))
        except GraderError as exc:  # any command's: one line, exit 2 (`grader.errors`)
            print(f"grade {argv[0]}: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    return run_grade(argv)


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
