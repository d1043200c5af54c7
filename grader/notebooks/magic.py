"""`%grade`: grade the lesson a notebook works on from inside it, on a worker kept warm.

    %load_ext grader
    %grade                 the lesson named by the notebook (03_jit.ipynb -> 03_jit)
    %grade 03_jit          this lesson
    %grade --hint          grade, then reveal the next level of help for the first failing check
    %grade --seed 3 --timeout 60

The magic runs in the student's kernel, which it never grades in: the cells the kernel
ran (`grader.notebooks.kernel`, unsaved edits included) are written as the lesson file
`grade notebooks/` would build, and that file is graded by the same engine as `grade`
(`grader.runner.engine.grade_one`: a judge and a sandbox forked from a warm worker, at the
machine's isolation level), so the kernel's state does not leak into the grading and
student code never runs in the kernel on the grader's behalf. The worker is started by the
first `%grade` (it imports JAX once) and kept for the kernel's life, with a compilation
cache of its own: a second `%grade` costs the lesson's checks, as a save under `grade
watch` does. It is closed with the kernel (or `%unload_ext grader`).

What a grading shows goes through `grader.audience.after_grading`, as `grade`'s summary does
(the course's policy on fixes, `.grade/` of the working folder for `grade hint`, the run
history), and is displayed as `grader.notebooks.inline.Inline`: HTML in a notebook, plain
text in a terminal IPython.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import shlex
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader import audience, catalog, hints, settings, state
from grader.arguments import positive
from grader.catalog import ExerciseSpec
from grader.model import ExerciseResult, Report
from grader.notebooks import grading_step, kernel, source
from grader.notebooks.inline import Inline, problems
from grader.reports import history
from grader.runner import cache, engine, handle, policy, reuse
from grader.runner.submission import Submission
from grader.sandbox.isolation import Isolation
from grader.version import __version__

USAGE = "%grade [LESSON] [--hint] [--seed N] [--timeout SECONDS]"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would exit the kernel's process
        raise kernel.NothingToGrade(f"{message}. Usage: {USAGE}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="%grade", add_help=False, usage=USAGE)
    parser.add_argument("lesson", nargs="?", default="")
    parser.add_argument("--hint", action="store_true")
    parser.add_argument("--seed", type=int, default=policy.DEFAULT_SEED)
    parser.add_argument("--timeout", type=positive, default=None)
    return parser


class Grading:
    """One kernel's `%grade`: its warm worker, and the cells known to have raised."""

    def __init__(self, shell: Any, suites: Path = catalog.SUITES_DIR) -> None:
        self.shell = shell
        self.suites = suites
        self.specs = {spec.name: spec for spec in catalog.exercises(suites)}
        self.failed: set[int] = set()  # execution counts of the cells that raised
        self.worker: handle.WorkerHandle | None = None
        self.runs = 0
        self.lesson = ""  # the lesson graded last: a bare `%grade` grades it again
        self.scratch = Path(tempfile.mkdtemp(prefix="grade-notebook-"))
        self._isolation: Isolation | None = None
        self.kept = reuse.Kept()  # the last grading of each lesson: a second `%grade` runs
        # only the checks whose code changed (`grader.runner.reuse`)

    # -- IPython's side ---------------------------------------------------------------------

    def post_run_cell(self, result: Any) -> None:
        """Each cell's outcome: one that raised is left out of the graded code."""
        count = getattr(result, "execution_count", None)
        if isinstance(count, int) and not getattr(result, "success", True):
            self.failed.add(count)

    def magic(self, line: str) -> None:
        """The `%grade` line magic: grade, and display the verdict under the cell."""
        from IPython.display import display

        display(self.grade(line))  # type: ignore[no-untyped-call]

    # -- grading ----------------------------------------------------------------------------

    def grade(self, line: str) -> Inline:
        try:
            args = _parser().parse_args(shlex.split(line))
            lesson = kernel.choose_lesson(
                args.lesson, self.notebook(), list(self.specs), self.lesson
            )
            spec = self.specs[lesson]
            built = self.build(spec)
            return self._graded(spec, built, args)
        except kernel.NothingToGrade as exc:
            return Inline(message=str(exc))
        except policy.IsolationUnavailable as exc:
            return Inline(message=f"The grader cannot run here: {exc}")

    def notebook(self) -> str:
        return kernel.notebook_path(getattr(self.shell, "user_ns", {}), os.environ)

    def build(self, spec: ExerciseSpec) -> kernel.Built:
        """The lesson file from the cells the kernel ran, else from the saved notebook."""
        expected = grading_step.expected_names(spec.suite)
        manager = getattr(self.shell, "history_manager", None)
        raw = list(getattr(manager, "input_hist_raw", []) or [])
        built = kernel.from_history(spec.name, raw, self.failed, expected)
        if built is not None:
            return built
        saved = kernel.saved_notebook(self.notebook(), spec.name, Path.cwd())
        if saved is not None:
            try:
                built = kernel.from_notebook(spec.name, saved, expected)
            except source.NotebookError as exc:
                raise kernel.NothingToGrade(str(exc)) from None
            if built is not None:
                return built
        names = ", ".join(f"`{n}`" for n in sorted(expected)[:4]) or "the lesson's functions"
        raise kernel.NothingToGrade(
            f"Nothing to grade for {spec.name}: no cell this kernel ran defines {names}"
            + (f", nor does {saved.name}" if saved is not None else "")
            + ". Run the notebook's cells (Run > Run All Cells), then `%grade` again."
        )

    def isolation(self, options: policy.Options) -> Isolation:
        if self._isolation is None:
            self._isolation = policy.isolation_for(options)
        return self._isolation

    def _graded(self, spec: ExerciseSpec, built: kernel.Built, args: argparse.Namespace) -> Inline:
        """Grade `built` and say it as `grade` would: the policy on fixes, `.grade/`, the
        run history; `--hint` reveals a level of help first."""
        options = policy.Options(seed=args.seed, timeout_s=args.timeout)
        level = self.isolation(options)
        warm = self.worker is not None
        started = time.monotonic()
        result, submission = self._run(spec, built, options, level)
        seconds = time.monotonic() - started
        report = Report(
            exercises=(result,),
            seed=options.seed,
            submission=f"{spec.name} ({built.origin})",
            grader_version=__version__,
            duration_s=seconds,
            isolation=level,
        )
        folder = state.state_folder_here()  # a notebook in notebooks/: the repository's state
        # `--hint` reveals first, so the one policy (points rounded, help shown) shows it
        revealed = self.reveal(result, folder) if args.hint else ""
        shown = audience.after_grading(report, submission, suites=self.suites, folder=folder)
        with contextlib.suppress(OSError):
            history.record(shown, folder)
        exercise = shown.exercises[0]
        if built.from_kernel:
            exercise = kernel.in_kernel_words(exercise)
        return Inline(
            exercise=exercise,
            next=next_line(exercise, built, self.more_help(result, folder)),
            notes=built.notes,
            revealed=revealed,
            footer=(
                f"Graded from {built.origin} in {seconds:.1f} s "
                f"({'warm worker' if warm else 'worker started'}) · seed {options.seed} · "
                f"isolation {level.level}"
            ),
            todo=built.first_todo,
        )

    def _run(
        self, spec: ExerciseSpec, built: kernel.Built, options: policy.Options, level: Isolation
    ) -> tuple[ExerciseResult, Submission]:
        """`built` written as the lesson file and graded on the kernel's worker (started
        here the first time); Ctrl-C (Interrupt) ends the worker, and the next `%grade`
        starts a fresh one."""
        self.runs += 1
        self.lesson = spec.name
        work = self.scratch / f"run-{self.runs}"
        lessons = work / "lessons"
        lessons.mkdir(parents=True)
        file = lessons / f"{spec.name}.py"
        file.write_text(built.text, encoding="utf-8")
        submission = Submission(lessons, {spec.name: file}, single=spec.name)
        if self.worker is None:
            print("Starting the grading worker (JAX is imported once per kernel) ...", flush=True)
        if self.worker is None:
            self.worker = self._start(spec, options)

        def run(
            plan: reuse.Plan | None, on_graded: Callable[[tuple[str, ...]], None]
        ) -> ExerciseResult:
            result, self.worker = engine.grade_one(
                self.worker,
                spec,
                submission,
                options,
                level.level,
                work / "scratch",
                preload(spec),
                partial=plan,
                on_graded=on_graded,
            )
            return result

        try:
            result = self.kept.grade(
                spec,
                file,
                submission.files,
                (options, level.level),
                run,
                lambda: work / "scratch" / spec.name / "lessons" / file.name,
            )
        except KeyboardInterrupt:
            self.close_worker()
            raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return result, submission

    def _start(self, spec: ExerciseSpec, options: policy.Options) -> handle.WorkerHandle | None:
        """The kernel's worker, with a compilation cache of its own (`cache.session_dir`);
        None when it cannot start (`grade_one` then tries, and reports why)."""
        own = ""
        if policy.cache_dir(options):
            with contextlib.suppress(OSError):
                own = cache.session_dir(str(self.scratch))
        try:
            return handle.WorkerHandle(self.scratch, preload(spec), own)
        except handle.WorkerLost:
            return None

    def reveal(self, result: ExerciseResult, folder: Path) -> str:
        """`--hint`: the next level of help for the first failing check with help left,
        remembered in `.grade/hints.json` as `grade hint` does."""
        from grader import ladder

        setting = settings.show_fixes_or_never(folder, warn=False)
        seen = state.load_revealed(folder).get(result.name, {})
        check = ladder.choose(result, "", seen, setting)
        if check is None:
            return "Nothing to hint: no check failed."
        levels = hints.levels(check, setting)
        level = next((lv for lv in levels if lv.number > seen.get(check.id, hints.QUESTION)), None)
        if level is None:
            return f"All the help for `{check.name}` is shown above."
        with contextlib.suppress(OSError):
            state.save_revealed(folder, result.name, check.id, level.number)
        total = len(hints.LEVEL_NAMES)
        return f"Revealed the {level.name} ({level.number + 1}/{total}) of `{check.name}`."

    def more_help(self, result: ExerciseResult, folder: Path) -> bool:
        """Whether `--hint` has a level of help left to reveal for a failing check."""
        from grader import ladder

        setting = settings.show_fixes_or_never(folder, warn=False)
        seen = state.load_revealed(folder).get(result.name, {})
        return any(
            ladder.has_more(c, seen.get(c.id, hints.QUESTION), setting)
            for c in ladder.failing(result)
        )

    def close_worker(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.close(kill=True)

    def close(self) -> None:
        """End the worker and remove the scratch folder; idempotent."""
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def preload(spec: ExerciseSpec) -> tuple[str, ...]:
    """What the worker imports once: the suite's imports, and the module that runs the cells
    (`module.exec_cells`): the sandbox, forked from the worker, may not read the grader's
    source (a checkout, at strict isolation), as it need not for a `.py` lesson file."""
    return tuple(sorted({*spec.imports, "grader.notebooks.module"}))


def next_line(exercise: ExerciseResult, built: kernel.Built, more_help: bool = True) -> str:
    """What to do now, in notebook terms (run the cell, `%grade` again); `more_help`:
    whether `%grade --hint` has more to show."""
    step = exercise.next
    if exercise.status == "passed" and step is not None and step.lesson:
        return (
            f"{exercise.name} is at full marks. Go on with {step.lesson}: open "
            f"{step.lesson}.ipynb and run `%grade` there."
        )
    if exercise.status == "passed":
        return f"{exercise.name} passes every check."
    if exercise.status == "not_attempted" and built.first_todo is not None:
        where, line, code = built.first_todo
        return f"start at {where}, line {line}: {code}; run the cell, then `%grade` again."
    if exercise.status == "skipped":
        return "install what the message above names, then `%grade` again."
    found = problems(exercise)
    if exercise.status == "failed" and found:
        stuck = " Stuck? `%grade --hint` shows more help for it." if more_help else ""
        return f'fix "{found[0].check.name}", run its cell again, then `%grade`.{stuck}'
    if exercise.status == "failed" and any(c.status == "not_attempted" for c in exercise.checks):
        return (
            "go on with the functions not started yet (they still raise NotImplementedError); "
            "run their cells, then `%grade` again."
        )
    return "fix the problem above, run the cell again, then `%grade`."


# -- the extension ----------------------------------------------------------------------------

_LOADED: dict[int, Grading] = {}


def load(shell: Any) -> Grading:
    """Register `%grade` and the cell-outcome hook on `shell` (once per shell)."""
    found = _LOADED.get(id(shell))
    if found is not None:
        return found
    grading_ = Grading(shell)
    shell.register_magic_function(grading_.magic, magic_kind="line", magic_name="grade")
    shell.events.register("post_run_cell", grading_.post_run_cell)
    atexit.register(grading_.close)
    _LOADED[id(shell)] = grading_
    return grading_


def unload(shell: Any) -> None:
    grading_ = _LOADED.pop(id(shell), None)
    if grading_ is None:
        return
    with contextlib.suppress(ValueError):
        shell.events.unregister("post_run_cell", grading_.post_run_cell)
    shell.magics_manager.magics["line"].pop("grade", None)
    grading_.close()
    atexit.unregister(grading_.close)
