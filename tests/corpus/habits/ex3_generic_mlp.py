"""Exercise 3: an MLP of any depth, with type hints and a helper for layer order."""

from __future__ import annotations

import re
from collections.abc import Sequence

import jax
import jax.numpy as jnp

Params = dict[str, dict[str, jax.Array]]
_LAYER = re.compile(r"layer(\d+)")


def init_mlp(key: jax.Array, sizes: Sequence[int]) -> Params:
    """He-initialised float32 weights, zero biases, one key per layer."""
    sizes = [int(s) for s in sizes]
    params: Params = {}
    keys = jax.random.split(key, len(sizes) - 1)
    for i in range(len(sizes) - 1):
        n_in, n_out = sizes[i], sizes[i + 1]
        scale = jnp.sqrt(jnp.float32(2.0) / n_in)
        params[f"layer{i + 1}"] = {
            "w": (jax.random.normal(keys[i], (n_in, n_out), jnp.float32) * scale).astype(
                jnp.float32
            ),
            "b": jnp.zeros((n_out,), jnp.float32),
        }
    return params


def _layer_number(name: str) -> int:
    match = _LAYER.fullmatch(name)
    if match is None:
        raise KeyError(f"not a layer name: {name!r}")
    return int(match.group(1))


def mlp_forward(params: Params, x: jax.Array) -> jax.Array:
    """Logits for any depth: two leaves per layer, layers in numeric order."""
    depth = len(jax.tree.leaves(params)) // 2
    names = sorted(params, key=_layer_number)
    assert len(names) == depth, "every layer holds exactly 'w' and 'b'"
    for i, name in enumerate(names):
        x = x @ params[name]["w"] + params[name]["b"]
        if i < depth - 1:
            x = jax.nn.relu(x)
    return x


if __name__ == "__main__":
    p = init_mlp(jax.random.key(0), (4, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 3))
    print(mlp_forward(p, jnp.ones((2, 4))).shape)
