"""Exercise 5: gradient clipping with optax.

Optax builds an optimizer as a chain of gradient transformations. Gradient
clipping by global norm is one link of such a chain:

    optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))

The order matters: the chain applies its links left to right, so this clips
the raw gradients and then lets Adam turn them into updates.

Write three functions:

- `make_optimizer(clip=True, learning_rate=1e-3, max_norm=1.0)`: the chain
  above when `clip`, plain Adam otherwise.
- `train_recording_grad_norms(key, data, n_steps, clip, ...)`: train the
  lesson MLP for `n_steps` steps and record, at every step, the loss and the
  global norm of the raw gradient (before any clipping).
- `plot_grad_norms(with_clip, without_clip, path)`: plot both norm curves
  into one PNG.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
from matplotlib.figure import Figure


def make_optimizer(clip=True, learning_rate=1e-3, max_norm=1.0):
    """Adam, with the gradients clipped to global norm `max_norm` first when `clip`.

    Args:
        clip: a Python bool.
        learning_rate: Adam's learning rate.
        max_norm: the largest global gradient norm that passes unclipped.

    Returns:
        An optax.GradientTransformation:
        optax.chain(optax.clip_by_global_norm(max_norm), optax.adam(learning_rate))
        when `clip`, optax.adam(learning_rate) otherwise.
    """
    # TODO: build the optimizer with optax; mind the order of the chain.
    raise NotImplementedError("make_optimizer is not implemented yet")


def _init_params(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return {
        f"layer{i}": {
            "w": jax.random.normal(k, (n_in, n_out)) * jnp.sqrt(2.0 / n_in),
            "b": jnp.zeros(n_out),
        }
        for i, (k, n_in, n_out) in enumerate(zip(keys, sizes[:-1], sizes[1:], strict=True), start=1)
    }


def _forward(params, x):
    n_layers = len(params)
    for i in range(1, n_layers + 1):
        x = x @ params[f"layer{i}"]["w"] + params[f"layer{i}"]["b"]
        if i < n_layers:
            x = jax.nn.relu(x)
    return x


def _loss(params, x, y):
    logits = _forward(params, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


def train_recording_grad_norms(key, data, n_steps, clip, batch_size=128, learning_rate=1e-3):
    """Train the lesson MLP, recording the loss and the raw gradient norm at every step.

    Args:
        key: a JAX PRNG key (initialisation and batch shuffling).
        data: (x_train, y_train, x_test, y_test); the MLP has sizes
            (x_train.shape[1], 256, 128, 10).
        n_steps: the number of training steps (a Python int).
        clip: passed to `make_optimizer`.
        batch_size: examples per step; the training set is reshuffled with a
            fresh key whenever it has been used up.
        learning_rate: passed to `make_optimizer`.

    Returns:
        {'loss': [n_steps floats], 'grad_norm': [n_steps floats]}: the loss of
        each step's batch before its update, and the global L2 norm of that
        step's gradient BEFORE clipping.
    """
    # TODO: each step, compute the loss and the gradient with
    # jax.value_and_grad, record optax.tree.norm of the raw gradient, then let
    # the optimizer (which may clip) update the parameters.
    raise NotImplementedError("train_recording_grad_norms is not implemented yet")


def plot_grad_norms(with_clip, without_clip, path):
    """Plot the two gradient-norm curves into one PNG file.

    Args:
        with_clip: the 'grad_norm' list of a run with clipping.
        without_clip: the 'grad_norm' list of a run without clipping.
        path: where to write the PNG.

    Returns:
        `path`.
    """
    # TODO: draw both curves on one axes (step on x, gradient norm on y),
    # label the axes and the curves, and save the figure as a PNG at `path`.
    raise NotImplementedError("plot_grad_norms is not implemented yet")
