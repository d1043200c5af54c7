"""`user` without Landlock holds or refuses (grader.sandbox.exposure).

Real files, real permissions, and a real other uid trying to read them; the suites the
repair closes are a copy in the test's folder, never the installed ones. Other users cannot
pass through pytest's own temporary folder (0700), so each test runs in a child with a
mount namespace of its own where the test's folder is bound at `/srv` (open to others):
nothing outside the test's folder changes, in this namespace or any other.
"""

from __future__ import annotations

import os
import shutil
import stat
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

from grader import catalog
from grader.sandbox import exposure, isolation
from grader.sandbox.isolation import LANDLOCK_MISSING, Isolation

NO_LANDLOCK = Isolation("user", ("namespaces (unshare is not permitted)", LANDLOCK_MISSING))
OTHER_UID = 65534  # nobody: neither the owner nor in the group of what the test writes

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="switching to another uid needs root")


def read_as_other(path: Path) -> bool:
    """Whether a process of another uid can read `path` (the sandbox's view at `user`)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(OTHER_UID, OTHER_UID, OTHER_UID)
            os.setresuid(OTHER_UID, OTHER_UID, OTHER_UID)
            with open(path, "rb") as f:
                f.read(1)
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.WEXITSTATUS(status) == 0


VIEW = next(
    (p for p in map(Path, ("/srv", "/mnt", "/media", "/opt")) if p.is_dir()), Path("/srv")
)  # an empty-or-not folder other users can reach: hidden by the bind, in the child only


def in_open_view(tmp_path: Path, body: Callable[[Path], None]) -> None:
    """Run `body(folder)` in a child whose mount namespace binds `tmp_path` at /srv, with an
    open folder in it (other users can reach and read it, as an installation or a class
    folder is); the child's assertion errors come back as this test's failure."""
    tmp_path.chmod(0o755)
    base = tmp_path / "open"
    (base / "alice").mkdir(parents=True)
    for p in (base, base / "alice"):
        p.chmod(0o755)
    (base / "alice" / "03_jit.py").write_text("secret = 1\n")
    (base / "alice" / "03_jit.py").chmod(0o644)
    failure = tmp_path / "failure.txt"
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            isolation.unshare(isolation.CLONE_NEWNS)
            isolation.mount(None, "/", None, isolation.MS_REC | isolation.MS_PRIVATE)
            isolation.mount(str(tmp_path), str(VIEW), None, isolation.MS_BIND)
            body(VIEW / "open")
            code = 0
        except BaseException:
            failure.write_text(traceback.format_exc())
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WEXITSTATUS(status) != 0:
        pytest.fail(failure.read_text() if failure.exists() else f"the child ended: {status}")


def test_applies_only_at_user_without_landlock() -> None:
    assert exposure.applies(NO_LANDLOCK)
    assert not exposure.applies(Isolation("user", ("namespaces",)))
    assert not exposure.applies(Isolation("strict"))
    assert not exposure.applies(Isolation("basic", (LANDLOCK_MISSING,)))


@root_only
def test_readable_by_others_finds_what_another_uid_can_read(tmp_path: Path) -> None:
    in_open_view(tmp_path, _finds_what_another_uid_can_read)


def _finds_what_another_uid_can_read(open_folder: Path) -> None:
    secret = open_folder / "alice" / "03_jit.py"
    assert read_as_other(secret)
    assert secret in exposure.readable_by_others(open_folder)
    (open_folder / "alice").chmod(0o750)  # no way through for others
    assert not read_as_other(secret)
    assert exposure.readable_by_others(open_folder) == [open_folder]  # the listing only


@root_only
def test_the_suites_are_closed_and_the_note_says_so(tmp_path: Path) -> None:
    in_open_view(tmp_path, _suites_closed)


def _suites_closed(open_folder: Path) -> None:
    suites = open_folder / "suites"
    shutil.copytree(catalog.SUITES_DIR, suites, ignore=shutil.ignore_patterns("__pycache__"))
    for p in (suites, *suites.iterdir()):
        p.chmod(0o755 if p.is_dir() else 0o644)
    suite = suites / "test_03_jit.py"
    assert read_as_other(suite)
    notes = exposure.secure([exposure.Guard(suites, "the hidden suites", repair=True)])
    assert len(notes) == 1 and f"chmod o-rwx {suites}" in notes[0]
    assert not read_as_other(suite)
    assert os.stat(suites).st_mode & 0o777 == 0o750
    assert suite.read_text().startswith('"""')  # the grader itself still reads them
    assert exposure.secure([exposure.Guard(suites, "the hidden suites", repair=True)]) == []


@root_only
def test_a_class_folder_open_to_others_is_refused_with_the_fix(tmp_path: Path) -> None:
    in_open_view(tmp_path, _class_refused)


def _class_refused(open_folder: Path) -> None:
    with pytest.raises(exposure.Exposed) as caught:
        exposure.secure([exposure.Guard(open_folder, "the class's folders")])
    message = str(caught.value)
    assert "the class's folders" in message and str(open_folder) in message
    assert f"chmod -R o-rwx {open_folder}" in message
    assert os.stat(open_folder).st_mode & 0o777 == 0o755  # an instructor's folder: not changed
    open_folder.chmod(0o750)
    assert exposure.secure([exposure.Guard(open_folder, "the class's folders")]) == []


@root_only
def test_grade_batch_refuses_an_open_class_at_user_without_landlock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from grader.runner import policy

    monkeypatch.setattr(policy, "detected", lambda: NO_LANDLOCK)
    in_open_view(tmp_path, _batch_refused)


def _batch_refused(open_folder: Path) -> None:
    import contextlib
    import io

    from grader.cli import main

    top = open_folder.parent
    suites = top / "suites"
    shutil.copytree(catalog.SUITES_DIR, suites, ignore=shutil.ignore_patterns("__pycache__"))
    suites.chmod(0o755)
    os.chdir(top)
    os.umask(0o022)
    err = io.StringIO()
    argv = ["batch", str(open_folder), "--out", str(top / "out"), "--suites", str(suites)]
    with contextlib.redirect_stderr(err):
        code = main([*argv, "--only", "03_jit", "-q"])
    text = err.getvalue()
    assert code == 2, text
    assert "the class's folders" in text and f"chmod -R o-rwx {open_folder}" in text, text
    assert "the hidden suites" in text and "closed them" in text, text  # repaired, and said
    assert not stat.S_IMODE(os.stat(suites).st_mode) & 0o007
    assert not (top / "out").exists()  # nothing graded
