"""`grade watch`: what a save shows (fast tests on the parts), then the command in a real
pseudo-terminal, on a copy of one lesson file with the real suite (slow).

One session (the warm worker starts once): a broken 03_jit is saved and its failing check
shown (first while the other checks still run, then in the complete verdict), the fixed file is saved and passes, a syntax error is shown at once (no grading run),
a save made during a grading restarts it, and Ctrl-C leaves with no process of the watch
left. A second, short session leaves with `q` while the worker is still starting.

`WatchTerminal` is also what `tests/bench/bench_watch.py` measures save-to-verdict with.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
import watchfiles

from grader.model import CheckResult, ExerciseResult, NextStep, SourceLine
from grader.runner import cache
from grader.watch import display
from grader.watch.events import Inbox, SaveWatcher
from grader.watch.syntax import syntax_problem

ROOT = Path(__file__).resolve().parents[2]
FIXED = ROOT / "solutions" / "03_jit.py"
BROKEN = ROOT / "tests" / "fixtures" / "03_jit" / "python_loop_running_sum" / "03_jit.py"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
MARKER = "GRADE_WATCH_TEST"


def _own_terminal() -> None:
    """In the child (a new session): make the pty on stdin its controlling terminal, so
    Ctrl-C typed into it is a SIGINT to `grade watch`."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class WatchTerminal:
    """`grade watch ARGS` in a pty: what it drew (ANSI removed), keys typed into it.

    Every process it starts carries `MARKER=<token>` in its environment, so what is
    left of it afterwards can be found (`leftovers`)."""

    def __init__(
        self,
        *args: str,
        cwd: Path,
        cols: int = 120,
        rows: int = 50,
        env: dict[str, str] | None = None,
    ) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.token = uuid.uuid4().hex
        env = {
            **{k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")},
            **(env or {}),
        }
        env.update({"TERM": "xterm-256color", MARKER: self.token})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "grader", "watch", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=env,
            start_new_session=True,
            preexec_fn=_own_terminal,
        )
        os.close(slave)
        self.master = master
        self._raw = bytearray()
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 1 << 16)
            except OSError:  # EIO: the other side closed
                chunk = b""
            with self._changed:
                if not chunk:
                    self._raw += b"\0EOF"
                    self._changed.notify_all()
                    return
                self._raw += chunk
                self._changed.notify_all()

    def text(self) -> str:
        with self._changed:
            raw = bytes(self._raw)
        return ANSI.sub("", raw.decode("utf-8", errors="replace"))

    def mark(self) -> int:
        """A position in `text()`: `wait_for(..., since=mark)` looks only after it."""
        return len(self.text())

    def wait_for(self, pattern: str, since: int = 0, timeout: float = 60.0) -> str:
        """Wait until `pattern` (a regex) appears after `since`; the text after `since`."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                text = ANSI.sub("", bytes(self._raw).decode("utf-8", errors="replace"))[since:]
                if re.search(pattern, text):
                    return text
                remaining = deadline - time.monotonic()
                if remaining <= 0 or text.endswith("\0EOF"):
                    raise AssertionError(f"{pattern!r} not shown; the screen had:\n{text[-3000:]}")
                self._changed.wait(remaining)

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def descendants(self) -> set[int]:
        """Every process now running whose environment carries this session's token."""
        return leftovers(self.token)

    def grading_processes(self) -> set[int]:
        """The processes of this session but the watch itself and its warm worker (the
        judge and its sandbox, while a file is graded)."""
        found = self.descendants()
        return {pid for pid in found if pid != self.proc.pid and _parent(pid) != self.proc.pid}

    def gone(self, pids: set[int], timeout: float) -> bool:
        """Whether every one of `pids` ends within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while pids & self.descendants():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def close(self) -> int:
        """Wait for the command to end (asked with SIGTERM if it has not been told to
        leave; killed after 20 s); its exit code."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                code = self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                code = self.proc.wait()
        self._reader.join(timeout=5)
        os.close(self.master)
        return code


