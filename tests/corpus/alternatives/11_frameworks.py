"""11 - Flax and Equinox imported in a try block, Equinox counted with eqx.filter."""

try:
    import equinox as eqx
    import flax.linen as nn
except ImportError:  # the optional extras: the grader skips this lesson without them
    eqx = nn = None

import jax

if nn is not None:

    class FlaxMLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Dense(features=256)(x)
            x = nn.relu(x)
            x = nn.Dense(features=128)(x)
            x = nn.relu(x)
            return nn.Dense(features=10)(x)


def make_equinox_mlp(key):
    return eqx.nn.MLP(784, 10, 256, 2, activation=jax.nn.relu, key=key)
