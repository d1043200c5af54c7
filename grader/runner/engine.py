"""The parent side of grading: schedule exercises on warm workers, build the Report.

The parent never imports student code (nor JAX): it copies the lesson files to
a private folder per exercise, asks a worker (`grader.runner.worker`, through its
handle, `grader.runner.handle`) to run the suite there (`grader.protocol.worker_messages`), and
assembles the result from the records the judge sent and the way it ended
(`grader.runner.results`). A worker that dies or stops answering is replaced; the
exercise it was grading is reported as an error and the others go on.

`grade` starts workers of its own and closes them at the end; a `Pool` of warm
workers outlives gradings and serves several (`grade batch`: JAX is imported
once per worker, not once per student). Every judge compiles into the grader's
compilation cache (`grader.runner.cache`, `Options.cache_dir`). What grading may do
on this machine (the isolation in force, the options) is `grader.runner.policy`'s.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from grader.catalog import ExerciseSpec
from grader.model import ExerciseResult, Report
from grader.protocol.worker_messages import Ended, Request
from grader.runner import budget, results
from grader.runner.handle import OnRecords, WorkerHandle, WorkerLost
from grader.runner.policy import (
    Options,
    cache_dir,
    guard_suites,
    isolation_for,
)
from grader.runner.submission import (
    Submission,
    SubmissionError,
    copy_lessons,
    over_limit,
    refuse_link,
)
from grader.sandbox.isolation import Level
from grader.version import __version__

Progress = Callable[[int, int, ExerciseResult], None]
Starting = Callable[[str, float], None]
"""Told each lesson file's name and time limit (seconds) as its grading starts."""

# `Options.check_share`: the share of a file's time limit each check may spend in the
# student's code (CPU time; twice that in wall time): one endless function costs its own
# checks (the file's others run in a fresh sandbox), not the file.
RERUN_MIN_S = 5.0
"""Time left below which the checks a stopped sandbox could not run are not run again."""
MAX_RERUNS = 8
"""Fresh judges one file may get (each rerun runs at least one check a stop prevented)."""


# -- one lesson file ---------------------------------------------------------------------


def _missing_requirements(spec: ExerciseSpec) -> list[str]:
    return [name for name in spec.requires if importlib.util.find_spec(name) is None]


def _not_gradable(spec: ExerciseSpec, submission: Submission) -> ExerciseResult | None:
    """The result of a file that is not graded (absent, a link, too large, needs a missing
    extra)."""
    if not submission.has(spec.name):
        linked = _linked_folder(Path(submission.root))
        if linked:
            return results.too_large(spec, linked, "the folder is a symlink, not followed")
        return results.missing(spec, str(submission.root))
    try:  # a link is not followed (nor copied: `copy_lessons`)
        refuse_link(submission.files[spec.name])
    except SubmissionError as exc:
        return results.too_large(spec, str(exc), "the file is a symlink, not followed")
    too_large = over_limit(submission.files[spec.name])
    if too_large:
        return results.too_large(spec, too_large)
    absent = _missing_requirements(spec)
    if absent:
        message = (
            f"skipped: {spec.name}.py needs {', '.join(absent)}, which is not installed. "
            "Install the extra to grade it (in the course's folder): pip install '.[frameworks]'"
        )
        return results.skipped(spec, message)
    return None


def _linked_folder(root: Path) -> str:
    """`refuse_link`'s message when `root`, or the `exercises/` in it, is a symlink (not
    followed, so its lesson files are missing: `grade batch`'s `job_for`); "" otherwise."""
    for folder in (root, root / "exercises"):
        try:
            refuse_link(folder)
        except SubmissionError as exc:
            return str(exc)
    return ""


def _sandboxes_folder() -> str:
    """Where the judge makes its sandbox's folder, removed by `grade_one` once the grading
    ends: when the judge is killed first (the time limit, `cancel`, a SIGKILL), this removes
    what it left, once every process of the grading is gone. In the system temp folder,
    beside the other students' (not in `scratch`, which the sandbox's user could not enter):
    traversable (0711), not listable, so a sandbox reaches only its own folder."""
    sandboxes = tempfile.mkdtemp(prefix="grader-sandboxes-")
    os.chmod(sandboxes, 0o711)
    return sandboxes


