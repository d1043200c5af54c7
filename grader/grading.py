"""One grading run as `grade` runs it: the lesson files graded, what the student sees of
them (`audience.after_grading`), the run joined to the history, the reports written.

    graded = grading.run(specs, submission, options, suites=..., outputs={"json": path})

`kept` is the part after the engine (what the student sees, then history), for `grade`
and `grade watch` (one file, on its warm worker); its state (`.grade/`) belongs to the
graded folder (`state.state_folder`), not the working folder. `exercises`: the suites' exercises
`--only` names; `isolation`: the level grading will run at, checked before anything is
graded. At the package's top, as `grader.cli`: both ship to students (`grade release`),
the instructor's packages do not.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from grader import audience, catalog, rounding, settings
from grader.errors import GraderError
from grader.model import ExerciseResult, Report
from grader.reports import history
from grader.runner import engine, policy
from grader.runner.submission import LESSON_SUFFIXES, Submission
from grader.sandbox import exposure
from grader.sandbox.isolation import Isolation
from grader.state import EXERCISES, state_folder

STDOUT = Path("-")  # `--json -`: the report is written to standard output
DEFAULT_LESSONS = EXERCISES  # what `grade` grades unless told otherwise
DEFAULT_HTML = "grade-report.html"  # the HTML report `grade` writes unless told otherwise


class SelectionError(GraderError):
    """The suites or the lesson files asked for are not there; the message says which."""


def exercises(suites: Path, only: str = "") -> list[catalog.ExerciseSpec]:
    """The exercises of the suites in `suites`, restricted to `only` (`select`)."""
    if not suites.is_dir():
        raise SelectionError(f"--suites {suites}: no such folder")
    try:
        found = list(catalog.exercises(suites))
    except catalog.CatalogError as exc:
        raise SelectionError(f"the suites in {suites} are malformed: {exc}") from None
    return select(found, only)


def select(found: Sequence[catalog.ExerciseSpec], only: str) -> list[catalog.ExerciseSpec]:
    """The exercises `only` names (`03_jit,ex2_per_example_grads`; all when empty), in the
    suites' order; `SelectionError` naming the unknown ones."""
    if not only:
        return list(found)
    wanted = [n.strip().removesuffix(".py") for n in only.split(",") if n.strip()]
    names = {s.name for s in found}
    unknown = [n for n in wanted if n not in names]
    if unknown:
        raise SelectionError(
            f"--only: no lesson file named {', '.join(unknown)}. Known: {', '.join(sorted(names))}"
        )
    return [s for s in found if s.name in wanted]


@dataclass(frozen=True)
class Graded:
    report: Report  # as the student sees it
    state: Path  # the folder whose `.grade/` keeps the run
    errors: list[str]  # the reports that could not be written, and why


def lessons_path(given: str | None, lessons: Iterable[str]) -> Path:
    """What to grade: the path `given`; else `exercises/` of the working folder; else the
    working folder itself when it holds a lesson file (`grade` run inside exercises/)."""
    if given is not None:
        return Path(given)
    default = Path(DEFAULT_LESSONS)
    here = Path(".")
    if not default.is_dir() and any(
        (here / f"{name}{suffix}").is_file() for name in lessons for suffix in LESSON_SUFFIXES
    ):
        return here
    return default  # `find` says what is missing


def private(submission: Submission) -> list[tuple[Path, str]]:
    """What a sandbox grading `submission` must not read: the course's reference solutions
    (unless they are what is graded)."""
    solutions = Path("solutions").resolve()
    graded = submission.root.resolve()
    if not solutions.is_dir() or graded == solutions or solutions in graded.parents:
        return []
    return [(solutions, "the reference solutions")]


def isolation(
    options: policy.Options,
    specs: Sequence[catalog.ExerciseSpec] = (),
    private: Sequence[tuple[Path, str]] = (),
) -> Isolation:
    """The isolation grading will run at; `policy.IsolationUnavailable` when `options` ask
    for more than this machine allows, or when, at `user` without Landlock, one of the
    `private` folders (path, what it is) or the hidden suites stay readable by the sandbox
    (checked before anything is graded; `policy.guard_suites`, whose notes go to stderr)."""
    found = policy.isolation_for(options)
    guards = [exposure.Guard(path, what) for path, what in private]
    for note in policy.guard_suites(found, specs, *guards):
        print(f"grade: {note}", file=sys.stderr)
    return found


def kept(
    report: Report,
    submission: Submission,
    *,
    suites: Path | None,
    folder: Path | None = None,
    for_course: bool = False,
) -> tuple[Report, Path]:
    """What the student sees of `report` (next steps, `grade hint`'s memory in `.grade/`,
    the course's policy on fixes), the run then joined to the history the HTML report
    charts; both kept in `folder` (default: the graded folder's, `state.state_folder`).
    `for_course`: a submission graded for the course (Gradescope): the policy is the
    working folder's, the submission's own settings and state count for nothing, and nothing
    is kept in it (`audience.for_course`)."""
    if for_course:
        return audience.for_course(report, submission, suites=suites), Path.cwd()
    state = state_folder(submission.root) if folder is None else folder
    report = audience.after_grading(report, submission, suites=suites, folder=state)
    history.record(report, state)
    return report, state


def write_reports(
    report: Report, outputs: Mapping[str, Path], state: Path | None = None
) -> list[str]:
    """Write every requested report; one failing never stops the others. `state`: the
    folder whose `.grade/` holds the run history the HTML report charts (default: here)."""
    errors = []
    for kind, path in outputs.items():
        module = importlib.import_module(
            f"grader.reports.{'json_report' if kind == 'json' else kind}"
        )
        if path == STDOUT:
            sys.stdout.write(module.render(report))
            sys.stdout.flush()
            continue
        extra = {"history": history.load(state or Path.cwd())} if kind == "html" else {}
        try:
            module.write(report, path, **extra)
        except OSError as exc:
            errors.append(f"could not write the {kind} report to {path}: {exc.strerror or exc}")
    return errors


def run(
    specs: list[catalog.ExerciseSpec],
    submission: Submission,
    options: policy.Options,
    *,
    suites: Path | None,
    outputs: Mapping[str, Path],
    on_result: engine.Progress | None = None,
    on_start: engine.Starting | None = None,
    live: AbstractContextManager[object] | None = None,
    shown: Callable[[Report], None] = lambda report: None,
) -> Graded:
    """Grade `submission` (`engine.grade`, inside `live`: the progress display), keep what
    the student sees (`kept`), hand it to `shown` (the terminal report) and write the
    reports of `outputs` (kind -> path). With a Gradescope report among `outputs` the
    submission is graded for the course (`kept`'s `for_course`)."""
    for_course = "gradescope" in outputs
    course = Path.cwd() if for_course else state_folder(submission.root)
    counted = _as_counted(on_result, course)
    with live or contextlib.nullcontext():
        report = engine.grade(specs, submission, options, counted, on_start=on_start)
    report, state = kept(report, submission, suites=suites, for_course=for_course)
    shown(report)
    return Graded(report, state, write_reports(report, outputs, state))


def _as_counted(on_result: engine.Progress | None, course: Path) -> engine.Progress | None:
    """`on_result` given each file's points as the course of `course` counts them
    (`[tool.grade] round`), the points `kept`'s report will show."""
    try:
        step = settings.round_step(course)
    except GraderError:  # a malformed setting: `kept` says so, once, and rounds nothing
        step = None
    if on_result is None or step is None:
        return on_result
    shown = on_result

    def counted(index: int, total: int, result: ExerciseResult) -> None:
        shown(index, total, rounding.rounded_exercise(result, step))

    return counted
