"""11 - Flax and Equinox, each imported only where installed (importlib.util.find_spec)."""

from __future__ import annotations

import importlib.util
import sys

import jax

HAVE_FLAX = importlib.util.find_spec("flax") is not None
HAVE_EQUINOX = importlib.util.find_spec("equinox") is not None

if HAVE_FLAX:
    import flax.linen as nn

    class FlaxMLP(nn.Module):
        """Dense 256 -> relu -> Dense 128 -> relu -> Dense 10."""

        hidden: tuple[int, ...] = (256, 128)
        n_out: int = 10

        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            for width in self.hidden:
                x = nn.relu(nn.Dense(width)(x))
            return nn.Dense(self.n_out)(x)


def make_equinox_mlp(key: jax.Array) -> object:
    """eqx.nn.MLP 784 -> 10, width 256, depth 2, ReLU."""
    if not HAVE_EQUINOX:
        raise ImportError("equinox is not installed: pip install '.[frameworks]'")
    import equinox as eqx

    return eqx.nn.MLP(
        in_size=784, out_size=10, width_size=256, depth=2, activation=jax.nn.relu, key=key
    )


if __name__ == "__main__":
    if not (HAVE_FLAX and HAVE_EQUINOX):
        print("install the frameworks extra to run this demo", file=sys.stderr)
        sys.exit(0)
    import jax.numpy as jnp

    variables = FlaxMLP().init(jax.random.key(0), jnp.ones((1, 784)))
    print(sum(x.size for x in jax.tree_util.tree_leaves(variables)))
    print(make_equinox_mlp(jax.random.key(1)))
