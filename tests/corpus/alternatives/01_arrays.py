"""01 - arrays: the same contract with other correct spellings (var, where, a class)."""

import jax.numpy as jnp


class _Functional:
    """Small helpers that never write into their input."""

    @staticmethod
    def copy(x):
        return jnp.array(x, copy=True)


def set_element(x, index, value):
    return _Functional.copy(x).at[index].set(value)


def add_at(x, indices, values):
    base = _Functional.copy(x)
    return base.at[indices].add(jnp.asarray(values, dtype=base.dtype))


def standardize(x, axis=0):
    x = jnp.asarray(x)
    centered = x - jnp.mean(x, axis=axis, keepdims=True)
    std = jnp.sqrt(jnp.var(x, axis=axis, keepdims=True))
    return centered / (std + 1e-8)
