"""Check the course's invariants before students see it.

    grade verify [--course PATH] [--runs 2] [--only NAMES] [--jobs N] [--spec FILE]
    grade verify --list-checks [--only NAMES]

- every suite has a solution and a stub, every solution has a suite;
- every exercise is worth points and every check has a hint and a nudge;
- every check cites, verbatim, the words of the lesson spec it enforces (`--spec`,
  default the course's docs/lesson-spec.md), from its lesson file's section or the
  spec's conventions (`grader.spec`);
- exercises/ is what `grade assign` generates from solutions/;
- the reference solutions score 100%, run after run: the results JSON
  without timings is identical over `--runs` gradings;
- every untouched stub imports cleanly and scores 0 (status not_attempted).

With `--only`, only the lesson files it names are looked at (their suites, solutions and
stubs); the other files of the course are neither graded nor reported. Exit 0 when all
hold, 1 with the list of violations otherwise. `--list-checks` grades nothing: it prints
each check with its points and the spec's words it enforces.

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
from typing import Any

from rich.console import Console
from rich.text import Text

from grader import catalog
from grader import spec as lesson_spec
from grader.course import assign, penalised
from grader.model import ExerciseResult, Report, without_timings
from grader.reports import console, labels, results, terminal
from grader.runner import engine, policy
from grader.runner.submission import Submission, SubmissionError, find


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The first place two JSON documents differ, as `exercises[2].checks[0].message`."""
    if type(a) is not type(b):
        return path or "(the whole document)"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}".lstrip(".")
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found.lstrip(".")
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else (path.lstrip(".") or "(the whole document)")


def static_problems(
    specs: list[catalog.ExerciseSpec], solutions: Path, exercises: Path, *, selected: bool = False
) -> list[str]:
    """What is wrong without grading anything: files, points, hints, sync. `selected`: the
    specs are the lesson files `--only` named, and only those files are looked at."""
    problems: list[str] = []
    names = {s.name for s in specs}
    for spec in specs:
        if spec.max_score <= 0:
            problems.append(f"{spec.name}: the suite's checks are worth no points")
        for check in spec.checks:
            if not check.hint.strip():
                problems.append(f"{spec.name} > {check.name}: no hint")
            if not check.nudge.strip():
                problems.append(f"{spec.name} > {check.name}: no nudge (the second level of help)")
        problems += help_problems(spec)
        for folder in (solutions, exercises):
            if not (folder / spec.filename).is_file():
                problems.append(f"{spec.name}: {folder / spec.filename} is missing")
    for path in [] if selected else sorted(solutions.glob("*.py")):
        if path.stem not in names and not path.name.startswith("_"):
            problems.append(
                f"{path}: no suite grades this lesson file (add grader/suites/test_{path.stem}.py)"
            )
    try:
        only = {s.filename for s in specs} if selected else None
        problems += assign.differences(solutions, exercises, only)
    except assign.MarkerError as exc:
        problems.append(f"the solution markers are malformed: {exc}")
    return problems


def help_problems(spec: catalog.ExerciseSpec) -> list[str]:
    """Help that recommends what the lesson file penalises (`grader.course.penalised`)."""
    return penalised.help_problems(spec)


def solution_problems(report: Report) -> list[str]:
    problems = []
    for exercise in report.exercises:
        if exercise.status == "skipped":
            problems.append(
                f"solutions/{exercise.name}.py could not be verified: {exercise.message}"
            )
            continue
        if exercise.status != "passed" or exercise.score != exercise.max_score:
            problems.append(
                f"solutions/{exercise.name}.py scores {labels.points(exercise.score, exercise.max_score)}"
                f" ({exercise.status}), not 100%"
                + (f": {labels.headline(exercise.message, 200)}" if exercise.message else "")
            )
        for check in exercise.checks:
            if check.status not in ("passed", "skipped"):
                problems.append(
                    f"    {exercise.name} > {check.name}: {check.status}: "
                    f"{labels.headline(check.message, 200)}"
                )
    return problems


