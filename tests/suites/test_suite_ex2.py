"""The ex2_per_example_grads suite graded against the solution, the stub, an alternative
solution and broken submissions, each in its own subprocess (as the runner grades)."""

import pytest
from lesson_grading import FIXTURES, REPO, grade

pytestmark = pytest.mark.slow

LESSON = "ex2_per_example_grads"
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
    # a closure over params, vmap(optax.tree.norm), jax.lax.top_k
    graded("alternative").assert_statuses()


def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


def test_a_python_loop_of_grad_has_the_values_but_is_not_vmap(graded):
    g = graded("python_loop")
    g.assert_statuses(failed={"test_no_growth"})
    message = g.message("test_no_growth")
    assert "at n=4" in message and "at n=32" in message
    assert (
        "a loop is not vmap" in message
        and "jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))" in message
    )


def test_sum_of_leaf_norms_and_ascending_top_k(graded):
    g = graded("sloppy_norms")
    g.assert_statuses(failed={"test_norms", "test_largest_order"})
    assert "not the global norm" in g.message("test_norms")
    order = g.message("test_largest_order")
    assert (
        "the right examples in the wrong order" in order and "largest norm must come first" in order
    )
