"""A sandbox that ends before any of the student's code ran is the grader's error, never the
student's: it sent no source frame (sent just before the student's module is imported).
A student cannot borrow that verdict: code that ends the sandbox at import runs after the
frame; a file too large for the frame, or a notebook whose cells run before it, stays theirs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader.protocol import sandbox as proto

pytestmark = pytest.mark.slow

DRIVER = r"""
import json, os, sys, tempfile
from grader.plugin import sandbox_session, wording
from grader.sandbox import isolation, probes

folder, how = sys.argv[1], sys.argv[2]
probes.load_all()
if how == "grader_breaks":  # what an installation the sandbox's user cannot read does
    def confine(plan):
        raise ImportError("cannot import name 'landlock' from 'grader.sandbox'")
    isolation.confine_files = confine
prepare = (lambda: os._exit(0)) if how == "notebook_ends_it" else None
box = sandbox_session.SandboxSession(lesson="lesson", lesson_dir=folder, level="basic",
                             sandboxes=tempfile.mkdtemp())
box.start(30.0, prepare)
exc = box.import_error()
try:
    box.load("lesson")
    said = ""
except sandbox_session.LessonImportError as err:
    said = str(err)
box.stop()
print(json.dumps({"kind": type(exc).__name__, "said": said}))
"""

CORRECT = "def double(x):\n    return 2 * x\n"
ENDS_IT = "import os\n\nos._exit(3)\n"


def drive(tmp_path: Path, how: str, source: str = CORRECT) -> dict[str, str]:
    folder = tmp_path / "lesson"
    folder.mkdir()
    (folder / "lesson.py").write_text(source)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(folder), how],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found: dict[str, str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return found


def test_a_sandbox_the_grader_could_not_start_is_the_graders_error(tmp_path: Path) -> None:
    seen = drive(tmp_path, "grader_breaks")
    assert seen["kind"] == "SandboxNotStarted"
    assert seen["said"].startswith("grader error: the grader could not start the process")
    assert "none of your code ran and no points were counted" in seen["said"]
    assert "never end the program" not in seen["said"]


def test_a_correct_file_imports(tmp_path: Path) -> None:
    assert drive(tmp_path, "plain") == {"kind": "NoneType", "said": ""}


def test_code_that_ends_the_sandbox_at_import_stays_the_students(tmp_path: Path) -> None:
    seen = drive(tmp_path, "plain", ENDS_IT)
    assert seen["kind"] == "SandboxGone"
    assert "lesson.py could not be imported: the process importing it stopped" in seen["said"]
    assert "grader error" not in seen["said"]


def test_a_file_too_large_for_the_source_frame_that_ends_it_stays_the_students(
    tmp_path: Path,
) -> None:
    padding = "#" * 100 + "\n"
    source = ENDS_IT + padding * (proto.MAX_SOURCE_BYTES // len(padding) + 1)
    seen = drive(tmp_path, "plain", source)
    assert seen["kind"] == "SandboxGone"
    assert "grader error" not in seen["said"]


def test_a_notebook_that_ends_the_sandbox_before_the_frame_stays_the_students(
    tmp_path: Path,
) -> None:
    seen = drive(tmp_path, "notebook_ends_it")
    assert seen["kind"] == "SandboxGone"
    assert "grader error" not in seen["said"]
