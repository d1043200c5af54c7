"""The judge's compilation cache: only the judge writes it, and a second grading loads it.

The suite is `submissions/cache_suites/test_cached.py`, whose judge compiles a reference
of its own (the lesson suites compile less and less in the judge: which of them still do
is not this test's business). The hostile lesson file is a correct `cached.py` with a
payload run at import: it writes a file into the judge's cache folder and points JAX's cache at that folder (dropping the
cache the sandbox writes its own programs to), to store a program of its own
(`planted_by_student`) there. Graded by the real `grade` at the
strongest level this machine allows, nothing of it reaches the folder, and grading it
again adds no entry (every program the judge compiles is found); the same payload at
`basic` (the grader's own user) does reach it, which shows the payload works.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from grader.runner import cache
from grader.sandbox import isolation, landlock

LESSON = "cached"
SUITES = Path(__file__).parent / "submissions" / "cache_suites"
SOLUTION = """
def affine(x):
    return x * 2.0 + 1.0
"""

PAYLOAD = """
import os as _os

import jax as _jax
import jax.numpy as _jnp

_CACHE = {cache!r}


def _plant():
    try:
        with open(_os.path.join(_CACHE, "planted-cache"), "wb") as fh:
            fh.write(b"a program the next judge would load")
    except OSError:
        pass
    try:
        from jax._src import compilation_cache as _jax_cache

        _jax.config.update("jax_compilation_cache_dir", _CACHE)
        _jax.config.update("jax_enable_compilation_cache", True)
        _jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        _jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
        _jax_cache.reset_cache()  # drop the sandbox's own cache: JAX builds one for _CACHE

        def planted_by_student(x):
            return x * 3.25 + 1.5

        _jax.jit(planted_by_student)(_jnp.arange(3.0)).block_until_ready()
    except Exception:
        pass


_plant()
"""


def planted(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if "planted" in p.name)


def hostile(tmp_path: Path, folder: Path) -> Path:
    submission = tmp_path / "submission"
    submission.mkdir()
    submission.chmod(0o755)
    (submission / f"{LESSON}.py").write_text(PAYLOAD.format(cache=str(folder)) + SOLUTION)
    return submission


def grade(submission: Path, folder: Path, *extra: str) -> dict[str, Any]:
    out = submission.parent / "results.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            str(submission),
            "--suites",
            str(SUITES),
            "--only",
            LESSON,
            "--json",
            str(out),
            "--html",
            str(submission.parent / "report.html"),
            "--no-color",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=submission.parent,
        env={**os.environ, cache.ENV: str(folder)},
    )
    assert out.is_file(), proc.stdout + proc.stderr
    results: dict[str, Any] = json.loads(out.read_text())
    return results


# -- the folder ---------------------------------------------------------------------------


def test_the_folder_is_created_for_its_owner_alone_to_write(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "xla"
    assert cache.prepare(str(folder)) == (str(folder), "")
    assert stat.S_IMODE(folder.stat().st_mode) == cache.MODE


def test_a_folder_others_may_write_or_a_symlink_is_not_used(tmp_path: Path) -> None:
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    used, why = cache.prepare(str(open_folder))
    assert used == "" and "other users" in why
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "a-folder-elsewhere")
    (tmp_path / "a-folder-elsewhere").mkdir()
    assert cache.prepare(str(link))[0] == ""


def test_the_place_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(cache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.default_dir() == str(tmp_path / "jax-lesson-grader" / "xla")
    monkeypatch.setenv(cache.ENV, "off")
    assert cache.default_dir() == ""
    monkeypatch.setenv(cache.ENV, str(tmp_path / "mine"))
    assert cache.default_dir() == str(tmp_path / "mine")


# -- end to end ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(
    isolation.detect().level == "basic", reason="the sandbox is the grader's own user here"
)
def test_a_submission_cannot_plant_a_program_and_a_second_grading_loads_the_cache(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "cache"
    submission = hostile(tmp_path, folder)
    first = grade(submission, folder)
    entries = cache.size(str(folder)).entries
    assert first["isolation"]["level"] != "basic"
    assert first["exercises"][0]["score"] == first["exercises"][0]["max_score"]
    assert entries > 0, "the judge cached nothing"
    assert planted(folder) == []

    second = grade(submission, folder)
    assert planted(folder) == []
    assert second["exercises"][0]["score"] == second["exercises"][0]["max_score"]
    assert cache.size(str(folder)).entries == entries, "the second grading compiled anew"

    # The control: the same payload as the grader's own user reaches the folder, unless
    # Landlock keeps the sandbox to its own folders at `basic` too (grader.sandbox.landlock).
    shutil.rmtree(folder)
    grade(submission, folder, "--isolation", "basic")
    if landlock.abi() > 0:
        assert planted(folder) == []
    else:
        assert "planted-cache" in planted(folder)
        assert any(name.startswith("jit_planted_by_student") for name in planted(folder))
