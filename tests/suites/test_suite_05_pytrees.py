"""The 05_pytrees suite graded against the solution, an alternative solution, the stub and
broken submissions (each folder in its own subprocess, two at a time)."""

import pytest
from harness import lesson_files

from grader.catalog import read_suite
from grader.checks.failure import CAUSE_LABEL

LESSON = "05_pytrees"


def test_suite_manifest():
    spec = read_suite(lesson_files(LESSON).suite)
    assert spec.max_score == 16
    assert {c.id for c in spec.checks if c.visibility == "hidden"} == {"test_layer_shapes_nested"}


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_full_marks()


@pytest.mark.slow
def test_alternative_solution_passes_every_check(graded):
    graded("alternative").assert_full_marks()


@pytest.mark.slow
@pytest.mark.parametrize("idiom", ["ravel_pytree", "paths_jitted"])
def test_correct_alternatives_in_other_idioms_pass_every_check(graded, idiom):
    """ravel_pytree: one long vector and its unravel; paths_jitted: a class of static
    operations, jax.tree_util paths, @jax.jit-decorated functions, optax.tree.norm."""
    graded(idiom).assert_full_marks()


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_flattening_loses_the_structure_and_counts_leaves(graded):
    g = graded("flatten")
    g.assert_statuses(
        failed={
            "test_count_params_lesson",
            "test_count_params_nested",
            "test_tree_sgd_lesson",
            "test_tree_sgd_nested",
            "test_tree_sgd_pure",
            "test_tree_sgd_jit",
        }
    )
    for gated in ("test_tree_sgd_pure", "test_tree_sgd_jit"):  # a list is not params' structure
        assert g.results[gated]["blocked_by"] == "test_tree_sgd_lesson"
        assert "values are wrong" in g.message(gated)
    assert "the number of leaves, not the number of scalars" in g.message(
        "test_count_params_lesson"
    )
    assert "the pytree structure of tree_sgd" in g.message("test_tree_sgd_lesson")
    assert "a list was returned where a tuple is expected" in g.message("test_tree_sgd_nested")


@pytest.mark.slow
def test_dict_of_dicts_code_and_in_place_updates(graded):
    g = graded("dict_only")
    g.assert_statuses(
        failed={
            "test_count_params_nested",
            "test_tree_sgd_nested",
            "test_tree_sgd_pure",
            "test_global_norm_values",
            "test_global_norm_jit",
            "test_layer_shapes_nested",
        }
    )  # everything works on the lesson's own dict of dicts
    assert g.results["test_global_norm_jit"]["blocked_by"] == "test_global_norm_values"
    for check in ("test_count_params_nested", "test_tree_sgd_nested", "test_global_norm_values"):
        assert "AttributeError: 'list' object has no attribute" in g.message(check)
    assert "argument `params`['layer1']['w'] was modified in place" in g.message(
        "test_tree_sgd_pure"
    )
    assert "right on a dict of dicts like the lesson's" in g.message("test_layer_shapes_nested")


@pytest.mark.slow
def test_python_floats_do_not_trace_and_list_shapes_are_not_tuples(graded):
    g = graded("python_floats")
    g.assert_statuses(
        failed={"test_global_norm_jit", "test_layer_shapes_lesson", "test_layer_shapes_nested"}
    )
    assert "TracerArrayConversionError" in g.message("test_global_norm_jit")
    assert "math.sqrt" in g.message("test_global_norm_jit")  # the student's line
    assert "'b': [256]" in g.message("test_layer_shapes_lesson")
    assert "not lists or arrays" in g.message("test_layer_shapes_lesson")


@pytest.mark.slow
def test_module_state_is_impure_even_with_right_values(graded):
    g = graded("module_state")
    g.assert_statuses(failed={"test_tree_sgd_pure", "test_global_norm_jit"})
    # The log holds the tracers of earlier jitted calls, and it still grows on every call.
    assert "the global `LR_HISTORY` grew" in g.message("test_tree_sgd_pure")
    norm = g.message("test_global_norm_jit")
    assert "during the first (tracing) call the global `TRACES`" in norm
    assert "runs only while jit traces it" in norm


@pytest.mark.slow
def test_explicit_recursion_over_the_named_containers_passes_every_check(graded):
    """dicts, lists, tuples and namedtuples walked by hand: the spec names no other container
    (a None in the tree, which this code takes for a leaf, is not asked for)."""
    graded("explicit_recursion").assert_full_marks()


def _cause(message):
    lines = [line for line in message.splitlines() if line.strip().startswith(CAUSE_LABEL)]
    return lines[0] if lines else ""


@pytest.mark.slow
def test_leaves_counted_a_step_uphill_and_summed_norms_are_named(graded):
    g = graded("leaves_uphill_norms")
    for check, words in (
        ("test_count_params_nested", "the number of leaves"),
        ("test_tree_sgd_lesson", "params + lr * grads"),
        ("test_tree_sgd_nested", "params + lr * grads"),
        ("test_global_norm_values", "sum of the leaves' own norms"),
    ):
        assert g.results[check]["status"] == "failed", check
        assert words in _cause(g.message(check)), (check, g.message(check))


