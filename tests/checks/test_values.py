"""values: assert_close, assert_matches_reference (Hypothesis, shrunk input), and friends."""

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import strategies as st

from grader.checks import values
from grader.checks.failure import CheckFailure


# -- standardize: two right ways, two wrong ones ------------------------------
def standardize_jnp(x, axis=0):
    return (x - jnp.mean(x, axis=axis, keepdims=True)) / (
        jnp.std(x, axis=axis, keepdims=True) + 1e-8
    )


def standardize_np_style(x, axis=0):
    x = jnp.asarray(x)
    mean = x.mean(axis)
    std = jnp.sqrt(((x - jnp.expand_dims(mean, axis)) ** 2).mean(axis))
    return (x - jnp.expand_dims(mean, axis)) / (jnp.expand_dims(std, axis) + 1e-8)


def standardize_no_eps(x, axis=0):
    return (x - x.mean(axis, keepdims=True)) / x.std(axis, keepdims=True)


def standardize_no_keepdims(x, axis=0):
    return (x - x.mean(axis)) / (x.std(axis) + 1e-8)


def _ref_standardize(x, axis=0):
    x = np.asarray(x, np.float64)
    return ((x - x.mean(axis, keepdims=True)) / (x.std(axis, keepdims=True) + 1e-8)).astype(
        np.float32
    )


X = jnp.array([[1.0, 5.0, 2.0], [3.0, 5.0, 4.0], [8.0, 5.0, 0.0]])


@pytest.mark.parametrize("impl", [standardize_jnp, standardize_np_style])
def test_close_passes_correct_standardize(impl):
    values.assert_close(impl(X), _ref_standardize(X), what="standardize(x)", atol=1e-5)


def test_close_names_nan_from_a_constant_column():
    with pytest.raises(CheckFailure, match="NaN") as info:
        values.assert_close(standardize_no_eps(X), _ref_standardize(X), what="standardize(x)")
    assert "division by zero" in info.value.finding.fix  # where to look, not a cause
    assert info.value.finding.cause == ""
    assert "index (0, 1)" in str(info.value)


def test_close_names_a_broadcast_shape_error():
    out = standardize_no_keepdims(X, axis=1)  # broadcasts (3,3) - (3,) the wrong way
    with pytest.raises(CheckFailure, match="values differ"):
        values.assert_close(
            out, _ref_standardize(X, axis=1), what="standardize(x, axis=1)", atol=1e-5
        )
    with pytest.raises(CheckFailure, match=r"shape \(3, 1\)"):
        values.assert_close(jnp.ones(3), jnp.ones((3, 1)), what="y")


def test_close_reports_leaf_path_and_errors():
    with pytest.raises(CheckFailure) as info:
        values.assert_close(
            {"layer1": {"b": jnp.zeros(2), "w": jnp.ones((2, 2))}},
            {"layer1": {"b": jnp.zeros(2), "w": jnp.array([[1.0, 1.0], [1.0, 1.5]])}},
            what="params",
        )
    text = str(info.value)
    assert "['layer1']['w']" in text and "index (1, 1)" in text and "max abs error 0.5" in text


def test_close_structure_and_dtype():
    with pytest.raises(CheckFailure, match="a list was returned where a tuple"):
        values.assert_close(
            [jnp.ones(2), jnp.ones(2)], (jnp.ones(2), jnp.ones(2)), what="running_sum(xs)"
        )
    with pytest.raises(CheckFailure, match="integer values"):
        values.assert_close(jnp.array([1, 2]), jnp.array([1.0, 2.0]), what="x")
    values.assert_close((3, jnp.ones(2)), (3.0, jnp.ones(2)), what="Python numbers are lenient")


def test_close_compares_typed_keys_by_their_data():
    import jax

    values.assert_close(
        jax.random.split(jax.random.key(0)), jax.random.split(jax.random.key(0)), what="keys"
    )
    with pytest.raises(CheckFailure, match="values differ"):
        values.assert_close(jax.random.key(1), jax.random.key(0), what="key")


def test_tree_structure_shape_finite():
    values.assert_tree_structure({"a": 1, "b": (2, 3)}, {"a": 0.0, "b": (0.0, 0.0)}, what="t")
    with pytest.raises(CheckFailure, match="dict keys differ"):
        values.assert_tree_structure({"a": 1}, {"b": 1}, what="t")
    values.assert_shape(jnp.ones((32, 4)), (None, 4), what="grads")
    with pytest.raises(CheckFailure, match=r"\(any, 4\)"):
        values.assert_shape(jnp.ones((4,)), (None, 4), what="grads")
    values.assert_finite({"w": jnp.ones(3)}, what="logits")
    with pytest.raises(CheckFailure, match=r"1 of 3 values at \['w'\] are NaN/inf"):
        values.assert_finite({"w": jnp.array([1.0, jnp.inf, 0.0])}, what="logits")


