"""The 10_checkpoint suite graded against the solution, the stub, an alternative solution
and broken submissions, each in its own subprocess."""

import pytest
from lesson_grading import FIXTURES, REPO, grade

pytestmark = pytest.mark.slow

LESSON = "10_checkpoint"
_CACHE = {}


@pytest.fixture(scope="module")
def graded():
    def run(name):
        if name not in _CACHE:
            folder = {"solution": REPO / "solutions", "stub": REPO / "exercises"}.get(
                name, FIXTURES / LESSON / name
            )
            _CACHE[name] = grade(folder, LESSON)
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


def test_plain_pickle_round_trips_but_fails_quietly_or_wrongly(graded):
    g = graded("pickle_plain")
    g.assert_statuses(failed={"test_corrupt_file", "test_structure_mismatch"})
    corrupt = g.message("test_corrupt_file")
    assert "raised UnpicklingError" in corrupt and "raised EOFError" in corrupt
    assert "returned without an error" in g.message("test_structure_mismatch")


def test_pickled_plain_containers_lose_namedtuples(graded):
    g = graded("pickle_dicts")
    g.assert_statuses(failed={"test_opt_state_round_trip", "test_structure_mismatch"})
    message = g.message("test_opt_state_round_trip")
    assert "namedtuples (ScaleByAdamState, EmptyState, ...) came back as plain" in message
    assert "jax.tree.unflatten(jax.tree.structure(like), leaves)" in message


def test_naive_npz(graded):
    g = graded("naive_npz")
    g.assert_statuses(
        failed={
            "test_dtypes_survive",
            "test_corrupt_file",
            "test_structure_mismatch",
            "test_exact_path",
        }
    )
    assert "no name for bfloat16" in g.message("test_dtypes_survive")
    assert "np.savez adds '.npz'" in g.message("test_exact_path")
    assert "raised KeyError" in g.message("test_structure_mismatch")
    assert "random bytes: raised FileNotFoundError" in g.message("test_corrupt_file")
