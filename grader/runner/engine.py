"""The parent side of grading: schedule exercises on warm workers, build the Report.

The parent never imports student code (nor JAX): it copies the lesson files to
a private folder per exercise, asks a worker (`grader.runner.worker`) to run
the suite there, and assembles the result from the records the child wrote
and the way it ended. A worker that dies or stops answering is replaced; the
exercise it was grading is reported as an error and the others go on.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import queue
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import grader
from grader.catalog import ExerciseSpec
from grader.model import ExerciseResult, Report
from grader.runner import records
from grader.runner.submission import Submission, copy_lessons

WORKER_START_TIMEOUT_S = 120.0
REPLY_GRACE_S = 30.0

Progress = Callable[[int, int, ExerciseResult], None]


@dataclass(frozen=True)
class Options:
    seed: int = 0
    timeout_s: float | None = None  # overrides each suite's TIMEOUT
    memory_bytes: int = 4 << 30  # address space a child may add to the warm worker's
    output_cap: int = 32 << 10
    jobs: int = 1


class WorkerLost(Exception):
    pass


class Worker:
    """One warm worker process and its line protocol."""

    def __init__(self, log_dir: Path, preload: tuple[str, ...] = ()) -> None:
        self.log_path = log_dir / f"worker-{time.monotonic_ns()}.log"
        self._log: IO[bytes] = open(self.log_path, "wb")  # noqa: SIM115
        source_root = str(Path(grader.__file__).resolve().parent.parent)
        bootstrap = (
            f"import sys; sys.path.insert(0, {source_root!r}); "
            "from grader.runner.worker import main; main()"
        )
        env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS" and not k.startswith("PYTHON")}
        env.update({"JAX_PLATFORMS": "cpu", "MPLBACKEND": "Agg", "TF_CPP_MIN_LOG_LEVEL": "2"})
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", bootstrap, json.dumps(list(preload))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            start_new_session=True,
        )
        self._buffer = b""
        self.child_pid: int | None = None
        hello = self._read(WORKER_START_TIMEOUT_S)
        if not hello.get("ready"):
            raise WorkerLost(f"the grading worker did not start: {self.log_tail()}")

    def _read(self, timeout_s: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerLost("the grading worker stopped answering")
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise WorkerLost("the grading worker died")
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except OSError as exc:
            raise WorkerLost(f"the grading worker died ({exc})") from None
        deadline = float(request["timeout_s"]) + REPLY_GRACE_S
        started = self._read(deadline)
        self.child_pid = started.get("started")
        reply = self._read(deadline)
        self.child_pid = None
        return reply

    def log_tail(self, limit: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-limit:]
        except OSError:
            return ""

    def close(self, kill: bool = False) -> None:
        import signal

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


def _missing_requirements(spec: ExerciseSpec) -> list[str]:
    return [name for name in spec.requires if importlib.util.find_spec(name) is None]


def _grade_one(worker: Worker | None, spec: ExerciseSpec, submission: Submission, options: Options,
               scratch: Path, preload: tuple[str, ...]) -> tuple[ExerciseResult, Worker | None]:
    if not submission.has(spec.name):
        return records.missing(spec, str(submission.root)), worker
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
    request = {
        "suite": str(spec.suite),
        "workdir": str(work),
        "lesson_dir": str(lessons),
        "records": str(work / "records.jsonl"),
        "seed": options.seed,
        "timeout_s": timeout_s,
        "memory_bytes": options.memory_bytes,
        "output_cap": options.output_cap,
        "devices": spec.devices,
    }
    if submission.files[spec.name].suffix == ".ipynb":
        request["notebook"] = spec.name  # the child runs it and builds the module first
    started = time.monotonic()
    try:
        if worker is None:
            worker = Worker(scratch, preload)
        ending = records.Ending.from_reply(worker.run(request), timeout_s)
    except WorkerLost as exc:
        tail = worker.log_tail() if worker else ""
        if worker is not None:
            worker.close(kill=True)
        worker = None
        ending = records.Ending(
            lost=f"{exc} while grading this file (it was killed or crashed); the other files "
            "are graded by a fresh worker." + (f"\nworker log: {tail}" if tail.strip() else ""),
            duration_s=time.monotonic() - started,
            timeout_s=timeout_s,
        )
    return records.assemble(spec, work / "records.jsonl", ending, submission.files[spec.name].name), worker


def grade(
    specs: list[ExerciseSpec],
    submission: Submission,
    options: Options,
    on_result: Progress | None = None,
) -> Report:
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="grade-"))
    results: dict[str, ExerciseResult] = {}
    todo: queue.Queue[ExerciseSpec] = queue.Queue()
    for spec in specs:
        todo.put(spec)
    lock = threading.Lock()
    preload = tuple(sorted({m for s in specs if submission.has(s.name) for m in s.imports}))

    def serve() -> None:
        worker: Worker | None = None
        try:
            while True:
                try:
                    spec = todo.get_nowait()
                except queue.Empty:
                    return
                result, worker = _grade_one(worker, spec, submission, options, scratch, preload)
                with lock:
                    results[spec.name] = result
                    if on_result is not None:
                        on_result(len(results), len(specs), result)
        finally:
            if worker is not None:
                worker.close()

    jobs = max(1, min(options.jobs, len(specs)))
    threads = [threading.Thread(target=serve, name=f"grade-{i}") for i in range(jobs)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return Report(
        exercises=tuple(results[s.name] for s in specs),
        seed=options.seed,
        submission=str(submission.root if submission.single is None else submission.files[submission.single]),
        grader_version=grader.__version__,
        duration_s=time.monotonic() - started,
    )
