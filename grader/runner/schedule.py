"""Many submissions on one pool of warm workers: the work is scheduled, not the students.

`grade batch` hands over its class; this module turns it into one pool of (student,
lesson file) gradings that every worker takes from, so no worker idles while another
still has a student's files to do, and the last student never waits for a second wave:

- **Order.** Students are taken in the order given; within the students not finished yet,
  the first student's longest file goes first (`Pooled.estimate_s`: the median time of that
  lesson file for the students graded so far in this run, else the `known` times, else the
  suite's time limit). A student's files run on several workers at once and each student
  is done soon after their turn comes, so the students finish one after another and an
  interrupted batch has lost little; the last files of the class are the short ones.
- **The same grading.** Each file is graded by `engine.grade_one` exactly as `grade` grades
  it (the same request, retries and cores share: `budget.share` of the pool's size), and a
  student's `Report` is assembled as `engine.grade` assembles it: results identical to
  grading that student alone, apart from the timings.
- **Failures.** A grader failure (an exception, not a failing check) fails that student
  alone (`Done.error`, its traceback); their files not started are dropped.
- **Stopping.** `stop()` starts nothing more; what runs is ended by the caller
  (`grader.batch.interrupt`) and waited for with `join`.

    pooled = Pooled(submissions, specs, options, pool, on_start=..., on_done=...)
    for done in pooled.run():   # one per submission, as each finishes
        ...
"""

from __future__ import annotations

import queue
import shutil
import statistics
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from grader.catalog import ExerciseSpec
from grader.model import ExerciseResult, Report
from grader.runner import engine
from grader.runner.policy import Options, guard_suites, isolation_for
from grader.runner.submission import Submission
from grader.version import __version__

OnStart = Callable[[int, str, float], None]
"""(submission's index, lesson, its time limit): a file's grading started."""
OnFile = Callable[[int, ExerciseResult], None]
"""(submission's index, the file's result): a file graded."""


@dataclass(frozen=True)
class Done:
    """One submission finished: its report, or the grader's own failure (a traceback)."""

    index: int
    report: Report | None
    error: str = ""


@dataclass
class _Student:
    grading: engine._Grading  # its files' results, scratch folder and cores share
    left: int  # files not graded yet
    started: float | None = None
    failed: bool = False


