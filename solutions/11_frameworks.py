"""11 - the same MLP in Flax and Equinox (optional extras).

Writing params dicts by hand teaches what a model is; libraries save the
typing. The two common ones keep JAX's explicit state, in different ways.
(Install them with `pip install '.[frameworks]'`; the grader skips this
lesson where they are missing.)

Flax (`flax.linen`) looks like a PyTorch module, but the module object holds
no weights. `init` builds the params pytree from a key and an example input
(that is how `nn.Dense(256)` learns its input size), and `apply` is the pure
forward pass:

    class FlaxMLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Dense(256)(x))
            ...

    model = FlaxMLP()
    variables = model.init(jax.random.key(0), jnp.ones((1, 784)))
    logits = model.apply(variables, x_batch)           # (batch, 10)

The params sit in `variables['params']`, a nested dict
(`Dense_0: {kernel: (784, 256), bias: (256,)}`, ...): 235,146 numbers for
784 -> 256 -> 128 -> 10.

Equinox makes the model itself a pytree: the layers' arrays are its leaves,
so `jax.grad`, `jax.jit` and `jax.tree.map` work on the model object
directly, with no separate `apply`. `eqx.nn.MLP` builds a stack of Linear
layers; `depth` counts the hidden layers, each `width_size` wide:

    model = eqx.nn.MLP(in_size=784, out_size=10, width_size=256, depth=2,
                       activation=jax.nn.relu, key=key)
    logits = model(x)                                  # ONE example: (784,) -> (10,)
    batch_logits = jax.vmap(model)(x_batch)

Its two hidden layers are both 256 wide (784 -> 256 -> 256 -> 10), which is
why it has more parameters than the Flax model: 269,322. Count them with
`eqx.filter(model, eqx.is_array)` and `jax.tree.leaves`.
"""

import equinox as eqx
import flax.linen as nn
import jax


class FlaxMLP(nn.Module):
    """The lesson MLP in flax.linen: Dense 256 -> relu -> Dense 128 -> relu -> Dense 10.

    `FlaxMLP().apply(variables, x)` maps a batch (batch, in) to logits (batch, 10).
    """

    @nn.compact
    def __call__(self, x):
        # TODO: Dense(256), relu, Dense(128), relu, Dense(10) (no activation on the output)
        ### BEGIN SOLUTION
        x = nn.relu(nn.Dense(256)(x))
        x = nn.relu(nn.Dense(128)(x))
        return nn.Dense(10)(x)
        ### END SOLUTION


def make_equinox_mlp(key):
    """An `eqx.nn.MLP` from 784 inputs to 10 outputs, width 256, depth 2, ReLU.

    The returned model maps ONE example of shape (784,) to logits (10,).
    """
    # TODO: build eqx.nn.MLP with in_size, out_size, width_size, depth, activation and key
    ### BEGIN SOLUTION
    return eqx.nn.MLP(
        in_size=784, out_size=10, width_size=256, depth=2, activation=jax.nn.relu, key=key
    )
    ### END SOLUTION
