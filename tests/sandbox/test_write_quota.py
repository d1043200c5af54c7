"""A quota per grading on what the sandbox writes, at every level.

Payloads write only where the test points them: a folder in the sandbox's own scratch
space, inside a temp folder of the test's own (traversable, 0711, so a sandbox of another
uid reaches its folders at `user`). The quota is lowered through `GRADER_WRITE_QUOTA`.

- Launch level: past the bytes or the files of the quota, the call is stopped with the
  quota's reason, within a second or two, at every level; at `strict` the kernel refuses
  the write itself (ENOSPC) before any watchdog looks.
- Grading level: a `10_checkpoint` whose `save_checkpoint` fills the folder the judge hands
  it is stopped with a message that says so, and `01_arrays`, graded beside it, keeps its
  full marks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.sandbox import isolation, quota

HERE = Path(__file__).parent
REPO = HERE.parents[1]
LEVELS = ["basic", "user", "strict"] if os.geteuid() == 0 else ["basic"]
QUOTA = f"{16 << 20},300"  # 16 MiB, 300 files

pytestmark = pytest.mark.slow

PAYLOAD = """
import os, time

def fill(folder, files=False, burst=False):
    os.makedirs(folder, exist_ok=True)
    if burst:  # one write past the quota: the kernel's answer, before any watchdog looks
        try:
            with open(os.path.join(folder, "burst"), "wb") as fh:
                fh.write(b"x" * (32 << 20))
            return "wrote 32 MiB"
        except OSError as exc:
            return os.strerror(exc.errno)
    n, end = 0, time.monotonic() + 20
    while time.monotonic() < end:
        try:
            with open(os.path.join(folder, f"f{n}"), "wb") as fh:
                fh.write(b"x" * (1 if files else 1 << 20))
            n += 1
        except OSError:
            time.sleep(0.05)
    return n

def ok():
    return 5
"""

DRIVER = """
import json, os, sys, time
sys.path.insert(0, sys.argv[3])
import drive_sandbox

level, folder, how = sys.argv[1], sys.argv[2], sys.argv[4]
box, work = drive_sandbox.start(level, folder)
target = os.path.join(work, "scratch", "payload")  # the sandbox's own scratch folder
report = {}
started = time.monotonic()
report["fill"] = drive_sandbox.outcome(
    lambda: box.module.fill(target, files=how == "files", burst=how == "burst")
)
report["seconds"] = time.monotonic() - started
time.sleep(1.0)  # the watchdog's turn
report["ok"] = drive_sandbox.outcome(lambda: box.module.ok())
box.close()
import shutil
shutil.rmtree(work, ignore_errors=True)
print(json.dumps(report))
"""


@pytest.fixture
def temp_dir() -> Iterator[Path]:
    """A temp folder of the test's own, for the sandbox's workdir (TMPDIR of the driver)."""
    folder = Path(tempfile.mkdtemp(prefix="grade-quota-"))
    folder.chmod(0o711)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def environment(temp_dir: Path) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(temp_dir), quota.ENV: QUOTA}


def drive(temp_dir: Path, level: str, how: str) -> dict:
    folder = temp_dir / "lesson"
    folder.mkdir()
    folder.chmod(0o755)
    (folder / "lesson.py").write_text(PAYLOAD)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, level, str(folder), str(HERE), how],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=temp_dir,
        env=environment(temp_dir),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("how", ["bytes", "files"])
@pytest.mark.parametrize("level", LEVELS)
def test_writing_past_the_quota_stops_the_sandbox(temp_dir: Path, level: str, how: str) -> None:
    seen = drive(temp_dir, level, how)
    assert seen["fill"] == {"gone": quota.reason(16 << 20, 300)}, seen
    assert seen["seconds"] < 10  # stopped, not left to write for its 20 s
    assert seen["ok"]["gone"].startswith(
        "it had already stopped in an earlier check: " + quota.EXCEEDED
    )
    assert not list(temp_dir.glob("grader-sandbox-test-*"))  # nothing left behind


@pytest.mark.skipif("strict" not in LEVELS, reason="strict isolation needs root")
def test_at_strict_the_kernel_refuses_the_write(temp_dir: Path) -> None:
    seen = drive(temp_dir, "strict", "burst")
    assert seen["fill"] == {"value": os.strerror(28)}  # ENOSPC: No space left on device
    assert seen["ok"]["gone"].startswith(
        "it had already stopped in an earlier check: " + quota.EXCEEDED
    )


CHECKPOINT_FILLER = '''

_save = save_checkpoint


def save_checkpoint(path, tree):
    """The solution's, then junk in the folder the grader handed it, until it is stopped."""
    import os, time
    _save(path, tree)
    folder = os.path.dirname(path)
    n, end = 0, time.monotonic() + 60
    while time.monotonic() < end:
        try:
            with open(os.path.join(folder, f"junk{n}"), "wb") as fh:
                fh.write(b"x" * (1 << 20))
            n += 1
        except OSError:
            time.sleep(0.05)
'''


@pytest.mark.parametrize("level", LEVELS)
def test_a_grading_past_the_quota_is_stopped_and_the_other_file_grades(
    temp_dir: Path, tmp_path: Path, level: str
) -> None:
    if not isolation.at_least(isolation.detect().level, level):
        pytest.skip(f"no {level} here")
    submission = temp_dir / "submission"
    submission.mkdir()
    shutil.copy(REPO / "solutions" / "01_arrays.py", submission / "01_arrays.py")
    source = (REPO / "solutions" / "10_checkpoint.py").read_text()
    (submission / "10_checkpoint.py").write_text(source + CHECKPOINT_FILLER)
    submission.chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    command = [
        sys.executable,
        "-m",
        "grader",
        str(submission),
        "--only",
        "01_arrays,10_checkpoint",
        "--isolation",
        level,
        "--json",
        str(out / "results.json"),
        "--no-html",
        "--no-color",
        "--jobs",
        "2",
        "--timeout",
        "120",
    ]
    proc = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=400,
        cwd=tmp_path,
        env=environment(temp_dir),
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())
    exercises = {e["name"]: e for e in results["exercises"]}
    arrays = exercises["01_arrays"]
    assert arrays["score"] == arrays["max_score"] > 0, arrays
    checks = exercises["10_checkpoint"]["checks"]
    stopped = [c for c in checks if quota.EXCEEDED in c["message"]]
    assert stopped, [c["message"] for c in checks]
    assert stopped[0]["message"].startswith("`save_checkpoint` wrote too much: " + quota.EXCEEDED)
    assert stopped[0]["status"] == "error"
    assert not list(temp_dir.glob("grader-sandbox*"))  # nothing left behind
