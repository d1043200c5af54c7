import jax.numpy as jnp


def _scale(x, factor):
    return jnp.dot(jnp.ones(3), jnp.ones(4)) * x * factor  # shapes (3,) and (4,)


def double(x):
    return _scale(x, 2.0)


def halve(x):
    return _scale(x, 0.5)