# -- add_at: property-based search with shrinking -----------------------------
def add_at_scatter(x, indices, values_):
    return jnp.asarray(x).at[jnp.asarray(indices)].add(values_)


def add_at_segment(x, indices, values_):
    import jax

    x = jnp.asarray(x)
    return x + jax.ops.segment_sum(
        jnp.asarray(values_), jnp.asarray(indices), num_segments=x.shape[0]
    )


def _broken_add_at():
    def add_at(x, indices, values_):
        return jnp.asarray(x).at[jnp.asarray(indices)].set(values_)  # duplicates overwrite

    return add_at


def _ref_add_at(x, indices, values_):
    out = np.array(x, np.float32)
    np.add.at(out, np.asarray(indices), np.asarray(values_, np.float32))
    return out


@st.composite
def add_at_args(draw):
    n = draw(st.integers(1, 5))
    k = draw(st.integers(1, 5))
    floats = st.floats(-10, 10, width=32)
    x = np.array(draw(st.lists(floats, min_size=n, max_size=n)), np.float32)
    idx = np.array(draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)), np.int32)
    v = np.array(draw(st.lists(floats, min_size=k, max_size=k)), np.float32)
    return x, idx, v


@pytest.mark.parametrize("impl", [add_at_scatter, add_at_segment])
def test_reference_search_passes_correct_add_at(impl):
    tried = values.assert_matches_reference(
        impl,
        _ref_add_at,
        add_at_args(),
        what="add_at(x, indices, values)",
        atol=1e-5,
        max_examples=25,
    )
    assert tried >= 25


def test_reference_search_shows_the_shrunk_input():
    with pytest.raises(CheckFailure) as info:
        values.assert_matches_reference(
            _broken_add_at(),
            _ref_add_at,
            add_at_args(),
            what="add_at(x, indices, values)",
            max_examples=25,
            cause="duplicate indices must accumulate",
        )
    text = str(info.value)
    assert "smallest input that differs" in text
    assert "add_at([" in text and " gave " in text
    call = text.split("expected: ")[1].split(" == ")[0]
    assert len(call) < 40, call  # shrunk to one or two elements
    assert "duplicate indices must accumulate" in text


def test_reference_search_reports_a_crash_with_its_input():
    def add_at(x, indices, values_):
        if len(indices) > 2:
            raise IndexError("only two updates supported")
        return add_at_scatter(x, indices, values_)

    with pytest.raises(CheckFailure, match=r"raised IndexError: only two updates") as info:
        values.assert_matches_reference(
            add_at, _ref_add_at, add_at_args(), what="add_at", max_examples=25
        )
    assert "test_values.py, line" in str(info.value)


def test_reference_search_explains_a_jax_error_in_jax_terms():
    def add_at(x, indices, values_):  # a matrix product of mismatched sizes, on 3+ elements
        return add_at_scatter(x, indices, values_) + (jnp.ones(2) @ jnp.ones(len(x) % 3 + 3))

    with pytest.raises(CheckFailure) as info:
        values.assert_matches_reference(
            add_at, _ref_add_at, add_at_args(), what="add_at", max_examples=25
        )
    assert "sums over axes of different sizes" in info.value.finding.cause
    # a cause the check gives comes first
    with pytest.raises(CheckFailure) as info:
        values.assert_matches_reference(
            add_at, _ref_add_at, add_at_args(), what="add_at", max_examples=25, cause="its own"
        )
    assert info.value.finding.cause == "its own"


def test_reference_search_lets_a_stub_through():
    def add_at(x, indices, values_):
        raise NotImplementedError("TODO")

    with pytest.raises(NotImplementedError):
        values.assert_matches_reference(
            add_at, _ref_add_at, add_at_args(), what="add_at", max_examples=5
        )


def test_relative_error_is_not_reported_against_zero_expectations():
    with pytest.raises(CheckFailure) as info:
        values.assert_close(np.array([0.5, 0.0]), np.array([0.0, 0.0]), what="zeros")
    assert "max abs error 0.5" in str(info.value) and "rel error" not in str(info.value)
    with pytest.raises(CheckFailure) as info:
        values.assert_close(np.array([0.5, 3.0]), np.array([0.0, 2.0]), what="mixed")
    assert "max rel error 0.5" in str(info.value)


