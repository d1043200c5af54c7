"""The 01_arrays suite graded against the solution, an alternative solution, the stub and
broken submissions (each folder in its own subprocess, two at a time)."""

import pytest
from harness import lesson_files

from grader.catalog import read_suite

LESSON = "01_arrays"


def test_suite_manifest():
    spec = read_suite(lesson_files(LESSON).suite)
    assert spec.max_score == 18
    assert {c.id for c in spec.checks if c.visibility == "hidden"} == {
        "test_standardize_other_axes"
    }


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_full_marks()


@pytest.mark.slow
def test_alternative_solution_passes_every_check(graded):
    graded("alternative").assert_full_marks()


@pytest.mark.slow
@pytest.mark.parametrize(
    "variant",
    [
        # methods of a class, lax.dynamic_update_slice, a one-hot product, two-pass variance
        "class_lax_onehot",
        # jnp.put(inplace=False), a lax.fori_loop of single adds, moveaxis then axis 0
        "put_fori_moveaxis",
    ],
)
def test_other_idioms_pass_every_check(graded, variant):
    graded(variant).assert_full_marks()


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_at_on_numpy_overwriting_add_at_and_standardize_without_epsilon(graded):
    g = graded("overwrite")
    g.assert_statuses(
        failed={
            "test_set_element_pure",
            "test_add_at_values",
            "test_add_at_duplicates",
            "test_standardize_values",
            "test_standardize_constant_column",
            # properties of functions with wrong values: gated, not run
            "test_add_at_pure",
            "test_add_at_jit",
            "test_standardize_pure",
            "test_standardize_jit",
        }
    )
    for check, required in (
        ("test_add_at_pure", "test_add_at_values"),
        ("test_add_at_jit", "test_add_at_values"),
        ("test_standardize_pure", "test_standardize_values"),
        ("test_standardize_jit", "test_standardize_values"),
    ):
        assert g.results[check]["blocked_by"] == required
        assert "values are wrong" in g.message(check)
    assert "NumPy arrays have no `.at` property" in g.message("test_set_element_pure")
    assert "jnp.asarray(x).at[...]" in g.message("test_set_element_pure")
    assert "add_at(" in g.message("test_add_at_values")
    assert "the smallest input that differs" in g.message("test_add_at_values")
    assert "repeated indices overwrite each other" in g.message("test_add_at_duplicates")
    assert "[2., 0., 6., 0.]" in g.message("test_add_at_duplicates")
    assert "NaN" in g.message("test_standardize_values")
    assert "0 / 0 = NaN" in g.message("test_standardize_constant_column")


@pytest.mark.slow
def test_numpy_in_place_fast_path_and_missing_keepdims(graded):
    g = graded("numpy_habits")
    g.assert_statuses(
        failed={
            "test_set_element_pure",
            "test_add_at_pure",
            "test_standardize_other_axes",
            "test_standardize_jit",
        }
    )
    assert "argument `x` was modified in place" in g.message("test_set_element_pure")
    assert "argument `x` was modified in place" in g.message("test_add_at_pure")
    assert "keepdims=True" in g.message("test_standardize_other_axes")
    # the student's exception by its own name (not the judge's StudentValueError)
    assert "observed: ValueError: Incompatible shapes" in g.message("test_standardize_other_axes")
    assert "Incompatible shapes for broadcasting" in g.message("test_standardize_jit")


@pytest.mark.slow
def test_numpy_copies_do_not_trace(graded):
    g = graded("numpy_copies")
    g.assert_statuses(failed={"test_set_element_jit", "test_add_at_jit"})
    for check in ("test_set_element_jit", "test_add_at_jit"):
        message = g.message(check)
        assert "TracerArrayConversionError" in message
        assert "out = np.array(x)" in message  # the student's own line
        assert "jax.numpy" in message


@pytest.mark.slow
def test_trace_time_prints_and_a_leaked_tracer(graded):
    g = graded("trace_time_prints")
    g.assert_statuses(failed={"test_set_element_pure", "test_add_at_pure", "test_standardize_pure"})
    assert "first (tracing) call printed 'setting index" in g.message("test_set_element_pure")
    assert "jax.debug.print" in g.message("test_set_element_pure")
    assert "a traced value was stored outside the function" in g.message("test_add_at_pure")
    assert "printed 'standardizing an array of shape" in g.message("test_standardize_pure")


