"""`grade verify`: solutions 100% and stable, stubs 0, hints, points, sync."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import FIXTURES

from grader import catalog
from grader.course import verify

Grade = Callable[..., tuple[int, str]]


def args(course: Path, *extra: str) -> list[str]:
    return [
        "verify",
        "--course",
        str(course),
        "--solutions",
        str(course / "solutions"),
        "--exercises",
        str(course / "exercises"),
        "--suites",
        str(course / "suites"),
        "--spec",
        str(course / "lesson-spec.md"),
        "--timeout",
        "60",
        *extra,
    ]


def test_first_difference_names_the_path() -> None:
    a = {"exercises": [{"checks": [{"status": "passed", "message": ""}]}], "score": 1}
    b = {"exercises": [{"checks": [{"status": "failed", "message": ""}]}], "score": 1}
    assert verify.first_difference(a, b) == "exercises[0].checks[0].status"
    assert verify.first_difference(a, a) is None
    assert verify.first_difference([1], [1, 2]) == " (length 1 vs 2)"
    assert verify.first_difference({"a": 1}, {"b": 1}) == "a"


def test_stability_ignores_timings_but_not_results() -> None:
    doc = {"duration_s": 1.0, "exercises": [{"duration_s": 2.0, "metrics": {"t": 1.0}, "score": 3}]}
    same = {
        "duration_s": 9.0,
        "exercises": [{"duration_s": 7.0, "metrics": {"t": 5.0}, "score": 3}],
    }
    other = {"duration_s": 1.0, "exercises": [{"duration_s": 2.0, "metrics": {}, "score": 2}]}
    assert verify.stability_problems([doc, same]) == []
    chart = {
        "exercises": [{"artifacts": [{"title": "timing", "media_type": "image/png", "bytes": 900}]}]
    }
    redrawn = {
        "exercises": [{"artifacts": [{"title": "timing", "media_type": "image/png", "bytes": 912}]}]
    }
    assert verify.stability_problems([chart, redrawn]) == []
    assert verify.stability_problems([doc, same, other]) == [
        "the solutions' results differ between run 1 and run 3 at exercises[0].score (something "
        "depends on time, order or an unseeded random source)"
    ]


def test_static_problems_find_missing_files_and_unsynced_stubs(course: Path) -> None:
    specs = list(catalog.exercises(course / "suites"))
    spec = course / "lesson-spec.md"
    assert (
        verify.static_problems(specs, course / "solutions", course / "exercises", spec=spec) == []
    )
    (course / "exercises" / "02_words.py").unlink()
    (course / "solutions" / "03_extra.py").write_text('def f():\n    """F."""\n')
    problems = verify.static_problems(specs, course / "solutions", course / "exercises", spec=spec)
    assert any("02_words" in p and "is missing" in p for p in problems)
    assert any("03_extra.py: no suite grades this lesson file" in p for p in problems)


def test_with_only_the_other_lesson_files_are_not_looked_at(course: Path) -> None:
    words = [s for s in catalog.exercises(course / "suites") if s.name == "02_words"]
    (course / "solutions" / "03_extra.py").write_text('def f():\n    """F."""\n')
    (course / "exercises" / "01_sums.py").write_text("# edited, out of sync\n")
    spec = course / "lesson-spec.md"
    assert (
        verify.static_problems(
            words, course / "solutions", course / "exercises", selected=True, spec=spec
        )
        == []
    )
    (course / "exercises" / "02_words.py").write_text("# edited, out of sync\n")
    problems = verify.static_problems(
        words, course / "solutions", course / "exercises", selected=True, spec=spec
    )
    assert len(problems) == 1 and "02_words.py differs from the stub" in problems[0]


def test_a_check_without_a_hint_is_reported(course: Path, grade: Grade) -> None:
    suite = course / "suites" / "test_02_words.py"
    suite.write_text(suite.read_text().replace('hint="Which str method upper-cases?"', 'hint=" "'))
    code, out = grade(*args(course))
    assert code == 2 and "every check needs a hint" in out


@pytest.mark.slow
def test_the_fixture_course_verifies(grade: Grade) -> None:
    code, out = grade(*args(FIXTURES, "--runs", "2"))
    assert code == 0, out
    assert "grade verify: OK. 2 lesson file(s), 5 check(s)" in out


@pytest.mark.slow
def test_violations_are_listed(course: Path, grade: Grade) -> None:
    solution = course / "solutions" / "01_sums.py"
    solution.write_text(
        solution.read_text().replace("    acc = 0\n", "    acc = 0 if xs else None\n")
    )
    stub = course / "exercises" / "02_words.py"
    stub.write_text(
        stub.read_text().replace(
            'raise NotImplementedError("shout is not implemented yet")', 'return word.upper() + "!"'
        )
    )
    code, out = grade(*args(course, "--runs", "1"))
    assert code == 1, out
    assert "solutions/01_sums.py scores 5/9 (failed), not 100%" in out
    assert "01_sums > total of the empty list is zero: failed" in out
    assert "exercises/02_words.py: an untouched stub must import cleanly and score 0" in out
    assert "02_words > shout upper-cases and exclaims: earns 2/2 on the untouched stub" in out
    assert "02_words.py differs from the stub" in out
    assert "01_sums.py differs" not in out  # a solution body is not part of the stub


def test_citations_are_checked_against_the_courses_spec(course: Path) -> None:
    specs = list(catalog.exercises(course / "suites"))
    spec = course / "lesson-spec.md"
    assert verify.spec_problems(specs, spec) == []
    spec.write_text(spec.read_text().replace("0 for an empty list", "an empty list gives 0"))
    (problem,) = verify.spec_problems(specs, spec)
    assert "test_total_empty_secret: cites words not in the spec" in problem
    assert "'0 for an empty list'" in problem
    (missing,) = verify.spec_problems(specs, course / "nowhere.md")
    assert "the lesson spec cannot be read" in missing and "--spec FILE" in missing


def test_list_checks_shows_each_checks_spec_words(course: Path, grade: Grade) -> None:
    code, out = grade("verify", "--list-checks", "--suites", str(course / "suites"))
    assert code == 0, out
    assert "test_add (2): add adds two numbers" in out
    assert "spec: `add(a, b)` -> `a + b`" in out


def test_help_that_recommends_what_the_file_penalises_is_reported(course: Path) -> None:
    """Issue 35: `grade hint 03_jit` recommended `jnp.where`, which costs test_piecewise_cond's
    points in the same file. A suite names what its checks penalise (`AVOID`); a hint, a
    nudge, a fix of the suite or a JAX explanation that recommends it is a problem."""
    suite = course / "suites" / "test_01_sums.py"
    text = suite.read_text()
    avoid = 'AVOID = {"math.fsum": "total must add with +"}\n'
    suite.write_text(text.replace("TIMEOUT = 60\n", "TIMEOUT = 60\n" + avoid))
    spec = catalog.read_suite(suite)
    assert spec.avoid == (("math.fsum", "total must add with +"),)
    assert verify.help_problems(spec) == []  # nothing recommends it yet
    suite.write_text(
        text.replace("TIMEOUT = 60\n", "TIMEOUT = 60\n" + avoid).replace(
            'nudge="Python has an operator for it."', 'nudge="Try math.fsum."'
        )
    )
    problems = verify.help_problems(catalog.read_suite(suite))
    assert (
        len(problems) == 1
        and "add adds two numbers: the nudge recommends `math.fsum`" in (problems[0])
    ), problems


def test_no_help_of_03_jit_recommends_jnp_where() -> None:
    spec = next(s for s in catalog.exercises() if s.name == "03_jit")
    assert ("jnp.where" in dict(spec.avoid)) and verify.help_problems(spec) == []
    # the explanation of a Python `if` on a tracer, as 03_jit shows it and as others do
    from grader import explain

    in_03 = explain.EXPLANATIONS["TracerBoolConversionError"].for_lesson({"jnp.where"})
    assert "jax.lax.cond" in in_03.fix and "jnp.where" not in in_03.fix
    elsewhere = explain.EXPLANATIONS["TracerBoolConversionError"].for_lesson(set())
    assert "jnp.where" in elsewhere.fix
