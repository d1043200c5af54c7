"""Expected values are shown in the dtype the student should produce: a reference computed
in float64 (NumPy) is shown in float32 next to a student's float32 result, JAX's default and
the lessons' spec, so no `float64` appears in an expected pytree and numbers read the same on
both sides."""

from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import strategies as st

from grader.checks import values
from grader.checks.failure import CheckFailure
from grader.probes import _format


def _ref_init(sizes: list[int]) -> dict[str, np.ndarray]:
    """A NumPy reference: float64 throughout, as the suites' references are."""
    return {"b": np.zeros(sizes[1]), "w": np.ones((sizes[0], sizes[1]))}


def student_init_as_list(sizes):  # type: ignore[no-untyped-def]
    return [jnp.ones((sizes[0], sizes[1])), jnp.zeros(sizes[1])]


def student_counts(x):  # type: ignore[no-untyped-def]
    return jnp.round(x).astype(jnp.int32)


def student_scaled(x):  # type: ignore[no-untyped-def]
    return x.at[2].set(0.4)


def _failure(thunk) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(CheckFailure) as info:
        thunk()
    return str(info.value)


def test_an_expected_pytree_reads_float32_not_float64() -> None:
    assert not jax.config.jax_enable_x64  # the spec: JAX's default dtypes
    message = _failure(
        lambda: values.assert_close(
            student_init_as_list([3, 2]), _ref_init([3, 2]), what="init_params([3, 2])"
        )
    )
    assert "expected: a pytree shaped like {'b': float32[2], 'w': float32[3,2]}" in message
    assert "float64" not in message


def test_a_dtype_kind_mismatch_names_float32() -> None:
    x = np.array([0.4, 1.6, 2.5])  # float64, as a NumPy reference returns it
    message = _failure(lambda: values.assert_close(student_counts(jnp.asarray(x)), x, what="f(x)"))
    assert "expected: floating values (dtype float32)" in message
    assert "observed: integer values (dtype int32)" in message
    assert "float64" not in message


def test_expected_numbers_are_shown_in_float32_like_the_observed_ones() -> None:
    expected = np.array([0.1, 0.2, 0.3])  # float64
    student = student_scaled(jnp.asarray(expected, jnp.float32))
    message = _failure(lambda: values.assert_close(student, expected, what="scaled(x)"))
    # Both sides' numbers as float32 prints them: 0.4 (not 0.4000000059604645) instead of 0.3.
    assert "first at index (2,): 0.4 instead of 0.3;" in message
    assert "0.4000000059604645" not in message
    assert "expected: [0.1, 0.2, 0.3]" in message


def test_a_generated_input_failure_shows_the_expected_in_float32() -> None:
    def reference(x: float) -> np.floating:
        return np.float64(x / 3.0)

    def student(x):  # type: ignore[no-untyped-def]
        return jnp.float32(x / 2.0)

    message = _failure(
        lambda: values.assert_matches_reference(
            student, reference, st.tuples(st.just(1.0)), what="thirds(x)", max_examples=2
        )
    )
    # float32(1/3) prints 0.33333334; the float64 reference would print 0.3333333333333333.
    assert "expected: student(1.0) == 0.33333334" in message
    assert "0.5 instead of 0.33333334" in message
    assert "0.3333333333333333" not in message


def test_produced_dtype_is_jax_default() -> None:
    assert _format.produced_dtype(np.float64) == np.float32
    assert _format.produced_dtype(np.int64) == np.int32
    assert _format.produced_dtype(np.complex128) == np.complex64
    assert _format.produced_dtype(np.float32) == np.float32
    # Python numbers and JAX arrays are shown as they are.
    assert _format.as_produced(0.5) == 0.5
    tree = _format.as_produced({"a": np.zeros(2), "k": jax.random.key(0)})
    assert tree["a"].dtype == np.float32
    assert _format.aval(tree["a"]) == "float32[2]"
