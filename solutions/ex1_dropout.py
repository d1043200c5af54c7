"""Exercise 1: dropout in the lesson's MLP.

Dropout needs randomness, and JAX has no hidden random state: every random
draw takes an explicit PRNG key. A forward pass with dropout therefore takes a
key, splits it, and hands a different subkey to every dropout layer.

Write three functions:

- `dropout(key, x, rate, train=True)`: inverted dropout. Each unit is zeroed
  with probability `rate` (the DROP probability, as in Flax and Equinox) and
  the survivors are scaled by `1 / (1 - rate)`, so the expected value of every
  unit is unchanged. With `train=False` it returns `x` unchanged. `rate` and
  `train` are Python values (static under `jax.jit`).
- `forward_with_dropout(params, x, key, rate=0.5, train=True)`: the lesson MLP
  with dropout after each hidden ReLU, every dropout layer with its own key.
- `compare_dropout(key, data, rate=0.5, n_epochs=10)`: train the MLP with and
  without dropout and return both test accuracies.

`init_params` and `forward` (the lesson's MLP) are given.
"""

from functools import partial

import jax
import jax.numpy as jnp
import optax


def init_params(key, sizes=(784, 256, 128, 10)):
    """The lesson's parameter dict: He-initialised weights (in, out), zero biases."""
    keys = jax.random.split(key, len(sizes) - 1)
    params = {}
    for i, (k, n_in, n_out) in enumerate(zip(keys, sizes[:-1], sizes[1:], strict=True), start=1):
        params[f"layer{i}"] = {
            "w": jax.random.normal(k, (n_in, n_out)) * jnp.sqrt(2.0 / n_in),
            "b": jnp.zeros(n_out),
        }
    return params


def _layers(params):
    """The layers in order: layer1, layer2, ..., layer10 (numeric, not string order)."""
    return [params[f"layer{i}"] for i in range(1, len(params) + 1)]


def forward(params, x):
    """Logits of the lesson MLP: ReLU on the hidden layers, none on the last."""
    *hidden, last = _layers(params)
    for layer in hidden:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ last["w"] + last["b"]


def dropout(key, x, rate, train=True):
    """Inverted dropout: zero each unit with probability `rate`, scale survivors by 1/(1-rate).

    Args:
        key: a JAX PRNG key (typed `jax.random.key` or raw `jax.random.PRNGKey`).
        x: an array of activations.
        rate: the probability of DROPPING a unit, a Python float in [0, 1].
        train: a Python bool; when False, dropout is the identity.

    Returns:
        An array of the shape and dtype of `x`.
    """
    # TODO: when training, draw a keep-mask with jax.random.bernoulli (keep
    # probability 1 - rate), zero the dropped units and rescale the survivors.
    ### BEGIN SOLUTION
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"dropout rate must be in [0, 1], got {rate}")
    if not train or rate == 0.0:
        return x
    if rate == 1.0:
        return jnp.zeros_like(x)
    keep = 1.0 - rate
    mask = jax.random.bernoulli(key, keep, x.shape)
    return jnp.where(mask, x / keep, jnp.zeros_like(x))
    ### END SOLUTION


def forward_with_dropout(params, x, key, rate=0.5, train=True):
    """The lesson MLP with dropout after every hidden ReLU.

    Args:
        params: the lesson dict {'layer1': {'w', 'b'}, ..., 'layerN': {...}}.
        x: a batch of inputs, shape (batch, n_in).
        key: a JAX PRNG key, split so that every dropout layer gets its own key.
        rate: the drop probability (Python float).
        train: a Python bool; when False this is the plain forward pass.

    Returns:
        Logits, shape (batch, n_out).
    """
    # TODO: split `key` into one subkey per hidden layer and apply `dropout`
    # with its own subkey after each hidden ReLU (no dropout on the logits).
    ### BEGIN SOLUTION
    *hidden, last = _layers(params)
    keys = jax.random.split(key, len(hidden))
    for layer, layer_key in zip(hidden, keys, strict=True):
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
        x = dropout(layer_key, x, rate, train)
    return x @ last["w"] + last["b"]
    ### END SOLUTION


_optimizer = optax.adam(1e-3)


@partial(jax.jit, static_argnames=("rate",))
def _train_step(params, opt_state, x, y, key, rate):
    def loss_fn(p):
        logits = forward_with_dropout(p, x, key, rate=rate, train=rate > 0.0)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


@jax.jit
def _accuracy(params, x, y):
    return jnp.mean(jnp.argmax(forward(params, x), axis=-1) == y)


def compare_dropout(key, data, rate=0.5, n_epochs=10):
    """Train the lesson MLP with and without dropout; return both test accuracies.

    Both runs start from the same initial parameters and see the same batches,
    so the only difference is dropout.

    Args:
        key: a JAX PRNG key.
        data: (x_train, y_train, x_test, y_test); labels are integer class ids.
        rate: the drop probability used in the dropout run.
        n_epochs: passes over the training set (batch size 128, reshuffled each epoch).

    Returns:
        {'with_dropout': float, 'without_dropout': float}, test accuracies in [0, 1].
    """
    # TODO: train twice (dropout rate `rate`, then rate 0) from the same
    # initial parameters with optax.adam(1e-3), batches of 128 reshuffled every
    # epoch, and evaluate each on the test set without dropout.
    ### BEGIN SOLUTION
    x_train, y_train, x_test, y_test = (jnp.asarray(a) for a in data)
    init_key, shuffle_key, drop_key = jax.random.split(key, 3)
    sizes = (x_train.shape[1], 256, 128, 10)
    batch_size = 128
    n_batches = max(len(x_train) // batch_size, 1)
    results = {}
    for name, run_rate in (("with_dropout", rate), ("without_dropout", 0.0)):
        params = init_params(init_key, sizes)
        opt_state = _optimizer.init(params)
        epoch_key = shuffle_key
        step = 0
        for _ in range(n_epochs):
            epoch_key, perm_key = jax.random.split(epoch_key)
            perm = jax.random.permutation(perm_key, len(x_train))
            for i in range(n_batches):
                idx = perm[i * batch_size : (i + 1) * batch_size]
                step_key = jax.random.fold_in(drop_key, step)
                params, opt_state, _ = _train_step(
                    params, opt_state, x_train[idx], y_train[idx], step_key, run_rate
                )
                step += 1
        results[name] = float(_accuracy(params, x_test, y_test))
    return results
    ### END SOLUTION
