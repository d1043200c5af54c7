"""Exercise 1: dropout, with logging, type hints and a small Trainer class."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

log = logging.getLogger(__name__)

Params = dict[str, dict[str, jax.Array]]


def init_params(key: jax.Array, sizes: tuple[int, ...] = (784, 256, 128, 10)) -> Params:
    keys = jax.random.split(key, len(sizes) - 1)
    return {
        f"layer{i}": {
            "w": jax.random.normal(k, (n_in, n_out)) * jnp.sqrt(2.0 / n_in),
            "b": jnp.zeros(n_out),
        }
        for i, (k, n_in, n_out) in enumerate(zip(keys, sizes[:-1], sizes[1:], strict=True), 1)
    }


def _layers(params: Params) -> list[dict[str, jax.Array]]:
    return [params[f"layer{i}"] for i in range(1, len(params) + 1)]


def forward(params: Params, x: jax.Array) -> jax.Array:
    *hidden, last = _layers(params)
    for layer in hidden:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ last["w"] + last["b"]


def dropout(key: jax.Array, x: jax.Array, rate: float, train: bool = True) -> jax.Array:
    """Inverted dropout: drop with probability `rate`, scale survivors by 1 / (1 - rate)."""
    if not train or rate == 0.0:
        return x
    keep_prob = 1.0 - rate
    keep = jax.random.bernoulli(key, keep_prob, jnp.shape(x))
    return jnp.where(keep, x / keep_prob, jnp.zeros_like(x))


def forward_with_dropout(
    params: Params, x: jax.Array, key: jax.Array, rate: float = 0.5, train: bool = True
) -> jax.Array:
    """The MLP with dropout after every hidden ReLU, a subkey per dropout layer."""
    *hidden, last = _layers(params)
    keys = jax.random.split(key, max(len(hidden), 1))
    for layer, k in zip(hidden, keys, strict=False):
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
        x = dropout(k, x, rate, train)
    return x @ last["w"] + last["b"]


class Trainer:
    """Adam 1e-3 on batches of 128, reshuffled each epoch with a fresh key."""

    def __init__(self, logits_fn: Callable[[Params, jax.Array, jax.Array], jax.Array]) -> None:
        self.optimizer = optax.adam(1e-3)
        self.logits_fn = logits_fn
        self.step = jax.jit(self._step)

    def _step(
        self, params: Params, opt_state: Any, x: jax.Array, y: jax.Array, key: jax.Array
    ) -> tuple[Params, Any, jax.Array]:
        def loss(p: Params) -> jax.Array:
            logits = self.logits_fn(p, x, key)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

        value, grads = jax.value_and_grad(loss)(params)
        updates, opt_state = self.optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value

    def fit(
        self, params: Params, key: jax.Array, x: np.ndarray[Any, Any], y: np.ndarray[Any, Any],
        n_epochs: int, batch_size: int = 128,
    ) -> Params:  # fmt: skip
        opt_state = self.optimizer.init(params)
        n_batches = len(x) // batch_size
        for epoch in range(n_epochs):
            key, perm_key, drop_key = jax.random.split(key, 3)
            order = np.asarray(jax.random.permutation(perm_key, len(x)))
            step_keys = jax.random.split(drop_key, max(n_batches, 1))
            for b in range(n_batches):
                idx = order[b * batch_size : (b + 1) * batch_size]
                params, opt_state, loss = self.step(params, opt_state, x[idx], y[idx], step_keys[b])
            log.debug("epoch %d: last loss %.4f", epoch + 1, float(loss))
        return params


@jax.jit
def _test_accuracy(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean(jnp.argmax(forward(params, x), axis=-1) == y)


def compare_dropout(
    key: jax.Array, data: tuple[Any, Any, Any, Any], rate: float = 0.5, n_epochs: int = 10
) -> dict[str, float]:
    """Test accuracies of the MLP trained with and without dropout, same start."""
    x_train, y_train, x_test, y_test = (np.asarray(a) for a in data)
    init_key, train_key = jax.random.split(key)
    params0 = init_params(init_key, (x_train.shape[1], 256, 128, 10))
    plain = Trainer(lambda p, x, k: forward(p, x))
    dropped = Trainer(partial(_dropout_logits, rate=rate))
    results = {
        "with_dropout": dropped.fit(params0, train_key, x_train, y_train, n_epochs),
        "without_dropout": plain.fit(params0, train_key, x_train, y_train, n_epochs),
    }
    accs = {name: float(_test_accuracy(p, x_test, y_test)) for name, p in results.items()}
    log.info("dropout comparison: %s", accs)
    return accs


def _dropout_logits(p: Params, x: jax.Array, k: jax.Array, rate: float) -> jax.Array:
    return forward_with_dropout(p, x, k, rate=rate, train=True)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    out = dropout(jax.random.key(0), jnp.ones(10), 0.5)
    log.info("dropout of ones: %s", out)
