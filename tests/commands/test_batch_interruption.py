"""`grade batch` loses nothing: interrupted (SIGINT, SIGTERM, twice) or short of disk space, it
ends every process it started, keeps every student it finished whole, and the next run grades
only the rest, ending with the gradebook an uninterrupted run gives.

Real processes throughout: `python -m grader batch` runs under a small subreaper (`REAPER`)
started by the test, so a process the batch leaves behind is reparented to the reaper, which
lists it (its own children, /proc/<reaper>/task/*/children) a second after the batch exits.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from grader import atomic
from grader.batch import interrupt
from grader.classroom import roster

Grade = Callable[..., tuple[int, str]]
CLASS = ("alice", "bob", "dave", "erin", "frank")  # erin's endless loop keeps a worker busy
TIMEOUT = "6"

# The batch's parent, a subreaper: prints the batch's pid, waits for it, then (1 s later)
# what is left below itself, reaped or killed so the test leaves nothing either.
REAPER = r"""
import ctypes, json, os, signal, subprocess, sys, time
from pathlib import Path
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
log = open(sys.argv[1], "wb")
# as from a terminal: SIGINT not ignored (a test runner's worker may ignore it, and a batch
# keeps a signal ignored by whoever started it)
proc = subprocess.Popen(
    sys.argv[2:], stdout=log, stderr=subprocess.STDOUT,
    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
)
print(json.dumps({"pid": proc.pid}), flush=True)
rc = proc.wait()
ended = time.monotonic()
time.sleep(1.0)
def children():
    found = []
    for f in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        found += [int(p) for p in f.read_text().split()]
    return found
def alive(pid):
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"
left = [p for p in children() if alive(p)]
names = [Path(f"/proc/{p}/cmdline").read_bytes()[:80].decode(errors="replace") for p in left]
for pid in left:
    os.kill(pid, signal.SIGKILL)
while True:
    try:
        if os.waitpid(-1, 0)[0] <= 0:
            break
    except ChildProcessError:
        break
print(json.dumps({"rc": rc, "ended": ended, "left": names}), flush=True)
"""


@pytest.fixture
def klass(course: Path, tmp_path: Path) -> Path:
    """Five students of the fixture class (one correct, one partial, one `os._exit`, one
    endless loop, one with nothing), in a folder of their own."""
    folder = tmp_path / "class"
    for name in CLASS:
        shutil.copytree(course / "submissions" / name, folder / name)
    return folder


def argv(course: Path, klass: Path, out: Path, *extra: str) -> list[str]:
    return [
        "batch", str(klass), "--out", str(out), "--suites", str(course / "suites"),
        "--timeout", TIMEOUT, "--jobs", "2", *extra,
    ]  # fmt: skip


def gradebook(out: Path) -> list[dict[str, str]]:
    """The gradebook's rows without the time of grading."""
    rows = csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))
    return [{k: v for k, v in r.items() if k != "graded_at"} for r in rows]


def results_files(out: Path) -> dict[str, float]:
    """Every student's results file: valid (read back whole) or the test fails; its mtime."""
    found = {}
    for path in sorted((out / roster.STUDENTS).glob("*.json")):
        assert roster.unreadable(path) is None, path
        found[path.stem] = path.stat().st_mtime
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]  # nothing left aside
    return found


def descendants(pid: int) -> list[int]:
    """The processes below `pid` (a process this test started), from /proc/<pid>/task/*/children."""
    return interrupt.descendants(pid)


@contextlib.contextmanager
def batch_process(log: Path, command: list[str]) -> Iterator[tuple[int, Callable[[], Any]]]:
    """`python -m grader COMMAND` under `REAPER`: its pid, and a function waiting for the
    reaper's verdict (rc, the monotonic time the batch ended, what was left)."""
    reaper = subprocess.Popen(
        [sys.executable, "-c", REAPER, str(log), sys.executable, "-m", "grader", *command],
        stdout=subprocess.PIPE,
        start_new_session=True,
        text=True,
    )
    assert reaper.stdout is not None
    try:
        pid = json.loads(reaper.stdout.readline())["pid"]

        def verdict() -> Any:
            assert reaper.stdout is not None
            line = reaper.stdout.readline()
            reaper.wait(timeout=30)
            return json.loads(line)

        yield pid, verdict
    finally:
        if reaper.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(reaper.pid, signal.SIGKILL)
            reaper.wait()


