"""The parent side of grading: schedule exercises on warm workers, build the Report.

The parent never imports student code (nor JAX): it copies the lesson files to
a private folder per exercise, asks a worker (`grader.runner.worker`) to run
the suite there (`grader.protocol.jobs`), and assembles the result from the
records the judge sent and the way it ended. A worker that dies or stops
answering is replaced; the exercise it was grading is reported as an error and
the others go on.

`grade` starts workers of its own and closes them at the end; a `Pool` of warm
workers outlives gradings and serves several (`grade batch`: JAX is imported
once per worker, not once per student). Every judge compiles into the grader's
compilation cache (`grader.runner.cache`, `Options.cache_dir`).

The isolation level (`grader.sandbox.isolation`) is detected once per process,
in a throwaway child, and sent with every request; `Options` may force a level
or require one, and every `Report` says which was in force.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Literal, TypeVar

import grader
from grader.catalog import ExerciseSpec
from grader.model import ExerciseResult, Report
from grader.protocol import jobs
from grader.protocol.jobs import Ended, Ready, Request, Started
from grader.runner import budget, cache, child
from grader.runner import results as records
from grader.runner.submission import Submission, copy_lessons, over_limit
from grader.sandbox import exposure, isolation
from grader.sandbox.isolation import Isolation, Level

WORKER_START_TIMEOUT_S = 120.0
REPLY_GRACE_S = 30.0

Progress = Callable[[int, int, ExerciseResult], None]
Starting = Callable[[str, float], None]
"""Told each lesson file's name and time limit (seconds) as its grading starts."""
IsolationChoice = Literal["auto", "strict", "user", "basic"]
ISOLATION_CHOICES: tuple[IsolationChoice, ...] = ("auto", "strict", "user", "basic")
M = TypeVar("M", Ready, Started, Ended)


@dataclass(frozen=True)
class Options:
    seed: int = 0
    timeout_s: float | None = None  # overrides each suite's TIMEOUT
    memory_bytes: int = 4 << 30  # address space a child may add to the warm worker's
    output_cap: int = 32 << 10
    jobs: int = 1
    isolation: IsolationChoice = "auto"  # auto: the strongest level this machine allows
    require_isolation: Level = "basic"  # refuse to grade below this level
    maxfail: int = 0  # stop a file's suite after this many failed checks (0: run them all)
    check_share: float = 0.25  # of the file's limit, each check's CPU time (0: no share)
    cache_dir: str | None = None  # the judge's compilation cache: None the default folder
    # (grader.runner.cache.default_dir), "" none


# -- isolation --------------------------------------------------------------------------

FEATURES: dict[Level, str] = {
    "user": "a user of its own for the sandbox",
    "strict": "namespaces of its own for the sandbox (PID, network, mount)",
}
"""What each level adds to the one below it."""


class IsolationUnavailable(Exception):
    """The isolation asked for (or required) is more than this machine allows."""


@functools.cache
def detected() -> Isolation:
    """The strongest level this machine allows (a throwaway child tries it, once per process)."""
    return isolation.detect()


def isolation_for(options: Options) -> Isolation:
    """The level grading runs at, and what is missing; `IsolationUnavailable` when
    `options` force or require more than this machine allows."""
    found = detected()
    chosen = found
    if options.isolation != "auto" and options.isolation != found.level:
        wanted: Level = options.isolation
        if not isolation.at_least(found.level, wanted):
            raise IsolationUnavailable(
                f"--isolation {wanted}: this machine allows only '{found.level}' isolation; "
                f"missing: {'; '.join(found.missing)}"
            )
        above = isolation.LEVELS[
            isolation.LEVELS.index(wanted) + 1 : isolation.LEVELS.index(found.level) + 1
        ]
        turned_off = tuple(f"{FEATURES[level]} (not used: --isolation {wanted})" for level in above)
        chosen = Isolation(wanted, turned_off + found.missing)
    required = options.require_isolation
    if not isolation.at_least(chosen.level, required):
        what = "detected" if chosen is found else "chosen"
        raise IsolationUnavailable(
            f"--require-isolation {required}: the {what} isolation is '{chosen.level}', below "
            f"'{required}'; missing: {'; '.join(chosen.missing)}. Grade where the grader may "
            "switch users (as root, in a container) or lower --require-isolation."
        )
    return chosen


def guard_suites(
    found: Isolation, specs: Iterable[ExerciseSpec], *also: exposure.Guard
) -> list[str]:
    """At `user` without Landlock, close the hidden suites to other users (the sandbox's uid)
    and refuse the `also` folders that are open to them (`grader.sandbox.exposure`); what
    this process writes from then on is closed to them too (umask 077). Returns the notes of what was closed; `IsolationUnavailable` naming what stays open."""
    if not exposure.applies(found):
        return []
    os.umask(os.umask(0) | 0o077)  # what the grading writes from now on (reports) stays closed
    folders = sorted({s.suite.parent for s in specs})
    guards = [exposure.Guard(f, "the hidden suites", repair=True) for f in folders]
    try:
        return exposure.secure([*guards, *also])
    except exposure.Exposed as exc:
        raise IsolationUnavailable(str(exc)) from None