@pytest.mark.parametrize(
    ("pieces", "expected", "words"),
    [
        # jnp.split where a reshape belongs: the pieces stacked have the expected shape
        (list(np.split(np.arange(24.0).reshape(8, 3), 4)), np.zeros((4, 2, 3)), "stacked along"),
        # pieces of different lengths that add up along the first axis
        (tuple(np.split(np.arange(24.0).reshape(8, 3), [3])), np.zeros((8, 3)), "joined along"),
        # per-leaf counts never summed
        ([np.int32(3), np.int32(4)], np.int32(7), "never combined into one"),
    ],
)
def test_pieces_where_one_array_belongs_are_named_by_what_they_make(pieces, expected, words):
    found = values.difference(pieces, expected)
    assert found is not None and words in found.cause, found


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        ([np.zeros((8, 3)), np.zeros((8, 3))], np.zeros((8, 3))),  # two copies: neither reading
        ([np.zeros((2, 3))] * 3, np.zeros((4, 2, 3))),  # 3 pieces where 4 stack
        ((np.zeros(3), np.zeros(3)), (np.zeros(3), np.zeros(3), np.zeros(3))),  # arity instead
    ],
)
def test_pieces_that_make_no_such_array_are_not_named_so(pieces, expected):
    found = values.difference(pieces, expected)
    assert found is not None
    assert "stacked along" not in found.cause and "joined along" not in found.cause
    assert "never combined" not in found.cause


_GRADS = {"w": jnp.ones((3, 2)), "b": jnp.zeros(2)}


@pytest.mark.parametrize(
    ("returned", "words"),
    [
        (
            (jnp.float32(0.5), _GRADS),
            "a tuple of 2 outputs was returned where one result is expected: output 1",
        ),
        (
            [_GRADS, jnp.float32(0.5), jnp.ones(4)],
            "a list of 3 outputs was returned where one result is expected: output 0",
        ),
    ],
)
def test_the_expected_result_among_extra_outputs_is_named(returned, words):
    found = values.difference(returned, _GRADS)
    assert found is not None and words in found.cause, found


@pytest.mark.parametrize(
    "returned",
    [
        (jnp.float32(0.5), {"w": 2 * jnp.ones((3, 2)), "b": jnp.zeros(2)}),  # no element is it
    ],
)
def test_extra_outputs_are_not_named_without_an_expected_element(returned):
    found = values.difference(returned, _GRADS)
    assert found is not None and "outputs was returned" not in found.cause, found


def test_outputs_of_other_containers_in_each_others_places_are_named():
    expected = ({"w": jnp.ones(3)}, (jnp.zeros(()), {"mu": jnp.ones(3)}), jnp.float32(1.0))
    found = values.difference((expected[1], expected[0], expected[2]), expected)
    assert found is not None and "output 0 holds what belongs at 1" in found.cause, found
    other = ({"v": jnp.ones(3)}, expected[0], expected[2])  # a structure no swap gives
    found = values.difference(other, expected)
    assert found is not None and "wrong order" not in found.cause, found


def test_several_elements_equal_to_the_expected_are_named_without_choosing_one():
    found = values.difference((_GRADS, _GRADS), _GRADS)
    assert found is not None and "outputs 0 and 1 of it each equal the expected" in found.cause
    found = values.difference((jnp.float32(1.0), jnp.float32(1.0)), jnp.float32(1.0))
    assert found is not None and "never combined" not in found.cause, found
    assert "each equal the expected" in found.cause, found


def test_one_of_the_expected_outputs_returned_alone_is_named():
    xs = jnp.arange(1.0, 6.0)
    expected = (jnp.sum(xs), jnp.cumsum(xs))  # running_sum's (total, partial_sums)
    found = values.difference(jnp.cumsum(xs), expected)
    assert found is not None
    assert "it is output 1 of that tuple (counting from 0), and the other output is not" in (
        found.cause
    )
    found = values.difference(jnp.sum(xs), expected)
    assert found is not None and "it is output 0 of that tuple" in found.cause


def test_one_result_that_is_none_of_the_expected_outputs_is_not_named_so():
    xs = jnp.arange(1.0, 6.0)
    expected = (jnp.sum(xs), jnp.cumsum(xs))
    found = values.difference(jnp.cumsum(xs[::-1]), expected)  # the shape of one, not its values
    assert found is not None and "one result was returned" not in found.cause, found