@dataclass
class Pooled:
    """The gradings of `submissions` (each graded with `specs`) on `pool`'s warm workers
    (see the module's docstring). `known`: lesson -> seconds, what a file of it took before
    (earlier results), for the order before this run has timed it."""

    submissions: Sequence[Submission]
    specs: list[ExerciseSpec]
    options: Options
    pool: engine.Pool
    known: Mapping[str, float] = field(default_factory=dict)
    on_start: OnStart | None = None
    on_file: OnFile | None = None

    def __post_init__(self) -> None:
        self.isolation = isolation_for(self.options)
        guard_suites(self.isolation, self.specs)
        self._lock = threading.Lock()
        self._timed: dict[str, list[float]] = {}
        self._pending = [(i, s) for i in range(len(self.submissions)) for s in self.specs]
        self._stopped = False
        self._done: queue.Queue[Done] = queue.Queue()
        self._students = [self._student(i, s) for i, s in enumerate(self.submissions)]
        self._threads: list[threading.Thread] = []

    def _student(self, index: int, submission: Submission) -> _Student:
        def started(lesson: str, limit_s: float) -> None:
            if self.on_start is not None:
                self.on_start(index, lesson, limit_s)

        grading = engine._Grading(
            self.specs, submission, self.options, self.isolation.level, self.pool, None, started, 1
        )
        while not grading.todo.empty():  # the files are taken from the pool's list instead
            grading.todo.get_nowait()
        return _Student(grading, len(self.specs))

    # -- the order ---------------------------------------------------------------------

    def estimate_s(self, spec: ExerciseSpec) -> float:
        """How long a file of `spec` takes: the median of this run's, else `known`, else the
        suite's time limit (a longer limit: a longer file)."""
        timed = list(self._timed.get(spec.name, ()))
        if timed:
            return statistics.median(timed)
        return self.known.get(spec.name, self.options.timeout_s or spec.timeout_s)

    def left_s(self) -> float:
        """The work not finished yet, in estimated seconds spread over the pool's workers
        (what the files not started will take, the running ones counted whole)."""
        with self._lock:
            left = [
                s
                for st in self._students
                if not st.failed
                for s in self.specs
                if s.name not in st.grading.results
            ]
        work = sum(self.estimate_s(s) for s in left)
        return work / max(1, self.pool.size)

    def _next(self) -> tuple[int, ExerciseSpec] | None:
        with self._lock:
            if self._stopped or not self._pending:
                return None
            first = min(i for i, _ in self._pending)
            item = max(
                (p for p in self._pending if p[0] == first), key=lambda p: self.estimate_s(p[1])
            )
            self._pending.remove(item)
            student = self._students[item[0]]
            if student.started is None:
                student.started = time.monotonic()
            return item

    # -- the workers -------------------------------------------------------------------

    def _serve(self) -> None:
        while (item := self._next()) is not None:
            index, spec = item
            student = self._students[index]
            worker = self.pool.acquire()
            before = worker
            try:
                result, worker = student.grading._grade(spec, worker)
            except Exception:
                if worker is not None:
                    worker.close(kill=True)
                self.pool.release(None)
                self._fail(index, traceback.format_exc())
                continue
            except BaseException:
                if worker is not None:
                    worker.close(kill=True)
                self.pool.release(None)
                raise
            self.pool.release(worker, fresh=worker is not None and worker is not before)
            self._record(index, spec, result)

    def _record(self, index: int, spec: ExerciseSpec, result: ExerciseResult) -> None:
        student = self._students[index]
        with self._lock:
            if student.failed:
                return
            student.grading.results[spec.name] = result
            self._timed.setdefault(spec.name, []).append(result.duration_s)
            student.left -= 1
            finished = student.left == 0
        if self.on_file is not None:
            self.on_file(index, result)
        if finished:
            self._done.put(Done(index, self._report(student)))
            shutil.rmtree(student.grading.scratch, ignore_errors=True)

    def _fail(self, index: int, error: str) -> None:
        student = self._students[index]
        with self._lock:
            if student.failed:
                return
            student.failed = True
            self._pending = [p for p in self._pending if p[0] != index]
        self._done.put(Done(index, None, error))

    def _report(self, student: _Student) -> Report:
        grading = student.grading
        submission = grading.submission
        started = student.started if student.started is not None else time.monotonic()
        return Report(
            exercises=tuple(grading.results[s.name] for s in self.specs),
            seed=self.options.seed,
            submission=str(
                submission.root
                if submission.single is None
                else submission.files[submission.single]
            ),
            grader_version=__version__,
            duration_s=time.monotonic() - started,
            isolation=self.isolation,
        )

    # -- the run -----------------------------------------------------------------------

    def run(self) -> Iterator[Done]:
        """Start the pool's workers on the gradings; yield each submission as it finishes
        (every one, unless `stop` was called). The caller `stop`s and `join`s."""
        size = min(self.pool.size, len(self._pending)) or 1
        self._threads = [
            threading.Thread(target=self._serve, name=f"pooled-{n}", daemon=True)
            for n in range(size)
        ]
        for thread in self._threads:
            thread.start()
        for _ in self.submissions:
            while True:
                try:
                    yield self._done.get(timeout=0.2)
                    break
                except queue.Empty:
                    if not self.running() and self._done.empty():
                        return  # stopped: nothing more will finish
        self.join()

    def stop(self) -> None:
        """Start no more gradings (the running ones go on until ended or done)."""
        with self._lock:
            self._stopped = True

    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def join(self) -> None:
        for thread in self._threads:
            thread.join()
        for student in self._students:
            shutil.rmtree(student.grading.scratch, ignore_errors=True)