@pytest.mark.slow
def test_a_norm_of_the_values_not_their_squares_is_named(graded):
    # held-out case h05b: the square root of the plain sum (inputs whose sum is negative
    # cannot tell it, and are passed over); the look-alikes name their own
    g = graded("norm_no_square")
    g.assert_statuses(failed={"test_global_norm_values", "test_global_norm_jit"})
    assert "added, not their squares" in _cause(g.message("test_global_norm_values"))
    for other in ("leaves_uphill_norms", "rms_ndim_swapped"):
        assert "not their squares" not in _cause(
            graded(other).message("test_global_norm_values")
        ), other


@pytest.mark.slow
def test_differences_no_diagnostic_confirms_name_no_cause(graded):
    g = graded("unexplained")
    g.assert_statuses(
        failed={
            "test_tree_sgd_lesson",
            "test_tree_sgd_nested",
            "test_tree_sgd_pure",
            "test_tree_sgd_jit",
            "test_global_norm_values",
            "test_global_norm_jit",
        }
    )
    for check in ("test_tree_sgd_lesson", "test_tree_sgd_nested", "test_global_norm_values"):
        assert CAUSE_LABEL not in g.message(check), g.message(check)


@pytest.mark.slow
def test_sizes_for_shapes_do_not_blame_the_containers(graded):
    # held-out case c14: sizes given for shapes are named; the containers, rebuilt right, are not
    # blamed
    g = graded("shapes_are_sizes")
    g.assert_statuses(failed={"test_layer_shapes_lesson", "test_layer_shapes_nested"})
    for check in ("test_layer_shapes_lesson", "test_layer_shapes_nested"):
        assert "containers" not in g.message(check)
        assert "lists or arrays" not in g.message(check)
        assert "its size" in g.cause(check)


@pytest.mark.slow
def test_sizes_never_summed_are_named_as_a_list_of_sizes(graded):
    g = graded("sizes_not_summed")
    g.assert_statuses(failed={"test_count_params_lesson", "test_count_params_nested"})
    lesson = g.message("test_count_params_lesson")
    assert "raised" not in lesson, lesson  # the check says what came back, not its own error
    assert "a list of 6 items: [256, 200704, 128, 32768, 10, 1280]" in lesson, lesson
    assert "one count per leaf, not their total" in g.cause("test_count_params_lesson")


@pytest.mark.slow
def test_dimensions_counted_trees_swapped_and_a_mean_of_squares_are_named(graded):
    g = graded("rms_ndim_swapped")
    g.assert_statuses(
        failed={
            "test_count_params_lesson",
            "test_count_params_nested",
            "test_tree_sgd_lesson",
            "test_tree_sgd_nested",
            "test_tree_sgd_pure",
            "test_tree_sgd_jit",
            "test_global_norm_values",
            "test_global_norm_jit",
        }
    )
    for check, words in (
        ("test_count_params_lesson", "numbers of dimensions"),
        ("test_count_params_nested", "numbers of dimensions"),
        ("test_tree_sgd_lesson", "grads - lr * params"),
        ("test_tree_sgd_nested", "grads - lr * params"),
        ("test_global_norm_values", "MEANS of squares"),
    ):
        assert words in g.cause(check), (check, g.message(check))


@pytest.mark.slow
def test_a_norm_divided_by_the_leaves_is_not_called_a_mean(graded):
    g = graded("norm_per_leaf_count")
    g.assert_statuses(failed={"test_global_norm_values", "test_global_norm_jit"})
    assert "MEANS" not in g.message("test_global_norm_values")


@pytest.mark.slow
def test_first_axis_lengths_counted_are_named(graded):
    # len(leaf) for leaf.size: 1562 for the lesson MLP, the same mistake on the small MLP; the
    # other count_params mistakes (dimensions, leaves) name their own
    g = graded("count_len")
    g.assert_fails("test_count_params_lesson", "1562", cause="first-axis lengths (`len(leaf)`)")
    for other in ("rms_ndim_swapped", "leaves_uphill_norms"):
        for check in ("test_count_params_lesson", "test_count_params_nested"):
            assert "first-axis" not in graded(other).cause(check), (other, check)


@pytest.mark.slow
def test_a_reduce_without_a_start_is_named(graded):
    # held-out case h05b: functools.reduce(f, leaves) with no 0.0 to start from
    g = graded("reduce_without_start")
    g.assert_fails("test_global_norm_values", cause="the first leaf enters as it is")
    for other in ("norm_no_square", "norm_per_leaf_count"):
        cause = graded(other).cause("test_global_norm_values")
        assert "first leaf enters" not in cause, (other, cause)


@pytest.mark.slow
def test_shape_sizes_added_are_named_in_both_count_checks(graded):
    # sum(np.shape(leaf)) where the product belongs is _ref_count with its np.prod a sum, on
    # the lesson's MLP and a 6-5-4 one (the lesson check holds the reference for the mutants
    # too) and on the search's trees; len(leaf) is named as what it is, not as that edit
    g = graded("count_sums_shapes")
    for check in ("test_count_params_lesson", "test_count_params_nested"):
        g.assert_fails(check, cause="a sum in place of its product")
    graded("count_first_dims").assert_fails(
        "test_count_params_lesson",
        cause="first-axis lengths",
        not_cause=("a sum in place of its product",),
    )
