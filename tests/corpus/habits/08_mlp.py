"""08 - the lesson's MLP, with a dataclass for the history, logging and a helper."""

from __future__ import annotations

import dataclasses
import itertools
import logging
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

logger = logging.getLogger("mlp")

Params = dict[str, dict[str, jax.Array]]
HIDDEN = (256, 128)
N_CLASSES = 10
MAX_TRAIN_ACC_ROWS = 5000

optimizer = optax.adam(1e-3)


def _he_layer(key: jax.Array, n_in: int, n_out: int) -> dict[str, jax.Array]:
    w = jax.random.normal(key, (n_in, n_out)) * jnp.sqrt(2.0 / n_in)
    return {"w": w, "b": jnp.zeros((n_out,))}


def init_params(key: jax.Array, sizes: Sequence[int] = (784, 256, 128, 10)) -> Params:
    """He-initialised weights (in, out), zero biases, one key per layer."""
    keys = jax.random.split(key, len(sizes) - 1)
    return {
        f"layer{i + 1}": _he_layer(keys[i], n_in, n_out)
        for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes))
    }


def _ordered(params: Params) -> list[dict[str, jax.Array]]:
    return [params[f"layer{i}"] for i in range(1, len(params) + 1)]


def forward(params: Params, x: jax.Array) -> jax.Array:
    """Logits: ReLU after every layer but the last."""
    layers = _ordered(params)
    for layer in layers[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    last = layers[-1]
    return x @ last["w"] + last["b"]


def loss_fn(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean cross-entropy via log_softmax."""
    log_probs = jax.nn.log_softmax(forward(params, x), axis=-1)
    picked = jnp.take_along_axis(log_probs, y[:, None].astype(jnp.int32), axis=-1)
    return -jnp.mean(picked)


@jax.jit
def train_step(
    params: Params, opt_state: optax.OptState, x: jax.Array, y: jax.Array
) -> tuple[Params, optax.OptState, jax.Array]:
    """One Adam step; the loss is the batch loss before the update."""
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


@jax.jit
def accuracy(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    """Fraction of argmax predictions equal to y."""
    return jnp.mean(jnp.argmax(forward(params, x), axis=-1) == y)


@dataclasses.dataclass(frozen=True)
class EpochStats:
    loss: float
    train_acc: float
    test_acc: float


def _batches(
    key: jax.Array, x: np.ndarray[Any, Any], y: np.ndarray[Any, Any], batch_size: int
) -> Iterator[tuple[jax.Array, jax.Array]]:
    order = np.asarray(jax.random.permutation(key, len(x)))
    for start in range(0, len(x) - batch_size + 1, batch_size):
        idx = order[start : start + batch_size]
        yield jnp.asarray(x[idx]), jnp.asarray(y[idx])


def train(
    key: jax.Array, data: tuple[Any, Any, Any, Any], n_epochs: int = 10, batch_size: int = 128
) -> tuple[Params, list[dict[str, float]]]:
    """Train the MLP; one fresh shuffling key per epoch; history of EpochStats dicts."""
    x_train, y_train, x_test, y_test = (np.asarray(a) for a in data)
    init_key, key = jax.random.split(key)
    params = init_params(init_key, (x_train.shape[1], *HIDDEN, N_CLASSES))
    opt_state = optimizer.init(params)
    history: list[dict[str, float]] = []
    for epoch in range(n_epochs):
        key, epoch_key = jax.random.split(key)
        losses = []
        for xb, yb in _batches(epoch_key, x_train, y_train, batch_size):
            params, opt_state, loss = train_step(params, opt_state, xb, yb)
            losses.append(loss)
        stats = EpochStats(
            loss=float(jnp.mean(jnp.stack(losses))) if losses else float("nan"),
            train_acc=float(
                accuracy(params, x_train[:MAX_TRAIN_ACC_ROWS], y_train[:MAX_TRAIN_ACC_ROWS])
            ),
            test_acc=float(accuracy(params, x_test, y_test)),
        )
        logger.info("epoch %d: %s", epoch + 1, stats)
        history.append(dataclasses.asdict(stats))
    return params, history


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    from grader.data import load_data

    _, hist = train(jax.random.key(0), load_data(), n_epochs=2)
    print(hist[-1], file=sys.stderr)
