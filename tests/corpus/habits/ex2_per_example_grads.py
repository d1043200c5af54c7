"""Exercise 2: per-example gradients, with type hints, tree_util and inspect."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

PyTree = Any
LossFn = Callable[[PyTree, jax.Array, jax.Array], jax.Array]


def per_example_grads(loss_fn: LossFn, params: PyTree, xs: jax.Array, ys: jax.Array) -> PyTree:
    """One gradient per example: vmap of grad, params shared."""
    return jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))(params, xs, ys)


def _sum_sq_per_example(leaf: jax.Array) -> jax.Array:
    return jnp.sum(jnp.square(leaf).reshape(leaf.shape[0], -1), axis=1)


def per_example_grad_norms(
    loss_fn: LossFn, params: PyTree, xs: jax.Array, ys: jax.Array
) -> jax.Array:
    """(B,) global norms of the per-example gradients."""
    grads = per_example_grads(loss_fn, params, xs, ys)
    per_leaf = jax.tree_util.tree_map(_sum_sq_per_example, grads)
    total = jax.tree_util.tree_reduce(jnp.add, per_leaf)
    return jnp.sqrt(total)


def largest_gradient_examples(
    loss_fn: LossFn, params: PyTree, xs: jax.Array, ys: jax.Array, k: int = 5
) -> jax.Array:
    """Indices of the k largest gradient norms, largest first."""
    _, indices = lax.top_k(per_example_grad_norms(loss_fn, params, xs, ys), k)
    return indices


if __name__ == "__main__":
    print(inspect.signature(largest_gradient_examples))

    def loss(w: jax.Array, x: jax.Array, y: jax.Array) -> jax.Array:
        return (x @ w - y) ** 2

    xs = jnp.arange(12.0).reshape(4, 3)
    print(largest_gradient_examples(loss, jnp.ones(3), xs, jnp.zeros(4), k=2))
