"""Check the course's invariants before students see it.

    grade verify [--course PATH] [--runs N] [--only NAMES] [--jobs N] [--spec FILE]
    grade verify --list-checks [--only NAMES]
    grade verify --rules

The rules are one list, `grader.course.rules.RULES` (docs/authoring.md shows it;
`grade verify --rules` prints it): the files of each lesson and their markers, exercises/
in sync with solutions/, points, hints, nudges and spec citations (`--spec`, default the
course's docs/lesson-spec.md), nothing left to fill in from `grade new`, fixtures and their
tests where the course keeps them; then, graded: the reference solutions score 100%, run
after run (the results JSON without timings is identical over `--runs` gradings), and
every untouched stub imports cleanly and scores 0 (status not_attempted). Each violation
is headed by its rule's name.

With `--only`, only the lesson files it names are looked at (their suites, solutions and
stubs); the other files of the course are neither graded nor reported. Exit 0 when all
hold, 1 with the list of violations otherwise. `--list-checks` grades nothing: it prints
each check with its points and the spec's words it enforces; `--rules` prints the rules.

While it grades, a terminal shows a live line: the gradings done of all (each lesson file
of each run of the solutions, and of the stubs) and what is being graded now with the
time its limit leaves ("run 1: 03_jit 0:41 left, stubs: 04_vmap 0:55 left"); each
graded file gets its line (`run 1: PASS 21/21 03_jit (3.1 s)`), each phase its total. In
a pipe or a file (a CI log) the same lines, plain (`[3/45] run 1: ...`), nothing redrawn.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.text import Text

from grader import catalog
from grader.course import penalised, rules
from grader.course.layout import Course
from grader.model import ExerciseResult, Report
from grader.reports import console, labels, terminal
from grader.runner import engine, policy
from grader.runner.submission import Submission, SubmissionError, find

first_difference = rules.first_difference
comparable = rules.comparable
stability_problems = rules.stability_problems
solution_problems = rules.solution_problems
stub_problems = rules.stub_problems


def static_problems(
    specs: list[catalog.ExerciseSpec],
    solutions: Path,
    exercises: Path,
    *,
    selected: bool = False,
    spec: Path | None = None,
) -> list[str]:
    """What the rules that grade nothing find (`grader.course.rules`), in a course whose
    root holds `solutions` (its spec: `spec`, default docs/lesson-spec.md there). `selected`:
    the specs are the lesson files `--only` named, and only those files are looked at."""
    suites = specs[0].suite.parent if specs else solutions.parent / "grader" / "suites"
    course = Course.at(
        solutions.parent, suites=suites, solutions=solutions, exercises=exercises, spec=spec
    )
    return rules.problems(rules.Evidence(course, specs, selected), graded=False)


def help_problems(spec: catalog.ExerciseSpec) -> list[str]:
    """Help that recommends what the lesson file penalises (`grader.course.penalised`)."""
    return penalised.help_problems(spec)


def submission(folder: Path, specs: list[catalog.ExerciseSpec]) -> Submission:
    try:
        return find(folder, [s.name for s in specs])
    except SubmissionError:
        return Submission(folder, {})


def spec_problems(specs: list[catalog.ExerciseSpec], path: Path) -> list[str]:
    """Every check's citation against the spec at `path` (the rule `spec`)."""
    course = Course.at(path.parent, spec=path)
    return rules.BY_NAME["spec"].find(rules.Evidence(course, specs))


def list_checks(specs: list[catalog.ExerciseSpec]) -> str:
    """`grade verify --list-checks`: each check with its points and the spec's words."""
    lines = []
    for exercise in specs:
        lines.append(f"{exercise.name} ({labels.points(exercise.max_score, exercise.max_score)})")
        for check in exercise.checks:
            lines.append(f"  {check.id} ({check.points:g}): {check.name}")
            lines.append(f"      spec: {check.spec or '(none)'}")
    return "".join(line + "\n" for line in lines)


DEFAULT_RUNS = 2
"""Gradings of the solutions `grade verify` compares (`--runs`): two tell a stable result
from one that changes run to run."""


@dataclass(frozen=True)
class Request:
    """What `grade verify` looks at: `options.jobs` lesson files graded at once."""

    specs: list[catalog.ExerciseSpec]
    course: Course  # its solutions, exercises, suites and the lesson spec the checks cite
    options: policy.Options
    runs: int = DEFAULT_RUNS
    selected: bool = False  # `--only`: the course's other files are not looked at


def verify(
    request: Request, out: Console, say: Callable[[str], None], *, quiet: bool = False
) -> list[str]:
    """Every violation of the course's invariants (the module's docstring), the gradings'
    progress drawn on `out` (a live line on a terminal) and said to `say`."""
    specs, solutions, exercises = request.specs, request.course.solutions, request.course.exercises
    problems = rules.problems(rules.Evidence(request.course, specs, request.selected), graded=False)
    say(
        f"Verifying {len(specs)} lesson file(s): {request.runs} run(s) of {solutions}/, one of "
        f"{exercises}/, with {min(request.options.jobs, len(specs))} job(s) ..."
    )
    total = len(specs) * (request.runs + 1)
    with (
        console.Progress(total, out, description="verify", unit="grading", quiet=quiet) as live,
        concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool,
    ):
        grade = _grader(request, live, console.has_color(out))
        stubs = pool.submit(grade, exercises, f"{exercises}/ (stubs)", "stubs")
        runs = [
            grade(solutions, f"{solutions}/ run {i + 1}", f"run {i + 1}")
            for i in range(request.runs)
        ]
        stub_report = stubs.result()
    graded = rules.Evidence(request.course, specs, request.selected, runs, stub_report)
    return problems + rules.problems(graded, graded=True)


def _grader(
    request: Request, live: console.Progress, color: bool
) -> Callable[[Path, str, str], Report]:
    """Grades a folder, each lesson file's line and the phase's total said as they come;
    `phase` ("run 1", "stubs") names what runs on the live line."""

    def grade(folder: Path, label: str, phase: str) -> Report:
        def done(index: int, count: int, result: ExerciseResult) -> None:
            line = Text.from_ansi(terminal.done_line(result, color=color))
            live.advance(Text.assemble(f"{phase}: ", line), f"{phase}: {result.name}")

        def starting(name: str, limit_s: float) -> None:
            live.start(f"{phase}: {name}", limit_s)

        specs = request.specs
        report = engine.grade(
            specs, submission(folder, specs), request.options, done, on_start=starting
        )
        live.note(
            f"{label}: {labels.points(report.score, report.max_score)} "
            f"({labels.percent(report.score, report.max_score)}) in {report.duration_s:.1f} s"
        )
        return report

    return grade
