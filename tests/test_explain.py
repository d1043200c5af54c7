"""explain: real JAX errors, raised by real tracing, get the student-facing cause and fix."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader.explain import explain


def raised(fn, *args, **kwargs) -> BaseException:  # type: ignore[no-untyped-def]
    with pytest.raises(Exception) as info:
        fn(*args, **kwargs)
    return info.value


def python_if(x):  # type: ignore[no-untyped-def]
    return x**2 if x > 0 else -x


def numpy_call(x):  # type: ignore[no-untyped-def]
    return np.sin(np.asarray(x))


def test_python_if_under_jit_points_to_lax_cond() -> None:
    found = explain(raised(jax.jit(python_if), 1.0))
    assert found is not None and "lax.cond" in found.fix and "`if`" in found.cause


def test_numpy_on_a_tracer_points_to_jnp() -> None:
    found = explain(raised(jax.jit(numpy_call), jnp.ones(3)))
    assert found is not None and "jnp" in found.fix


def test_shape_from_a_traced_value_points_to_static_arguments() -> None:
    found = explain(raised(jax.jit(lambda n: jnp.zeros(n)), 3))
    assert found is not None and "static" in found.fix


def test_array_marked_static_is_recognised_by_its_message() -> None:
    found = explain(raised(jax.jit(lambda x: x, static_argnums=0), jnp.ones(3)))
    assert found is not None and "hashable" in found.cause


def test_key_reuse_points_to_split() -> None:
    def twice(key):  # type: ignore[no-untyped-def]
        return jax.random.normal(key) + jax.random.normal(key)

    with jax.debug_key_reuse(True):
        found = explain(raised(twice, jax.random.key(0)))
    assert found is not None and "split" in found.fix


def test_unrelated_errors_are_not_explained() -> None:
    assert explain(KeyError("w")) is None
    assert explain(ValueError("shapes (3,) and (4,) not aligned")) is None
