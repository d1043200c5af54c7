"""04 - vmap, with einsum instead of `@` and type hints."""

from __future__ import annotations

from typing import TypedDict

import jax
import jax.numpy as jnp


class Linear(TypedDict):
    w: jax.Array  # (out, in)
    b: jax.Array  # (out,)


def predict(params: Linear, x: jax.Array) -> jax.Array:
    """w @ x + b for ONE example."""
    return jnp.einsum("oi,i->o", params["w"], x) + params["b"]


batch_predict_impl = jax.vmap(predict, in_axes=(None, 0))


def batch_predict(params: Linear, xs: jax.Array) -> jax.Array:
    """predict mapped over the rows of xs; params shared."""
    return batch_predict_impl(params, xs)


def _sq_dist(u: jax.Array, v: jax.Array) -> jax.Array:
    d = u - v
    return jnp.einsum("i,i->", d, d)


def pairwise_sq_dists(a: jax.Array, b: jax.Array) -> jax.Array:
    """D[i, j] = ||a[i] - b[j]||^2 with two nested vmaps."""
    inner = jax.vmap(_sq_dist, in_axes=(None, 0))  # over rows of b
    outer = jax.vmap(inner, in_axes=(0, None))  # over rows of a
    return outer(a, b)


if __name__ == "__main__":
    p: Linear = {"w": jnp.ones((2, 3)), "b": jnp.zeros(2)}
    print(batch_predict(p, jnp.arange(6.0).reshape(2, 3)))
    print(pairwise_sq_dists(jnp.eye(2), jnp.zeros((3, 2))))