def stub_problems(report: Report) -> list[str]:
    problems = []
    for exercise in report.exercises:
        if exercise.status == "skipped":
            continue
        if exercise.status != "not_attempted" or exercise.score != 0:
            problems.append(
                f"exercises/{exercise.name}.py: an untouched stub must import cleanly and score 0 "
                f"(not_attempted); it is {exercise.status} with "
                f"{labels.points(exercise.score, exercise.max_score)}"
                + (f": {labels.headline(exercise.message, 200)}" if exercise.message else "")
            )
            for check in exercise.checks:
                if check.status == "passed" or check.score > 0:
                    problems.append(
                        f"    {exercise.name} > {check.name}: earns "
                        f"{labels.points(check.score, check.max_score)} on the untouched stub"
                    )
                elif check.status in ("error", "timeout"):
                    problems.append(
                        f"    {exercise.name} > {check.name}: {check.status}: "
                        f"{labels.headline(check.message, 200)}"
                    )
    return problems


def comparable(doc: dict[str, Any]) -> Any:
    """What must repeat exactly: the document without timings, and images by title only
    (a timing chart's pixels, like the timings themselves, change from run to run)."""
    stable = without_timings(doc)
    for exercise in stable.get("exercises", []):
        exercise["artifacts"] = [a.get("title") for a in exercise.get("artifacts", [])]
    return stable


def stability_problems(documents: list[dict[str, Any]]) -> list[str]:
    first = comparable(documents[0])
    problems = []
    for run, doc in enumerate(documents[1:], start=2):
        where = first_difference(first, comparable(doc))
        if where:
            problems.append(
                f"the solutions' results differ between run 1 and run {run} at {where} "
                "(something depends on time, order or an unseeded random source)"
            )
    return problems


def submission(folder: Path, specs: list[catalog.ExerciseSpec]) -> Submission:
    try:
        return find(folder, [s.name for s in specs])
    except SubmissionError:
        return Submission(folder, {})


def spec_problems(specs: list[catalog.ExerciseSpec], path: Path) -> list[str]:
    """Every check's citation against the spec at `path`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return [
            f"{path}: the lesson spec cannot be read ({exc.strerror}): the checks' citations "
            "are not verified; pass --spec FILE"
        ]
    return lesson_spec.citation_problems(lesson_spec.parse(text), specs)


def list_checks(specs: list[catalog.ExerciseSpec]) -> str:
    """`grade verify --list-checks`: each check with its points and the spec's words."""
    lines = []
    for exercise in specs:
        lines.append(f"{exercise.name} ({labels.points(exercise.max_score, exercise.max_score)})")
        for check in exercise.checks:
            lines.append(f"  {check.id} ({check.points:g}): {check.name}")
            lines.append(f"      spec: {check.spec or '(none)'}")
    return "".join(line + "\n" for line in lines)


@dataclass(frozen=True)
class Request:
    """What `grade verify` looks at: `options.jobs` lesson files graded at once."""

    specs: list[catalog.ExerciseSpec]
    solutions: Path
    exercises: Path
    spec: Path  # the lesson spec the checks cite
    options: policy.Options
    runs: int = 2  # gradings of the solutions, compared
    selected: bool = False  # `--only`: the course's other files are not looked at


def verify(
    request: Request, out: Console, say: Callable[[str], None], *, quiet: bool = False
) -> list[str]:
    """Every violation of the course's invariants (the module's docstring), the gradings'
    progress drawn on `out` (a live line on a terminal) and said to `say`."""
    specs, solutions, exercises = request.specs, request.solutions, request.exercises
    problems = static_problems(specs, solutions, exercises, selected=request.selected)
    problems += spec_problems(specs, request.spec)
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
    problems += solution_problems(runs[0])
    problems += stability_problems([results.document(r) for r in runs])
    return problems + stub_problems(stub_report)


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
