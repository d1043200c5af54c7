"""06 - explicit PRNG keys, with type hints and a small helper."""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp


def split_into(key: jax.Array, n: int) -> jax.Array:
    """n independent subkeys of key."""
    return jax.random.split(key, n)


def init_weights(key: jax.Array, shapes: Sequence[tuple[int, ...]]) -> list[jax.Array]:
    """One standard normal array per shape, each from its own subkey."""
    subkeys = split_into(key, len(shapes))
    return [jax.random.normal(k, tuple(shape)) for k, shape in zip(subkeys, shapes, strict=True)]


def noisy(key: jax.Array, x: jax.Array, sigma: float) -> jax.Array:
    """x + sigma * N(0, 1), the noise a function of key and x's shape only."""
    noise = jax.random.normal(key, jnp.shape(x))
    return x + sigma * noise


if __name__ == "__main__":
    k = jax.random.key(0)
    a, b = split_into(k, 2)
    print([w.shape for w in init_weights(a, [(2, 3), (3,)])])
    print(noisy(b, jnp.zeros(3), 0.1))