def wait_for(condition: Callable[[], bool], within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        assert time.monotonic() < deadline, f"waited {within_s} s for {what}"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, str]]:
    """The gradebook of the class graded without interruption (once for the module)."""
    from grader import cli

    root = tmp_path_factory.mktemp("reference")
    course = root / "course"
    shutil.copytree(
        Path(__file__).parent / "fixtures", course, ignore=shutil.ignore_patterns("__pycache__")
    )
    klass = root / "class"
    for name in CLASS:
        shutil.copytree(course / "submissions" / name, klass / name)
    assert cli.main([*argv(course, klass, root / "out"), "--quiet"]) == 0
    return gradebook(root / "out")


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_batch_ends_its_processes_and_a_rerun_grades_only_the_rest(
    signum: signal.Signals,
    course: Path,
    klass: Path,
    tmp_path: Path,
    grade: Grade,
    reference: list[dict[str, str]],
) -> None:
    out, log = tmp_path / "out", tmp_path / "batch.log"
    with batch_process(log, argv(course, klass, out)) as (pid, verdict):
        # two students written and gradings still running (erin's loop holds a worker)
        wait_for(
            lambda: len(list((out / "resume").glob("*.json"))) >= 2 and bool(descendants(pid)),
            within_s=60,
            what="two students graded",
        )
        running = descendants(pid)
        sent = time.monotonic()
        os.kill(pid, signum)
        end = verdict()
    text = log.read_text()
    assert end["rc"] == interrupt.EXIT_CODE, text
    assert end["ended"] - sent < 5.0, text
    assert running and end["left"] == [], text  # there were processes; none is left
    assert "Traceback" not in text
    stopped = [line for line in text.splitlines() if line.startswith("grade batch: interrupted")]
    assert stopped == [stopped[0]] and signum.name in stopped[0], text
    assert "run the same command again" in stopped[0]
    finished = results_files(out)
    print(  # the numbers of docs/measurements/batch-interruption-2026-12-05.md (pytest -s)
        f"{signum.name}: exit {end['ended'] - sent:.2f} s after the signal, {len(running)} "
        f"process(es) below the batch at the signal, {len(end['left'])} left 1 s after exit, "
        f"{len(finished)} student(s) kept"
    )
    assert 2 <= len(finished) < len(CLASS)
    assert gradebook(out)[1:] == [r for r in reference[1:] if r["student"] in finished]

    # the re-run grades only the others; the students finished are kept as they were
    code, again = grade(*argv(course, klass, out))
    assert code == 0, again
    assert f"Kept {len(finished)} student(s)" in again, again
    assert f"graded {len(CLASS) - len(finished)} student(s)" in again, again
    after = results_files(out)
    assert {n: after[n] for n in finished} == finished  # not written again
    assert gradebook(out) == reference


@pytest.mark.slow
def test_a_second_signal_ends_the_batch_at_once_leaving_no_process_and_no_half_file(
    course: Path, klass: Path, tmp_path: Path
) -> None:
    out, log = tmp_path / "out", tmp_path / "batch.log"
    with batch_process(log, argv(course, klass, out)) as (pid, verdict):
        wait_for(  # a student graded, and erin's loop still holds a worker: the first
            # signal's orderly stop has a grading to end when the second comes
            lambda: len(list((out / "resume").glob("*.json"))) >= 1 and bool(descendants(pid)),
            within_s=60,
            what="a student graded",
        )
        sent = time.monotonic()
        os.kill(pid, signal.SIGINT)
        time.sleep(0.05)
        os.kill(pid, signal.SIGINT)
        end = verdict()
    text = log.read_text()
    assert end["rc"] == interrupt.EXIT_CODE and end["ended"] - sent < 5.0, text
    assert end["left"] == [], text
    assert "Traceback" not in text and "stopped at once (a second signal)" in text, text
    if (out / roster.STUDENTS).is_dir():
        results_files(out)


