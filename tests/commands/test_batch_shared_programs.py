"""`grade batch` grades the course's solutions first and shares what they compiled
(`grader.batch.warm`, `grader.sandbox.shared_programs`): every student is graded exactly as
without it. A real lesson (03_jit, real JAX) at `basic`, where a batch has no compilation
cache at all: two correct students, one in another style and a broken one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_batch_pool import verdicts

from grader import grading
from grader.batch import warm
from grader.runner import policy

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
STUDENTS = {
    "al": ROOT / "solutions" / "03_jit.py",
    "ann": ROOT / "solutions" / "03_jit.py",
    "bo": ROOT / "tests" / "corpus" / "habits" / "03_jit.py",
    "cy": ROOT / "tests" / "fixtures" / "03_jit" / "branch_at_one" / "03_jit.py",
}


def test_a_class_graded_after_the_solutions_gets_the_same_results(
    grade: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRADE_COMPILATION_CACHE", str(tmp_path / "judge-cache"))
    submissions = tmp_path / "class"
    for name, source in STUDENTS.items():
        (submissions / name).mkdir(parents=True)
        shutil.copy(source, submissions / name / "03_jit.py")
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    shutil.copy(ROOT / "solutions" / "03_jit.py", solutions / "03_jit.py")
    common = ("--only", "03_jit", "--isolation", "basic", "--require-isolation", "basic")
    results = {}
    for run, given in (("shared", str(solutions)), ("alone", "none")):
        out = tmp_path / run
        code, text = grade(  # type: ignore[operator]
            "batch", str(submissions), "--out", str(out), "--jobs", "2",
            "--solutions", given, *common,
        )  # fmt: skip
        assert code == 0, text
        first = "Grading the solutions' 1 lesson file(s) first"
        assert (first in text) == (run == "shared"), text
        results[run] = {
            name: verdicts(json.loads((out / "students" / f"{name}.json").read_text()))
            for name in STUDENTS
        }
    assert results["shared"] == results["alone"]
    scores = {name: v["03_jit"][1] for name, v in results["shared"].items()}
    full = results["shared"]["ann"]["03_jit"][2]
    assert scores["al"] == scores["ann"] == scores["bo"] == full and scores["cy"] < full, scores


def test_the_solutions_go_first_for_four_students_or_more(grade: object, course: Path) -> None:
    """The command tests' small course (plain-Python suites), run from the course's folder:
    its solutions/ is the default."""
    said = {}
    for chosen in (("alice", "bob", "carol"), ("alice", "bob", "carol", "gina")):
        picks = [a for name in chosen for a in ("--student", name)]
        code, text = grade(  # type: ignore[operator]
            "batch", "submissions", "--out", "out", "--suites", "suites", "--timeout", "8",
            "--regrade", *picks, cwd=course,
        )  # fmt: skip
        assert code == 0, text
        said[len(chosen)] = "Grading the solutions' 2 lesson file(s) first" in text
    assert said == {3: False, 4: True}


def test_a_solutions_folder_that_is_not_there_is_a_usage_error(
    grade: object, tmp_path: Path
) -> None:
    code, text = grade(  # type: ignore[operator]
        "batch", str(tmp_path), "--out", str(tmp_path / "out"), "--solutions",
        str(tmp_path / "absent"),
    )  # fmt: skip
    assert code == 2 and "--solutions" in text and "no such folder" in text, text


RENDEZVOUS = """
import os, time
from grader.authoring import check
LESSON = "{name}"
TITLE = "{name}"
TIMEOUT = 60

@check("meets the other lesson file's grading", points=1, hint="wait", nudge="wait", spec="x")
def test_meet(student):
    here = "{folder}"
    open(os.path.join(here, "{name}.here"), "w").close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if os.path.exists(os.path.join(here, "{other}.here")):
            open(os.path.join(here, "{name}.met"), "w").close()
            return
        time.sleep(0.05)
"""


def test_the_solutions_files_are_graded_at_once(tmp_path: Path) -> None:
    """Two lesson files whose checks each wait for the other's to start: both meet only when
    the solutions' files are graded at once, one per worker (a batch grades one student's
    files one at a time; graded so, the first waits its 30 s in vain)."""
    suites, solutions, met = tmp_path / "suites", tmp_path / "solutions", tmp_path / "met"
    for folder in (suites, solutions, met):
        folder.mkdir()
    for name, other in (("01_a", "02_b"), ("02_b", "01_a")):
        text = RENDEZVOUS.format(name=name, other=other, folder=met)
        (suites / f"test_{name}.py").write_text(text)
        (solutions / f"{name}.py").write_text("X = 1\n")
    scratch = warm.scratch()
    try:
        options = policy.Options(isolation="basic", jobs=1)
        warm.store(solutions, grading.exercises(suites), options, 2, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert sorted(p.name for p in met.iterdir()) == [
        "01_a.here",
        "01_a.met",
        "02_b.here",
        "02_b.met",
    ]
