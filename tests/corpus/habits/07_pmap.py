"""07 - data parallelism, with type hints, functools.partial and inspect."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import jax
from jax import lax

AXIS = "devices"

PyTree = Any
LossFn = Callable[[PyTree, jax.Array, jax.Array], jax.Array]


def shard(x: jax.Array, n_devices: int) -> jax.Array:
    """(B, ...) -> (n_devices, B // n_devices, ...): consecutive slices per device."""
    batch, *rest = x.shape
    if batch % n_devices:
        raise ValueError(f"n_devices={n_devices} does not divide the batch of {batch}")
    return x.reshape(n_devices, batch // n_devices, *rest)


def _device_grads(loss_fn: LossFn, params: PyTree, x: jax.Array, y: jax.Array) -> PyTree:
    grads = jax.grad(loss_fn)(params, x, y)
    return lax.pmean(grads, axis_name=AXIS)


def parallel_mean_grads(loss_fn: LossFn, params: PyTree, xs: jax.Array, ys: jax.Array) -> PyTree:
    """Per-device gradients averaged with pmean; one copy per device."""
    step = jax.pmap(functools.partial(_device_grads, loss_fn), axis_name=AXIS, in_axes=(None, 0, 0))
    return step(params, xs, ys)


if __name__ == "__main__":
    import jax.numpy as jnp

    n = jax.local_device_count()

    def loss(w: jax.Array, x: jax.Array, y: jax.Array) -> jax.Array:
        return jnp.mean((x @ w - y) ** 2)

    xs = shard(jnp.ones((4 * n, 3)), n)
    ys = shard(jnp.zeros(4 * n), n)
    print(inspect.signature(parallel_mean_grads))
    print(parallel_mean_grads(loss, jnp.ones(3), xs, ys))
