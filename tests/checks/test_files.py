"""files: folders listed, files written and cut short where student code wrote them, without
following symlinks or blocking on FIFOs; in-process here, and once through a real sandbox."""

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from grader.checks import files
from grader.sandbox import client

HERE = files.IN_PROCESS
REPO = Path(__file__).resolve().parents[2]


def _within(seconds, fn, *args):
    """`fn(*args)` in a thread that must finish in time (a probe that blocks fails the test
    instead of hanging it); returns the result or raises what `fn` raised."""
    box = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{fn.__name__} blocked"
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_make_folder_creates_parents_and_may_run_twice(tmp_path):
    target = tmp_path / "scratch" / "test_x" / "run"
    assert files.make_folder(HERE, str(target)) == str(target)
    files.make_folder(HERE, str(target))
    assert target.is_dir()


def test_listing_reports_kinds_and_sizes_sorted_without_following_links(tmp_path):
    (tmp_path / "b.ckpt").write_bytes(b"12345")
    (tmp_path / "a.ckpt.npz").write_bytes(b"")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner").write_bytes(b"x")
    (tmp_path / "link").symlink_to(tmp_path / "sub")
    os.mkfifo(tmp_path / "pipe")
    entries = files.listing(HERE, str(tmp_path))
    assert [(e.name, e.kind) for e in entries] == [
        ("a.ckpt.npz", "file"),
        ("b.ckpt", "file"),
        ("link", "symlink"),
        ("pipe", "fifo"),
        ("sub", "dir"),
    ]
    assert {e.name: e.size for e in entries if e.kind == "file"} == {"a.ckpt.npz": 0, "b.ckpt": 5}


def test_listing_a_missing_folder_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        files.listing(HERE, str(tmp_path / "nothing-here"))


def test_a_malformed_listing_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(client, "probe", lambda *args: [{"name": 3, "kind": "file", "size": 1}])
    with pytest.raises(TypeError, match="malformed folder listing"):
        files.listing(HERE, str(tmp_path))
    monkeypatch.setattr(client, "probe", lambda *args: "not a list")
    with pytest.raises(TypeError, match="malformed folder listing"):
        files.listing(HERE, str(tmp_path))


def test_write_creates_and_replaces_exactly(tmp_path):
    path = tmp_path / "garbage.ckpt"
    assert files.write(HERE, str(path), b"\x80\x04 not a checkpoint " * 8) == 160
    assert path.read_bytes() == b"\x80\x04 not a checkpoint " * 8
    assert files.write(HERE, str(path), b"") == 0  # shorter: nothing of the old content left
    assert path.read_bytes() == b""


def test_write_refuses_a_symlink_and_leaves_its_target_alone(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")
    (tmp_path / "trap.ckpt").symlink_to(precious)
    with pytest.raises(OSError):
        files.write(HERE, str(tmp_path / "trap.ckpt"), b"overwritten")
    assert precious.read_text() == "keep me"


def test_write_refuses_a_fifo_or_folder_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe.ckpt")
    with pytest.raises(OSError):
        _within(10, files.write, HERE, str(tmp_path / "pipe.ckpt"), b"data")
    (tmp_path / "dir.ckpt").mkdir()
    with pytest.raises(OSError):
        files.write(HERE, str(tmp_path / "dir.ckpt"), b"data")


def test_write_cut_keeps_the_first_part(tmp_path):
    source, target = tmp_path / "good.ckpt", tmp_path / "truncated.ckpt"
    source.write_bytes(bytes(range(201)))
    assert files.write_cut(HERE, str(source), str(target)) == (201, 100)
    assert target.read_bytes() == bytes(range(100))
    assert source.read_bytes() == bytes(range(201))  # the source is untouched
    assert files.write_cut(HERE, str(source), str(target), 0.0) == (201, 0)
    assert target.read_bytes() == b""
    with pytest.raises(ValueError, match="fraction"):
        files.write_cut(HERE, str(source), str(target), 1.5)


def test_write_cut_refuses_links_and_fifos_as_source(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("grader's own file")
    (tmp_path / "link.ckpt").symlink_to(secret)
    os.mkfifo(tmp_path / "pipe.ckpt")
    target = tmp_path / "truncated.ckpt"
    with pytest.raises(OSError):
        files.write_cut(HERE, str(tmp_path / "link.ckpt"), str(target))
    with pytest.raises(OSError):
        _within(10, files.write_cut, HERE, str(tmp_path / "pipe.ckpt"), str(target))
    assert not target.exists()


DRIVER = textwrap.dedent(
    """
    import json, os, sys
    from grader.checks import files
    from grader.sandbox import client, launch, probes

    level, workdir, lessons = sys.argv[1:4]
    probes.load_all()
    box = launch.start(lesson="lesson", lesson_dir=lessons, level=level, workdir=workdir,
                       budget_s=60)
    student = box.module
    folder = os.path.join(workdir, "scratch", "test_files")
    seen = {}
    try:
        files.make_folder(student, folder)
        student.save(os.path.join(folder, "good.ckpt"))
        files.write(student, os.path.join(folder, "garbage.ckpt"), b"junk")
        seen["cut"] = files.write_cut(student, os.path.join(folder, "good.ckpt"),
                                      os.path.join(folder, "half.ckpt"))
        seen["sizes"] = {e.name: e.size for e in files.listing(student, folder)}
        seen["pid"] = student.pid()
        student.plant(os.path.join(folder, "trap.ckpt"))
        try:
            files.write(student, os.path.join(folder, "trap.ckpt"), b"x")
            seen["trap"] = "written"
        except client.StudentError as exc:
            seen["trap"] = exc.info.type
    finally:
        box.close()
    seen["judge_pid"] = os.getpid()
    print(json.dumps(seen))
    """
)

LESSON = textwrap.dedent(
    """
    import os

    def save(path):
        with open(path, "wb") as f:
            f.write(b"0123456789")

    def pid():
        return os.getpid()

    def plant(path):
        os.symlink(OUTSIDE, path)
    """
)


@pytest.mark.slow
def test_the_probes_run_in_the_sandbox_that_owns_the_handle(tmp_path):
    lessons, workdir = tmp_path / "lessons", tmp_path / "work"
    lessons.mkdir()
    workdir.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("the judge's")
    (lessons / "lesson.py").write_text(LESSON + f"\nOUTSIDE = {str(outside)!r}\n")
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, "basic", str(workdir), str(lessons)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
        env=dict(os.environ, JAX_PLATFORMS="cpu"),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["pid"] != seen["judge_pid"]
    assert seen["cut"] == [10, 5]
    assert seen["sizes"] == {"garbage.ckpt": 4, "good.ckpt": 10, "half.ckpt": 5}
    assert seen["trap"] == "OSError"
    assert outside.read_text() == "the judge's"
