"""The 07_pmap suite graded against the solution, the stub, an alternative solution and
broken submissions, each in its own subprocess with 8 simulated devices."""

import pytest
from lesson_grading import FIXTURES, REPO, grade

pytestmark = pytest.mark.slow

LESSON = "07_pmap"
_CACHE = {}


@pytest.fixture(scope="module")
def graded():
    def run(name):
        if name not in _CACHE:
            folder = {"solution": REPO / "solutions", "stub": REPO / "exercises"}.get(
                name, FIXTURES / LESSON / name
            )
            _CACHE[name] = grade(folder, LESSON, devices=8)
        return _CACHE[name]

    return run


def test_solution_passes_every_check(graded):
    graded("solution").assert_statuses()


def test_alternative_solution_passes(graded):
    graded("alternative").assert_statuses()


def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


def test_without_pmean_each_device_keeps_its_own_gradient(graded):
    g = graded("no_pmean")
    g.assert_statuses(
        failed={
            "test_full_batch_mean",
            "test_cross_device_reduction",
            "test_other_loss_and_devices",
        }
    )
    assert "gradient of its OWN shard" in g.message("test_full_batch_mean")
    assert "no `jax.lax.pmean`" in g.message("test_full_batch_mean")
    assert "contains `psum`" in g.message("test_cross_device_reduction")


def test_psum_instead_of_pmean_is_n_times_too_large(graded):
    g = graded("psum")
    g.assert_statuses(failed={"test_full_batch_mean", "test_other_loss_and_devices"})
    assert "8 times the mean gradient" in g.message("test_full_batch_mean")
    assert "4 times the mean gradient" in g.message("test_other_loss_and_devices")


def test_vmap_on_one_device_and_round_robin_shard(graded):
    g = graded("vmap_mean")
    g.assert_statuses(
        failed={"test_shard_layout", "test_cross_device_reduction", "test_result_spans_devices"}
    )
    assert "round-robin" in g.message("test_shard_layout")
    assert "on 1 device(s)" in g.message("test_result_spans_devices")
    assert "jax.vmap" in g.message("test_result_spans_devices")
