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

Also usable by hand, to debug a suite against a folder of lesson files:

    pytest -p grader.plugin --lesson-dir solutions grader/suites/test_03_jit.py
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from grader.authoring import MARKER, Attachments, Credit
from grader.checks.failure import CAUSE_LABEL, CheckFailure
from grader.explain import explain
from grader.model import SourceLine
from grader.protocol import records
from grader.sandbox import client, isolation, launch, probes, quota
from grader.sandbox.client import SandboxGone, StudentError

WALL_PER_CPU_SHARE = 2.0
"""A check's wall-time share, in multiples of its CPU share (`--grader-check-share`)."""
MAX_LESSON_BYTES = 64 << 20
"""A lesson file larger than this is not copied into the sandbox (it is not a lesson)."""


@dataclass
class _Outcome:
    status: str = "passed"
    fraction: float = 1.0
    message: str = ""
    fix: str = ""  # how to fix it: the last level of the check's help, sent apart
    location: dict[str, Any] | None = None
    not_implemented: bool = False
    blocked_by: str | None = None
    root_cause: str | None = None


class LessonImportError(Exception):
    """The student's lesson file could not be imported."""


class GateClosed(CheckFailure):
    """A check (or one case of it) stands on a value check that did not pass."""

    def __init__(
        self, required: str, required_name: str, *, not_implemented: bool, unjudged: str = ""
    ) -> None:
        """`unjudged`: why the required check has no verdict (it ran out of time, its process
        stopped), when that is why: then nothing is said of the values."""
        self.required, self.not_implemented = required, not_implemented
        if unjudged:
            super().__init__(
                "this property is judged once the values are right",
                expected=f"a verdict on '{required_name}' first",
                observed=f"'{required_name}' could not be judged ({unjudged})",
                cause=f"not judged: see '{required_name}' first; nothing is known yet about "
                "the values",
            )
            return
        super().__init__(
            "this property is judged once the values are right",
            expected=f"the check '{required_name}' passed first",
            observed="it did not pass" + (" (not implemented yet)" if not_implemented else ""),
            # Where to look, not how to solve it: said with the failure, not held back as a fix.
            cause=f"values are wrong: fix the values first: see '{required_name}'. A property "
            "(compiling under jit, purity, tracing once, using a lax primitive...) earns points "
            "only for a function that computes the right values",
        )


class Gate:
    """The `gate` fixture: `gate.require("test_x_values")` in one case of a check."""

    def __init__(self, plugin: GraderPlugin) -> None:
        self._plugin = plugin

    def require(self, *check_ids: str) -> None:
        __tracebackhide__ = True
        self._plugin.require(check_ids)


