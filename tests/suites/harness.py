"""The harness of the lesson suites' tests: where a lesson's files are, how a variant of it
is graded (as the runner grades it), and how a test asserts on the grading.

A test module names its lesson and asks the `graded` fixture (tests/suites/conftest.py) for
variants by name:

    LESSON = "03_jit"

    def test_where_piecewise_has_the_right_values_but_no_cond(graded):
        g = graded("where_piecewise")
        g.assert_fails("test_piecewise_cond", "jnp.where", "BOTH branches")  # and only it

    def test_solution(graded):
        graded("solution").assert_full_marks()

A variant is "solution" (solutions/), "stub" (exercises/) or the name of a folder under
tests/fixtures/<lesson>/. A module grading several lessons sets no LESSON and asks
`graded(lesson, variant)`.

Grading is real: a warm worker (`grader.runner.handle.WorkerHandle`, JAX imported once) forks a
judge per folder, which forks the sandbox that imports the student's module, with the
devices the suite asks for (its DEVICES). A variant whose module maps it to an environment
(`EXTRA_ENV = {"without_extras": {...}}`) is graded by a fresh `pytest -p grader.plugin`
instead (a warm worker's environment is fixed when it starts).

Each grading is done once per test run and shared: by every test that asks for it, in
every module (the same fixture folder appears in a suite's tests and in the diagnoses),
and across pytest-xdist workers (a file under the run's own home, locked while one process
grades it: another process waiting for it reads the result instead of grading again). When
a module's first test asks for `graded`, the variants its selected tests name are graded
ahead, WORKERS at a time in each test process (under `pytest -n 2`, up to four on CI's
two cores).

`lesson_files(lesson)` is where a lesson's files are: a new exercise is these places.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from grader.catalog import exercises, read_suite
from grader.checks.failure import CAUSE_LABEL
from grader.course.layout import Course, LessonFiles
from grader.protocol.worker_messages import Request
from grader.runner.engine import preload_for
from grader.runner.handle import WorkerHandle, WorkerLost

REPO = Path(__file__).resolve().parents[2]
SUITES = REPO / "grader" / "suites"
FIXTURES = REPO / "tests" / "fixtures"
WORKERS = 2
"""Gradings graded ahead at a time by one test process (one module's `graded`)."""
TIMEOUT_S = 600.0

# -- a lesson's files: one place to look ----------------------------------------------------


def lesson_files(lesson: str, root: Path = REPO) -> LessonFiles:
    """Where `lesson`'s files are, whether or not they exist (`LessonFiles.missing`): the
    course's layout (`grader.course.layout`, the same one `grade verify`'s rules read)."""
    return Course.at(root).lesson(lesson)


def lessons(root: Path = REPO) -> list[str]:
    """Every lesson: a reference solution in solutions/ is what makes one."""
    return Course.at(root).lessons()


def variant_folder(lesson: str, variant: str, root: Path = REPO) -> Path:
    """The folder graded as `variant` of `lesson`."""
    files = lesson_files(lesson, root)
    if variant == "solution":
        return files.solution.parent
    if variant == "stub":
        return files.stub.parent
    return files.fixtures / variant


# -- one grading and its assertions --------------------------------------------------------


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

    def cause(self, check_id: str) -> str:
        """The message's likely-cause line ('' when it names none)."""
        for line in self.message(check_id).splitlines():
            if line.strip().startswith(CAUSE_LABEL):
                return line
        return ""

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

    def assert_full_marks(self) -> None:
        """Every check passed, each with its whole fraction of the points."""
        self.assert_statuses()
        partial = {k: r["fraction"] for k, r in self.results.items() if r["fraction"] != 1.0}
        assert not partial, f"partial credit for {self.lesson_dir}: {partial}"

    def assert_fails(
        self,
        check_id: str,
        *words: str,
        cause: str | Sequence[str] = (),
        not_cause: Sequence[str] = (),
        blocked_by: str | None = None,
        only: bool = False,
    ) -> str:
        """`check_id` failed, its message (fix included) holds each of `words`, its
        likely-cause line each of `cause` and none of `not_cause`, and it was not run
        behind `blocked_by` when that is given; with `only`, every other check passed.
        Returns the message, for what else the test asserts."""
        assert check_id in self.results, f"no check {check_id!r}: {sorted(self.results)}"
        if only:
            self.assert_statuses(failed={check_id})
        result = self.results[check_id]
        message = str(result["message"])
        assert result["status"] == "failed", (check_id, result)
        for w in words:
            assert w in message, (w, message)
        line = self.cause(check_id)
        for w in (cause,) if isinstance(cause, str) else cause:
            assert w in line, (w, message)
        for w in not_cause:
            assert w not in line, (w, message)
        if blocked_by is not None:
            assert result["blocked_by"] == blocked_by, (check_id, result)
        return message

    def assert_all_not_implemented(self) -> None:
        """The untouched stub: every check failed, none crashed."""
        assert self.results, f"no results recorded:\n{self.output[-3000:]}"
        not_failed = {k: v for k, v in self.statuses().items() if v != "failed"}
        assert not not_failed, f"stub checks that did not fail: {not_failed}"

    def to_json(self) -> str:
        return json.dumps(
            {
                "lesson_dir": str(self.lesson_dir),
                "records": self.records,
                "output": self.output,
                "duration_s": self.duration_s,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> Graded:
        data = json.loads(text)
        return cls(
            lesson_dir=Path(data["lesson_dir"]),
            records=data["records"],
            output=data["output"],
            duration_s=data["duration_s"],
        )


# -- grading one folder --------------------------------------------------------------------

# Shared by every process of this test run (tests/conftest.py gives the run a home of its
# own, which xdist workers inherit): the gradings, their locks, and one persistent XLA
# compilation cache. The fixtures of a lesson share most of their compilations (the
# reference's, JAX's own), which then run once instead of once per grading. Tracing still
# happens in every process, so trace-counting checks see what they would see without it.


@cache
def _shared() -> Path:
    """The run's folder (read when first needed: the run's home is set at configure time,
    after an initial conftest may have imported this module)."""
    home = os.environ.get("GRADER_TESTS_HOME")
    if home and os.path.isdir(home):
        shared = Path(home) / "suite-gradings"
    else:  # outside this repository's tests/conftest.py: this process's own
        shared = Path(tempfile.mkdtemp(prefix="grader-test-gradings-"))
        atexit.register(shutil.rmtree, shared, ignore_errors=True)
    (shared / "xla-cache").mkdir(parents=True, exist_ok=True)
    return shared


def _cache_env() -> dict[str, str]:
    return {
        "JAX_COMPILATION_CACHE_DIR": str(_shared() / "xla-cache"),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
    }


_IDLE: list[WorkerHandle] = []
_POOL_LOCK = threading.Lock()
_LOGS = tempfile.mkdtemp(prefix="grader-test-workers-")


def _take_worker() -> WorkerHandle:
    with _POOL_LOCK:
        if _IDLE:
            return _IDLE.pop()
        cache_env = _cache_env()
        saved = {k: os.environ.get(k) for k in cache_env}
        os.environ.update(cache_env)  # a worker's environment is this process's, at its start
        try:
            preload = worker_preload()
            return WorkerHandle(Path(_LOGS), preload)
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


def grade(
    lesson_dir: str | os.PathLike[str],
    lesson: str,
    *,
    devices: int = 1,
    timeout: float = TIMEOUT_S,
    extra_env: Mapping[str, str] | None = None,
    suite: str | os.PathLike[str] | None = None,
) -> Graded:
    """Run grader/suites/test_<lesson>.py (or `suite`) against `lesson_dir`, now (no
    sharing: `Gradings` shares)."""
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


def _grade_in_subprocess(
    lesson_dir: str | os.PathLike[str],
    suite: str | os.PathLike[str],
    devices: int,
    timeout: float,
    extra_env: Mapping[str, str],
) -> Graded:
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONDONTWRITEBYTECODE="1", **_cache_env())
    env.pop("PYTEST_ADDOPTS", None)
    env.update(extra_env)
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


# -- gradings shared by the run --------------------------------------------------------------


@cache
def worker_preload() -> tuple[str, ...]:
    """What the harness's warm workers import first, as the engine's (`preload_for`)."""
    return preload_for(exercises())


@cache
def suite_devices(lesson: str) -> int:
    """The devices the runner grades `lesson` with (its suite's DEVICES)."""
    return read_suite(SUITES / f"test_{lesson}.py").devices


Key = tuple[str, str]  # (lesson, variant)


class Gradings:
    """`gradings(variant)` (of `lesson`) or `gradings(lesson, variant)`: the grading,
    done once in the run. `prefetch` starts gradings ahead, WORKERS at a time."""

    def __init__(
        self, lesson: str | None = None, extra_env: Mapping[str, Mapping[str, str]] | None = None
    ) -> None:
        self.lesson = lesson
        self.extra_env = dict(extra_env or {})
        self._pool = ThreadPoolExecutor(max_workers=WORKERS)
        self._ahead: dict[Key, Future[Graded | None]] = {}

    def key(self, *name: str) -> Key:
        if len(name) == 2:
            return (name[0], name[1])
        assert len(name) == 1 and self.lesson, f"graded(variant) needs the module's LESSON: {name}"
        return (self.lesson, name[0])

    def prefetch(self, keys: Iterable[Key]) -> None:
        # What needs `ast.parse` (the suites' DEVICES, the workers' preload) is read here, on
        # the calling thread: CPython 3.11's ast.parse is not thread-safe (gh-106905: the
        # AST constructor's recursion depth is shared, "SystemError: AST constructor
        # recursion depth mismatch" when pytest parses on the main thread meanwhile).
        worker_preload()
        for key in keys:
            suite_devices(key[0])
            if key not in self._ahead:
                self._ahead[key] = self._pool.submit(self._obtain, key, False)

    def __call__(self, *name: str) -> Graded:
        key = self.key(*name)
        ahead = self._ahead.get(key)
        got = ahead.result() if ahead is not None else None
        # None: not graded ahead, or another process held it then (its result is read now)
        return got if got is not None else self._obtain(key, True)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _obtain(self, key: Key, wait: bool) -> Graded | None:
        lesson, variant = key
        env = self.extra_env.get(variant)
        devices = suite_devices(lesson)
        tag = json.dumps([lesson, variant, devices, sorted((env or {}).items())])
        stem = f"{lesson}--{variant}--{hashlib.sha256(tag.encode()).hexdigest()[:12]}"
        done = _shared() / f"{stem}.json"
        if done.exists():
            return Graded.from_json(done.read_text())
        with open(_shared() / f"{stem}.lock", "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                return None  # another process grades it: read it when a test asks
            if done.exists():  # graded while this one waited
                return Graded.from_json(done.read_text())
            graded = grade(variant_folder(lesson, variant), lesson, devices=devices, extra_env=env)
            partial = done.with_suffix(f".{os.getpid()}.{threading.get_ident()}")
            partial.write_text(graded.to_json())
            partial.replace(done)
            return graded
