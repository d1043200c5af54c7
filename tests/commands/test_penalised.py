"""Help that contradicts the exercise: `grade verify` rejects a hint, nudge,
fix or explanation that recommends what the same lesson file penalises, whether its suite's
`AVOID` says so or one of its checks requires a primitive the construct does not give."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from grader import catalog
from grader.course import penalised, verify

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "grader" / "suites" / "test_03_jit.py"
COND_HINT = (
    'hint="Which jax.lax function takes a predicate and two functions, and runs only one of them?"'
)
AVOID_BLOCK = (
    'AVOID = {\n    "jnp.where": "piecewise must branch with `jax.lax.cond` (its jaxpr contains '
    '`cond`): "\n    "`jnp.where` costs test_piecewise_cond\'s points",\n}\n'
)


def _copy_03_jit(tmp_path: Path, *, hint: str = "", avoid: bool = True) -> catalog.ExerciseSpec:
    """A copy of the real 03_jit suite, its piecewise hint replaced by `hint`, its AVOID
    removed when `avoid` is False."""
    text = SUITE.read_text()
    assert COND_HINT in text and AVOID_BLOCK in text  # the real suite, as these tests assume
    if hint:
        text = text.replace(COND_HINT, f"hint={hint!r}")
    if not avoid:
        text = text.replace(AVOID_BLOCK, "").replace("explain.avoid(AVOID)\n", "")
    folder = tmp_path / "suites"
    folder.mkdir(parents=True)
    copy = folder / SUITE.name
    copy.write_text(text)
    return catalog.read_suite(copy)


def test_the_real_03_jit_suite_contradicts_nothing(tmp_path: Path) -> None:
    spec = _copy_03_jit(tmp_path)
    assert verify.help_problems(spec) == []


def test_a_hint_recommending_jnp_where_in_03_jit_is_rejected(tmp_path: Path) -> None:
    spec = _copy_03_jit(tmp_path, hint="Could jnp.where choose between the two branches?")
    (problem,) = verify.help_problems(spec)
    assert "03_jit > piecewise branches with jax.lax.cond: the hint recommends `jnp.where`" in (
        problem
    )
    assert "costs test_piecewise_cond's points" in problem  # why, from AVOID


def test_without_avoid_the_cond_check_still_rules_jnp_where_out(tmp_path: Path) -> None:
    """The check that requires `cond` penalises `jnp.where` whether or not AVOID says so;
    and without AVOID the explanation of a Python `if` on a tracer offers `jnp.where`."""
    spec = _copy_03_jit(tmp_path, avoid=False)
    problems = verify.help_problems(spec)
    assert len(problems) == 2, problems  # a Python `if`'s and a boolean mask's explanations
    for problem in problems:
        assert "an explanation's fix recommends `jnp.where`" in problem
        assert "test_piecewise_cond requires `cond`" in problem
        assert "name it in the suite's AVOID" in problem
    hinted = _copy_03_jit(tmp_path / "b", hint="Try lax.select or jnp.select.", avoid=False)
    found = " ".join(verify.help_problems(hinted))
    assert "the hint recommends `lax.select`" in found
    assert "the hint recommends `jnp.select`" in found


def test_a_fix_recommending_jnp_cumsum_is_rejected(tmp_path: Path) -> None:
    """running_sum must use `lax.scan` (test_running_sum_scan): a fix offering `jnp.cumsum`
    contradicts it; no AVOID names it."""
    text = SUITE.read_text().replace(
        "carry the total with `jax.lax.scan(step, 0.0, xs)`",
        "take `jnp.cumsum(xs)`, or carry the total with `jax.lax.scan(step, 0.0, xs)`",
    )
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / SUITE.name).write_text(text)
    problems = verify.help_problems(catalog.read_suite(tmp_path / "suites" / SUITE.name))
    assert problems, "the fix offering jnp.cumsum was accepted"
    for problem in problems:  # each check that gives the fix
        assert "a fix recommends `jnp.cumsum`" in problem, problems
        assert "test_running_sum_scan requires `scan`" in problem


@pytest.mark.parametrize(
    "text",
    [
        "branch with `jax.lax.cond` (or `jnp.where` for element-wise choices)",
        "Could jnp.where pick the branch?",
        "use jnp.where(x > 0, x ** 2, -x)",
        "`jax.lax.cond`, but also jnp.where works",
    ],
)
def test_help_that_offers_the_construct_recommends_it(text: str) -> None:
    assert penalised.recommends(text, "jnp.where")


@pytest.mark.parametrize(
    "text",
    [
        "branch with `jax.lax.cond`, not `jnp.where`",
        "Use jax.lax.cond instead of jnp.where.",
        "`jnp.where` computes both branches and picks element-wise",
        "jnp.where would not branch: the exercise asks for a real branch",
        "rather than jnp.where, which evaluates both sides",
        "branch with `jax.lax.cond`; loop with `jax.lax.while_loop`",
    ],
)
def test_help_that_warns_against_the_construct_does_not_recommend_it(text: str) -> None:
    assert not penalised.recommends(text, "jnp.where")


def test_a_warning_against_it_in_03_jit_is_accepted(tmp_path: Path) -> None:
    spec = _copy_03_jit(
        tmp_path,
        hint="Which jax.lax function runs only one branch (not jnp.where, which runs both)?",
    )
    assert verify.help_problems(spec) == []


def test_what_checks_penalise_is_read_from_the_primitives_they_require_or_forbid(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "test_x.py"
    suite.write_text(
        "def test_a(student):\n"
        "    primitives.assert_contains(student.f, (1.0,), ('cond', 'while'), what='f')\n"
        "def test_b(student):\n"
        "    primitives.assert_lacks(student.g, (1.0,), 'select_n', what='g')\n"
        "def helper(student):\n"
        "    primitives.assert_contains(student.h, (1.0,), 'scan', what='h')\n"
    )
    found = penalised.by_checks(suite)
    assert set(found) == {"jnp.where", "jnp.select", "lax.select"}
    assert found["jnp.where"].startswith("test_a requires `cond`")
    assert found["lax.select"].startswith("test_a requires")


@pytest.mark.slow
def test_grade_verify_rejects_the_injected_hint(tmp_path: Path) -> None:
    """End to end: `grade verify --only 03_jit` with a copy of the suite whose hint offers
    `jnp.where` exits 1 naming it."""
    spec = _copy_03_jit(tmp_path, hint="Could jnp.where choose between the two branches?")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "verify",
            "--suites",
            str(spec.suite.parent),
            "--solutions",
            str(ROOT / "solutions"),
            "--exercises",
            str(ROOT / "exercises"),
            "--spec",
            str(ROOT / "docs" / "lesson-spec.md"),
            "--only",
            "03_jit",
            "--runs",
            "1",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "the hint recommends `jnp.where`" in out
    assert "1 violation(s)" in out
