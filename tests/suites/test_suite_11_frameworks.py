"""The 11_frameworks suite graded against the solution, the stub, an alternative solution,
broken submissions, and a machine without the frameworks extra."""

import os

import pytest
from lesson_grading import FIXTURES, REPO, grade

pytestmark = pytest.mark.slow

LESSON = "11_frameworks"
_CACHE = {}


@pytest.fixture(scope="module")
def graded():
    def run(name):
        if name not in _CACHE:
            folder = {"solution": REPO / "solutions", "stub": REPO / "exercises"}.get(
                name, FIXTURES / LESSON / name
            )
            env = None
            if name == "without_extras":  # fake flax/equinox packages whose import fails
                env = {"PYTHONPATH": os.pathsep.join([str(folder / "site"), str(REPO)])}
            _CACHE[name] = grade(folder, LESSON, extra_env=env)
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


def test_wrong_widths_and_depth(graded):
    g = graded("wrong_sizes")
    g.assert_statuses(failed={"test_flax_param_count", "test_equinox_param_count"})
    assert "136,074" in g.message("test_flax_param_count")
    assert "depth counts the HIDDEN layers" in g.message("test_equinox_param_count")
    assert "335,114" in g.message("test_equinox_param_count")


def test_relu_placement_and_ignored_key(graded):
    g = graded("relu_mistakes")
    g.assert_statuses(failed={"test_flax_relu", "test_equinox_relu", "test_equinox_keys"})
    assert "no relu between the layers" in g.message("test_flax_relu")
    assert "a relu follows the last layer too" in g.message("test_equinox_relu")
    assert "the key argument is ignored" in g.message("test_equinox_keys")


def test_skipped_with_install_hint_without_the_extra(graded):
    g = graded("without_extras")
    assert g.results == {}
    skipped = [r for r in g.records if r["type"] == "skipped"]
    assert skipped, g.output[-2000:]
    assert skipped[0]["message"] == "install the extra: pip install '.[frameworks]'"
