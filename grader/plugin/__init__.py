"""The pytest plugin the hidden suites run under.

Loaded explicitly (`-p grader.plugin`), never through an entry point, so it
does not leak into other pytest runs. It provides the suites' fixtures
(`student`, `seed`, `credit`, `attach`) and, when `--grader-records FILE` or
`--grader-records-fd N` is given (the runner passes its pipe), writes one
record (`grader.protocol.records`) per event: the checks collected, the
student module's import, each check's start and outcome (a failure's fix
apart from its message: the course decides when students see it, see
`grader.hints`). The parent turns those records into the result model; points
and hints never travel this way, the parent reads them from the suites' source.

The hooks, options and fixtures are here; beside them, one concept each:
`judge` (a lesson file's judging, each check's state in its item's stash),
`sandbox_session` (the sandbox process), `outcomes` (what a check's exception means, a frozen value), `blame` (whose
exception it is: the student's, or the suite's own, a grader error that counts no points),
`wording` (what the student is told), `gates` (checks that stand on others), `options`.

Also usable by hand, to debug a suite against a folder of lesson files:

    pytest -p grader.plugin --lesson-dir solutions grader/suites/test_03_jit.py
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from grader.authoring import MARKER, Attachments, Credit
from grader.plugin import options, wording
from grader.plugin.gates import Gate, GateClosed, requires
from grader.plugin.judge import Judge
from grader.plugin.sandbox_session import lesson_of
from grader.protocol import records
from grader.sandbox import client, isolation

__all__ = ["Gate", "GateClosed", "Judge"]

JUDGE = pytest.StashKey[Judge]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("grader")
    group.addoption("--lesson-dir", default=None, help="folder of the lesson files to grade")
    group.addoption("--grader-records", default=None, help="write JSON-lines records here")
    group.addoption(
        "--grader-records-fd",
        default=None,
        type=int,
        help="write the records to this inherited file descriptor (the worker's pipe)",
    )
    group.addoption("--grader-seed", default="0", help="seed for generated inputs")
    group.addoption(
        "--grader-lesson", default=None, help="lesson to import (default: from the suite's name)"
    )
    group.addoption(
        "--grader-isolation",
        default="basic",
        choices=isolation.LEVELS,
        help="how far the sandbox is isolated (the runner passes what it detected)",
    )
    group.addoption("--grader-timeout", default="600", help="seconds the whole suite may take")
    group.addoption(
        "--grader-sandbox-dir",
        default=None,
        help="make the sandbox's folder in this one (the runner's: it removes it after the "
        "judge ends); default: the system temp folder",
    )
    group.addoption(
        "--grader-check-share",
        default=None,
        help="seconds each check's requests to the sandbox may take (its share of the limit)",
    )
    group.addoption("--grader-only", default=None, help="a rerun: only these checks (ids, ',')")
    group.addoption(
        "--grader-passed", default=None, help="a rerun: checks an earlier judge passed (gates)"
    )
    group.addoption(
        "--grader-unjudged", default=None, help="a rerun: checks with no verdict before"
    )
    group.addoption(
        "--grader-stopped",
        default=None,
        help="a rerun: student functions that stopped an earlier sandbox (not called again)",
    )
    group.addoption(
        "--grader-retried",
        default=None,
        help="a rerun: checks already run again after a signal from outside ended their sandbox",
    )
    group.addoption(
        "--grader-notebook",
        action="store_true",
        help="the lesson is a notebook: run it in the sandbox, then import its code cells",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(name, points, hint, hidden): a graded check (grader.authoring.check)"
    )
    judge = Judge(options.read(config))
    config.stash[JUDGE] = judge
    config.pluginmanager.register(JudgeHooks(judge), "grader-state")
    _hypothesis_profile()
    if judge.options.lesson is not None and not config.option.collectonly:
        judge.start_sandbox(config.args)


def pytest_unconfigure(config: pytest.Config) -> None:
    judge = config.stash.get(JUDGE, None)
    if judge is not None:
        judge.session.stop()


class JudgeHooks:
    """The judge's hooks, registered for the session: each hands its moment to the judge."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self._not_loaded: set[str] = set()  # suites whose failure was recorded with its cause

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.judge.collect(items)

    def pytest_exception_interact(
        self, node: pytest.Item | pytest.Collector, call: pytest.CallInfo[Any], report: Any
    ) -> None:
        """A suite that failed to import or collect: a grader error at its line."""
        if isinstance(report, pytest.CollectReport) and call.excinfo is not None:
            self.judge.suite_not_loaded(str(node.path), call.excinfo.value)
            self._not_loaded.add(report.nodeid)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.skipped and isinstance(report.longrepr, tuple):
            self.judge.emit(records.Skipped(str(report.longrepr[2]).removeprefix("Skipped: ")))
        elif report.failed and report.nodeid not in self._not_loaded:
            self.judge.emit(records.SuiteError(wording.suite_not_collected(report.nodeid)))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, None]:
        self.judge.begin(item)
        yield
        self.judge.finish(item)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        __tracebackhide__ = True
        self.judge.require(item, requires(item))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        yield
        self.judge.report(item, call)

    def pytest_sessionfinish(self) -> None:
        self.judge.done()


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


def _judge(request: pytest.FixtureRequest) -> Judge:
    return request.config.stash[JUDGE]


@pytest.fixture
def student(request: pytest.FixtureRequest) -> client.Remote:
    """The student's lesson module named by the suite's LESSON, as a handle into the sandbox."""
    return _judge(request).session.load(lesson_of(request.node))


@pytest.fixture
def seed(request: pytest.FixtureRequest) -> int:
    return _judge(request).options.seed


@pytest.fixture
def gate(request: pytest.FixtureRequest) -> Gate:
    return Gate(_judge(request).require, request.node)


@pytest.fixture
def credit(request: pytest.FixtureRequest) -> Credit:
    return _judge(request).credit(request.node)


@pytest.fixture
def attach(request: pytest.FixtureRequest) -> Attachments:
    return _judge(request).attachments(request.node)


@pytest.fixture
def scratch(request: pytest.FixtureRequest) -> str:
    """A folder name in the sandbox's scratch space, unique to this check and not yet created:
    student code may write there (the judge never opens what it holds)."""
    return _judge(request).session.scratch(request.node.name)