@pytest.mark.slow
def test_a_full_disk_stops_the_batch_with_one_line_and_a_rerun_with_room_completes(
    course: Path, klass: Path, tmp_path: Path, grade: Grade, reference: list[dict[str, str]]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    try:
        log = tmp_path / "batch.log"
        with batch_process(log, argv(course, klass, out)) as (_, verdict):
            end = verdict()
        text = log.read_text()
        lines = [line for line in text.splitlines() if "No space left on device" in line]
        assert end["rc"] == 2 and end["left"] == [], text
        assert len(lines) == 1 and f"could not write {out}" in lines[0], text
        assert "make room and run the same command again" in lines[0]
        assert "Traceback" not in text
        written = results_files(out)  # whole, each with its report: a student or none
        assert len(written) < len(CLASS)
        assert sorted(p.stem for p in (out / "students").glob("*.html")) == sorted(written)
        subprocess.run(["mount", "-o", "remount,size=4m", str(out)], check=True)
        code, text = grade(*argv(course, klass, out))
        assert code == 0, text
        assert f"Kept {len(written)} student(s)" in text
        assert gradebook(out) == reference
    finally:
        subprocess.run(["umount", "-l", str(out)], check=False)


def test_a_truncated_results_file_is_named_and_read_as_a_grader_error(tmp_path: Path) -> None:
    folder = tmp_path / roster.STUDENTS
    folder.mkdir()
    good = {
        "score": 1, "max_score": 2, "seed": 0, "grader_version": "x", "exercises": [],
    }  # fmt: skip
    (folder / "ann.json").write_text(json.dumps(good))
    (folder / "frank.json").write_text(json.dumps(good)[:20])  # a full disk's leftover
    (folder / "gus.json").write_text('{"score": "lots"}')  # valid JSON, not results
    students = {s.name: s for s in roster.load(tmp_path)}
    assert students["ann"].doc is not None and students["ann"].status != "grader_error"
    for name in ("frank", "gus"):
        assert students[name].status == "grader_error"
        assert f"{name}.json is unreadable" in students[name].error


FILE_TOO_LARGE = r"""
import resource, signal, sys
from grader import atomic
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))
try:
    atomic.write_text(sys.argv[1], "new\n" * 100)
except atomic.WriteError as exc:
    print(exc)
"""


def test_atomic_writes_leave_the_old_file_whole_when_the_kernel_refuses(tmp_path: Path) -> None:
    target = tmp_path / "gradebook.csv"
    atomic.write_text(target, "old\n")
    assert target.read_text() == "old\n" and oct(target.stat().st_mode & 0o777) == "0o644"
    # the kernel refuses the 65th byte (RLIMIT_FSIZE), as a full disk refuses the next block
    said = subprocess.run(
        [sys.executable, "-c", FILE_TOO_LARGE, str(target)],
        capture_output=True, text=True, check=True, umask=0o022,
    ).stdout  # fmt: skip
    assert said.startswith(f"could not write {target}: File too large"), said
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["gradebook.csv"]  # nothing left aside


def test_a_student_is_kept_only_while_their_files_and_the_options_are_the_same(
    course: Path, tmp_path: Path
) -> None:
    from grader import catalog
    from grader.batch import resume
    from grader.batch.pool import job_for
    from grader.runner import policy

    specs = list(catalog.exercises(course / "suites"))
    submissions = course / "submissions"
    job = job_for(submissions, "bob", [s.name for s in specs])
    options = policy.Options(timeout_s=6)
    before = resume.key(job, specs, options, "strict")
    assert resume.key(job, specs, options, "strict") == before  # nothing from the clock
    lesson = submissions / "bob" / "01_sums.py"
    lesson.write_text(lesson.read_text() + "\n# a comment is a change\n")
    assert resume.key(job, specs, options, "strict") != before
    after = resume.key(job, specs, options, "strict")
    assert resume.key(job, specs, policy.Options(timeout_s=6, seed=1), "strict") != after
    assert resume.key(job, specs, options, "user") != after
    assert resume.key(job, specs[:1], options, "strict") != after  # --only
    suite = course / "suites" / "test_01_sums.py"
    suite.write_text(suite.read_text() + "\n")
    assert resume.key(job, specs, options, "strict") != after
    # same files, nothing different, but the results file is unreadable: not kept
    out = tmp_path / "out"
    (out / "students").mkdir(parents=True)
    resume.record(out, "bob", after)
    (out / "students" / "bob.html").write_text("<!DOCTYPE html>")
    (out / "students" / "bob.json").write_text('{"score": 1, "max_score"')
    assert not resume.kept(out, "bob", after)


def test_a_rerun_keeps_the_students_graded_and_regrade_grades_them_again(
    course: Path, tmp_path: Path, grade: Grade
) -> None:
    klass = tmp_path / "class"
    shutil.copytree(course / "submissions" / "frank", klass / "frank")  # nothing to run: fast
    out = tmp_path / "out"
    code, text = grade(*argv(course, klass, out))
    assert code == 0 and "graded 1 student(s)" in text, text
    first = (out / "students" / "frank.json").stat().st_mtime_ns
    (out / "students" / "frank.json").write_text('{"score": 0, "max_')  # a truncated leftover
    code, text = grade(*argv(course, klass, out))
    assert code == 0 and "frank.json is unreadable" in text and "graded 1 student(s)" in text
    again = (out / "students" / "frank.json").stat().st_mtime_ns
    code, text = grade(*argv(course, klass, out))
    assert code == 0 and "Kept 1 student(s)" in text and "graded 0 student(s)" in text, text
    assert (out / "students" / "frank.json").stat().st_mtime_ns == again != first
    code, text = grade(*argv(course, klass, out, "--regrade"))
    assert code == 0 and "Kept" not in text and "graded 1 student(s)" in text, text
    assert (out / "students" / "frank.json").stat().st_mtime_ns != again


def test_an_atomic_write_to_a_link_writes_through_it_and_keeps_the_link(tmp_path: Path) -> None:
    # `grade --json out.json` where out.json links elsewhere (or is /dev/stdout): renaming
    # into place would replace the link (as root, /dev/stdout itself); it is written through.
    real = tmp_path / "elsewhere.json"
    real.write_text("old")
    link = tmp_path / "out.json"
    link.symlink_to(real)
    atomic.write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    device = tmp_path / "stdout"
    device.symlink_to(os.devnull)
    atomic.write_text(device, "nothing")
    assert device.is_symlink() and Path(os.devnull).is_char_device()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.json", "out.json", "stdout"]
