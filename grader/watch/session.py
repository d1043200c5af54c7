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

# `grade watch`'s loop (SIGTERM and SIGHUP leave too); `grader/commands/watch.py` declares
# the arguments, the docstring above is its help.

from __future__ import annotations

import select
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.text import Text

from grader import audience, catalog, grading
from grader.catalog import ExerciseSpec
from grader.errors import GraderError
from grader.model import ExerciseResult, Report
from grader.runner import policy
from grader.runner.submission import Submission, SubmissionError, find
from grader.sandbox.isolation import Level
from grader.version import __version__
from grader.watch import display, syntax
from grader.watch.events import Event, Graded, Inbox, Keys, Problem, Ready, Saved, SaveWatcher
from grader.watch.regrader import Job, Regrader

POKE_S = 0.05
"""How often the loop checks that a stale grading's judge has been stopped."""
QUIT_KEYS = frozenset("qQ")


QUIT_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class CannotWatch(GraderError):
    """What keeps `grade watch` from starting (the path, the isolation); the message says
    what to fix."""


def watch(
    specs: list[ExerciseSpec],
    suites: Path,
    path: Path,
    options: policy.Options,
    out: Console,
) -> None:
    """Watch the lesson files at `path` until the student leaves (`q`, Ctrl-C, SIGTERM,
    SIGHUP); `CannotWatch` before anything starts."""
    try:
        submission = find(path, [s.name for s in specs])
        level = grading.isolation(options).level
    except (SubmissionError, policy.IsolationUnavailable) as exc:
        raise CannotWatch(str(exc)) from None
    session = Session(specs, suites, path, submission, options, level, out)
    try:
        with quit_signals():
            session.loop()
    except KeyboardInterrupt:
        pass


