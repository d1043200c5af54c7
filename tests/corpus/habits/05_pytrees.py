"""05 - pytrees, with jax.tree_util spellings, a NamedTuple demo and math.prod."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

PyTree = Any


def count_params(tree: PyTree) -> int:
    """Total number of scalars in all leaves."""
    return sum(math.prod(np.shape(leaf)) for leaf in jax.tree_util.tree_leaves(tree))


def tree_sgd(params: PyTree, grads: PyTree, lr: float) -> PyTree:
    """params - lr * grads, leaf by leaf."""
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)


def tree_global_norm(tree: PyTree) -> jax.Array:
    """sqrt of the sum of squares of every leaf."""
    squares = [jnp.sum(jnp.square(leaf)) for leaf in jax.tree_util.tree_leaves(tree)]
    return jnp.sqrt(sum(squares, jnp.zeros(())))


def layer_shapes(params: PyTree) -> PyTree:
    """The same structure with each leaf replaced by its shape tuple."""
    return jax.tree_util.tree_map(lambda leaf: tuple(np.shape(leaf)), params)


class _Pair(NamedTuple):
    weight: jax.Array
    bias: jax.Array


if __name__ == "__main__":
    demo = {"a": _Pair(jnp.ones((3, 4)), jnp.zeros(4)), "b": [jnp.ones(2), (jnp.ones(()),)]}
    print(count_params(demo), layer_shapes(demo), tree_global_norm(demo))
