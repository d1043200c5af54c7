"""01 - jax.numpy and immutability, written with type hints and small helpers."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import jax.numpy as jnp
import numpy as np

if TYPE_CHECKING:
    from jax.typing import ArrayLike

EPS = 1e-8


def _as_jax(x: ArrayLike) -> jnp.ndarray:
    """A JAX view of `x`; a NumPy input is copied, never written to."""
    return jnp.asarray(x)


def set_element(x: ArrayLike, index: int | tuple[int, ...], value: float) -> jnp.ndarray:
    """A new array equal to `x` with `x[index] = value`."""
    return _as_jax(x).at[index].set(value)


def add_at(x: ArrayLike, indices: ArrayLike, values: ArrayLike) -> jnp.ndarray:
    """Scatter-add: repeated indices accumulate."""
    return _as_jax(x).at[_as_jax(indices)].add(_as_jax(values))


def standardize(x: ArrayLike, axis: int = 0) -> jnp.ndarray:
    """(x - mean) / (std + EPS) along `axis`, broadcast back with keepdims."""
    arr = _as_jax(x)
    mean = arr.mean(axis=axis, keepdims=True)
    std = arr.std(axis=axis, keepdims=True)
    return (arr - mean) / (std + EPS)


if __name__ == "__main__":
    demo = np.arange(6.0).reshape(3, 2)
    print("set_element:", set_element(demo, (0, 1), -1.0), file=sys.stderr)
    print("add_at:", add_at(np.zeros(3), np.array([0, 0, 2]), np.ones(3)))
    print("standardize:", standardize(demo, axis=0))
    assert demo[0, 1] == 1.0, "the input must not change"
