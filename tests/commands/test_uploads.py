"""`grader.course.uploads`: an upload's files matched to the lesson files by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.course import uploads

LESSONS = {"03_jit", "ex2_per_example_grads", "01_arrays"}


@pytest.mark.parametrize(
    ("name", "lesson"),
    [
        ("03_jit.py", "03_jit.py"),
        ("03_jit (1).py", "03_jit.py"),  # Chrome, Firefox
        ("03_jit(2).py", "03_jit.py"),
        ("03_jit-2.py", "03_jit.py"),
        ("03_jit (12).ipynb", "03_jit.ipynb"),
        ("ex2_per_example_grads (3).py", "ex2_per_example_grads.py"),
        ("03_jit.txt", None),
        ("03_jitter.py", None),
        ("04_vmap (1).py", None),  # not a lesson of this bundle
        ("03_jit (a).py", None),
        ("03_jit_2.py", None),
        ("(1).py", None),
    ],
)
def test_a_browsers_copy_is_its_lesson_file_and_nothing_else_is(
    name: str, lesson: str | None
) -> None:
    assert uploads.lesson_of(name, LESSONS) == lesson


def files(tmp_path: Path, *names: str) -> list[Path]:
    for name in names:
        (tmp_path / name).write_text(f"# {name}\n")
    return sorted(tmp_path / n for n in names)


def test_the_exact_name_wins_and_two_copies_are_not_guessed_between(tmp_path: Path) -> None:
    found = uploads.match(
        files(tmp_path, "03_jit.py", "03_jit (1).py", "01_arrays (1).py", "01_arrays-2.py"),
        LESSONS,
    )
    assert found.graded == {"03_jit.py": tmp_path / "03_jit.py"}
    assert "03_jit (1).py is not graded: 03_jit.py was uploaded too" in found.notes
    assert (
        "none of 01_arrays (1).py, 01_arrays-2.py is graded: each could be 01_arrays.py; "
        "upload one, named 01_arrays.py"
    ) in found.notes


def test_stage_copies_under_lesson_names_and_annotates_the_results(tmp_path: Path) -> None:
    suites = Path(__file__).parent / "fixtures" / "suites"
    submission = tmp_path / "submission"
    submission.mkdir()
    files(submission, "01_sums (1).py", "README.md")
    staged, notes = tmp_path / "staged", tmp_path / "notes.txt"
    assert uploads.stage(submission, staged, notes, suites) == 0
    assert [p.name for p in staged.iterdir()] == ["01_sums.py"]
    assert (staged / "01_sums.py").read_text() == "# 01_sums (1).py\n"
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"score": 3.0, "output": "graded", "tests": []}))
    uploads.annotate(results, notes)
    doc = json.loads(results.read_text())
    assert doc["score"] == 3.0
    assert (
        doc["output"]
        == "01_sums (1).py is graded as 01_sums.py (the name it was uploaded with)\n\ngraded"
    )


def test_nothing_to_grade_names_the_files_received_and_expected(tmp_path: Path) -> None:
    suites = Path(__file__).parent / "fixtures" / "suites"
    submission = tmp_path / "submission"
    (submission / "exercises").mkdir(parents=True)
    files(submission / "exercises", "sums.py")
    (submission / "link.py").symlink_to(tmp_path / "elsewhere.py")
    staged, notes = tmp_path / "staged", tmp_path / "notes.txt"
    assert uploads.stage(submission, staged, notes, suites) == uploads.NO_MATCH
    assert not any(staged.iterdir())
    results = tmp_path / "results.json"
    uploads.annotate(results, notes, score_zero=True)
    doc = json.loads(results.read_text())
    assert doc["score"] == 0.0 and doc["tests"] == []
    assert "received exercises/sums.py." in doc["output"]
    assert "(01_sums.py, 02_words.py;" in doc["output"]
    assert f"link.py is a symlink to {tmp_path / 'elsewhere.py'}" in doc["output"]