# `Options.check_share`: the share of a file's time limit each check may spend in the
# student's code (CPU time; twice that in wall time): one endless function costs its own
# checks (the file's others run in a fresh sandbox), not the file.
RERUN_MIN_S = 5.0
"""Time left below which the checks a stopped sandbox could not run are not run again."""
MAX_RERUNS = 8
"""Fresh judges one file may get (each rerun runs at least one check a stop prevented)."""

# -- the warm worker ----------------------------------------------------------------------


def import_path() -> list[str]:
    """Where the worker imports from: the grader's own source root, then this process's
    `sys.path` (PYTHONPATH, `.pth` files and user site included: the worker runs isolated,
    `-I`, so it would see none of them), without '' and the working folder, where a
    submission may be."""
    here = os.path.realpath(os.getcwd())
    paths = [str(Path(grader.__file__).resolve().parent.parent)]
    for entry in sys.path:
        usable = entry and os.path.isabs(entry) and os.path.realpath(entry) != here
        if usable and entry not in paths:
            paths.append(entry)
    return paths


class WorkerLost(Exception):
    pass


OnRecords = Callable[[list[str]], None]
"""Gets the judge's record lines (undecoded) while a file is graded, a batch at a time."""


class Worker:
    """One warm worker process and its line protocol.

    Beside the protocol, the worker streams the judge's record lines to a pipe of their own
    as it reads them (`run(..., on_records=)`: a preview; the reply holds them all), and
    `cancel` stops the file being graded (its reply comes as usual)."""

    def __init__(
        self,
        log_dir: Path,
        preload: tuple[str, ...] = (),
        sandbox_cache: str = "",
        threads: int | None = None,
    ) -> None:
        """`sandbox_cache`: for one student's `grade watch` session only, the folder every
        sandbox of this worker caches its compiled programs in (`cache.session_dir`), so a
        regrading loads what the one before compiled; never for a batch. `threads`: each
        judge's and sandbox's share of the cores (`budget.share`; default: all of them)."""
        self.log_path = log_dir / f"worker-{time.monotonic_ns()}.log"
        self._log: IO[bytes] = open(self.log_path, "wb")  # noqa: SIM115
        paths = import_path()
        bootstrap = (
            f"import sys; wanted = {paths!r}; "
            "sys.path[:] = wanted + [p for p in sys.path if p not in wanted]; "
            "from grader.runner.worker import main; main()"
        )
        env = {
            k: v for k, v in os.environ.items() if k != "XLA_FLAGS" and not k.startswith("PYTHON")
        }
        env.update({"JAX_PLATFORMS": "cpu", "MPLBACKEND": "Agg", "TF_CPP_MIN_LOG_LEVEL": "2"})
        env.update(budget.environment(budget.share(1) if threads is None else threads))
        env.pop(child.SANDBOX_CACHE_ENV, None)  # only ever this worker's own argument
        if sandbox_cache:
            env[child.SANDBOX_CACHE_ENV] = sandbox_cache
        self._stream, stream_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-c", bootstrap, json.dumps(list(preload)), str(stream_w)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                env=env,
                cwd=log_dir,  # private: what a library writes relative (.hypothesis/) stays out of the user's folder
                start_new_session=True,
                pass_fds=(stream_w,),
            )
        finally:
            os.close(stream_w)
        os.set_blocking(self._stream, False)
        self._streamed = bytearray()
        self._on_records: OnRecords | None = None
        self._buffer = bytearray()
        self.child_pid: int | None = None
        try:
            self._read(Ready, WORKER_START_TIMEOUT_S)
        except WorkerLost as exc:
            raise WorkerLost(
                f"the grading worker did not start ({exc}): {self.log_tail()}"
            ) from None

    def _read(self, kind: type[M], timeout_s: float) -> M:
        """The next message, which must be a `kind` (a reply may be megabytes of records)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        scanned = 0
        while (end := self._buffer.find(b"\n", scanned)) < 0:
            scanned = len(self._buffer)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerLost("the grading worker stopped answering")
            watched = [fd, self._stream] if self._on_records is not None else [fd]
            ready, _, _ = select.select(watched, [], [], remaining)
            if self._stream in ready:
                self._take_stream()
            if fd in ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise WorkerLost("the grading worker died")
                self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        try:
            return jobs.decode_as(line, kind)
        except jobs.ProtocolError as exc:
            raise WorkerLost(f"the grading worker sent something unexpected ({exc})") from None

    def _take_stream(self, discard: bool = False) -> None:
        """Read the streamed record lines; the complete ones go to `on_records`."""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self._stream, 1 << 16):
                self._streamed += chunk
        if discard:
            self._streamed.clear()
            return
        end = self._streamed.rfind(b"\n") + 1
        if end:
            lines = bytes(self._streamed[:end]).decode("utf-8", errors="replace").splitlines()
            del self._streamed[:end]
            if self._on_records is not None:
                self._on_records(lines)

    def run(self, request: Request, on_records: OnRecords | None = None) -> Ended:
        """Grade one file; `on_records` gets its record lines as they come (a preview:
        some may be missing, the reply's `Ended.records` has them all)."""
        assert self.proc.stdin is not None
        self._take_stream(discard=True)  # what an earlier file's grading left unread
        self._on_records = on_records
        try:
            self.proc.stdin.write(jobs.encode(request).encode())
            self.proc.stdin.flush()
        except OSError as exc:
            raise WorkerLost(f"the grading worker died ({exc})") from None
        deadline = request.timeout_s + REPLY_GRACE_S
        try:
            self.child_pid = self._read(Started, deadline).pid
            ended = self._read(Ended, deadline)
        finally:
            self.child_pid = None
            self._on_records = None
        return ended

    def cancel(self) -> bool:
        """Stop the file being graded: its judge's process group is killed (the worker reaps
        what it left and replies as usual, the judge killed by SIGKILL); False when no judge
        has been announced yet (call again: one may start in a moment). Safe from another
        thread than the one in `run`."""
        pid = self.child_pid
        if pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        return bool(pid)

    def log_tail(self, limit: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-limit:]
        except OSError:
            return ""

    def close(self, kill: bool = False) -> None:
        for pid in (self.child_pid, self.proc.pid) if kill else ():
            if pid:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        with contextlib.suppress(OSError):
            os.close(self._stream)


def cache_dir(options: Options) -> str:
    """The compilation cache the judges use ("" for none: turned off, or a folder that is
    not safely the grader's own; see `grader.runner.cache`)."""
    wanted = cache.default_dir() if options.cache_dir is None else options.cache_dir
    return cache.prepare(wanted)[0]


def _missing_requirements(spec: ExerciseSpec) -> list[str]:
    return [name for name in spec.requires if importlib.util.find_spec(name) is None]


def grade_one(
    worker: Worker | None,
    spec: ExerciseSpec,
    submission: Submission,
    options: Options,
    level: Level,
    scratch: Path,
    preload: tuple[str, ...],
    log_dir: Path | None = None,
    on_records: OnRecords | None = None,
    threads: int | None = None,
) -> tuple[ExerciseResult, Worker | None]:
    """Grade one lesson file on `worker` (a fresh one, logging to `log_dir` or `scratch`,
    when None or lost); returns the result and the worker to use next (`grade`, `grade
    mutate` and `grade watch` share it). `on_records` gets the judge's record lines as they
    come (`Worker.run`; `preview` turns them into a result so far). `threads`: the share of
    the cores of a worker it starts (`budget.share`)."""
    if not submission.has(spec.name):
        return records.missing(spec, str(submission.root)), worker
    too_large = over_limit(submission.files[spec.name])
    if too_large:
        return records.too_large(spec, too_large), worker
    absent = _missing_requirements(spec)
    if absent:
        message = (
            f"skipped: {spec.name}.py needs {', '.join(absent)}, which is not installed. "
            "Install the extra to grade it: pip install 'jax-lesson-grader[frameworks]'"
        )
        return records.skipped(spec, message), worker
    work = scratch / spec.name
    lessons = work / "lessons"
    copy_lessons(submission, lessons)
    timeout_s = options.timeout_s or spec.timeout_s
    notebook = submission.files[spec.name].suffix == ".ipynb"
    # The judge makes its sandbox's folder in here and removes it when it closes the sandbox;
    # when the judge is killed first (the time limit, `cancel`, a SIGKILL), this removes what
    # it left, once every process of the grading is gone. In the system temp folder, beside
    # the other students' (not in `scratch`, which the sandbox's user could not enter):
    # traversable (0711), not listable, so a sandbox reaches only its own folder.
    sandboxes = tempfile.mkdtemp(prefix="grader-sandboxes-")
    os.chmod(sandboxes, 0o711)
    request = Request(
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
        sandbox_dir=sandboxes,
        check_share_s=options.check_share * timeout_s,
    )
    started = time.monotonic()
    try:
        if worker is None:
            worker = Worker(log_dir or scratch, preload, threads=threads)
        ended = worker.run(request, on_records)
        for _ in range(MAX_RERUNS):
            # Checks its judge could not run (a check's time share ran out, or the sandbox
            # ended): graded again by a fresh judge and sandbox, in the time left.
            left = timeout_s - (time.monotonic() - started)
            rerun = records.rerun_of(ended.records)
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
                ),
                on_records,
            )
            ended = records.merge(ended, again, rerun)
        ending = records.Ending(ended, timeout_s)
    except WorkerLost as exc:
        tail = worker.log_tail() if worker else ""
        if worker is not None:
            worker.close(kill=True)
        worker = None
        ending = records.Ending(
            Ended(duration_s=time.monotonic() - started),
            timeout_s=timeout_s,
            lost=f"{exc} while grading this file (it was killed or crashed); the other files "
            "are graded by a fresh worker." + (f"\nworker log: {tail}" if tail.strip() else ""),
        )
    finally:
        shutil.rmtree(sandboxes, ignore_errors=True)  # the worker replies once all is reaped
    return records.assemble(spec, ending, submission.files[spec.name].name), worker


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

    def __init__(self, size: int, preload: tuple[str, ...] = ()) -> None:
        self.size = max(1, size)
        self.preload = preload
        self.log_dir = Path(tempfile.mkdtemp(prefix="grade-pool-"))
        self.started = 0  # workers started so far (replacements included)
        self._idle: list[Worker] = []
        self._slots = threading.BoundedSemaphore(self.size)
        self._lock = threading.Lock()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def acquire(self) -> Worker | None:
        """Wait for a free slot; an idle warm worker, or None (the caller starts one)."""
        self._slots.acquire()
        with self._lock:
            return self._idle.pop() if self._idle else None

    def release(self, worker: Worker | None, *, fresh: bool = False) -> None:
        """Give the slot back, with the worker that is still alive (None when it was lost)."""
        with self._lock:
            if fresh:
                self.started += 1
            if worker is not None:
                self._idle.append(worker)
        self._slots.release()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.close()
        shutil.rmtree(self.log_dir, ignore_errors=True)


