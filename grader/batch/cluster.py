"""`grade batch --scheduler ADDRESS`: each student graded as one task on a dask.distributed cluster.

Needs the `cluster` extra (in the course's folder: `pip install '.[cluster]'`) here and
the grader installed on every dask worker. A task carries the student's
lesson files and the suites as bytes, so workers need no shared file system;
on a worker that already sees the same files (a local cluster, a shared
disk) they are used in place. The task runs the same `engine.grade` as a
local batch, with the same submission path in the report, so the results are
identical to local grading (timings aside). Each dask worker process keeps
one warm grading worker (`warm_pool`) for every task it runs: JAX is imported
once per dask worker process, not once per student.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import shutil
import tempfile
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from grader import catalog
from grader.batch.jobs import Grader, Job, Outcome
from grader.model import Report
from grader.runner import engine, policy

CONNECT_TIMEOUT_S = 15


class ClusterUnavailable(Exception):
    """dask.distributed is not installed here; the message says how to install it."""


@dataclass(frozen=True)
class Parcel:
    """A job with the bytes of its files: what travels to a dask worker."""

    job: Job
    lessons: tuple[tuple[str, bytes], ...]  # one per job.files entry, same order
    suites: tuple[tuple[str, bytes], ...]  # (original suite path, its bytes)


def pack(job: Job, specs: list[catalog.ExerciseSpec]) -> Parcel:
    return Parcel(
        job,
        tuple((path, Path(path).read_bytes()) for _, path in job.files),
        tuple((str(s.suite), s.suite.read_bytes()) for s in specs),
    )


def _same_file(path: str, data: bytes) -> bool:
    try:
        return Path(path).read_bytes() == data
    except OSError:
        return False


def _suites_here(parcel: Parcel, specs: list[catalog.ExerciseSpec]) -> list[catalog.ExerciseSpec]:
    """The specs with suite paths valid on this worker (the sender's, or a content-named copy)."""
    if all(_same_file(path, data) for path, data in parcel.suites):
        return specs
    digest = hashlib.sha256(b"".join(p.encode() + d for p, d in parcel.suites)).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"grade-suites-{digest}"
    folder.mkdir(exist_ok=True)
    moved = {}
    for path, data in parcel.suites:
        target = folder / Path(path).name
        if not _same_file(str(target), data):
            target.write_bytes(data)
        moved[path] = target
    return [replace(s, suite=moved[str(s.suite)]) for s in specs]


_warm: engine.Pool | None = None
_warm_lock = threading.Lock()


def warm_pool(specs: list[catalog.ExerciseSpec]) -> engine.Pool:
    """This process's warm worker (a dask worker process keeps one for every task it runs),
    closed when the process exits."""
    global _warm
    with _warm_lock:
        if _warm is None:
            _warm = engine.Pool(1, engine.preload_for(specs))
            atexit.register(_warm.close)
        return _warm


def _grade(job: Job, specs: list[catalog.ExerciseSpec], options: policy.Options) -> Report:
    return engine.grade(specs, job.submission(), options, pool=warm_pool(specs))


def grade_parcel(
    parcel: Parcel, specs: list[catalog.ExerciseSpec], options: policy.Options
) -> Report:
    """Runs on a dask worker: one student's grading, on the process's warm worker."""
    specs = _suites_here(parcel, specs)
    if all(_same_file(path, data) for path, data in parcel.lessons):
        return _grade(parcel.job, specs, options)
    scratch = Path(tempfile.mkdtemp(prefix="grade-parcel-"))
    try:
        files = []
        for (lesson, path), (_, data) in zip(parcel.job.files, parcel.lessons, strict=True):
            local = scratch / Path(path).name
            local.write_bytes(data)
            files.append((lesson, str(local)))
        return _grade(replace(parcel.job, files=tuple(files)), specs, options)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def grade_on(address: str) -> Grader:
    """A batch grader sending every student to the dask scheduler at `address`."""
    try:
        distributed: Any = importlib.import_module("distributed")  # the `cluster` extra; untyped
    except ImportError:
        raise ClusterUnavailable(
            "--scheduler needs dask.distributed: install the grader's cluster extra (in the "
            "course's folder: pip install '.[cluster]')"
        ) from None

    def run(
        jobs: list[Job], specs: list[catalog.ExerciseSpec], options: policy.Options
    ) -> Iterator[Outcome]:
        try:
            client = distributed.Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
        except OSError as exc:
            raise ConnectionError(
                f"--scheduler {address}: cannot reach the dask scheduler ({exc})"
            ) from None
        try:
            futures: dict[Any, Job] = {}
            for job in jobs:
                future = client.submit(
                    grade_parcel,
                    pack(job, specs),
                    specs,
                    options,
                    key=f"grade-{job.student}-{id(job):x}",
                    pure=False,
                    retries=0,
                )
                futures[future] = job
            with client.as_current():  # as_completed finds its client this way
                completed = distributed.as_completed(list(futures))
            for future in completed:
                job = futures[future]
                try:
                    yield job, future.result(), ""
                except Exception:  # the grader's (or the cluster's) failure for this student only
                    yield job, None, traceback.format_exc()
        finally:
            client.close()

    return run