@pytest.mark.slow
def test_an_epsilon_under_the_square_root(graded):
    g = graded("epsilon_inside_sqrt")
    g.assert_statuses(failed={"test_standardize_constant_column"})
    message = g.message("test_standardize_constant_column")
    assert "spread 1e-7" in message and "-0.8333333" in message
    assert "inside a square root" in message


@pytest.mark.slow
def test_indices_used_as_given_pass_every_check(graded):
    """The spec's arguments are arrays: add_at indexing with `indices` as given is correct
    (a Python list would not index, but the spec never passes one)."""
    graded("list_indices").assert_full_marks()


@pytest.mark.slow
def test_a_default_axis_of_minus_one_is_named_as_the_default(graded):
    """standardize(x, axis=-1): the values check passes no axis, and standardize(x, axis=0)
    is right, so the cause is the default, not 'the axis it was given'."""
    g = graded("default_axis_last")
    g.assert_statuses(
        failed={
            "test_standardize_values",
            "test_standardize_constant_column",
            "test_standardize_pure",
            "test_standardize_jit",
        }
    )
    for check in ("test_standardize_values", "test_standardize_constant_column"):
        message = g.message(check)
        assert "the default axis is not 0" in message
        assert "it was given" not in message


@pytest.mark.slow
def test_an_ignored_axis_is_not_blamed_on_the_default(graded):
    """standardize always along axis 1: standardize(x, axis=0) is wrong too, so the default
    is not blamed; the values are those along axis 1."""
    g = graded("axis_ignored")
    for check in ("test_standardize_values", "test_standardize_constant_column"):
        message = g.message(check)
        assert "default axis" not in message
        assert "the values are those along axis 1" in message
    assert "it was given" not in g.message("test_standardize_values")


@pytest.mark.slow
def test_another_epsilon_is_not_said_to_be_under_a_square_root(graded):
    g = graded("epsilon_doubled")
    g.assert_statuses(failed={"test_standardize_constant_column"})
    message = g.message("test_standardize_constant_column")
    assert "-0.714286" in message
    assert "square root" not in message
    # confirmed: (x - mean) / (std + e), e fitted on the 4 rows, gives the 6 rows' values
    assert "the epsilon added to the std is 2e-08" in g.cause("test_standardize_constant_column")


@pytest.mark.slow
def test_a_mean_of_the_whole_array_is_not_blamed_on_the_epsilon(graded):
    """standardize subtracting jnp.mean(x) (no axis) with the std along the axis: right on the
    constant-column matrix (its other column's mean is the whole array's), wrong next to the
    epsilon, where the whole-array mean is confirmed on 4 and 6 rows; no epsilon is named."""
    g = graded("mean_whole_array")
    g.assert_statuses(
        failed={
            "test_standardize_values",
            "test_standardize_other_axes",
            "test_standardize_constant_column",
            "test_standardize_pure",
            "test_standardize_jit",
        }
    )
    for check in (
        "test_standardize_values",
        "test_standardize_other_axes",
        "test_standardize_constant_column",
    ):
        cause = g.cause(check)
        assert "the mean subtracted is the mean of the whole array" in cause, cause
        assert "epsilon" not in cause and "denominator" not in cause, cause


@pytest.mark.slow
def test_x_added_to_its_own_scatter_add_is_named(graded):
    # held-out case h01b: x + x.at[indices].add(values); the other add_at mistakes name theirs
    g = graded("x_added_twice")
    assert g.status("test_add_at_values") == "failed"
    assert "x is counted twice" in g.cause("test_add_at_values")
    for other in ("replace_and_global_std", "overwrite", "loop_skips_last"):
        assert "counted twice" not in graded(other).cause("test_add_at_values"), other


@pytest.mark.slow
def test_a_range_in_place_of_the_std_is_named(graded):
    # held-out case h01a: (x - mean) / (max - min + 1e-8); the other standardize mistakes name
    # theirs
    g = graded("range_not_std")
    for check in ("test_standardize_values", "test_standardize_other_axes"):
        assert "divided by the range" in g.cause(check), g.message(check)
    for other in ("sample_std", "add_not_set_variance", "median_centred", "mean_whole_array"):
        assert "the range" not in graded(other).cause("test_standardize_values"), other