def _request(
    spec: ExerciseSpec,
    submission: Submission,
    options: Options,
    level: Level,
    work: Path,
    partial: Partial | None = None,
) -> Request:
    """The request for `spec`, its lesson files copied into `work`/lessons; with `partial`,
    for the checks it runs (the others' verdicts are kept)."""
    lessons = work / "lessons"
    copy_lessons(submission, lessons)
    timeout_s = options.timeout_s or spec.timeout_s
    notebook = submission.files[spec.name].suffix == ".ipynb"
    return Request(
        suite=str(spec.suite),
        workdir=str(work),
        lesson_dir=str(lessons),
        seed=options.seed,
        timeout_s=timeout_s,
        memory_bytes=options.memory_bytes,
        output_cap=options.output_cap,
        devices=spec.devices,
        notebook=spec.name if notebook else "",  # the child runs it and builds the module first
        isolation=level,
        maxfail=options.maxfail,
        cache_dir=cache_dir(options),
        sandbox_dir=_sandboxes_folder(),
        check_share_s=options.check_share * timeout_s,
        only=partial.rerun.ids if partial is not None else (),
        passed=partial.rerun.passed if partial is not None else (),
        unjudged=partial.rerun.unjudged if partial is not None else (),
    )


def _run_with_reruns(
    worker: WorkerHandle, request: Request, started: float, on_records: OnRecords | None
) -> Ended:
    """Grade the file; then the checks its judge could not run (a check's time share ran
    out, or the sandbox ended) by a fresh judge and sandbox, in the time left."""
    ended = worker.run(request, on_records)
    for _ in range(MAX_RERUNS):
        left = request.timeout_s - (time.monotonic() - started)
        rerun = results.rerun_of(ended.records)
        if rerun is None or left < RERUN_MIN_S:
            break
        again = worker.run(
            replace(
                request,
                timeout_s=left,
                only=rerun.ids,
                passed=rerun.passed,
                unjudged=rerun.unjudged,
                stopped=rerun.stopped,
                retried=tuple(dict.fromkeys((*request.retried, *rerun.retried))),
            ),
            on_records,
        )
        ended = results.merge(ended, again, rerun)
    return ended


def _lost(
    exc: WorkerLost, worker: WorkerHandle | None, started: float, timeout_s: float
) -> results.Ending:
    """How a file ended whose worker was lost (killed here, if still there)."""
    tail = worker.log_tail() if worker else ""
    if worker is not None:
        worker.close(kill=True)
    return results.Ending(
        Ended(duration_s=time.monotonic() - started),
        timeout_s=timeout_s,
        lost=f"{exc} while grading this file (it was killed or crashed); the other files "
        "are graded by a fresh worker." + (f"\nworker log: {tail}" if tail.strip() else ""),
    )


def grade_one(
    worker: WorkerHandle | None,
    spec: ExerciseSpec,
    submission: Submission,
    options: Options,
    level: Level,
    scratch: Path,
    preload: tuple[str, ...],
    log_dir: Path | None = None,
    on_records: OnRecords | None = None,
    threads: int | None = None,
    shared: str = "",
    sandbox_cache: str = "",
    partial: Partial | None = None,
    on_graded: Callable[[tuple[str, ...]], None] | None = None,
) -> tuple[ExerciseResult, WorkerHandle | None]:
    """Grade one lesson file on `worker` (a fresh one, logging to `log_dir` or `scratch`,
    when None or lost); returns the result and the worker to use next (`grade`, `grade
    mutate` and `grade watch` share it). `on_records` gets the judge's record lines as they
    come (`WorkerHandle.run`; `preview` turns them into a result so far). `threads`: the
    share of the cores of a worker it starts (`budget.share`); `shared` and `sandbox_cache`,
    what it loads and where its sandboxes cache (`Pool`). `partial`: run only some checks and
    keep the others' verdicts from an earlier grading (`grade watch`); `on_graded` gets the
    record lines the result is assembled from."""
    skipped = _not_gradable(spec, submission)
    if skipped is not None:
        return skipped, worker
    ending = results.Ending()
    for attempt in range(1 + GRADER_FAULT_RETRIES):
        work = scratch / (spec.name if attempt == 0 else f"{spec.name}.retry{attempt}")
        request = _request(spec, submission, options, level, work, partial)  # all afresh
        started = time.monotonic()
        try:
            if worker is None:
                worker = WorkerHandle(
                    log_dir or scratch, preload, sandbox_cache, threads=threads, shared=shared
                )
                started = time.monotonic()  # a worker's start is the machine's, not the file's
            ended = _run_with_reruns(worker, request, started, on_records)
            if partial is not None:
                ended = replace(ended, records=partial.merge(ended.records))
            ending = results.Ending(ended, request.timeout_s)
        except WorkerLost as exc:
            ending = _lost(exc, worker, started, request.timeout_s)
            worker = None
        finally:  # the worker replies once all is reaped
            shutil.rmtree(request.sandbox_dir, ignore_errors=True)
        cancelled = worker is not None and worker.cancelled  # `WorkerHandle.cancel`: ours
        fault = "" if cancelled or STOPPING.is_set() else grader_fault(ending)
        if not fault:
            break
        if level != "basic":  # at basic the sandbox could have sent it: charged as it ended
            ending = replace(ending, grader_fault=fault, attempts=attempt + 1)
    if on_graded is not None:
        on_graded(ending.ended.records)
    return results.assemble(spec, ending, submission.files[spec.name].name), worker