def preload_for(specs: list[ExerciseSpec], submission: Submission | None = None) -> tuple[str, ...]:
    """What a warm worker imports before its first file: the suites' own imports (of the
    files `submission` has, when given)."""
    return tuple(
        sorted(
            {m for s in specs if submission is None or submission.has(s.name) for m in s.imports}
        )
    )


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
    scratch = Path(tempfile.mkdtemp(prefix="grade-"))
    results: dict[str, ExerciseResult] = {}
    todo: queue.Queue[ExerciseSpec] = queue.Queue()
    for spec in specs:
        todo.put(spec)
    lock = threading.Lock()
    preload = pool.preload if pool is not None else preload_for(specs, submission)
    jobs = max(1, min(options.jobs, len(specs)))
    # Every grading running at once gets its share of the cores: a pool's size of them (the
    # students of a batch), else this submission's jobs.
    threads = budget.share(pool.size if pool is not None else jobs)

    def starting(spec: ExerciseSpec) -> None:
        if on_start is not None:
            on_start(spec.name, options.timeout_s or spec.timeout_s)

    def record(spec: ExerciseSpec, result: ExerciseResult) -> None:
        with lock:
            results[spec.name] = result
            if on_result is not None:
                on_result(len(results), len(specs), result)

    def serve() -> None:
        worker: Worker | None = None
        try:
            while True:
                try:
                    spec = todo.get_nowait()
                except queue.Empty:
                    return
                starting(spec)
                result, worker = grade_one(
                    worker,
                    spec,
                    submission,
                    options,
                    in_force.level,
                    scratch,
                    preload,
                    threads=threads,
                )
                record(spec, result)
        finally:
            if worker is not None:
                worker.close()

    def serve_from(shared: Pool) -> None:
        while True:
            try:
                spec = todo.get_nowait()
            except queue.Empty:
                return
            worker = shared.acquire()
            before = worker
            starting(spec)
            try:
                result, worker = grade_one(
                    worker,
                    spec,
                    submission,
                    options,
                    in_force.level,
                    scratch,
                    preload,
                    log_dir=shared.log_dir,
                    threads=threads,
                )
            except BaseException:
                if worker is not None:
                    worker.close(kill=True)
                shared.release(None)
                raise
            shared.release(worker, fresh=worker is not None and worker is not before)
            record(spec, result)

    servers = [
        threading.Thread(target=serve, name=f"grade-{i}")
        if pool is None
        else threading.Thread(target=serve_from, args=(pool,), name=f"grade-{i}")
        for i in range(jobs)
    ]
    try:
        for thread in servers:
            thread.start()
        for thread in servers:
            thread.join()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return Report(
        exercises=tuple(results[s.name] for s in specs),
        seed=options.seed,
        submission=str(
            submission.root if submission.single is None else submission.files[submission.single]
        ),
        grader_version=grader.__version__,
        duration_s=time.monotonic() - started,
        isolation=in_force,
    )
