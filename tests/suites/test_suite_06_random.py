"""The 06_random suite graded against the solution, an alternative solution, the stub and
broken submissions (each folder in its own subprocess, two at a time)."""

from pathlib import Path

import pytest
from parallel_grading import Gradings

from grader.catalog import read_suite
from grader.commands.assign import stub_source

LESSON = "06_random"
REPO = Path(__file__).resolve().parents[2]
VARIANTS = ("solution", "alternative", "stub", "same_key", "global_rng", "scalar_noise", "box_muller")


@pytest.fixture(scope="module")
def graded():
    gradings = Gradings(LESSON, VARIANTS)
    yield gradings
    gradings.close()


def test_stub_is_the_solution_with_its_bodies_removed():
    solution = (REPO / "solutions" / f"{LESSON}.py").read_text()
    assert stub_source(solution, LESSON) == (REPO / "exercises" / f"{LESSON}.py").read_text()


def test_suite_manifest():
    spec = read_suite(REPO / "grader" / "suites" / f"test_{LESSON}.py")
    assert spec.max_score == 16
    hidden = {c.id for c in spec.checks if c.visibility == "hidden"}
    assert hidden == {"test_split_into_independent", "test_noisy_elementwise"}


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_statuses()


@pytest.mark.slow
def test_alternative_solution_passes_every_check(graded):
    graded("alternative").assert_statuses()  # fold_in keys in a list, a split chain


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_one_key_for_every_array_and_variance_scaled_noise(graded):
    g = graded("same_key")
    g.assert_statuses(failed={"test_init_weights_own_keys", "test_noisy_statistics"})
    message = g.message("test_init_weights_own_keys")
    assert "key-reuse checker" in message
    assert "return [jax.random.normal(key, shape) for shape in shapes]" in message
    assert "scaled by sigma**2 (the variance)" in g.message("test_noisy_statistics")


@pytest.mark.slow
def test_global_numpy_rng_and_the_parent_key_handed_out(graded):
    g = graded("global_rng")
    g.assert_statuses(
        failed={
            "test_split_into_distinct",
            "test_split_into_independent",
            "test_noisy_elementwise",
            "test_deterministic",
            "test_no_global_rng",
            "test_jit",
        }
    )
    assert "is the key itself" in g.message("test_split_into_distinct")
    assert "key-reuse checker" in g.message("test_split_into_independent")
    assert "global RNG" in g.message("test_noisy_elementwise")
    for check in ("test_deterministic", "test_no_global_rng", "test_jit"):
        r = g.results[check]
        assert r["fraction"] == pytest.approx(1 / 3), check  # split_into is fine there
    assert "np.random" in g.message("test_deterministic")
    assert "NumPy's global RNG (`np.random`) was drawn from" in g.message("test_no_global_rng")


@pytest.mark.slow
def test_one_scalar_of_noise_for_every_element(graded):
    g = graded("scalar_noise")
    g.assert_statuses(failed={"test_noisy_statistics", "test_noisy_elementwise"})
    assert "a scalar draw" in g.message("test_noisy_statistics")
    assert "the same random number was added to every element" in g.message(
        "test_noisy_elementwise"
    )


@pytest.mark.slow
def test_hand_made_normal_noise_reusing_its_key(graded):
    g = graded("box_muller")
    g.assert_statuses(failed={"test_noisy_key_once", "test_noisy_statistics"})
    message = g.message("test_noisy_key_once")
    assert "key-reuse checker saw one key consumed twice" in message
    assert "u2 = jax.random.uniform(key, x.shape)" in message  # the second use, in the student's file
