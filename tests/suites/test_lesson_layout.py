"""A new exercise is one place to look: `harness.lesson_files(lesson)` names every file a
lesson is made of, and every lesson in solutions/ has them all (docs/authoring.md,
"Adding an exercise")."""

import pytest
from harness import REPO, lesson_files, lessons, variant_folder

from grader.course.assign import stub_source


def layout_problems(root):
    """Lesson -> what it lacks, for every lesson under `root` that lacks something."""
    return {
        lesson: missing
        for lesson in lessons(root)
        if (missing := lesson_files(lesson, root).missing())
    }


def test_every_lesson_has_its_stub_solution_suite_fixtures_and_tests():
    assert lessons(REPO), "no lessons in solutions/"
    problems = layout_problems(REPO)
    assert not problems, "lessons missing files:\n" + "\n".join(
        f"  {lesson}: {', '.join(missing)}" for lesson, missing in problems.items()
    )


def test_public_inputs_are_named_after_a_lesson():
    """Public inputs are optional (only some suites hand objects to student code), but each
    module of them belongs to a lesson: no orphans from a renamed exercise."""
    inputs = {p.stem for p in (REPO / "grader" / "inputs").glob("*.py") if p.stem != "__init__"}
    assert inputs, "no public inputs found"
    assert inputs <= set(lessons(REPO)), sorted(inputs - set(lessons(REPO)))
    for lesson in inputs:
        assert lesson_files(lesson).inputs.is_file()


@pytest.mark.parametrize("lesson", lessons(REPO))
def test_stub_is_the_solution_with_its_bodies_removed(lesson):
    files = lesson_files(lesson)
    assert stub_source(files.solution.read_text(), lesson) == files.stub.read_text()


def _write(path, text="x = 1\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_layout_check_names_what_a_lesson_lacks(tmp_path):
    # 01_done has every file (public inputs too); 02_half has a solution and its stub only,
    # and a fixture folder without the lesson's file in it; 03_bare only its solution
    for path in (
        "solutions/01_done.py",
        "exercises/01_done.py",
        "grader/suites/test_01_done.py",
        "grader/inputs/01_done.py",
        "tests/fixtures/01_done/broken/01_done.py",
        "tests/suites/test_suite_01_done.py",
        "solutions/02_half.py",
        "exercises/02_half.py",
        "tests/fixtures/02_half/empty/notes.txt",
        "solutions/03_bare.py",
    ):
        _write(tmp_path / path)
    assert lessons(tmp_path) == ["01_done", "02_half", "03_bare"]

    done = lesson_files("01_done", tmp_path)
    assert done.missing() == []
    assert done.variants() == ["broken"]
    assert done.inputs == tmp_path / "grader" / "inputs" / "01_done.py"
    assert (
        variant_folder("01_done", "broken", tmp_path) == tmp_path / "tests/fixtures/01_done/broken"
    )
    assert variant_folder("01_done", "solution", tmp_path) == tmp_path / "solutions"
    assert variant_folder("01_done", "stub", tmp_path) == tmp_path / "exercises"

    assert layout_problems(tmp_path) == {
        "02_half": [
            "grader/suites/test_02_half.py",
            "tests/suites/test_suite_02_half.py",
            "tests/fixtures/02_half/<variant>/02_half.py",
        ],
        "03_bare": [
            "exercises/03_bare.py",
            "grader/suites/test_03_bare.py",
            "tests/suites/test_suite_03_bare.py",
            "tests/fixtures/03_bare/<variant>/03_bare.py",
        ],
    }

    # and once the missing files are there, nothing is missing (public inputs stay optional)
    for path in (
        "grader/suites/test_02_half.py",
        "tests/suites/test_suite_02_half.py",
        "tests/fixtures/02_half/empty/02_half.py",
        "exercises/03_bare.py",
        "grader/suites/test_03_bare.py",
        "tests/suites/test_suite_03_bare.py",
        "tests/fixtures/03_bare/broken/03_bare.py",
    ):
        _write(tmp_path / path)
    assert layout_problems(tmp_path) == {}