def leftovers(token: str) -> set[int]:
    """Processes whose environment holds `MARKER=token` (zombies have none: not counted)."""
    found = set()
    needle = f"{MARKER}={token}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    found.add(int(entry))
        except OSError:
            continue
    return found


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _eventually(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def save(path: Path, source: Path | str) -> None:
    """Write a lesson file in one go, as an editor saves it."""
    text = source.read_text() if isinstance(source, Path) else source
    path.write_text(text)


@pytest.fixture
def lessons(tmp_path: Path) -> Path:
    folder = tmp_path / "exercises"
    folder.mkdir()
    shutil.copyfile(ROOT / "exercises" / "03_jit.py", folder / "03_jit.py")
    return folder


@pytest.mark.slow
def test_watch_regrades_saves_and_leaves_nothing_behind(lessons: Path) -> None:
    scratch = lessons.parent / "tmp"
    scratch.mkdir()
    term = WatchTerminal(
        "exercises", "--only", "03_jit", cwd=lessons.parent, env={"TMPDIR": str(scratch)}
    )
    lesson = lessons / "03_jit.py"
    try:
        term.wait_for(r"Ready: save a lesson file")

        since = term.mark()
        save(lesson, BROKEN)
        # Streamed: the first failing check is drawn as soon as the judge records it, while
        # the other checks still run; the complete verdict replaces it when they end.
        early = term.wait_for(r"so far[\s\S]*Next: fix", since)
        assert re.search(r"FAIL\s+\S+ so far\s+03_jit \(\d+ of 14 checks run", early), early
        assert "running_sum uses jax.lax.scan" in early  # the first failing check, named
        assert "hint: " in early and "fix: " not in early  # the course's policy: no fix yet
        shown = term.wait_for(r"FAIL\s+\S+/21\s+03_jit \([\d.]+ s\)[\s\S]*Next: fix", since)
        assert shown.index("so far") < shown.index("/21  03_jit")  # drawn before the end
        shown = shown[shown.index("/21  03_jit") :]
        assert "running_sum uses jax.lax.scan" in shown  # the first failing check, named
        assert "hint: " in shown and "fix: " not in shown  # the course's policy: no fix yet
        assert "grade hint 03_jit" in shown
        # The verdict is drawn from the judge's records once it is done; what `grade` keeps
        # is written when the worker's reply comes (the judge and its sandbox reaped).
        history = lessons.parent / ".grade" / "history.jsonl"
        assert _eventually(history.is_file, 10.0)
        assert (lessons.parent / ".grade" / "last.json").is_file()  # kept for `grade hint`
        runs = history.read_text().splitlines()
        assert len(runs) == 1 and '"03_jit"' in runs[0]  # the run joins the history
        # The session's sandboxes cache their programs in one folder (cache.session_dir):
        # the next grading of the same file loads them instead of compiling again.
        (session,) = scratch.glob("grade-watch-*")
        if cache.default_dir():  # not turned off by $GRADE_COMPILATION_CACHE
            assert any((session / "xla").iterdir())

        # A save during a grading restarts it: the running judge is killed at once (this
        # version sleeps 60 s at import, so its grading cannot end on its own within the
        # test's bound), and only the newest file's verdict is drawn.
        since = term.mark()
        save(lesson, BROKEN.read_text() + "\nimport time as _time\n\n_time.sleep(60)\n")
        term.wait_for(r"grading 03_jit\.py", since)
        time.sleep(1.0)
        judges = term.grading_processes()
        assert judges, term.descendants()
        since = term.mark()
        save(lesson, FIXED)
        assert term.gone(judges, timeout=10.0), judges & term.descendants()
        # the screen's last line is the next step: wait for it, not just the verdict line
        shown = term.wait_for(r"PASS\s+21/21\s+03_jit[\s\S]*Next: go on", since)
        assert "Next: fix" not in shown  # the stale grading's verdict was dropped
        assert "at full marks. Next: go on with 04_vmap" in shown

        since = term.mark()
        started = time.monotonic()
        broken = FIXED.read_text().replace("def piecewise(x", "def piecewise(x,,", 1)
        line = next(n for n, code in enumerate(broken.splitlines(), 1) if "(x,," in code)
        save(lesson, broken)
        shown = term.wait_for(rf"SYNTAX\s+03_jit\.py line {line}: [\s\S]*nothing was graded", since)
        assert time.monotonic() - started < 5  # no grading run (one takes longer than this)
        assert "grading 03_jit" not in shown
        assert "def piecewise(x,,):" in shown  # the line, with a caret under the error

        # Ctrl-C while a grading runs: everything the watch started ends.
        since = term.mark()
        save(lesson, FIXED)
        term.wait_for(r"grading 03_jit\.py", since)
        time.sleep(1.0)  # the judge is running
        term.type(b"\x03")
        term.wait_for(r"grade watch: stopped\.", since, timeout=30)
    finally:
        code = term.close()
    assert code == 0
    assert term.descendants() == set()
    assert not list(scratch.glob("grade-watch-*"))  # the session's folder, its cache too


@pytest.mark.slow
def test_q_leaves_while_the_worker_starts(lessons: Path) -> None:
    term = WatchTerminal(str(lessons), "--only", "03_jit", cwd=lessons.parent)
    try:
        term.wait_for(r"importing JAX once")
        time.sleep(0.5)
        assert len(term.descendants()) >= 2  # the worker is starting
        term.type(b"q")
        term.wait_for(r"grade watch: stopped\.", timeout=30)
    finally:
        code = term.close()
    assert code == 0
    assert term.descendants() == set()


# -- the parts (fast) ----------------------------------------------------------------------


def _check(id: str, status: str = "failed", **fields: object) -> CheckResult:
    values: dict[str, object] = {
        "name": id.replace("_", " "),
        "id": id,
        "status": status,
        "score": 1.0 if status == "passed" else 0.0,
        "max_score": 1.0,
        "visibility": "public",
        "message": "" if status == "passed" else f"{id} is wrong",
        "hint": f"What does {id} need?",
    }
    values.update(fields)
    return CheckResult(**values)


def _exercise(*checks: CheckResult, status: str = "failed", **fields: object) -> ExerciseResult:
    return ExerciseResult(
        name="03_jit", title="jit", status=status, checks=checks, duration_s=1.25, **fields
    )


def test_a_syntax_error_is_found_without_running_the_file(tmp_path: Path) -> None:
    lesson = tmp_path / "03_jit.py"
    marker = tmp_path / "ran"
    lesson.write_text(f"open({str(marker)!r}, 'w')\ndef f(x,,):\n    return x\n")
    problem = syntax_problem(lesson)
    assert problem is not None
    assert (problem.file, problem.line, problem.code) == ("03_jit.py", 2, "def f(x,,):")
    assert problem.code[problem.column - 1] == "," and problem.message  # the caret's place
    assert not marker.exists()  # compiled, never run

    lesson.write_text(f"open({str(marker)!r}, 'w')\n")
    assert syntax_problem(lesson) is None and not marker.exists()
    lesson.write_bytes(b"x = 1\0\n")
    assert syntax_problem(lesson) is not None  # null bytes: said, not raised
    notebook = tmp_path / "03_jit.ipynb"
    notebook.write_text("{not python")
    assert syntax_problem(notebook) is None  # a notebook's cells are parsed when graded
    assert syntax_problem(tmp_path / "gone.py") is None


def test_the_screen_shows_the_first_problem_grouped_by_its_cause() -> None:
    cause = "TypeError|03_jit.py|14|running_sum"
    exercise = _exercise(
        _check("piecewise_values", "passed"),
        _check(
            "scan_used",
            root_cause=cause,
            message="running_sum raised TypeError\x1b[31m",
            location=SourceLine("03_jit.py", 14, "for x in xs:"),
        ),
        _check("scan_jit", root_cause=cause),
        _check("newton_values", message="newton_sqrt is wrong"),
    )
    text = display.result(exercise).plain
    assert text.startswith("FAIL")
    assert "03_jit > 2 checks failed because `running_sum` raised TypeError at line 14:" in text
    assert "running_sum raised TypeError\u241b[31m" in text  # ESC made visible
    assert "in your code: 03_jit.py:14: for x in xs:" in text
    assert "hint: What does scan_used need?" in text
    assert "the same error failed 1 more check" in text and "- scan jit (0/1)" in text
    assert "newton" not in text  # the first problem only: one thing at a time
    next_line = display.next_step(exercise, Path("exercises/03_jit.py")).plain
    assert next_line == (
        'Next: fix "scan used" in 03_jit.py and save; stuck? `grade hint 03_jit` shows more help.'
    )


def test_the_next_step_follows_the_verdict() -> None:
    file = Path("exercises/03_jit.py")
    done = _exercise(
        _check("a", "passed"), status="passed", next=NextStep("grade 04_vmap.py", lesson="04_vmap")
    )
    assert "at full marks. Next: go on with 04_vmap" in display.next_step(done, file).plain
    # watching one file, saving another grades nothing: the next file's watch command instead
    one = display.next_step(done, file, single=True).plain
    assert one.endswith("Next: go on with 04_vmap: `grade watch 04_vmap.py`."), one
    todo = SourceLine("03_jit.py", 23, "raise NotImplementedError")
    untouched = _exercise(
        _check("a"), status="not_attempted", next=NextStep("grade 03_jit.py", todo=todo)
    )
    assert display.next_step(untouched, file).plain == (
        "Next: start at 03_jit.py line 23: raise NotImplementedError (then save)."
    )
    crashed = _exercise(_check("a", message="not run: crashed"), status="error", message="boom")
    assert "fix the problem above in 03_jit.py" in display.next_step(crashed, file).plain
    assert "boom" in display.result(crashed).plain


def test_only_lesson_files_in_the_folder_count_as_saves(tmp_path: Path) -> None:
    inbox = Inbox()
    watcher = SaveWatcher(tmp_path, {"03_jit"}, inbox)
    try:
        wanted, added = watcher.wanted, watchfiles.Change.added
        assert wanted(watchfiles.Change.modified, str(tmp_path / "03_jit.py"))
        assert wanted(added, str(tmp_path / "03_jit.ipynb"))
        assert not wanted(watchfiles.Change.deleted, str(tmp_path / "03_jit.py"))
        assert not wanted(added, str(tmp_path / "04_vmap.py"))  # not watched
        assert not wanted(added, str(tmp_path / "03_jit.py.swp"))
        assert not wanted(added, str(tmp_path / "sub" / "03_jit.py"))
    finally:
        watcher.close()
        inbox.close()


def test_a_preview_shows_the_first_problem_once_a_check_fails() -> None:
    from grader import catalog
    from grader.protocol import records as rec
    from grader.watch.regrader import complete, preview

    spec = next(s for s in catalog.exercises(catalog.SUITES_DIR) if s.name == "03_jit")
    first, second = spec.checks[0].id, spec.checks[1].id

    def lines(*records: rec.Record) -> list[str]:
        return [rec.encode(r).decode().rstrip("\n") for r in records]

    passed = lines(rec.Collected(), rec.Start(first), rec.Result(first, "passed", 1.0))
    assert preview(spec, passed, "03_jit.py") is None  # nothing to show before the end
    failed = passed + lines(rec.Start(second), rec.Result(second, "failed", message="wrong"))
    found = preview(spec, failed, "03_jit.py")
    assert found is not None and found.status == "failed" and found.message == ""
    by_id = {c.id: c for c in found.checks}
    assert by_id[first].status == "passed" and by_id[second].status == "failed"
    assert {c.status for c in found.checks[2:]} == {"skipped"}  # not run yet: worth nothing
    assert found.max_score == spec.checks[0].points + spec.checks[1].points
    assert display.first_problem(found) is not None
    text = display.partial(found).plain
    assert text.startswith("FAIL") and f"2 of {len(spec.checks)} checks run" in text
    assert "wrong" in text
    assert complete(spec, failed, "03_jit.py", 1.5) is None  # the judge is not done yet
    rest = [rec.Result(c.id, "passed", 1.0) for c in spec.checks[2:]]
    done = complete(spec, failed + lines(*rest, rec.Done()), "03_jit.py", 1.5)
    assert done is not None and done.status == "failed" and done.duration_s == 1.5
    assert {c.status for c in done.checks} == {"passed", "failed"}


def test_a_function_not_started_is_no_problem_to_preview() -> None:
    """The stub's NotImplementedError is not a failure to show early ("FAIL so far ... fix
    the problem above"): the verdict says it is not started once the grading ends."""
    from grader import catalog
    from grader.protocol import records as rec
    from grader.watch.regrader import complete, preview

    spec = next(s for s in catalog.exercises(catalog.SUITES_DIR) if s.name == "03_jit")
    first, second = spec.checks[0].id, spec.checks[1].id
    unstarted = rec.Result(first, "failed", message="not yet", not_implemented=True)
    seen = [rec.encode(r).decode().rstrip("\n") for r in (rec.Collected(), unstarted)]
    assert preview(spec, seen, "03_jit.py") is None
    wrong = rec.Result(second, "failed", message="wrong")
    found = preview(spec, [*seen, rec.encode(wrong).decode().rstrip("\n")], "03_jit.py")
    assert found is not None and display.first_problem(found) is not None
    assert {c.id: c.status for c in found.checks}[first] == "not_attempted"
    rest = [
        rec.Result(c.id, "failed", message="not yet", not_implemented=True) for c in spec.checks[1:]
    ]
    lines = seen + [rec.encode(r).decode().rstrip("\n") for r in (*rest, rec.Done())]
    done = complete(spec, lines, "03_jit.py", 1.0)
    assert done is not None and done.status == "not_attempted"
    assert {c.status for c in done.checks} == {"not_attempted"}
