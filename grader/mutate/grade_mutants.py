"""Grade mutants with the real engine: warm workers, the judge/sandbox path, stop at a kill.

Each mutant is graded as a student's submission: a private copy of the solutions
folder in which one lesson file is the mutant, handed to a warm worker
(`grader.runner.handle.WorkerHandle`, JAX imported once per worker, not per mutant) at the
isolation level the machine allows. The suite runs with `maxfail=1`: the first
failed check ends the grading, since a mutant is killed by one failure.

Before its mutants, each lesson file's unmutated solution is graded once (the
*baseline*): it must score full marks, or the file's mutants are not graded
(every one would look killed). The baseline's duration sets the mutants' time
limit (`timeout_factor` times it, at least `min_timeout_s`, at most the suite's
own), so a mutant that loops forever costs seconds, not the suite's minutes.
"""

from __future__ import annotations

import queue
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from grader.catalog import ExerciseSpec
from grader.model import ExerciseResult
from grader.mutate.generate import Mutant
from grader.runner import budget, engine, handle, policy
from grader.runner.submission import find
from grader.sandbox.isolation import Level


@dataclass(frozen=True)
class Outcome:
    """How one grading ended: killed (below full marks, an error or a timeout) or not."""

    lesson: str
    mutant_id: str  # "" for the baseline
    killed: bool
    status: str  # the exercise's status
    score: float
    max_score: float
    by: str  # the first check that did not pass (its id), or the exercise's status
    duration_s: float


@dataclass(frozen=True)
class Settings:
    options: policy.Options
    level: Level
    timeout_factor: float = 3.0
    min_timeout_s: float = 45.0


Task = tuple[ExerciseSpec, Mutant | None]
Progress = Callable[[Task, Outcome], None]


def outcome_of(lesson: str, mutant_id: str, result: ExerciseResult) -> Outcome:
    # The check that failed, not one that `maxfail` left unreached ("not run: ...") or one
    # that a closed gate failed unrun: checks run in dependency order, not the file's.
    unmet = [c for c in result.checks if c.status != "passed" or c.score < c.max_score]
    failed = next(
        (c for c in unmet if c.status in ("failed", "timeout") and c.blocked_by is None),
        next(
            (c for c in unmet if not c.message.startswith("not run")), unmet[0] if unmet else None
        ),
    )
    killed = result.status in ("error", "timeout") or result.score < result.max_score - 1e-9
    if result.status == "skipped":
        killed = False
    return Outcome(
        lesson=lesson,
        mutant_id=mutant_id,
        killed=killed,
        status=result.status,
        score=result.score,
        max_score=result.max_score,
        by=failed.id if failed is not None else result.status,
        duration_s=result.duration_s,
    )


class Pool:
    """`jobs` warm workers, each used by one thread, kept across `run` calls."""

    def __init__(
        self, solutions: Path, specs: Sequence[ExerciseSpec], settings: Settings, jobs: int
    ) -> None:
        self.solutions = solutions
        self.settings = settings
        self.jobs = max(1, jobs)
        self.threads = budget.share(self.jobs)  # each worker's share of the cores
        self.scratch = Path(tempfile.mkdtemp(prefix="grade-mutate-"))
        self.preload = tuple(sorted({m for s in specs for m in s.imports}))
        self.workers: list[handle.WorkerHandle | None] = [None] * self.jobs
        self.timeouts: dict[str, float] = {}
        self._counter = 0
        self._lock = threading.Lock()

    def _folder(self, spec: ExerciseSpec, mutant: Mutant | None) -> Path:
        with self._lock:
            self._counter += 1
            folder = self.scratch / f"task-{self._counter}"
        lessons = folder / "submission"
        lessons.mkdir(parents=True)
        for path in self.solutions.iterdir():
            if path.is_file() and path.suffix == ".py":
                shutil.copyfile(path, lessons / path.name)
        if mutant is not None:
            (lessons / spec.filename).write_text(mutant.source, encoding="utf-8")
        return folder

    def grade(self, slot: int, task: Task) -> Outcome:
        spec, mutant = task
        folder = self._folder(spec, mutant)
        options = self.settings.options
        if mutant is not None:
            options = replace(
                options,
                maxfail=1,
                timeout_s=options.timeout_s or self.timeouts.get(spec.name, spec.timeout_s),
                # a mutant's limit is already a few times the solution's whole run: a share
                # of it would fail a correct slow check (ex1's compare_dropout) as a kill
                check_share=0.0,
            )
        try:
            lessons = folder / "submission"
            submission = find(lessons, [p.stem for p in lessons.glob("*.py")])
            worker = self.workers[slot]
            if worker is None:
                worker = handle.WorkerHandle(self.scratch, self.preload, threads=self.threads)
            result, self.workers[slot] = engine.grade_one(
                worker,
                spec,
                submission,
                options,
                self.settings.level,
                folder,
                self.preload,
                threads=self.threads,
            )
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return outcome_of(spec.name, mutant.id if mutant else "", result)

    def run(self, tasks: Sequence[Task], on_done: Progress | None = None) -> list[Outcome]:
        """Grade `tasks` on the workers; outcomes in the order of `tasks`."""
        todo: queue.Queue[tuple[int, Task]] = queue.Queue()
        for index, task in enumerate(tasks):
            todo.put((index, task))
        outcomes: list[Outcome | None] = [None] * len(tasks)
        errors: list[BaseException] = []
        stop = threading.Event()

        def serve(slot: int) -> None:
            while not errors and not stop.is_set():
                try:
                    index, task = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    outcome = self.grade(slot, task)
                except BaseException as exc:  # a problem in the grader: stop, say it
                    errors.append(exc)
                    return
                outcomes[index] = outcome
                if on_done is not None:
                    with self._lock:
                        on_done(task, outcome)

        threads = [
            threading.Thread(target=serve, args=(slot,), name=f"mutate-{slot}", daemon=True)
            for slot in range(min(self.jobs, max(1, len(tasks))))
        ]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        except BaseException:  # Ctrl-C: no new grading; the workers and their judges go now
            stop.set()
            for worker in self.workers:
                if worker is not None:
                    worker.close(kill=True)
            raise
        if errors:
            raise errors[0]
        return [o for o in outcomes if o is not None]

    def set_timeout(self, spec: ExerciseSpec, baseline: Outcome) -> None:
        limit = max(self.settings.min_timeout_s, self.settings.timeout_factor * baseline.duration_s)
        self.timeouts[spec.name] = min(spec.timeout_s, limit)

    def close(self) -> None:
        for worker in self.workers:
            if worker is not None:
                worker.close()
        self.workers = [None] * self.jobs
        shutil.rmtree(self.scratch, ignore_errors=True)


def elapsed(start: float) -> str:
    seconds = int(time.monotonic() - start)
    return f"{seconds // 60}:{seconds % 60:02d}"
