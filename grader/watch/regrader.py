"""One warm worker in the background: grades one lesson file at a time, newest save first.

The worker (`handle.WorkerHandle`) imports JAX once, when `grade watch` starts; each
grading forks a judge from it (`engine.grade_one`), so a regrade pays for the
suite, not for `import jax`. `submit` asks for a grading and makes any running one
stale: the running judge is killed (its process group), the worker reaps what it
left and answers as usual, the answer is dropped, and the newest save is graded
next on the same warm worker. A judge that has not announced itself yet is killed
by `poke`, which the command's loop calls a few times a second.

Results go to `on_result` from the grading thread, only for the newest request; before
that, `on_problem` gets the first failing check as soon as the judge records it (`preview`:
the verdict of a broken file is on screen before its other checks have run), and again the
whole verdict once the judge records that its suite is done (`complete`: before the judge
and its sandbox have exited and been reaped, which takes a few tenths of a second more).
`on_result` has the last word (the worker's reply: how the judge ended, its output).
`close` ends everything: the judge, the worker, and (the process is made a
subreaper) whatever they started, so nothing outlives `grade watch`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader.catalog import ExerciseSpec
from grader.model import ExerciseResult, ExerciseStatus
from grader.protocol.worker_messages import Ended
from grader.runner import cache, engine, handle, policy, reuse
from grader.runner import results as records
from grader.runner import worker as warm
from grader.runner.submission import Submission
from grader.sandbox import isolation
from grader.sandbox.isolation import Level

CLOSE_TIMEOUT_S = 5.0
"""How long `close` waits for the grading thread after killing what it waits on."""


@dataclass(frozen=True)
class Job:
    """One grading asked for: `number` grows with every request."""

    number: int
    spec: ExerciseSpec
    submission: Submission


OnResult = Callable[[Job, ExerciseResult], None]
OnRecorded = Callable[[Job, ExerciseResult, bool], None]
"""Gets a result read from the judge's records as they come, and whether it is complete."""


def complete(
    spec: ExerciseSpec, lines: list[str], filename: str, duration_s: float
) -> ExerciseResult | None:
    """The whole result from the judge's record `lines` once they end with its `Done`
    record (every check has answered), as the worker's reply will give it unless the judge
    then fails to exit (the reply's `on_result` says so); else None."""
    parsed = records.read_records(lines, (c.id for c in spec.checks))
    if not parsed.done:
        return None
    ended = Ended(exit_code=0, records=tuple(lines), duration_s=duration_s)
    return records.assemble(spec, records.Ending(ended), filename)


def preview(spec: ExerciseSpec, lines: list[str], filename: str) -> ExerciseResult | None:
    """The result so far from the judge's first record `lines`, once they show a problem
    (a check that failed, or a lesson file that does not import); else None. A check
    whose function is not started (the stub's NotImplementedError) is no problem to
    show early: the verdict says it when the grading ends.

    Checks not recorded yet are `skipped` (worth nothing yet), so the file's status is the
    verdict of the checks run so far: `failed`, or `error` (a check that crashed or ran out
    of time, the file does not import)."""
    parsed = records.read_records(lines, (c.id for c in spec.checks))
    broken = parsed.imported is not None and not parsed.imported.ok
    if not broken and all(
        r.status == "passed" or (r.not_implemented and r.fraction == 0.0)
        for r in parsed.results.values()
    ):
        return None
    result = records.assemble(spec, records.Ending(Ended(records=tuple(lines))), filename)
    if broken:
        return result
    checks = tuple(
        c
        if c.id in parsed.results
        else dataclasses.replace(
            c, status="skipped", score=0.0, max_score=0.0, message="not run yet"
        )
        for c in result.checks
    )
    statuses = {c.status for c in checks}
    status: ExerciseStatus = "error" if statuses & {"error", "timeout"} else "failed"
    return dataclasses.replace(result, checks=checks, status=status, message="")


