"""Every check cites the spec, and the citations are checked (grader.spec); every rule of
`grade verify` that grades nothing holds for this repository (grader.course.rules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import catalog, spec
from grader.course import rules
from grader.course.layout import Course

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "docs" / "lesson-spec.md"


@pytest.fixture(scope="module")
def lesson() -> spec.LessonSpec:
    return spec.parse(SPEC.read_text(encoding="utf-8"))


def test_every_rule_that_reads_files_holds_for_the_course() -> None:
    """`grade verify`'s rules (grader.course.rules), those that grade nothing, over this
    repository: every check cites words of its lesson's section and has a nudge, every
    lesson has its files, fixtures and test, nothing is left to fill in, ..."""
    course = Course.at(REPO)
    evidence = rules.Evidence(course, catalog.exercises())
    assert {"spec", "nudge", "fixtures", "placeholders"} <= set(rules.BY_NAME)
    assert rules.problems(evidence, graded=False) == []


def test_a_quote_the_spec_does_not_hold_is_named(lesson: spec.LessonSpec) -> None:
    jit = catalog.by_name()["03_jit"]
    made_up = catalog.CheckSpec(
        "test_x", "x", 1, "hint?", "public", 1, spec="`piecewise` is traced at most twice"
    )
    other_lessons = catalog.CheckSpec(
        "test_y", "y", 1, "hint?", "public", 2, spec="survivors are scaled by `1 / (1 - rate)`"
    )
    shared_and_own = catalog.CheckSpec(
        "test_z",
        "z",
        1,
        "hint?",
        "public",
        3,
        spec="purity is checked ... the jaxpr of\n`piecewise` contains `cond`",
    )
    silent = catalog.CheckSpec("test_w", "w", 1, "hint?", "public", 4)
    exercise = catalog.ExerciseSpec(
        "03_jit", "t", jit.suite, (made_up, other_lessons, shared_and_own, silent)
    )
    problems = spec.citation_problems(lesson, [exercise])
    assert len(problems) == 3, problems
    assert "traced at most twice" in problems[0]
    assert "1 / (1 - rate)" in problems[1]  # ex1's words, not 03's
    assert "test_w: cites no sentence" in problems[2]


def test_a_lesson_the_spec_lacks_is_named(lesson: spec.LessonSpec) -> None:
    jit = catalog.by_name()["03_jit"]
    exercise = catalog.ExerciseSpec("12_extra", "t", jit.suite, jit.checks)
    (problem,) = spec.citation_problems(lesson, [exercise])
    assert "no section '### 12_extra.py'" in problem
