"""The sandbox's own compilation cache: written by that sandbox alone, read by it alone.

A student's program compiled twice in one grading is loaded the second time; a program
the judge compiled before is loaded from the judge's folder; the judge's folder gains
no entry and no file of it changes, even when the submission turns writing back on and
points JAX at it, or writes a file there directly (at `strict` and `user`); two students
of one `grade batch` never see each other's folder. Real sandboxes, real JAX: the lesson
below counts JAX's own cache events (`/jax/compilation_cache/cache_hits`, `..._misses`)
in the sandbox and answers with the counts.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from grader.batch import warm
from grader.runner import cache
from grader.sandbox import isolation, shared_programs

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).parent / "drive_cache.py"
COURSE = ROOT / "tests" / "commands" / "fixtures"
LEVEL = isolation.detect().level
LEVELS = [level for level in isolation.LEVELS if isolation.at_least(LEVEL, level)]

LESSON = """
import os

import jax
import jax.numpy as jnp

JUDGE = {judge!r}
SCENARIO = {scenario!r}

_EVENTS = {{"hits": 0, "misses": 0}}


def _listen(event, **_):
    if event == "/jax/compilation_cache/cache_hits":
        _EVENTS["hits"] += 1
    elif event == "/jax/compilation_cache/cache_misses":
        _EVENTS["misses"] += 1


jax.monitoring.register_event_listener(_listen)


def _counted(thunk):
    before = dict(_EVENTS)
    thunk()
    return {{k: _EVENTS[k] - before[k] for k in _EVENTS}}


def judge_program(x):
    return jnp.cos(x) * 2.5 - 0.5


def seed():  # the judge compiled this program before the sandbox started
    return float(jax.jit(judge_program)(jnp.arange(4.0)).sum())


def shared():
    return _counted(seed)


def train():  # a new jitted function at each call: the same program, compiled again
    def run():
        @jax.jit
        def step(v):
            return jnp.tanh(v) * 1.75 + 0.25

        step(jnp.ones(3)).block_until_ready()

    return _counted(run)


def where():
    folder = jax.config.jax_compilation_cache_dir
    return {{"folder": folder, "writable": bool(folder) and os.access(folder, os.W_OK)}}


def plant():
    done = []
    try:
        with open(os.path.join(JUDGE, "planted-cache"), "wb") as fh:
            fh.write(b"a program the next judge would load")
        done.append("file")
    except OSError:
        pass
    try:
        from jax._src import compilation_cache

        jax.config.update("jax_compilation_cache_dir", JUDGE)
        jax.config.update("jax_enable_compilation_cache", True)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
        compilation_cache.reset_cache()

        def planted_by_student(x):
            return x * 3.25 + 1.5

        jax.jit(planted_by_student)(jnp.arange(3.0)).block_until_ready()
        done.append("jit")
    except Exception:
        pass
    return done