class Regrader:
    """The warm worker and the grading thread that feeds it (see the module's docstring)."""

    def __init__(
        self,
        options: policy.Options,
        level: Level,
        preload: tuple[str, ...],
        on_result: OnResult,
        on_ready: Callable[[], None] = lambda: None,
        on_problem: OnRecorded | None = None,
    ) -> None:
        self.options, self.level, self.preload = options, level, preload
        self.on_result, self.on_ready, self.on_problem = on_result, on_ready, on_problem
        self.worker: handle.WorkerHandle | None = None
        self._cond = threading.Condition()
        self._latest = 0  # the newest job's number (or a cancel's)
        self._pending: Job | None = None
        self._running: Job | None = None
        self._killed = 0  # the number of the last job whose judge was killed
        self._closed = False
        self._kept = reuse.Kept()  # each lesson file's last grading
        self._scratch = Path(tempfile.mkdtemp(prefix="grade-watch-"))
        isolation.make_subreaper()  # orphans of the worker's processes become ours to end
        self._thread = threading.Thread(target=self._serve, name="grade-watch", daemon=True)
        self._thread.start()

    def __enter__(self) -> Regrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the command's side ----------------------------------------------------------------

    def submit(self, spec: ExerciseSpec, submission: Submission) -> Job:
        """Grade `spec` in `submission` next; a running grading is stopped."""
        with self._cond:
            self._latest += 1
            job = Job(self._latest, spec, submission)
            self._pending = job
            self._cond.notify()
        self.poke()
        return job

    def cancel(self) -> None:
        """Drop what is waiting and stop what is running (a save made it pointless)."""
        with self._cond:
            self._latest += 1
            self._pending = None
        self.poke()

    @property
    def busy(self) -> bool:
        with self._cond:
            return self._running is not None or self._pending is not None

    def poke(self) -> None:
        """Kill the running judge if its grading is stale (it may have started since the
        request that made it stale)."""
        with self._cond:  # held: the grading thread cannot move on to the next job meanwhile
            job = self._running
            stale = job is not None and job.number < self._latest and job.number != self._killed
            if stale and job is not None and self._kill_judge():
                self._killed = job.number  # once: its pid is not ours after it is reaped

    def close(self) -> None:
        """End the judge, the worker and everything they started; idempotent."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._latest += 1
            self._pending = None
            self._cond.notify()
        self._kill_judge()
        worker = self.worker
        if worker is not None:
            _kill_group(worker.proc.pid)
        warm.reap_leftovers()  # every child: a worker still starting too, and the orphans
        self._thread.join(CLOSE_TIMEOUT_S)
        warm.reap_leftovers()  # what ended up ours while the thread finished
        worker = self.worker
        if worker is not None:
            worker.close()
        shutil.rmtree(self._scratch, ignore_errors=True)

    # -- the grading thread ----------------------------------------------------------------

    def _kill_judge(self) -> bool:
        """Kill the running judge's process group; False when none has started yet."""
        worker = self.worker
        return worker is not None and worker.cancel()

    def _streamed(self, job: Job, kept: tuple[str, ...] = ()) -> handle.OnRecords | None:
        """What takes the judge's record lines for `job`, while `job` is the newest: to
        `on_problem` once with the first problem (`preview`), once with the whole verdict
        (`complete`)."""
        on_problem = self.on_problem
        if on_problem is None:
            return None
        seen: list[str] = list(kept)  # the verdicts kept from the last grading (`reuse`)
        shown = {"problem": False, "complete": False}
        filename = job.submission.files[job.spec.name].name
        started = time.monotonic()

        def take(lines: list[str]) -> None:
            if shown["complete"]:
                return
            seen.extend(lines)
            if job.number != self._latest or self._closed:
                return
            found = complete(job.spec, seen, filename, time.monotonic() - started)
            if found is not None:
                shown["complete"] = True
                on_problem(job, found, True)
            elif not shown["problem"] and (found := preview(job.spec, seen, filename)):
                shown["problem"] = True
                on_problem(job, found, False)

        return take

    def _session_cache(self) -> str:
        """The session's sandbox cache (`cache.session_dir`): a regrading loads the programs
        the one before compiled (most of a lesson file's are the same from save to save); ""
        when the grader's cache is off or the folder is not safely ours."""
        if not policy.cache_dir(self.options):
            return ""
        try:
            return cache.session_dir(str(self._scratch))
        except OSError:
            return ""

    def _serve(self) -> None:
        try:
            self.worker = handle.WorkerHandle(self._scratch, self.preload, self._session_cache())
        except handle.WorkerLost:
            self.worker = None  # grade_one starts one again, and reports it if it fails
        if not self._closed:
            self.on_ready()
        while True:
            with self._cond:
                while self._pending is None and not self._closed:
                    self._cond.wait()
                job = self._pending
                if self._closed or job is None:
                    return
                self._pending, self._running = None, job
            scratch = self._scratch / str(job.number)
            result = self._grade(job, scratch)
            shutil.rmtree(scratch, ignore_errors=True)
            with self._cond:
                self._running = None
                newest = job.number == self._latest and not self._closed
            if newest:
                self.on_result(job, result)

    def _grade(self, job: Job, scratch: Path) -> ExerciseResult:
        """Grade `job`: only the checks whose code changed since the file's last grading,
        the others' verdicts kept (`reuse`); none at all when nothing they reach changed."""
        spec, file = job.spec, job.submission.files[job.spec.name]

        def run(
            plan: reuse.Plan | None, on_graded: Callable[[tuple[str, ...]], None]
        ) -> ExerciseResult:
            result, self.worker = engine.grade_one(
                self.worker,
                spec,
                job.submission,
                self.options,
                self.level,
                scratch,
                self.preload,
                on_records=self._streamed(job, plan.kept if plan is not None else ()),
                partial=plan,
                on_graded=on_graded,
            )
            return result

        return self._kept.grade(
            spec,
            file,
            job.submission.files,
            (self.options, self.level),
            run,
            lambda: scratch / spec.name / "lessons" / file.name,
        )


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
