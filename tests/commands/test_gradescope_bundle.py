"""`grade gradescope-bundle`: the zip, and its run_autograder run for real on a fake /autograder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import SUITES

from grader.course import gradescope_bundle

Grade = Callable[..., tuple[int, str]]


def build(tmp_path: Path) -> Path:
    out = tmp_path / "autograder.zip"
    gradescope_bundle.build(out, SUITES, timeout=30)
    return out


def test_bundle_holds_setup_run_autograder_and_the_full_grader(tmp_path: Path) -> None:
    with zipfile.ZipFile(build(tmp_path)) as bundle:
        names = set(bundle.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in bundle.infolist()}
        setup = bundle.read("setup.sh").decode()
        run = bundle.read("run_autograder").decode()
        suite = bundle.read("grader/suites/test_01_sums.py").decode()
    assert {
        "setup.sh",
        "run_autograder",
        "pyproject.toml",
        "README.md",
        "grader/cli.py",
        "grader/templates/report.html.j2",
        "grader/suites/test_02_words.py",
    } <= names
    assert not any(
        n.startswith(("solutions/", "tests/", "exercises/", "grader/mutate/")) or "__pycache__" in n
        for n in names
    )
    assert "grader/mutate/equivalent.toml" not in names  # it describes the solutions
    assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111
    assert '"$PY" -m pip install -q --no-deps -r "$SOURCE/requirements.lock"' in setup
    assert '"$PY" -m pip install -q --no-deps --no-build-isolation "$SOURCE"' in setup
    assert '"$PY" -m pip check' in setup and "--upgrade" not in setup
    assert '--gradescope "$RESULTS"' in run and "--timeout 30" in run
    assert (
        "--require-isolation user" in run
    )  # student code runs as a user of its own, or not at all
    assert "test_total_empty_secret" in suite  # hidden checks are graded on Gradescope
    for script in (setup, run):
        subprocess.run(["bash", "-n"], input=script, text=True, check=True)


def test_only_bundles_the_named_lessons_suites(tmp_path: Path, grade: Grade) -> None:
    out = tmp_path / "sums.zip"
    code, text = grade(
        "gradescope-bundle", str(out), "--suites", str(SUITES), "--only", "01_sums", cwd=tmp_path
    )
    assert code == 0 and "1 suite(s)" in text, text
    with zipfile.ZipFile(out) as bundle:
        suites = sorted(n for n in bundle.namelist() if n.startswith("grader/suites/"))
        readme = bundle.read("README.md").decode()
    assert suites == ["grader/suites/__init__.py", "grader/suites/test_01_sums.py"]
    assert "Lesson files graded (9 points in all): 01_sums.py." in readme
    code, text = grade("gradescope-bundle", str(tmp_path / "x.zip"), "--suites", str(SUITES),
                       "--only", "03_nope")  # fmt: skip
    assert code == 2 and "--only: no lesson file named 03_nope" in text


def test_the_courses_show_fixes_setting_travels_with_the_bundle(tmp_path: Path) -> None:
    course = tmp_path / "course"
    course.mkdir()
    (course / "pyproject.toml").write_text("[tool.grade]\nshow_fixes = true\n")
    out = tmp_path / "autograder.zip"
    gradescope_bundle.build(out, SUITES, course_dir=course)
    with zipfile.ZipFile(out) as bundle:
        pyproject = bundle.read("pyproject.toml").decode()
    assert pyproject.endswith("[tool.grade]\nshow_fixes = true\n")
    assert '"grader.templates"' in pyproject and '"grader.suites"' in pyproject


def test_required_isolation_can_be_changed(tmp_path: Path) -> None:
    out = tmp_path / "autograder.zip"
    gradescope_bundle.build(out, SUITES, require_isolation="strict")
    with zipfile.ZipFile(out) as bundle:
        assert "--require-isolation strict" in bundle.read("run_autograder").decode()


def test_bundle_is_reproducible(tmp_path: Path) -> None:
    first = build(tmp_path).read_bytes()
    assert build(tmp_path).read_bytes() == first


def test_command_checks_its_output_path(tmp_path: Path, grade: Grade) -> None:
    code, text = grade("gradescope-bundle", str(tmp_path / "bundle.tar"))
    assert code == 2 and ".zip" in text
    out = tmp_path / "bundle.zip"
    code, text = grade("gradescope-bundle", str(out), "--suites", str(SUITES))
    assert code == 0 and "2 suite(s)" in text
    assert grade("gradescope-bundle", str(out))[0] == 2


def autograder(
    tmp_path: Path,
    submission: dict[str, str],
    links: dict[str, Path] | None = None,
    args: str = "",
) -> dict[str, object]:
    """The bundle's run_autograder run on `submission` (path -> text, and `links`: path ->
    where a symbolic link there points) in a fake /autograder under `tmp_path`."""
    root = tmp_path / "autograder"
    root.mkdir(parents=True)
    with zipfile.ZipFile(build(tmp_path)) as bundle:
        bundle.extractall(root / "source")
    (root / "submission").mkdir()
    for name, text in submission.items():
        (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / name).write_text(text)
    for name, target in (links or {}).items():
        (root / "submission" / name).symlink_to(target)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=sys.executable, AUTOGRADER_ARGS=args)
    proc = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results: dict[str, object] = json.loads((root / "results" / "results.json").read_text())
    return results


@pytest.mark.slow
def test_run_autograder_grades_a_repository_upload_with_hidden_checks(tmp_path: Path) -> None:
    alice = Path(__file__).parent / "fixtures" / "submissions" / "alice"
    upload = {f"exercises/{p.name}": p.read_text() for p in alice.glob("*.py")}
    upload["README.md"] = "my repository"
    results = autograder(tmp_path, upload)
    assert results["score"] == 12
    tests = results["tests"]
    assert (
        isinstance(tests, list) and len(tests) == 7
    )  # each hidden check: a student and an instructor entry
    named = [t for t in tests if "total of the empty list is zero" in t["name"]]
    assert [t["visibility"] for t in named] == ["hidden"]  # its real name: instructors only
    stand_ins = [t for t in tests if "hidden check" in t["name"]]
    assert stand_ins and {t["visibility"] for t in stand_ins} == {"after_published"}
    assert all("output" not in t or not t["output"] for t in stand_ins)
    assert {
        t["visibility"]
        for t in tests
        if t not in named + stand_ins
        and "shout keeps" not in t["name"]
        and t["visibility"] != "hidden"
    } == {"visible"}


@pytest.mark.slow
def test_run_autograder_writes_results_even_when_grading_cannot_start(tmp_path: Path) -> None:
    alice = Path(__file__).parent / "fixtures" / "submissions" / "alice"
    upload = {"01_sums.py": (alice / "01_sums.py").read_text()}
    results = autograder(tmp_path, upload, args="--seed not-a-number")
    assert results["score"] == 0.0 and results["tests"] == []
    output = str(results["output"])
    assert "could not grade this submission (exit code 2); received: 01_sums.py" in output


ALICE = Path(__file__).parent / "fixtures" / "submissions" / "alice"


@pytest.mark.slow
def test_run_autograder_grades_a_browsers_renamed_downloads_as_their_lessons(
    tmp_path: Path,
) -> None:
    upload = {
        "01_sums (1).py": (ALICE / "01_sums.py").read_text(),
        "02_words-2.py": (ALICE / "02_words.py").read_text(),
    }
    results = autograder(tmp_path, upload)
    assert results["score"] == 12, results
    output = str(results["output"])
    assert "01_sums (1).py is graded as 01_sums.py" in output
    assert "02_words-2.py is graded as 02_words.py" in output


@pytest.mark.slow
def test_run_autograder_names_the_files_received_when_none_is_a_lesson(tmp_path: Path) -> None:
    upload = {"notes.txt": "no lesson files here", "sums.py": "x = 1\n"}
    results = autograder(tmp_path, upload)
    assert results["score"] == 0.0 and results["tests"] == []
    output = str(results["output"])
    assert "No lesson file to grade: received notes.txt, sums.py." in output
    assert "01_sums.py, 02_words.py" in output
