"""Exercise 3: an MLP of any depth.

The lesson's `forward` spells out its three layers by hand. Replace it with a
generic `mlp_forward(params, x)` that works for any number of layers, finding
the depth from the parameter pytree itself (`jax.tree.leaves` gives two leaves
per layer), and a matching `init_mlp(key, sizes)`.

The parameters are the lesson's nested dict

    {'layer1': {'w': (in, out), 'b': (out,)}, 'layer2': ..., 'layerN': ...}

with weights stored (in, out) and used as `x @ w + b`. Two facts about
pytrees matter here: `jax.tree.leaves` visits dict keys in sorted order, so a
layer's leaves come out as `[b, w]`, and the string 'layer10' sorts before
'layer2'.
"""

import itertools

import jax
import jax.numpy as jnp


def init_mlp(key, sizes):
    """Parameters of an MLP with layer sizes `sizes` (inputs first, outputs last).

    Args:
        key: a JAX PRNG key (typed or raw).
        sizes: a sequence of ints, e.g. (784, 256, 128, 10) for three layers.

    Returns:
        The lesson dict {'layer1': {'w': (sizes[0], sizes[1]), 'b': (sizes[1],)}, ...}
        with He-initialised weights (normal * sqrt(2 / fan_in)), zero biases and
        a separate key for every layer.
    """
    # TODO: split the key once per layer; layer i (1-based) maps sizes[i-1]
    # to sizes[i].
    raise NotImplementedError("init_mlp is not implemented yet")


def mlp_forward(params, x):
    """Logits of the MLP `params` for the batch `x`, for any number of layers.

    Args:
        params: the lesson dict; the depth is found from `jax.tree.leaves`
            (two leaves per layer).
        x: inputs, shape (batch, sizes[0]).

    Returns:
        Logits, shape (batch, sizes[-1]); ReLU after every layer but the last.
    """
    # TODO: find the number of layers from jax.tree.leaves(params), then apply
    # the layers in order layer1, layer2, ..., layerN, taking 'w' and 'b' by name.
    raise NotImplementedError("mlp_forward is not implemented yet")
