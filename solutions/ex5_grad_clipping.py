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
    ### BEGIN SOLUTION
    adam = optax.adam(learning_rate)
    if not clip:
        return adam
    return optax.chain(optax.clip_by_global_norm(max_norm), adam)
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    x_train, y_train = jnp.asarray(data[0]), jnp.asarray(data[1])
    init_key, shuffle_key = jax.random.split(key)
    params = _init_params(init_key, (x_train.shape[1], 256, 128, 10))
    optimizer = make_optimizer(clip=clip, learning_rate=learning_rate)
    opt_state = optimizer.init(params)

    @jax.jit
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(_loss)(params, x, y)
        norm = optax.tree.norm(grads)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss, norm

    batch_size = min(batch_size, len(x_train))
    per_epoch = len(x_train) // batch_size
    losses, norms = [], []
    perm = None
    for i in range(n_steps):
        if i % per_epoch == 0:
            shuffle_key, perm_key = jax.random.split(shuffle_key)
            perm = jax.random.permutation(perm_key, len(x_train))
        idx = perm[(i % per_epoch) * batch_size : (i % per_epoch + 1) * batch_size]
        params, opt_state, loss, norm = step(params, opt_state, x_train[idx], y_train[idx])
        losses.append(loss)
        norms.append(norm)
    return {
        "loss": [float(v) for v in np.asarray(jnp.stack(losses))] if losses else [],
        "grad_norm": [float(v) for v in np.asarray(jnp.stack(norms))] if norms else [],
    }
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    fig = Figure(figsize=(7, 4))
    ax = fig.add_subplot()
    ax.plot(np.arange(len(without_clip)), without_clip, label="without clipping")
    ax.plot(np.arange(len(with_clip)), with_clip, label="with clip_by_global_norm(1.0)")
    ax.set_xlabel("step")
    ax.set_ylabel("global gradient norm (before clipping)")
    ax.set_yscale("log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    return path
    ### END SOLUTION
