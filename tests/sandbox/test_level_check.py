"""The evidence behind `user` isolation: a child switched to a user of its own, as a sandbox
is, tries to read what a sandbox imports from (`isolation.closed_to_sandbox`); where it
cannot, `detect` falls back to `basic` and a forced `--isolation user` is refused, naming
the folder, its mode and the fix. Tried on real folders: a venv made in a private (0700)
folder, as `mktemp -d` or a root home make it, and the same venv opened to other users."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import grader.isolation_levels
from grader.runner import policy
from grader.sandbox import isolation
from grader.sandbox.isolation import Isolation

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root")


@pytest.fixture(scope="module")
def top() -> Iterator[Path]:
    """A temp folder of the module's own that other users may pass through (pytest's own
    temp folders are 0700: the tests decide the modes below it)."""
    folder = Path(tempfile.mkdtemp(prefix="grade-level-check-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def private(top: Path) -> Path:
    """A folder of mode 0700 holding a venv (`python -m venv --without-pip`) whose
    site-packages holds a copy of a small package: what a sandbox would import from."""
    base = top / "home"
    base.mkdir(mode=0o700)
    venv = base / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    (purelib,) = venv.glob("lib/python3*/site-packages")
    package = purelib / "small"
    package.mkdir()
    shutil.copy(grader.isolation_levels.__file__, package / "__init__.py")
    for path in (venv, *venv.rglob("*")):
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    base.chmod(0o700)
    return base


def needs(base: Path) -> tuple[str, ...]:
    """What a sandbox would read there: the venv and its site-packages, as `python_paths`."""
    venv = base / "venv"
    (purelib,) = venv.glob("lib/python3*/site-packages")
    return (str(venv), str(purelib), str(purelib / "small"))


@pytest.fixture
def opened(private: Path):  # type: ignore[no-untyped-def]
    """The same venv, its private folder opened to other users (0755) for the test."""
    private.chmod(0o755)
    yield private
    private.chmod(0o700)


def test_a_venv_in_a_private_folder_is_closed_and_the_folder_is_named(private: Path) -> None:
    closed = isolation.closed_to_sandbox(needs(private))
    assert closed is not None
    assert (closed.folder, closed.mode) == (str(private), 0o700)
    assert closed.needed == str(private / "venv")
    assert "Permission denied" in closed.error
    assert f"chmod o+rx {private}" in closed.fix
    assert "--isolation" in closed.fix


def test_the_same_venv_opened_to_other_users_is_reached(opened: Path) -> None:
    assert isolation.closed_to_sandbox(needs(opened)) is None


def test_a_closed_file_inside_an_open_installation_is_named(opened: Path) -> None:
    module = Path(needs(opened)[2]) / "__init__.py"
    module.chmod(0o600)  # pip under umask 077 installs such files
    try:
        closed = isolation.closed_to_sandbox(needs(opened))
    finally:
        module.chmod(0o644)
    assert closed is not None
    assert (closed.folder, closed.mode) == (str(module), 0o600)


def test_a_cache_folder_others_may_pass_through_but_not_list_is_reached(top: Path) -> None:
    folder = top / "cache"
    folder.mkdir(mode=0o755)
    cache = folder / "xla"
    cache.mkdir(mode=0o711)  # the judge's compilation cache: entries read by name
    assert isolation.closed_to_sandbox(enter=[str(cache)]) is None
    closed = isolation.closed_to_sandbox(read=[str(cache)])  # an import lists its folders
    assert closed is not None and (closed.folder, closed.mode) == (str(cache), 0o711)
    folder.chmod(0o700)
    closed = isolation.closed_to_sandbox(enter=[str(cache)])
    assert closed is not None and closed.folder == str(folder)


def test_detect_falls_back_to_basic_and_says_why(
    private: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(isolation, "_try_in_child", lambda action: False)  # no namespaces
    monkeypatch.setattr(isolation, "sandbox_reads", lambda: needs(private))
    found = isolation._detect_level()
    assert found.level == "basic"
    assert f"{private} (mode 700) is closed to other users" in found.missing[-1]
    assert f"chmod o+rx {private}" in found.missing[-1]
    private.chmod(0o755)
    try:
        assert isolation._detect_level().level == "user"
    finally:
        private.chmod(0o700)


def test_a_forced_user_level_is_refused_before_grading(
    private: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(isolation, "sandbox_reads", lambda: needs(private))
    options = policy.Options(isolation="user", cache_dir="")
    with pytest.raises(policy.IsolationUnavailable) as refused:
        policy.isolation_for(options, Isolation("strict"))
    line = str(refused.value)
    assert "\n" not in line
    assert line.startswith("--isolation user: ")
    assert f"{private} (mode 700)" in line and f"chmod o+rx {private}" in line
    private.chmod(0o755)
    try:
        assert policy.isolation_for(options, Isolation("strict")).level == "user"
    finally:
        private.chmod(0o700)


def test_grade_batchs_requirement_fails_early_with_the_same_reason(
    private: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(isolation, "_try_in_child", lambda action: False)
    monkeypatch.setattr(isolation, "sandbox_reads", lambda: needs(private))
    found = isolation._detect_level()
    with pytest.raises(policy.IsolationUnavailable) as refused:
        policy.isolation_for(policy.Options(require_isolation="user"), found)
    assert f"{private} (mode 700) is closed to other users" in str(refused.value)


def test_a_cache_the_sandbox_cannot_reach_is_a_note_not_a_refusal(
    private: Path, opened_cache: Path
) -> None:
    options = policy.Options(isolation="user", cache_dir=str(private / "xla"))
    found = Isolation("user", ("namespaces (unshare is not permitted: no CAP_SYS_ADMIN)",))
    chosen = policy.isolation_for(options, found)
    assert chosen.level == "user"
    assert chosen.missing[-1].startswith("a compilation cache the sandbox can read")
    assert f"{private} (mode 700)" in chosen.missing[-1]
    reachable = policy.Options(isolation="user", cache_dir=str(opened_cache))
    assert policy.isolation_for(reachable, found) == found


@pytest.fixture
def opened_cache(top: Path) -> Path:
    cache = top / "open" / "xla"
    cache.mkdir(parents=True, mode=0o711, exist_ok=True)
    cache.parent.chmod(0o755)
    return cache
