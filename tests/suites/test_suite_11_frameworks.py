"""The 11_frameworks suite graded against the solution, the stub, an alternative solution,
broken submissions, and a machine without the frameworks extra."""

import os

import pytest
from harness import REPO, lesson_files

from grader.catalog import read_suite

LESSON = "11_frameworks"
ALTERNATIVES = ("alternative", "sequential_custom_module", "named_layers_eqx_sequential")
MAX_SCORE = 16
HIDDEN = {"test_equinox_keys"}
# fake flax/equinox packages whose import fails: a machine without the extra
_SITE = lesson_files(LESSON).fixtures / "without_extras" / "site"
EXTRA_ENV = {"without_extras": {"PYTHONPATH": os.pathsep.join([str(_SITE), str(REPO)])}}


def test_suite_manifest():
    spec = read_suite(lesson_files(LESSON).suite)
    assert spec.max_score == MAX_SCORE
    assert {c.id for c in spec.checks if c.visibility == "hidden"} == HIDDEN
    assert spec.requires == ("flax", "equinox")


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_full_marks()


@pytest.mark.slow
@pytest.mark.parametrize("name", ALTERNATIVES)
def test_alternative_solutions_score_full_marks(graded, name):
    # setup() with a features field and functools.partial(eqx.nn.MLP); nn.Sequential and a
    # hand-written eqx.Module of three Linear layers; named setup() layers with He init and
    # jnp.maximum, and an eqx.nn.Sequential of Linear and Lambda(relu)
    g = graded(name)
    g.assert_full_marks()


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_wrong_widths_and_depth(graded):
    g = graded("wrong_sizes")
    g.assert_statuses(
        failed={"test_flax_param_count", "test_equinox_param_count", "test_equinox_keys"}
    )
    # the Equinox key check stands on the model being the right one
    assert g.results["test_equinox_keys"]["blocked_by"] == "test_equinox_param_count"
    assert "136,074" in g.message("test_flax_param_count")
    assert "depth counts the HIDDEN layers" in g.message("test_equinox_param_count")
    assert "335,114" in g.message("test_equinox_param_count")


@pytest.mark.slow
def test_relu_placement_and_ignored_key(graded):
    g = graded("relu_mistakes")
    g.assert_statuses(
        failed={
            "test_flax_relu",
            "test_flax_keys_and_jit",
            "test_equinox_relu",
            "test_equinox_keys",
        }
    )
    assert "no relu between the layers" in g.message("test_flax_relu")
    # the Flax model's jit and key checks stand on its values
    assert g.results["test_flax_keys_and_jit"]["blocked_by"] == "test_flax_relu"
    assert "a relu follows the last layer too" in g.message("test_equinox_relu")
    assert "the result does not change with the key" in g.message("test_equinox_keys")


@pytest.mark.slow
def test_skipped_with_install_hint_without_the_extra(graded):
    g = graded("without_extras")
    assert g.results == {}
    skipped = [r for r in g.records if r["type"] == "skipped"]
    assert skipped, g.output[-2000:]
    assert skipped[0]["message"] == "install the extra: pip install '.[frameworks]'"


@pytest.mark.slow
def test_print_at_trace_time_and_softmax_on_the_logits(graded):
    g = graded("print_and_softmax")
    g.assert_statuses(failed={"test_flax_keys_and_jit", "test_equinox_relu"})
    flax_message = g.message("test_flax_keys_and_jit")
    assert "side effects of FlaxMLP().apply(variables, x) under jax.jit" in flax_message
    assert "a Python `print` runs only while jit traces the function" in flax_message
    assert "returns probabilities (a softmax after the last layer), not logits" in g.message(
        "test_equinox_relu"
    )


@pytest.mark.slow
def test_dense_layers_without_bias(graded):
    # held-out case c27: Dense layers without a bias are named, not the widths; the relu check
    # fails with a message
    g = graded("flax_no_bias")
    g.assert_statuses(failed={"test_flax_param_count", "test_flax_relu", "test_flax_keys_and_jit"})
    count = g.message("test_flax_param_count")
    assert "width" not in g.cause("test_flax_param_count")
    assert "too many" not in count
    assert "Dense layers 1, 2, 3 of 3 without a bias" in g.cause("test_flax_param_count")
    relu = g.message("test_flax_relu")
    assert "KeyError" not in relu
    assert "no bias in Dense layers 1, 2, 3 of 3" in relu
    assert g.results["test_flax_keys_and_jit"]["blocked_by"] == "test_flax_relu"


@pytest.mark.slow
def test_wrong_widths_are_named_from_the_layers(graded):
    g = graded("wrong_sizes")
    assert "784 -> 128 -> 256 -> 10" in g.cause("test_flax_param_count")


@pytest.mark.slow
def test_a_function_returned_for_the_model_is_named_not_counted(graded):
    # jax.vmap(eqx.nn.MLP(...)): a function of batches, no module; a layer count ("0 Linear
    # layers ... depth") would send the student to depth. A lambda of one example: a function,
    # not said to be a batch wrapper
    vmapped = graded("eqx_vmapped")
    for check_id in ("test_equinox_output_shape", "test_equinox_param_count"):
        vmapped.assert_fails(check_id, "an equinox Module", cause="the model wrapped for batches")
        assert "depth" not in vmapped.cause(check_id)
    lam = graded("eqx_lambda")
    lam.assert_fails("test_equinox_param_count", "an equinox Module", cause="returns a function")
    assert "batches" not in lam.cause("test_equinox_param_count")