class Partial(Protocol):
    """A grading of some of a file's checks that keeps the others' verdicts (`grade watch`,
    `grader.runner.reuse`): the checks to run (`rerun.ids`), those kept that passed
    (`rerun.passed`, for gates), and how the run's record lines become the whole file's
    (`merge`)."""

    @property
    def rerun(self) -> results.Rerun: ...
    def merge(self, lines: tuple[str, ...]) -> tuple[str, ...]: ...


STOPPING = threading.Event()
"""Set when the run is being stopped (`grade batch` interrupted): whatever ends a grading then
is the stop, not a fault to retry."""
GRADER_FAULT_RETRIES = 1
"""Fresh tries a lesson file gets after the grader itself failed it (`grader_fault`)."""
OUTSIDE_KILLS = frozenset(
    {signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT}
)
"""Signals that end a judge from outside: a person, a supervisor, the machine's OOM killer."""


def grader_fault(ending: results.Ending) -> str:
    """Why this file's grading failed through no fault of the student's ("" when it did
    not): its warm worker was lost, or its judge (which never runs student code) was killed
    by a signal from outside (`OUTSIDE_KILLS`) other than the worker's own at the time
    limit. The file is graded again; at `basic` the sandbox is the grader's own user and may
    signal the judge and the worker itself, so a fault there that the retry met again is
    charged as it ended, never counted as the grader's (`grade_one`)."""
    if ending.lost:
        return ending.lost
    ended = ending.ended
    if ended.signal in OUTSIDE_KILLS and not ended.timed_out:
        return (
            f"the grading process (the judge, which never runs your code) was killed by "
            f"{signal.Signals(ended.signal).name} from outside the grading"
        )
    return ""


# -- many files --------------------------------------------------------------------------


class Pool:
    """Warm workers shared by several gradings (the students of a batch): at most `size`
    files are graded at once, each on a worker that served the files before it, so JAX is
    imported once per worker, not once per student.

        with engine.Pool(4, engine.preload_for(specs)) as pool:
            reports = [engine.grade(specs, s, options, pool=pool) for s in submissions]

    Sharing a worker between students shares nothing a submission can reach: the worker
    never runs student code (each file has a judge and a sandbox of their own, forked from
    it, and every process they leave is killed before the next file), and its state does
    not change between files. A worker that dies is replaced by a fresh one."""

    def __init__(
        self,
        size: int,
        preload: tuple[str, ...] = (),
        *,
        shared: str = "",
        sandbox_caches: str = "",
    ) -> None:
        """`shared`: the store of programs compiled from the course's solutions that every
        worker loads (`grader.sandbox.shared_programs`: "PATH SHA256"). `sandbox_caches`:
        only for grading the solutions themselves (`grader.batch.warm`), a folder in which
        each worker's sandboxes cache their programs, a subfolder per worker."""
        self.size = max(1, size)
        self.preload = preload
        self.shared = shared
        self.sandbox_caches = sandbox_caches
        self.log_dir = Path(tempfile.mkdtemp(prefix="grade-pool-"))
        self.started = 0  # workers started so far (replacements included)
        self._idle: list[WorkerHandle] = []
        self._slots = threading.BoundedSemaphore(self.size)
        self._lock = threading.Lock()
        self._caches = 0

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def acquire(self) -> WorkerHandle | None:
        """Wait for a free slot; an idle warm worker, or None (the caller starts one)."""
        self._slots.acquire()
        with self._lock:
            return self._idle.pop() if self._idle else None

    def release(self, worker: WorkerHandle | None, *, fresh: bool = False) -> None:
        """Give the slot back, with the worker that is still alive (None when it was lost)."""
        with self._lock:
            if fresh:
                self.started += 1
            if worker is not None:
                self._idle.append(worker)
        self._slots.release()

    def sandbox_cache(self) -> str:
        """A fresh folder for the sandboxes of a worker about to start ("" for none)."""
        if not self.sandbox_caches:
            return ""
        with self._lock:
            self._caches += 1
            path = os.path.join(self.sandbox_caches, f"worker-{self._caches}")
        os.makedirs(path, mode=0o700)
        return path

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.close()
        shutil.rmtree(self.log_dir, ignore_errors=True)


