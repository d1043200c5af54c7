"""Grade one folder of lesson files with one hidden suite, in a subprocess, and read
the plugin's JSON-lines records back.

    graded = grade("tests/fixtures/07_pmap/psum", "07_pmap", devices=8)
    graded.assert_statuses(failed={"test_full_batch_mean"})   # every other check passed
    assert "psum" in graded.message("test_full_batch_mean")

Each folder is graded as the runner grades it: a warm worker (`grader.runner.engine.Worker`,
JAX imported once per test process) forks a judge per folder, which forks the sandbox that
imports the student's module. Workers are pooled, one per concurrent grading. With
`extra_env`, a fresh `pytest -p grader.plugin` subprocess grades instead (the environment
of a warm worker is fixed when it starts).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.catalog import exercises
from grader.protocol.worker import Request
from grader.runner.engine import Worker, WorkerLost

REPO = Path(__file__).resolve().parents[2]
SUITES = REPO / "grader" / "suites"
FIXTURES = REPO / "tests" / "fixtures"

# One persistent XLA compilation cache for every grading this test session starts:
# the fixtures of a lesson share most of their compilations (the reference's, JAX's
# own), which then run once instead of once per subprocess. Tracing still happens in
# every process, so trace-counting checks see what they would see without it.
_COMPILE_CACHE = tempfile.mkdtemp(prefix="grader-test-xla-cache-")
atexit.register(shutil.rmtree, _COMPILE_CACHE, ignore_errors=True)
_CACHE_ENV = {
    "JAX_COMPILATION_CACHE_DIR": _COMPILE_CACHE,
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
}

_IDLE: list[Worker] = []
_POOL_LOCK = threading.Lock()
_LOGS = tempfile.mkdtemp(prefix="grader-test-workers-")


def _take_worker() -> Worker:
    with _POOL_LOCK:
        if _IDLE:
            return _IDLE.pop()
        saved = {k: os.environ.get(k) for k in _CACHE_ENV}
        os.environ.update(_CACHE_ENV)  # a worker's environment is this process's, at its start
        try:
            preload = tuple(sorted({m for spec in exercises() for m in spec.imports}))
            return Worker(Path(_LOGS), preload)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def _close_workers() -> None:
    while _IDLE:
        _IDLE.pop().close()
    shutil.rmtree(_LOGS, ignore_errors=True)


atexit.register(_close_workers)


@dataclass
class Graded:
    lesson_dir: Path
    records: list[dict[str, Any]]
    output: str
    duration_s: float
    results: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A failure's fix travels apart from its message (the hint policy decides whether
        # students see it); the suite tests read them together, as `str(CheckFailure)` shows.
        self.results = {
            r["id"]: {
                **r,
                "message": r["message"] + (f"\n  fix: {r['fix']}" if r.get("fix") else ""),
            }
            for r in self.records
            if r["type"] == "result"
        }

    def status(self, check_id: str) -> str:
        return str(self.results[check_id]["status"])

    def message(self, check_id: str) -> str:
        return str(self.results[check_id]["message"])

    def statuses(self) -> dict[str, str]:
        return {k: str(v["status"]) for k, v in self.results.items()}

    def assert_statuses(
        self, *, failed: Iterable[str] = (), passed: Iterable[str] | None = None
    ) -> None:
        """`failed` checks failed; the others (or `passed`, if given) passed."""
        failed = set(failed)
        assert self.results, f"no results recorded for {self.lesson_dir}:\n{self.output[-3000:]}"
        unknown = failed - set(self.results)
        assert not unknown, f"no such checks: {sorted(unknown)}"
        expected_pass = set(self.results) - failed if passed is None else set(passed)
        wrong = {
            k: v
            for k, v in self.statuses().items()
            if (k in failed and v != "failed") or (k in expected_pass and v != "passed")
        }
        assert not wrong, "unexpected statuses for {}: {}\n{}".format(
            self.lesson_dir,
            wrong,
            "\n".join(f"--- {k}\n{self.message(k)}" for k in wrong),
        )

    def assert_all_not_implemented(self) -> None:
        """The untouched stub: every check failed, none crashed."""
        assert self.results, f"no results recorded:\n{self.output[-3000:]}"
        not_failed = {k: v for k, v in self.statuses().items() if v != "failed"}
        assert not not_failed, f"stub checks that did not fail: {not_failed}"


def grade(
    lesson_dir: str | os.PathLike[str],
    lesson: str,
    *,
    devices: int = 1,
    timeout: float = 600,
    extra_env: dict[str, str] | None = None,
    suite: str | os.PathLike[str] | None = None,
) -> Graded:
    """Run grader/suites/test_<lesson>.py (or `suite`) against `lesson_dir`."""
    suite = suite or SUITES / f"test_{lesson}.py"
    if extra_env:
        return _grade_in_subprocess(lesson_dir, suite, devices, timeout, extra_env)
    worker = _take_worker()
    with tempfile.TemporaryDirectory() as work:
        request = Request(
            suite=str(suite),
            workdir=work,
            lesson_dir=str(Path(lesson_dir).resolve()),
            seed=0,
            timeout_s=timeout,
            memory_bytes=8 << 30,
            output_cap=1 << 20,
            devices=devices,
        )
        started = time.perf_counter()
        try:
            ended = worker.run(request)
        except WorkerLost:
            with contextlib.suppress(Exception):
                worker.close(kill=True)
            raise
        duration = time.perf_counter() - started
    with _POOL_LOCK:
        _IDLE.append(worker)
    return Graded(
        lesson_dir=Path(lesson_dir),
        records=[json.loads(line) for line in ended.records],
        output=ended.output,
        duration_s=duration,
    )


def _grade_in_subprocess(lesson_dir, suite, devices, timeout, extra_env) -> Graded:
    env = dict(
        os.environ,
        JAX_PLATFORMS="cpu",
        PYTHONDONTWRITEBYTECODE="1",
        JAX_COMPILATION_CACHE_DIR=_COMPILE_CACHE,
        JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
        JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0",
    )
    env.pop("PYTEST_ADDOPTS", None)
    env.update(extra_env or {})
    if devices > 1:
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    with tempfile.TemporaryDirectory() as tmp:
        records = Path(tmp) / "records.jsonl"
        started = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "grader.plugin",
                "-p",
                "no:cacheprovider",
                "-q",
                "--lesson-dir",
                str(lesson_dir),
                "--grader-records",
                str(records),
                str(suite),
            ],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        duration = time.perf_counter() - started
        lines = records.read_text().splitlines() if records.exists() else []
    return Graded(
        lesson_dir=Path(lesson_dir),
        records=[json.loads(line) for line in lines],
        output=done.stdout + done.stderr,
        duration_s=duration,
    )
