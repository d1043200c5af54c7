"""Public inputs of ex4_jit_speedup: the small lesson train step whose jit speedup the
suite measures with the student's `jit_speedup`, and its initial state.

The suite names them with `client.Public("ex4_train_step")` and
`client.Public("ex4_train_state", (sizes,))`: the sandbox builds a fresh (never traced)
step for every call, so its first jitted call pays the whole trace and compile. The
timed steps with known behaviour (async, slow to compile, sleeping) are public
factories of `grader.checks.timing`.

optax is imported when a step is built (in the ex4 sandbox only), not when this module
is loaded before every sandbox starts.
"""

from __future__ import annotations

import itertools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from grader.sandbox.public import factory

LEARNING_RATE = 1e-3


def _optimizer() -> Any:
    import optax

    return optax.adam(LEARNING_RATE)


def _forward(params: Any, x: Any) -> Any:
    n = len(params)
    for i in range(1, n + 1):
        x = x @ params[f"layer{i}"]["w"] + params[f"layer{i}"]["b"]
        if i < n:
            x = jax.nn.relu(x)
    return x


@factory
def ex4_train_step() -> Any:
    """A fresh train step `(state, batch) -> state` of a lesson MLP (ReLU between layers,
    softmax cross-entropy, Adam 1e-3): `state = (params, opt_state)`, `batch = (x, y)`."""
    import optax

    optimizer = _optimizer()

    def loss_fn(p: Any, x: Any, y: Any) -> Any:
        return optax.softmax_cross_entropy_with_integer_labels(_forward(p, x), y).mean()

    def train_step(state: Any, batch: Any) -> Any:
        p, opt_state = state
        grads = jax.grad(loss_fn)(p, *batch)
        updates, opt_state = optimizer.update(grads, opt_state, p)
        return optax.apply_updates(p, updates), opt_state

    return train_step


@factory
def ex4_train_state(sizes: tuple[int, ...]) -> Any:
    """`(params, opt_state)` of an MLP of `sizes` for `ex4_train_step()`: He-initialised weights (NumPy
    seed 0), zero biases, Adam's initial state."""
    rng = np.random.default_rng(0)
    params = {
        f"layer{i + 1}": {
            "w": jnp.asarray(rng.normal(0.0, np.sqrt(2.0 / n_in), (n_in, n_out)), jnp.float32),
            "b": jnp.zeros(n_out, jnp.float32),
        }
        for i, (n_in, n_out) in enumerate(itertools.pairwise(tuple(sizes)))
    }
    return params, _optimizer().init(params)