class GraderPlugin:
    def __init__(self, config: pytest.Config) -> None:
        self.lesson_dir = os.path.realpath(config.getoption("lesson_dir") or "exercises")
        self.seed = int(config.getoption("grader_seed"))
        fd, path = config.getoption("grader_records_fd"), config.getoption("grader_records")
        self._fd = int(fd) if fd is not None else records.Writer.to_path(path).fd if path else None
        self.level: isolation.Level = config.getoption("grader_isolation")
        self.lesson = config.getoption("grader_lesson") or _lesson_from_args(config.args)
        self.sandbox: launch.Sandbox | None = None
        self.sandbox_dir = ""
        self._sandboxes = config.getoption("grader_sandbox_dir") or None
        self._unreadable = ""
        self._outcomes: dict[str, _Outcome] = {}
        self._credits: dict[str, Credit] = {}
        self._attachments: dict[str, Attachments] = {}
        self._started: dict[str, float] = {}
        self._names: dict[str, str] = {}  # check id -> its name in words (the collected ones)
        # A rerun (grader.runner.engine.grade_one): only these checks, these passed before,
        # these student functions stopped an earlier sandbox.
        self.only = _names_option(config.getoption("grader_only"))
        self.passed_before = _names_option(config.getoption("grader_passed"))
        self.unjudged_before = _names_option(config.getoption("grader_unjudged"))
        self.stopped = _names_option(config.getoption("grader_stopped"))
        self.check_share_s = float(config.getoption("grader_check_share") or 0.0)
        self._unrun: list[str] = []  # checks not run: the sandbox had stopped
        self._waits_on_unrun: set[str] = set()  # checks a gate closed on one of those
        self._current = ""  # the check running now
        self._stopped_by: list[str] = []  # the student functions that were running then

    # -- records ---------------------------------------------------------
    def emit(self, record: records.Record) -> None:
        if self._fd is not None:
            records.Writer(self._fd).emit(record)

    # -- the sandbox -------------------------------------------------------
    def start_sandbox(self, timeout_s: float, prepare: Any = None) -> None:
        """Fork the sandbox that imports the student's lesson file (before any suite is imported)."""
        if self.lesson is None:
            return
        # In the folder the runner removes once this judge has ended, however it ends
        # (`engine.grade_one`): a judge killed before `stop_sandbox` leaves nothing behind.
        self.sandbox_dir = tempfile.mkdtemp(prefix="grader-sandbox-", dir=self._sandboxes)
        os.chmod(self.sandbox_dir, 0o711)
        lessons = os.path.join(self.sandbox_dir, "lessons")
        copy_regular_files(self.lesson_dir, lessons)
        self.sandbox = launch.start(
            lesson=self.lesson,
            lesson_dir=lessons,
            level=self.level,
            workdir=self.sandbox_dir,
            masked=masked_paths(),
            close_fds=(self._fd,) if self._fd is not None else (),
            prepare=prepare,
            budget_s=timeout_s,
        )
        self.sandbox.channel.stopped = frozenset(self.stopped)

    def stop_sandbox(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None
        if self.sandbox_dir:
            _remove_tree(self.sandbox_dir)
            self.sandbox_dir = ""

    def scrub(self, message: str) -> str:
        """Messages name the student's files, never the grader's private folders."""
        text = scrub(message, self.lesson_dir)
        if self.sandbox_dir:
            text = scrub(text, os.path.join(self.sandbox_dir, "lessons"))
            text = text.replace(self.sandbox_dir + os.sep, "")
        return text

    def notebook_step(self, config: pytest.Config, timeout_s: float) -> Any:
        """What the sandbox runs before the import: the notebook, in a kernel it starts."""
        from grader.notebooks import grading

        suites = [a for a in config.args if os.path.basename(a.split("::")[0]).startswith("test_")]
        expected = set().union(*(grading.expected_names(Path(s.split("::")[0])) for s in suites))
        lesson, devices = self.lesson, int(jax_devices())

        def step() -> dict[str, Any]:
            assert lesson is not None
            lessons = Path(os.getcwd()).parent / "lessons"
            return grading.run(
                lesson,
                lessons,
                timeout_s=timeout_s,
                devices=devices,
                expected=expected,
                log_path=Path(os.getcwd()) / "kernel.log",
            )

        return step

    def record_notebook(self) -> None:
        from grader.notebooks import grading

        hello = self.sandbox.hello if self.sandbox is not None else None
        if hello is None:
            return
        unreadable = (
            grading.emit_notes(dict(hello.notes), self.lesson or "", records.Writer(self._fd))
            if self._fd is not None
            else None
        )
        if unreadable is not None:
            self._unreadable = unreadable

    def import_error(self) -> BaseException | None:
        if self._unreadable:
            return FileNotFoundError(self._unreadable)
        """Why the student's module is not there (None when it imported)."""
        box = self.sandbox
        if box is None:
            return FileNotFoundError(f"no sandbox for this suite (lesson {self.lesson!r})")
        if box.hello is None:
            return SandboxGone(box.channel.gone or "the sandbox did not start")
        if not box.hello.ok:
            assert box.hello.error is not None
            return client.student_error(box.hello.error)
        return None

    def load(self, lesson: str) -> client.Remote:
        if lesson != self.lesson or self.sandbox is None:
            raise pytest.UsageError(
                f"the sandbox imported {self.lesson!r}, this suite grades {lesson!r}"
            )
        exc = self.import_error()
        if exc is not None:
            raise LessonImportError(import_message(lesson, exc))
        return self.sandbox.module

    # -- gates -----------------------------------------------------------
    def require(self, check_ids: tuple[str, ...] | list[str]) -> None:
        """Raise `GateClosed` unless every collected one of `check_ids` passed in full.

        A required check this run did not collect (a released suite cut it out, `-k`
        deselected it) does not close the gate."""
        __tracebackhide__ = True
        for required in check_ids:
            if required not in self._names or required in self.passed_before:
                continue
            outcome = self._outcomes.get(required)
            if outcome is None and self.only and required not in self.only:
                raise GateClosed(
                    required,
                    self._names[required],
                    not_implemented=False,
                    unjudged="it could not run" if required in self.unjudged_before else "",
                )
            if outcome is None:
                raise pytest.UsageError(f"a check requires {required!r}, which has not run yet")
            if outcome.status != "passed" or outcome.fraction < 1.0:
                if required in self._unrun and self._current:  # rerun with it, when it is
                    self._waits_on_unrun.add(self._current)
                unjudged = {"timeout": "it ran out of time", "error": "it could not run"}
                raise GateClosed(
                    required,
                    self._names[required],
                    not_implemented=outcome.not_implemented,
                    unjudged=unjudged.get(outcome.status, ""),
                )

    # -- hooks -----------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        items[:] = requirements_first(items)
        self._names = {item.name: _marker(item).get("name", item.name) for item in items}
        if self.only:  # a rerun: the checks an earlier judge of this file could not run
            items[:] = [item for item in items if item.name in self.only]
        self.emit(records.Collected(tuple(item.name for item in items)))
        if self._fd is None or not items:
            return
        lesson = lesson_of(items[0])
        exc = self.import_error() if lesson == self.lesson else FileNotFoundError(lesson)
        if exc is None:
            self.emit(records.Import(lesson, ok=True))
        else:
            items[:] = []
            self.emit(
                records.Import(
                    lesson,
                    ok=False,
                    message=self.scrub(import_message(lesson, exc)),
                    location=error_location(exc),
                )
            )

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.skipped and isinstance(report.longrepr, tuple):
            self.emit(records.Skipped(str(report.longrepr[2]).removeprefix("Skipped: ")))
        elif report.failed:
            self.emit(records.SuiteError(str(report.longrepr)))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        __tracebackhide__ = True
        self.require(_marker(item).get("requires", ()))

    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        self._started[location[2]] = time.perf_counter()
        self._current = location[2]
        self.emit(records.Start(location[2]))
        if self.sandbox is not None and self.check_share_s > 0:
            # Each check may use its share of the file's limit in CPU time of the student's
            # code (a loaded machine slows it without failing it), and twice that in wall
            # time: one endless function costs its own checks, not the file (`Unrun`).
            channel = self.sandbox.channel
            channel.check_deadline = time.monotonic() + WALL_PER_CPU_SHARE * self.check_share_s
            if channel.cpu_seconds is not None:
                channel.cpu_limit = channel.cpu_seconds() + self.check_share_s

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
                self._note_stop(item.name, exc)
        if call.when == "call" and outcome.status == "passed":
            credit = self._credits.get(item.name)
            if credit is not None and credit.fraction < 1.0:
                outcome.status, outcome.fraction, outcome.message = (
                    "failed",
                    credit.fraction,
                    credit.message,
                )
                outcome.fix = credit.fix

    def _note_stop(self, check_id: str, exc: BaseException) -> None:
        """Remember a check the stopped sandbox could not run, and what stopped it."""
        if isinstance(exc, SandboxGone) and str(exc).startswith(client.ALREADY_GONE):
            self._unrun.append(check_id)
        elif isinstance(exc, SandboxGone) and self.sandbox is not None:
            function = self.sandbox.channel.lost_in
            if function and function not in self._stopped_by:
                self._stopped_by.append(function)

    def _classify(self, outcome: _Outcome, exc: BaseException, when: str) -> None:
        outcome.fraction = 0.0
        loc = error_location(exc)
        outcome.location = loc.to_json() if loc else None
        if isinstance(exc, LessonImportError):
            outcome.status, outcome.message = "error", str(exc)
        elif isinstance(exc, client.NotCalled):
            outcome.status = "error"
            outcome.message = (
                f"not judged: `{exc.function}` stopped the process running your code in an "
                "earlier check of this file (it ran out of time there, or ended the process), so "
                "this check did not call it again. Fix that first: see the check that names it."
            )
        elif isinstance(exc, SandboxGone) and str(exc).startswith(client.ALREADY_GONE):
            outcome.status = "error"
            why = str(exc).removeprefix(client.ALREADY_GONE).lstrip(": ")
            outcome.message = (
                f"not run: the process running your code stopped in an earlier check ({why})"
            )
        elif isinstance(exc, SandboxGone):
            self._classify_stop(outcome, exc)
        elif isinstance(exc, GateClosed):
            outcome.status, outcome.message = "failed", str(exc)
            outcome.blocked_by, outcome.not_implemented = exc.required, exc.not_implemented
        elif isinstance(exc, CheckFailure):
            outcome.status, outcome.message = "failed", exc.finding.message()
            outcome.fix = exc.finding.fix
            outcome.root_cause = student_root_cause(exc)
        elif isinstance(exc, StudentError):
            self._classify_student(outcome, exc, when)
        elif isinstance(exc, AssertionError):
            # pytest's rewritten-assert explanation is for suite authors: keep its first line.
            outcome.status, outcome.message = (
                "failed",
                _short(exc).splitlines()[0] if str(exc) else "assertion failed",
            )
        else:
            outcome.status = "failed" if when == "call" else "error"
            outcome.message, outcome.fix = _raised(
                "the check, using what your code returned,", type(exc).__name__, exc
            )

    def _classify_stop(self, outcome: _Outcome, exc: SandboxGone) -> None:
        """The sandbox stopped during this check: out of time (where it was), or ended."""
        channel = self.sandbox.channel if self.sandbox is not None else None
        function = channel.lost_in if channel is not None else ""
        called = f"`{function}`" if function else "your code"
        if str(exc).startswith(quota.EXCEEDED):
            outcome.status = "error"
            outcome.message = (
                f"{called} wrote too much: {exc}, so the process running it was stopped. "
                "Write only what the exercise asks for (a checkpoint takes kilobytes) and "
                "delete temporary files when you are done with them."
            )
            return
        if str(exc).startswith(client.PROTOCOL_BREAK):
            outcome.status = "error"
            outcome.message = (
                f"the process running your code sent the grader something it could not read "
                f"while {called} ran ({str(exc).removeprefix(client.PROTOCOL_BREAK).strip()}), "
                "so it was stopped. Code must not write to the grader's connection."
            )
            return
        if not str(exc).startswith(client.TIMED_OUT):
            outcome.status = "error"
            outcome.message = (
                f"the process running your code stopped while {called} ran ({exc}). Something "
                "in your code ended it (`sys.exit`, `os._exit`, a signal) or it ran out of memory."
            )
            return
        outcome.status = "timeout"
        share = str(exc).startswith(client.CHECK_SHARE)
        limit = (
            f"this check's share of the time limit ({self.check_share_s:g} s of computing, "
            f"{WALL_PER_CPU_SHARE * self.check_share_s:g} s in all)"
            if share
            else "the time limit for this file"
        )
        stuck = channel.stuck if channel is not None else ()
        where = ""
        if stuck:
            path, line, name = stuck[0]
            code = _source_line(os.path.join(self.lesson_dir, path), line)
            where = f" It was at {path}, line {line}, in `{name}`" + (
                f": `{code}`." if code else "."
            )
            outcome.location = SourceLine(path, line, code).to_json()
        outcome.message = (
            f"{called} was still running when {limit} ran out.{where} Look for a loop that never "
            "ends (a `while` whose condition never changes) or a very slow Python loop over "
            "array elements; `grade --timeout` raises the limit."
            + (" The file's other checks ran in a fresh process." if share else "")
        )

    def _classify_student(self, outcome: _Outcome, exc: StudentError, when: str) -> None:
        info = exc.info
        if info.is_a("NotImplementedError") and info.in_student:
            where = f"`{info.function}`" if info.function else "this function"
            outcome.status, outcome.not_implemented = "failed", True
            outcome.message = (
                f"{where} is not implemented yet: it still raises NotImplementedError."
            )
        elif info.is_a("MemoryError") or "RESOURCE_EXHAUSTED" in info.message:
            outcome.status = "error"
            outcome.message = (
                "ran out of memory: the code tried to allocate more than the grader's memory "
                f"limit ({info.type}: {_short(exc)})"
            )
        else:
            outcome.status = "failed" if when == "call" else "error"
            outcome.message, outcome.fix = _raised("your code", info.type, exc)
            if info.location is not None:
                path, line, _ = info.location
                outcome.root_cause = f"{info.type}|{path}|{line}|{info.function}"

    def pytest_runtest_logfinish(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        name = location[2]
        outcome = self._outcomes.get(name, _Outcome())
        self.emit(
            records.Result(
                id=name,
                status=records.check_status(outcome.status),
                fraction=outcome.fraction,
                message=self.scrub(outcome.message),
                fix=self.scrub(outcome.fix),
                location=SourceLine(**outcome.location) if outcome.location else None,
                not_implemented=outcome.not_implemented,
                blocked_by=outcome.blocked_by,
                root_cause=self.scrub(outcome.root_cause) if outcome.root_cause else None,
                duration_s=time.perf_counter() - self._started.get(name, time.perf_counter()),
            )
        )
        attachments = self._attachments.get(name)
        if attachments is not None:
            for title, png in attachments.images:
                self.emit(records.Artifact(id=name, title=title, data=png))
            for metric, value in attachments.metrics:
                self.emit(records.Metric(id=name, name=metric, value=value))

    def pytest_sessionfinish(self) -> None:
        unrun = [*self._unrun, *sorted(self._waits_on_unrun - set(self._unrun))]
        if unrun:
            self.emit(records.Unrun(tuple(unrun), tuple(self._stopped_by)))
        self.emit(records.Done())


def _names_option(value: str | None) -> frozenset[str]:
    return frozenset(n for n in (value or "").split(",") if n)


def _source_line(path: str, line: int) -> str:
    """The stripped text of `line` in the lesson file `path` (the judge's copy), or ""."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for number, text in enumerate(fh, 1):
                if number == line:
                    return text.strip()[:200]
    except OSError:
        pass
    return ""


def _marker(item: pytest.Item) -> dict[str, Any]:
    mark = item.get_closest_marker(MARKER)
    return dict(mark.kwargs) if mark is not None else {}


def requirements_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """`items` in their order, except that a check runs after the checks it requires,
    and checks that ask for the `gate` fixture (gated case by case) run last."""
    by_name = {item.name: item for item in items}
    ordered: list[pytest.Item] = []
    placed: set[str] = set()

    def place(item: pytest.Item, visiting: frozenset[str]) -> None:
        if item.name in placed or item.name in visiting:
            return
        for required in _marker(item).get("requires", ()):
            if required in by_name:
                place(by_name[required], visiting | {item.name})
        placed.add(item.name)
        ordered.append(item)

    gated = [item for item in items if "gate" in getattr(item, "fixturenames", ())]
    for item in [item for item in items if item not in gated] + gated:
        place(item, frozenset())
    return ordered


def lesson_of(item: pytest.Item) -> str:
    module = getattr(item, "module", None)
    lesson = getattr(module, "LESSON", None)
    if not isinstance(lesson, str):
        raise pytest.UsageError(f"{item.nodeid}: the suite module must define LESSON = '<name>'")
    return lesson


def import_message(lesson: str, exc: BaseException) -> str:
    info = exc.info if isinstance(exc, StudentError) else None
    loc = error_location(exc)
    where = f" ({loc.path}, line {loc.line}: {loc.code})" if loc else ""
    if isinstance(exc, SandboxGone):
        return (
            f"{lesson}.py could not be imported: the process importing it stopped ({exc}). "
            "Code at the top level of the file runs on import: keep it to definitions, and never "
            "end the program there (`sys.exit`, `os._exit`, `quit()`)."
        )
    if info is None:
        return str(exc)
    if info.is_a("SyntaxError"):
        what, _, rest = info.message.partition(" (")
        line = re.search(r"line (\d+)\)", rest)
        at = where or (f" at line {line.group(1)}" if line else "")
        return (
            f"{lesson}.py has a syntax error{at}: {what}. "
            "Python could not read the file, so none of its checks ran. Fix the line (look just "
            "before it too) and grade again."
        )
    if info.type == "SystemExit":
        return (
            f"{lesson}.py called sys.exit({info.message or 'None'}) while being imported{where}. A "
            "lesson file must only define functions: move script code under "
            "`if __name__ == '__main__':`."
        )
    if info.type == "FileNotFoundError" and not loc:
        return info.message
    return (
        f"{lesson}.py failed to import{where}: {info.type}: {_short(exc)}. None of its "
        f"checks ran. Run `python {lesson}.py` to see the error, fix it and grade again."
    )


def student_root_cause(exc: BaseException) -> str | None:
    """`Type|path|line|function` of the student's exception a check's failure was raised
    from (`raise fail(...) from exc`), or None. Only explicit causes count."""
    seen: set[int] = set()
    current: BaseException | None = exc.__cause__
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, StudentError):
            info = current.info
            if info.location is None or (info.is_a("NotImplementedError") and info.in_student):
                return None
            path, line, _ = info.location
            return f"{info.type}|{path}|{line}|{info.function}"
        current = current.__cause__
    return None


def error_location(exc: BaseException) -> SourceLine | None:
    """The student's line behind `exc`: from the StudentError it is, or that caused it."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, StudentError) and current.info.location:
            path, line, code = current.info.location
            return SourceLine(path, line, code)
        current = current.__cause__ or current.__context__
    return None


def jax_devices() -> int:
    """The simulated CPU device count set for this run (a notebook's kernel gets the same)."""
    import jax

    try:
        count = int(getattr(jax.config, "jax_num_cpu_devices", 1))
    except (TypeError, ValueError):
        return 1
    return count if count > 0 else 1


def _lesson_from_args(args: list[str]) -> str | None:
    for arg in args:
        name = os.path.basename(arg.split("::")[0])
        if name.startswith("test_") and name.endswith(".py"):
            return name[len("test_") : -3]
    return None


def copy_regular_files(source: str, target: str) -> None:
    """The lesson folder's regular files (no links, folders or FIFOs) into a fresh folder."""
    os.makedirs(target, mode=0o700)
    for entry in os.scandir(source):
        if (
            entry.is_file(follow_symlinks=False)
            and entry.stat(follow_symlinks=False).st_size <= MAX_LESSON_BYTES
        ):
            shutil.copyfile(entry.path, os.path.join(target, entry.name), follow_symlinks=False)


def masked_paths() -> tuple[str, ...]:
    """What a strict sandbox must not see even inside the installation: the hidden suites."""
    return (os.path.realpath(os.path.join(os.path.dirname(__file__), "suites")),)


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def scrub(message: str, lesson_dir: str = "") -> str:
    """Messages are deterministic and name the student's files, not the private copy."""
    text = _ADDRESS.sub("", message)
    return text.replace(lesson_dir + os.sep, "") if lesson_dir else text


def _raised(who: str, kind: str, exc: BaseException) -> tuple[str, str]:
    """`<who> raised <kind>: <message>`, with JAX's likely cause when known; and its fix."""
    lines = [f"{who} raised {kind}: {_short(exc)}"]
    explained = explain(exc)
    if explained:
        lines.append(f"  {CAUSE_LABEL} {explained.cause}")
    return "\n".join(lines), explained.fix if explained else ""


def _short(exc: BaseException, limit: int = 600) -> str:
    text = str(exc).strip()
    return text if len(text) <= limit else text[:limit] + " [...]"


# -- pytest entry points ----------------------------------------------------
_STATE = pytest.StashKey[GraderPlugin]()


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
        "--grader-notebook",
        action="store_true",
        help="the lesson is a notebook: run it in the sandbox, then import its code cells",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(name, points, hint, hidden): a graded check (grader.authoring.check)"
    )
    plugin = GraderPlugin(config)
    config.stash[_STATE] = plugin
    config.pluginmanager.register(plugin, "grader-state")
    _hypothesis_profile()
    if plugin.lesson is not None and not config.option.collectonly:
        probes.load_all()  # the sandbox is a fork: what it may run must be loaded first
        timeout_s = float(config.getoption("grader_timeout"))
        prepare = (
            plugin.notebook_step(config, timeout_s) if config.getoption("grader_notebook") else None
        )
        plugin.start_sandbox(timeout_s, prepare)
        if prepare is not None:
            plugin.record_notebook()


def pytest_unconfigure(config: pytest.Config) -> None:
    plugin = config.stash.get(_STATE, None)
    if plugin is not None:
        plugin.stop_sandbox()


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
def student(request: pytest.FixtureRequest) -> client.Remote:
    """The student's lesson module named by the suite's LESSON, as a handle into the sandbox."""
    return _plugin(request).load(lesson_of(request.node))


@pytest.fixture
def seed(request: pytest.FixtureRequest) -> int:
    return _plugin(request).seed


@pytest.fixture
def gate(request: pytest.FixtureRequest) -> Gate:
    return Gate(_plugin(request))


@pytest.fixture
def credit(request: pytest.FixtureRequest) -> Credit:
    return _plugin(request)._credits.setdefault(request.node.name, Credit())


@pytest.fixture
def attach(request: pytest.FixtureRequest) -> Attachments:
    return _plugin(request)._attachments.setdefault(request.node.name, Attachments())


@pytest.fixture
def scratch(request: pytest.FixtureRequest) -> str:
    """A folder name in the sandbox's scratch space, unique to this check and not yet created:
    student code may write there (the judge never opens what it holds)."""
    plugin = _plugin(request)
    return os.path.join(plugin.sandbox_dir, "scratch", re.sub(r"\W", "_", request.node.name))