@contextmanager
def quit_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP (the terminal closed) leave like Ctrl-C (KeyboardInterrupt)."""
    before = {sig: signal.signal(sig, signal.default_int_handler) for sig in QUIT_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _hold_quit_signals() -> None:
    """Once the cleanup has begun, a second Ctrl-C must not cut it short."""
    for sig in QUIT_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


class Session:
    """The loop's state: what is on the screen, and the file being graded."""

    def __init__(
        self,
        specs: list[ExerciseSpec],
        suites: Path,
        path: Path,
        submission: Submission,
        options: policy.Options,
        level: Level,
        out: Console,
    ) -> None:
        self.specs = {s.name: s for s in specs}
        self.order = [s.name for s in specs]
        self.suites = suites  # the catalog's order of lessons comes from there
        self.lesson_order = [spec.name for spec in catalog.exercises(suites)]
        self.path, self.submission = path, submission
        self.folder = submission.root
        self.names = {submission.single} if submission.single else set(self.specs)
        self.options, self.level, self.out = options, level, out
        self.preload = tuple(
            sorted({m for s in specs if submission.has(s.name) for m in s.imports})
        )
        self.header = display.header(str(path), single=submission.single is not None)
        self.body = Text()
        self.footer = Text("starting: importing JAX once ...", style="dim")
        self.shown = ""  # the lesson the body is about
        self.job: Job | None = None  # the grading asked for last (None: nothing to grade)

    def loop(self) -> None:
        inbox = Inbox()
        regrader: Regrader | None = None
        watcher: SaveWatcher | None = None
        try:
            regrader = Regrader(
                self.options,
                self.level,
                self.preload,
                on_result=lambda job, result: inbox.put(Graded(job, result)),
                on_ready=lambda: inbox.put(Ready()),
                on_problem=lambda job, result, done: inbox.put(Problem(job, result, done)),
            )
            watcher = SaveWatcher(self.folder, self.names, inbox)
            with Keys() as keys:
                self.draw()
                if self.submission.single:
                    self.saved(regrader, self.submission.files[self.submission.single])
                self._serve(inbox, keys, regrader)
        finally:
            _hold_quit_signals()
            if watcher is not None:
                watcher.close()
            if regrader is not None:
                regrader.close()
            inbox.close()

    def _serve(self, inbox: Inbox, keys: Keys, regrader: Regrader) -> None:
        key_fd = keys.fileno()
        while True:
            fds = [inbox.fileno(), *([key_fd] if key_fd is not None else [])]
            ready, _, _ = select.select(fds, [], [], POKE_S)
            regrader.poke()
            if key_fd is not None and key_fd in ready:
                typed = keys.read()
                if QUIT_KEYS & set(typed):
                    return
                if not typed:
                    key_fd = None  # end of input: Ctrl-C still leaves
            for event in inbox.take():
                self.handle(event, regrader)

    def handle(self, event: Event, regrader: Regrader) -> None:
        if isinstance(event, Saved):
            self.saved(regrader, event.path)
        elif isinstance(event, Graded) and event.job is self.job:
            job = event.job
            file = job.submission.files[job.spec.name]
            exercise = self.shown_to_student(event.result, job.submission, file)
            self.body, self.footer = (
                display.result(exercise),
                display.next_step(exercise, file, single=self.submission.single is not None),
            )
            self.shown = job.spec.name
            self.draw()
        elif isinstance(event, Problem) and event.job is self.job:
            job = event.job
            file = job.submission.files[job.spec.name]
            exercise = self.policy_applied(event.result, job.submission, file)
            if event.complete:  # every check answered: the verdict, before the judge exits
                self.body = display.result(exercise)
                self.footer = display.next_step(
                    exercise, file, single=self.submission.single is not None
                )
            else:
                self.body = display.partial(exercise)
                self.footer = display.partial_next(exercise, file)
            self.shown = job.spec.name
            self.draw()
        elif isinstance(event, Ready) and not regrader.busy:
            self.footer = Text(f"Ready: save a lesson file in {self.folder} to grade it.")
            self.draw()

    def saved(self, regrader: Regrader, file: Path) -> None:
        name = file.stem
        problem = syntax.syntax_problem(file)
        if problem is not None:
            regrader.cancel()
            self.job = None
            self.body, self.footer = display.syntax(problem), display.syntax_next(problem)
        else:
            try:
                self.submission = find(self.path, self.order)
            except SubmissionError as exc:
                self.body, self.footer = Text(str(exc)), Text()
                self.draw()
                return
            self.job = regrader.submit(self.specs[name], self.submission)
            if self.shown != name:
                self.body = Text()
            self.footer = display.grading(file.name)
        self.shown = name
        self.draw()

    def shown_to_student(
        self, result: ExerciseResult, submission: Submission, file: Path
    ) -> ExerciseResult:
        """`result` as `grade` would show it: the course's policy on fixes and what the
        student revealed applied, its next step named, kept for `grade hint`; the run joins
        the history (`.grade/history.jsonl`), as a run of `grade` does."""
        report = self.report(result, file)
        report, _ = grading.kept(report, submission, suites=self.suites)  # as `grade` keeps it
        return report.exercises[0]

    def policy_applied(
        self, result: ExerciseResult, submission: Submission, file: Path
    ) -> ExerciseResult:
        """A result read from the records as they came (`regrader.preview`, `complete`) with
        its next step and only the help the student may see; nothing is kept (the worker's
        reply, `Graded`, is what `grade hint` and the history keep)."""
        report = audience.while_grading(self.report(result, file), submission, self.lesson_order)
        return report.exercises[0]

    def report(self, result: ExerciseResult, file: Path) -> Report:
        return Report(
            exercises=(result,),
            seed=self.options.seed,
            submission=str(file),
            grader_version=__version__,
            duration_s=result.duration_s,
        )

    def draw(self) -> None:
        parts = [self.header, Text()]
        if self.body.plain:
            parts += [self.body, Text()]
        display.draw(self.out, *parts, self.footer)
