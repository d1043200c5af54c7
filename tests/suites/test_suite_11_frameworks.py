"""The 11_frameworks suite graded against the solution, the stub, an alternative solution,
broken submissions, and a machine without the frameworks extra."""

import os
from concurrent.futures import ThreadPoolExecutor

import pytest
from lesson_grading import REPO, grade
from parallel_grading import folder

from grader.catalog import read_suite
from grader.commands.assign import stub_source

LESSON = "11_frameworks"
VARIANTS = ("solution", "alternative", "stub", "wrong_sizes", "relu_mistakes", "without_extras")
MAX_SCORE = 16
HIDDEN = {"test_equinox_keys"}


def _env(name):
    if name != "without_extras":
        return None
    site = folder(LESSON, name) / "site"  # fake flax/equinox packages whose import fails
    return {"PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}


@pytest.fixture(scope="module")
def graded():
    with ThreadPoolExecutor(max_workers=2) as pool:  # two cores: two gradings at a time
        futures = {
            name: pool.submit(grade, folder(LESSON, name), LESSON, extra_env=_env(name))
            for name in VARIANTS
        }
        yield lambda name: futures[name].result()


def test_stub_is_the_solution_with_its_bodies_removed():
    solution = (REPO / "solutions" / f"{LESSON}.py").read_text()
    assert stub_source(solution, LESSON) == (REPO / "exercises" / f"{LESSON}.py").read_text()


def test_suite_manifest():
    spec = read_suite(REPO / "grader" / "suites" / f"test_{LESSON}.py")
    assert spec.max_score == MAX_SCORE
    assert {c.id for c in spec.checks if c.visibility == "hidden"} == HIDDEN
    assert spec.requires == ("flax", "equinox")


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_statuses()


@pytest.mark.slow
def test_alternative_solution_passes(graded):
    graded("alternative").assert_statuses()


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_wrong_widths_and_depth(graded):
    g = graded("wrong_sizes")
    g.assert_statuses(failed={"test_flax_param_count", "test_equinox_param_count"})
    assert "136,074" in g.message("test_flax_param_count")
    assert "depth counts the HIDDEN layers" in g.message("test_equinox_param_count")
    assert "335,114" in g.message("test_equinox_param_count")


@pytest.mark.slow
def test_relu_placement_and_ignored_key(graded):
    g = graded("relu_mistakes")
    g.assert_statuses(failed={"test_flax_relu", "test_equinox_relu", "test_equinox_keys"})
    assert "no relu between the layers" in g.message("test_flax_relu")
    assert "a relu follows the last layer too" in g.message("test_equinox_relu")
    assert "the key argument is ignored" in g.message("test_equinox_keys")


@pytest.mark.slow
def test_skipped_with_install_hint_without_the_extra(graded):
    g = graded("without_extras")
    assert g.results == {}
    skipped = [r for r in g.records if r["type"] == "skipped"]
    assert skipped, g.output[-2000:]
    assert skipped[0]["message"] == "install the extra: pip install '.[frameworks]'"
