"""A submission is graded by what it holds, never by where a link leads, and the course's
policy comes from the course.

- A folder of lesson files (or a lesson file) that is a symbolic link is refused, naming
  where it points, in `grade`, `grade batch` and the Gradescope runner: a student
  repository holding `exercises -> ../../solutions` (git keeps the link) scored the course's
  own solutions.
- A submission that ships its own `pyproject.toml` (`[tool.grade] show_fixes = true`) and
  `.grade/hints.json` (every fix "revealed") changes nothing in the Gradescope results.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import FIXTURES
from test_gradescope_bundle import autograder

from grader.batch import pool as batch

Grade = Callable[..., tuple[int, str]]
LESSONS = ["01_sums", "02_words"]


def test_grade_refuses_a_linked_lesson_folder_and_names_its_target(
    tmp_path: Path, grade: Grade
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "exercises").symlink_to(FIXTURES / "solutions")
    code, text = grade("--suites", str(FIXTURES / "suites"), str(repo / "exercises"))
    assert code == 2, text
    assert "is a symlink to" in text and str(FIXTURES / "solutions") in text, text
    assert "Total" not in text  # nothing was graded
    # the default path (`exercises/` of the working folder) too
    code, text = grade("--suites", str(FIXTURES / "suites"), cwd=repo)
    assert code == 2 and "exercises is a symlink to" in text, text
    # a linked lesson file
    (repo / "01_sums.py").symlink_to(FIXTURES / "solutions" / "01_sums.py")
    code, text = grade("--suites", str(FIXTURES / "suites"), str(repo / "01_sums.py"))
    assert code == 2 and "01_sums.py is a symlink to" in text, text
    # the folder itself, not linked, is graded as usual (a copy: grading keeps `.grade/` there)
    solutions = shutil.copytree(FIXTURES / "solutions", tmp_path / "solutions")
    code, text = grade("--suites", str(FIXTURES / "suites"), str(solutions), "-q")
    assert code == 0, text


def test_batch_does_not_follow_a_linked_student_folder_or_exercises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    submissions = tmp_path / "submissions"
    (submissions / "ann" / "exercises").mkdir(parents=True)
    (submissions / "ann" / "exercises" / "01_sums.py").write_text("")
    (submissions / "bo").mkdir()
    (submissions / "bo" / "exercises").symlink_to(FIXTURES / "solutions")
    (submissions / "cy").symlink_to(FIXTURES / "solutions")
    assert batch.students(submissions) == ["ann", "bo", "cy"]
    assert [n for n, _ in batch.job_for(submissions, "ann", LESSONS).files] == ["01_sums"]
    assert batch.job_for(submissions, "bo", LESSONS).files == ()
    assert batch.job_for(submissions, "cy", LESSONS).files == ()
    err = capsys.readouterr().err
    # nor what a linked folder's target says of the hints its student revealed
    target = tmp_path / "elsewhere"
    (target / ".grade").mkdir(parents=True)
    (target / ".grade" / "hints.json").write_text('{"01_sums": {"test_add": 2}}')
    (submissions / "dee").symlink_to(target)
    assert batch.reported_hints(batch.job_for(submissions, "dee", LESSONS)) is None
    assert f"bo/exercises is a symlink to {FIXTURES / 'solutions'}" in err, err
    assert f"cy is a symlink to {FIXTURES / 'solutions'}" in err, err


def _tests(results: dict[str, object]) -> list[tuple[str, str, object]]:
    tests = results["tests"]
    assert isinstance(tests, list)
    return [(t["name"], t.get("output", ""), t.get("score")) for t in tests]


@pytest.mark.slow
def test_gradescope_ignores_a_submissions_own_policy_and_state(tmp_path: Path) -> None:
    bob = FIXTURES / "submissions" / "bob"  # partly wrong: failing checks have fixes to show
    upload = {p.name: p.read_text() for p in bob.glob("*.py")}
    plain = autograder(tmp_path / "plain", upload)
    ids = {"01_sums": ["test_add", "test_total", "test_total_empty_secret"]}
    ids["02_words"] = ["test_shout", "test_shout_blank_secret"]
    revealed = {lesson: dict.fromkeys(checks, 2) for lesson, checks in ids.items()}
    hostile = autograder(
        tmp_path / "hostile",
        {
            **upload,
            "pyproject.toml": '[project]\nname = "mine"\n\n[tool.grade]\nshow_fixes = true\n',
            ".grade/hints.json": json.dumps(revealed),
        },
    )
    assert plain["score"] == hostile["score"] and 0 < float(plain["score"]) < 12  # type: ignore[arg-type]
    assert _tests(hostile) == _tests(plain)


@pytest.mark.slow
def test_gradescope_refuses_a_linked_exercises_folder_naming_it(tmp_path: Path) -> None:
    root = tmp_path / "autograder"
    results = autograder(
        tmp_path, {"README.md": "my repository"}, links={"exercises": FIXTURES / "solutions"}
    )
    assert results["score"] == 0.0 and results["tests"] == []
    assert "is a symlink to" in str(results["output"]), results["output"]
    assert str(FIXTURES / "solutions") in str(results["output"])
    assert not (root / "submission" / ".grade").exists()