"""


def contents(folder: Path) -> dict[str, str]:
    """Every file of the judge's folder and a hash of it (the judge's own files)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def drive(*argv: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(DRIVER), *argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("level", LEVELS)
def test_the_sandbox_loads_its_own_programs_and_the_judges_and_writes_only_its_own(
    tmp_path: Path, level: str, request: pytest.FixtureRequest
) -> None:
    # At `user` the sandbox reads the judge's folder where its user may reach it: not under
    # pytest's private tmp_path.
    top = Path(tempfile.mkdtemp(prefix="grader-judge-cache-test-"))
    request.addfinalizer(lambda: shutil.rmtree(top, ignore_errors=True))
    top.chmod(0o711)
    judge = top / "xla"
    assert cache.prepare(str(judge)) == (str(judge), "")
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    hostile = level != "basic"  # at `basic` the sandbox is the judge's user: no protection
    scenario = ("where", "train", "train", "shared") + (("plant",) if hostile else ())
    (lessons / "lesson.py").write_text(LESSON.format(judge=str(judge), scenario=scenario))
    drive("seed", str(judge), str(lessons))
    before = contents(judge)
    assert any(name.startswith("jit_judge_program") for name in before)

    report = drive("sandbox", level, str(judge), str(lessons))
    assert report["hello_ok"], report
    answers = report["answers"]
    where, first, second, shared = (value for _, value in answers[:4])
    assert where["writable"] and where["folder"] != str(judge), where
    assert first["misses"] >= 1, first  # compiled, and written to the sandbox's own folder
    assert second == {"hits": 1, "misses": 0}, second  # loaded, not compiled again
    assert shared["hits"] >= 1 and shared["misses"] == 0, shared  # the judge's entries
    if hostile:
        # The file is refused by the system; JAX only warns when it cannot write an entry.
        assert "file" not in answers[4][1], answers[4]
    assert contents(judge) == before


@pytest.mark.parametrize("level", LEVELS)
def test_without_a_folder_the_sandbox_keeps_its_programs_in_its_memory(
    tmp_path: Path, level: str
) -> None:
    """A judge without a cache (turned off, or a batch below `user`): the sandbox has no
    folder to write, yet a program its function compiles again is loaded the second time
    (from its own memory: nothing on disk, nothing another process reads)."""
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    scenario = ("where", "train", "train")
    (lessons / "lesson.py").write_text(LESSON.format(judge="", scenario=scenario))
    report = drive("sandbox", level, "-", str(lessons))
    assert report["hello_ok"], report
    where, first, second = (value for _, value in report["answers"])
    assert where == {"folder": None, "writable": False}, where
    assert first["misses"] >= 1, first
    assert second == {"hits": 1, "misses": 0}, second
    assert sorted(p.name for p in lessons.iterdir()) == ["lesson.py"]


@pytest.mark.parametrize("level", LEVELS)
def test_a_sandbox_loads_the_shared_programs_and_adds_none_to_them(
    tmp_path: Path, level: str, request: pytest.FixtureRequest
) -> None:
    """A batch below `user` (no folder): the programs the course's solutions compiled, in the
    store its warm worker loaded before the fork (`grader.batch.warm`), are loaded by the
    sandbox; its own programs are compiled and kept in its memory, the store's file does not
    change, and a store changed since its digest was taken is not loaded at all."""
    top = Path(tempfile.mkdtemp(prefix="grader-judge-cache-test-"))
    request.addfinalizer(lambda: shutil.rmtree(top, ignore_errors=True))
    judge = top / "xla"
    assert cache.prepare(str(judge)) == (str(judge), "")
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    scenario = ("where", "shared", "train", "train")
    (lessons / "lesson.py").write_text(LESSON.format(judge="", scenario=scenario))
    drive("seed", str(judge), str(lessons))  # the solutions' grading compiled this
    store = tmp_path / "programs"
    sha256 = shared_programs.write(warm.entries(judge), str(store))
    before = store.read_bytes()

    report = drive("shared", level, f"{store} {sha256}", str(lessons))
    assert report["hello_ok"], report
    where, shared, first, second = (value for _, value in report["answers"])
    assert where == {"folder": None, "writable": False}, where
    assert shared["hits"] >= 1 and shared["misses"] == 0, shared  # loaded from the store
    assert first["misses"] >= 1, first  # the student's own program: compiled
    assert second == {"hits": 1, "misses": 0}, second  # then kept in its memory
    assert store.read_bytes() == before

    store.write_bytes(before[:-1] + bytes([before[-1] ^ 1]))  # changed after the digest
    report = drive("shared", level, f"{store} {sha256}", str(lessons))
    shared = report["answers"][1][1]
    assert shared["misses"] >= 1 and shared["hits"] == 0, shared


def test_a_watch_session_folder_serves_the_next_sandbox_of_the_session(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """`cache.session_dir` (for `grade watch`): the second sandbox given the same folder
    loads the program the first compiled."""
    top = Path(tempfile.mkdtemp(prefix="grader-judge-cache-test-"))
    request.addfinalizer(lambda: shutil.rmtree(top, ignore_errors=True))
    top.chmod(0o711)
    judge = top / "xla"
    assert cache.prepare(str(judge)) == (str(judge), "")
    session = cache.session_dir(str(top / "session"))
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "lesson.py").write_text(LESSON.format(judge=str(judge), scenario=("train",)))
    first = drive("sandbox", LEVEL, str(judge), str(lessons), session)
    second = drive("sandbox", LEVEL, str(judge), str(lessons), session)
    assert first["answers"][0][1]["misses"] >= 1, first
    loaded = second["answers"][0][1]  # the step and the eager ops around it: all loaded
    assert loaded["hits"] >= 1 and loaded["misses"] == 0, second
    assert os.listdir(judge) == []


@pytest.mark.skipif(LEVEL == "basic", reason="a batch below `user` grades without the cache")
def test_two_students_of_a_batch_never_share_the_sandbox_cache(tmp_path: Path) -> None:
    """ann plants a file in her sandbox's cache folder; bo's lesson file refuses to load
    (an error, score 0) if his folder holds anything planted, or if he has no folder.
    The course is the command tests' small one (plain-Python suites: fast to grade)."""
    solution = (COURSE / "submissions" / "alice" / "01_sums.py").read_text()
    probe = """
import os as _os
import jax as _jax

_FOLDER = _jax.config.jax_compilation_cache_dir
if not _FOLDER or not _os.access(_FOLDER, _os.W_OK):
    raise ImportError(f"no cache folder of my own: {_FOLDER!r}")
"""
    plant = probe + (
        'with open(_os.path.join(_FOLDER, "planted-by-ann-cache"), "wb") as _fh:\n'
        '    _fh.write(b"for whoever loads it next")\n'
    )
    look = probe + (
        "_SEEN = [n for n in _os.listdir(_FOLDER) if 'planted' in n]\n"
        "if _SEEN:\n"
        "    raise ImportError(f'another sandbox wrote my cache: {_SEEN}')\n"
    )
    submissions = tmp_path / "class"
    for name, payload in (("ann", plant), ("bo", look)):
        (submissions / name).mkdir(parents=True)
        (submissions / name / "01_sums.py").write_text(payload + solution)
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "batch",
            str(submissions),
            "--out",
            str(out),
            "--suites",
            str(COURSE / "suites"),
            "--only",
            "01_sums",
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**os.environ, cache.ENV: str(tmp_path / "judge")},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("ann", "bo"):
        doc = json.loads((out / "students" / f"{name}.json").read_text())
        exercise = doc["exercises"][0]
        assert exercise["score"] == exercise["max_score"], (name, exercise.get("message"))
    assert not any("planted" in p.name for p in (tmp_path / "judge").iterdir())
