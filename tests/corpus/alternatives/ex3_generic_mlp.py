"""Exercise 3: generic MLP, pairing the sorted leaves (b, w) per layer in numeric order."""

import jax
import jax.numpy as jnp


def init_mlp(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return {
        f"layer{i + 1}": {
            "w": jax.random.normal(k, (m, n), dtype=jnp.float32) * jnp.sqrt(2.0 / m),
            "b": jnp.zeros((n,), dtype=jnp.float32),
        }
        for i, (k, m, n) in enumerate(zip(keys, sizes[:-1], sizes[1:], strict=True))
    }


def mlp_forward(params, x):
    n_layers = len(jax.tree.leaves(params)) // 2
    for i in range(1, n_layers + 1):
        b, w = jax.tree.leaves(params[f"layer{i}"])  # sorted keys: 'b' before 'w'
        x = x @ w + b
        if i != n_layers:
            x = jnp.maximum(x, 0.0)
    return x