JUDGE_ONLY = ("grader.checks", "grader.suites")
"""Modules (and their submodules) the warm worker does not preload: the sandbox must not
hold them, and they cost the judge ~0.01 s to import (the libraries they use are preloaded)."""


def preload_for(specs: list[ExerciseSpec], submission: Submission | None = None) -> tuple[str, ...]:
    """What a warm worker imports before its first file: the suites' own imports (of the
    files `submission` has, when given), but nothing of `JUDGE_ONLY`: a sandbox is forked
    from the worker's heap, and the judge imports its suite's checks and helpers itself,
    after the fork."""
    return tuple(
        sorted(
            {
                m
                for s in specs
                if submission is None or submission.has(s.name)
                for m in s.imports
                if not m.startswith(JUDGE_ONLY)
            }
        )
    )


@dataclass
class _Grading:
    """One `grade` call: its files, shared by the threads that grade them."""

    specs: list[ExerciseSpec]
    submission: Submission
    options: Options
    level: Level
    pool: Pool | None
    on_result: Progress | None
    on_start: Starting | None
    jobs: int
    scratch: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="grade-")))
    results: dict[str, ExerciseResult] = field(default_factory=dict)
    todo: queue.Queue[ExerciseSpec] = field(default_factory=queue.Queue)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        for spec in self.specs:
            self.todo.put(spec)
        pool = self.pool
        self.preload = (
            pool.preload if pool is not None else preload_for(self.specs, self.submission)
        )
        # Every grading running at once gets its share of the cores: a pool's size of them
        # (the students of a batch), else this submission's jobs.
        self.threads = budget.share(pool.size if pool is not None else self.jobs)

    def _grade(
        self, spec: ExerciseSpec, worker: WorkerHandle | None
    ) -> tuple[ExerciseResult, WorkerHandle | None]:
        if self.on_start is not None:
            self.on_start(spec.name, self.options.timeout_s or spec.timeout_s)
        pool = self.pool
        return grade_one(
            worker,
            spec,
            self.submission,
            self.options,
            self.level,
            self.scratch,
            self.preload,
            log_dir=pool.log_dir if pool is not None else None,
            threads=self.threads,
            shared=pool.shared if pool is not None else "",
            sandbox_cache=pool.sandbox_cache() if pool is not None and worker is None else "",
        )

    def _record(self, spec: ExerciseSpec, result: ExerciseResult) -> None:
        with self.lock:
            self.results[spec.name] = result
            if self.on_result is not None:
                self.on_result(len(self.results), len(self.specs), result)

    def serve(self) -> None:
        """Grade files until none is left, on a worker of the pool's for each (given back
        after it) or, without a pool, on this thread's own (closed at the end)."""
        pool = self.pool
        worker: WorkerHandle | None = None
        try:
            while True:
                try:
                    spec = self.todo.get_nowait()
                except queue.Empty:
                    return
                if pool is not None:
                    worker = pool.acquire()
                before = worker
                try:
                    result, worker = self._grade(spec, worker)
                except BaseException:
                    if pool is not None:
                        if worker is not None:
                            worker.close(kill=True)
                        worker = None
                        pool.release(None)
                    raise
                if pool is not None:
                    pool.release(worker, fresh=worker is not None and worker is not before)
                    worker = None
                self._record(spec, result)
        finally:
            if worker is not None:
                worker.close()


def grade(
    specs: list[ExerciseSpec],
    submission: Submission,
    options: Options,
    on_result: Progress | None = None,
    pool: Pool | None = None,
    on_start: Starting | None = None,
) -> Report:
    """Grade `specs` in `submission`, on the warm workers of `pool` when given (else on
    workers of its own, closed at the end); `IsolationUnavailable` when `options` ask for
    more isolation than this machine allows (before anything is graded)."""
    in_force = isolation_for(options)
    guard_suites(in_force, specs)
    started = time.monotonic()
    jobs = max(1, min(options.jobs, len(specs)))
    grading = _Grading(specs, submission, options, in_force.level, pool, on_result, on_start, jobs)
    servers = [threading.Thread(target=grading.serve, name=f"grade-{i}") for i in range(jobs)]
    try:
        for thread in servers:
            thread.start()
        for thread in servers:
            thread.join()
    finally:
        shutil.rmtree(grading.scratch, ignore_errors=True)
    return Report(
        exercises=tuple(grading.results[s.name] for s in specs),
        seed=options.seed,
        submission=str(
            submission.root if submission.single is None else submission.files[submission.single]
        ),
        grader_version=__version__,
        duration_s=time.monotonic() - started,
        isolation=in_force,
    )
