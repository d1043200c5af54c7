"""The pytest plugin the hidden suites run under.

Loaded explicitly (`-p grader.plugin`), never through an entry point, so it
does not leak into other pytest runs. It provides the suites' fixtures
(`student`, `seed`, `credit`, `attach`) and, when `--grader-records FILE` is
given (as the runner does in the grading child), writes one JSON line per
event: the checks collected, the student module's import, each check's start
and outcome. The parent turns those records into the result model; points and
hints never travel this way, the parent reads them from the suites' source.

Also usable by hand, to debug a suite against a folder of lesson files:

    pytest -p grader.plugin --lesson-dir solutions grader/suites/test_03_jit.py
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import re
import sys
import time
import types
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import pytest

from grader.checks.failure import CheckFailure
from grader.explain import explain
from grader.suite import MARKER, Attachments, Credit
from grader.tracebacks import innermost_student_line, raised_in_student_code

MAX_MESSAGE_CHARS = 4000


@dataclass
class _Outcome:
    status: str = "passed"
    fraction: float = 1.0
    message: str = ""
    location: dict[str, Any] | None = None
    not_implemented: bool = False


class LessonImportError(Exception):
    """The student's lesson file could not be imported."""


class GraderPlugin:
    def __init__(self, config: pytest.Config) -> None:
        self.lesson_dir = os.path.realpath(config.getoption("lesson_dir") or "exercises")
        self.seed = int(config.getoption("grader_seed"))
        path = config.getoption("grader_records")
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600) if path else None
        self._modules: dict[str, types.ModuleType | BaseException] = {}
        self._outcomes: dict[str, _Outcome] = {}
        self._credits: dict[str, Credit] = {}
        self._attachments: dict[str, Attachments] = {}
        self._started: dict[str, float] = {}

    # -- records ---------------------------------------------------------
    def emit(self, record: dict[str, Any]) -> None:
        if self._fd is not None:
            os.write(self._fd, (json.dumps(record, sort_keys=True) + "\n").encode())

    # -- the student's module --------------------------------------------
    def load(self, lesson: str) -> types.ModuleType:
        if lesson not in self._modules:
            self._modules[lesson] = self._import(lesson)
        found = self._modules[lesson]
        if isinstance(found, BaseException):
            raise LessonImportError(import_message(lesson, found, self.lesson_dir))
        return found

    def _import(self, lesson: str) -> types.ModuleType | BaseException:
        path = os.path.join(self.lesson_dir, f"{lesson}.py")
        if not os.path.isfile(path):
            return FileNotFoundError(f"no {lesson}.py in {self.lesson_dir}")
        if self.lesson_dir not in sys.path:
            sys.path.insert(0, self.lesson_dir)
        spec = importlib.util.spec_from_file_location(lesson, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[lesson] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:  # SystemExit and KeyboardInterrupt included: a lesson
            sys.modules.pop(lesson, None)  # file that exits at import must not end the run
            return exc
        return module

    # -- hooks -----------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.emit({"type": "collected", "ids": [item.name for item in items]})
        if self._fd is None:
            return
        kept = []
        for item in items:
            lesson = lesson_of(item)
            started = time.perf_counter()
            if lesson not in self._modules:
                self._modules[lesson] = self._import(lesson)
                found = self._modules[lesson]
                record: dict[str, Any] = {
                    "type": "import",
                    "lesson": lesson,
                    "ok": not isinstance(found, BaseException),
                    "duration_s": time.perf_counter() - started,
                }
                if isinstance(found, BaseException):
                    record["message"] = scrub(import_message(lesson, found, self.lesson_dir), self.lesson_dir)
                    loc = innermost_student_line(found, self.lesson_dir)
                    record["location"] = loc.to_json() if loc else None
                self.emit(record)
            if not isinstance(self._modules[lesson], BaseException):
                kept.append(item)
        items[:] = kept

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.skipped and isinstance(report.longrepr, tuple):
            self.emit({"type": "skipped", "message": str(report.longrepr[2]).removeprefix("Skipped: ")})
        elif report.failed:
            self.emit({"type": "suite_error", "message": str(report.longrepr)[-MAX_MESSAGE_CHARS:]})

    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        self._started[location[2]] = time.perf_counter()
        self.emit({"type": "start", "id": location[2]})

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        yield
        outcome = self._outcomes.setdefault(item.name, _Outcome())
        if call.excinfo is not None and outcome.status == "passed":
            exc = call.excinfo.value
            if call.excinfo.errisinstance(pytest.skip.Exception):
                outcome.status, outcome.fraction = "skipped", 0.0
                outcome.message = str(getattr(exc, "msg", exc))
            else:
                self._classify(outcome, exc, call.when)
        if call.when == "call" and outcome.status == "passed":
            credit = self._credits.get(item.name)
            if credit is not None and credit.fraction < 1.0:
                outcome.status, outcome.fraction, outcome.message = (
                    "failed",
                    credit.fraction,
                    credit.message,
                )

    def _classify(self, outcome: _Outcome, exc: BaseException, when: str) -> None:
        outcome.fraction = 0.0
        loc = innermost_student_line(exc, self.lesson_dir)
        outcome.location = loc.to_json() if loc else None
        if isinstance(exc, LessonImportError):
            outcome.status, outcome.message = "error", str(exc)
        elif isinstance(exc, CheckFailure):
            outcome.status, outcome.message = "failed", str(exc)
        elif isinstance(exc, NotImplementedError) and raised_in_student_code(exc, self.lesson_dir):
            where = f"`{_function_name(exc)}`" if _function_name(exc) else "this function"
            outcome.status, outcome.not_implemented = "failed", True
            outcome.message = f"{where} is not implemented yet: it still raises NotImplementedError."
        elif isinstance(exc, MemoryError) or "RESOURCE_EXHAUSTED" in str(exc):
            outcome.status = "error"
            outcome.message = (
                "ran out of memory: the code tried to allocate more than the grader's memory "
                f"limit ({type(exc).__name__}: {_short(exc)})"
            )
        elif isinstance(exc, AssertionError):
            # pytest's rewritten-assert explanation is for suite authors: keep its first line.
            outcome.status, outcome.message = "failed", _short(exc).splitlines()[0] if str(exc) else "assertion failed"
        else:
            outcome.status = "failed" if when == "call" else "error"
            who = "your code" if loc else "the check, using what your code returned,"
            lines = [f"{who} raised {type(exc).__name__}: {_short(exc)}"]
            explained = explain(exc)
            if explained:
                lines += [f"  likely cause: {explained.cause}", f"  fix: {explained.fix}"]
            outcome.message = "\n".join(lines)

    def pytest_runtest_logfinish(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        name = location[2]
        outcome = self._outcomes.get(name, _Outcome())
        self.emit(
            {
                "type": "result",
                "id": name,
                "status": outcome.status,
                "fraction": outcome.fraction,
                "message": scrub(outcome.message, self.lesson_dir)[:MAX_MESSAGE_CHARS],
                "location": outcome.location,
                "not_implemented": outcome.not_implemented,
                "duration_s": time.perf_counter() - self._started.get(name, time.perf_counter()),
            }
        )
        attachments = self._attachments.get(name)
        if attachments is not None:
            for title, png in attachments.images:
                self.emit(
                    {"type": "artifact", "id": name, "title": title, "media_type": "image/png",
                     "data": base64.b64encode(png).decode("ascii")}
                )
            for metric, value in attachments.metrics:
                self.emit({"type": "metric", "id": name, "name": metric, "value": value})

    def pytest_sessionfinish(self) -> None:
        self.emit({"type": "done"})


def lesson_of(item: pytest.Item) -> str:
    module = getattr(item, "module", None)
    lesson = getattr(module, "LESSON", None)
    if not isinstance(lesson, str):
        raise pytest.UsageError(f"{item.nodeid}: the suite module must define LESSON = '<name>'")
    return lesson


def import_message(lesson: str, exc: BaseException, lesson_dir: str) -> str:
    loc = innermost_student_line(exc, lesson_dir)
    where = f" ({loc.path}, line {loc.line}: {loc.code})" if loc else ""
    if isinstance(exc, SyntaxError):
        where = f" ({os.path.basename(exc.filename or lesson + '.py')}, line {exc.lineno}: {(exc.text or '').strip()})"
        return (
            f"{lesson}.py has a syntax error{where}: {exc.msg}. Python could not read the file, "
            "so none of its checks ran. Fix the line (look just before it too) and grade again."
        )
    if isinstance(exc, SystemExit):
        return (
            f"{lesson}.py called sys.exit({exc.code!r}) while being imported{where}. A lesson file "
            "must only define functions: move script code under `if __name__ == '__main__':`."
        )
    if isinstance(exc, FileNotFoundError) and not loc:
        return str(exc)
    return (
        f"{lesson}.py failed to import{where}: {type(exc).__name__}: {_short(exc)}. None of its "
        "checks ran. Run `python {lesson}.py` to see the error, fix it and grade again."
    ).replace("{lesson}", lesson)


_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def scrub(message: str, lesson_dir: str) -> str:
    """Messages are deterministic and name the student's files, not the private copy."""
    return _ADDRESS.sub("", message).replace(lesson_dir + os.sep, "")


def _function_name(exc: BaseException) -> str:
    tb = exc.__traceback__
    name = ""
    while tb is not None:
        name = tb.tb_frame.f_code.co_name
        tb = tb.tb_next
    return "" if name == "<module>" else name


def _short(exc: BaseException, limit: int = 600) -> str:
    text = str(exc).strip()
    return text if len(text) <= limit else text[:limit] + " [...]"


# -- pytest entry points ----------------------------------------------------
_STATE = pytest.StashKey[GraderPlugin]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("grader")
    group.addoption("--lesson-dir", default=None, help="folder of the lesson files to grade")
    group.addoption("--grader-records", default=None, help="write JSON-lines records here")
    group.addoption("--grader-seed", default="0", help="seed for generated inputs")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(name, points, hint, hidden): a graded check (grader.suite.check)"
    )
    plugin = GraderPlugin(config)
    config.stash[_STATE] = plugin
    config.pluginmanager.register(plugin, "grader-state")
    _hypothesis_profile()


def _hypothesis_profile() -> None:
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # pragma: no cover - hypothesis is a dependency
        return
    settings.register_profile(
        "grader",
        database=None,
        deadline=None,
        derandomize=True,
        max_examples=60,
        print_blob=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    settings.load_profile("grader")


def _plugin(request: pytest.FixtureRequest) -> GraderPlugin:
    return request.config.stash[_STATE]


@pytest.fixture
def student(request: pytest.FixtureRequest) -> types.ModuleType:
    """The student's lesson module named by the suite's LESSON."""
    return _plugin(request).load(lesson_of(request.node))


@pytest.fixture
def seed(request: pytest.FixtureRequest) -> int:
    return _plugin(request).seed


@pytest.fixture
def credit(request: pytest.FixtureRequest) -> Credit:
    return _plugin(request)._credits.setdefault(request.node.name, Credit())


@pytest.fixture
def attach(request: pytest.FixtureRequest) -> Attachments:
    return _plugin(request)._attachments.setdefault(request.node.name, Attachments())


@pytest.fixture
def lesson_dir(request: pytest.FixtureRequest) -> str:
    """The folder holding the lesson files being graded (a private copy when grading)."""
    return _plugin(request).lesson_dir
