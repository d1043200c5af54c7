"""06 - keys: split once, unpack in a loop, noise drawn in x's dtype when it is a float."""

import jax
import jax.numpy as jnp


def split_into(key, n):
    return jax.random.split(key, num=n)


def init_weights(key, shapes):
    weights = []
    for subkey, shape in zip(jax.random.split(key, len(shapes)), shapes, strict=True):
        weights.append(jax.random.normal(subkey, shape))
    return weights


def noisy(key, x, sigma):
    x = jnp.asarray(x)
    dtype = x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.float32
    return x + sigma * jax.random.normal(key, x.shape, dtype)
