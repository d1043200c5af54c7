"""The test run touches nothing outside its own temporary folders.

- Every process the tests start gets a home, a cache, a config and a data folder of the run's
  own (`HOME`, `XDG_*`, `MPLCONFIGDIR`), so the grader's compilation cache, Matplotlib's
  font cache and the like never land in the tester's home.
- A guard: before the run, canary files (named as the grader's records and reports are named:
  `*.jsonl`, `*results.json`) are put in `/tmp`, `/var/tmp` and the tester's home; after it,
  each must hold what it held, and the repository's own `.grade/` must be as it was. A run that
  changed one fails, naming the file. Hostile payloads aim only at paths their test hands them
  (`tests/runner/submissions/redteam/`), so this holds at every isolation level.

Only the controlling process does this (under xdist, the workers inherit its environment).

Isolation levels: a test run at `user` or `strict` (a `level` parameter, or the
`isolation(level)` marker) is skipped, with the grader's own reason, where the grader refuses
that level here (`grader.runner.policy.isolation_for`: no root, no namespaces, or an
installation the sandbox's user cannot read, as in a clone under a private 0700 folder).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_ISOLATED = "GRADER_TESTS_HOME"  # set once by the controlling process; workers inherit it
_CANARY_TEXT = "a canary of the grader's tests: nothing may write here\n"
_CANARIES: list[Path] = []
_REPO_STATE: dict[str, str] = {}
_OWN_HOME: list[str] = []


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _digest_tree(folder: Path) -> dict[str, str]:
    """Path -> content hash of every file under `folder` (nothing when it does not exist)."""
    if not folder.is_dir():
        return {}
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _plant_canaries(home: str) -> None:
    for folder in ("/tmp", "/var/tmp", home):
        for suffix in (".jsonl", "-results.json"):
            try:
                fd, name = tempfile.mkstemp(
                    prefix=".grader-tests-canary-", suffix=suffix, dir=folder
                )
            except OSError:
                continue  # a folder this machine does not let us write: nothing to guard
            with os.fdopen(fd, "w") as fh:
                fh.write(_CANARY_TEXT)
            _CANARIES.append(Path(name))


@functools.cache
def level_refused(level: str) -> str:
    """Why the grader refuses to grade at isolation `level` on this machine ("" when it
    grades there): its own level check, as `grade --isolation LEVEL` runs it."""
    from grader.runner import policy

    if level not in policy.ISOLATION_CHOICES:
        return f"no isolation level {level!r}"
    try:
        policy.isolation_for(policy.Options(isolation=level))  # type: ignore[arg-type]
    except policy.IsolationUnavailable as exc:
        return str(exc)
    return ""


def _isolation_level(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("isolation")
    if marker is not None:
        return str(marker.args[0])
    callspec = getattr(item, "callspec", None)
    level = callspec.params.get("level") if callspec is not None else None
    return level if level in ("user", "strict") else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        level = _isolation_level(item)
        why = level_refused(level) if level is not None else ""
        if why:
            item.add_marker(pytest.mark.skip(reason=f"no `{level}` isolation here: {why}"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "isolation(level): the test runs a sandbox at this level (skipped where refused)"
    )
    if _is_worker(config) or os.environ.get(_ISOLATED):
        return
    real_home = os.path.expanduser("~")
    own = tempfile.mkdtemp(prefix="grader-tests-home-")
    os.chmod(own, 0o755)  # sandboxes of another user may need to traverse it
    _OWN_HOME.append(own)
    os.environ[_ISOLATED] = own
    os.environ["HOME"] = own
    for name, sub in (
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("MPLCONFIGDIR", ".config/matplotlib"),
    ):
        os.environ[name] = os.path.join(own, sub)
        os.makedirs(os.environ[name], exist_ok=True)
    _plant_canaries(real_home)
    _REPO_STATE.update(_digest_tree(ROOT / ".grade"))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _is_worker(session.config) or not _OWN_HOME:
        return
    damaged = []
    for canary in _CANARIES:
        try:
            text = canary.read_text()
        except OSError:
            damaged.append(f"{canary} (removed)")
            continue
        if text != _CANARY_TEXT:
            damaged.append(f"{canary} (written: {text[len(_CANARY_TEXT) :][:120]!r})")
    if _digest_tree(ROOT / ".grade") != _REPO_STATE:
        damaged.append(f"{ROOT / '.grade'} (the repository's own grading state changed)")
    if damaged:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = ["the tests wrote outside their own folders:", *damaged]
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_sep("!", "files outside the tests' folders changed", red=True)
            for line in lines:
                reporter.write_line(line)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    if _is_worker(config):
        return
    for canary in _CANARIES:
        canary.unlink(missing_ok=True)
    for own in _OWN_HOME:
        shutil.rmtree(own, ignore_errors=True)
