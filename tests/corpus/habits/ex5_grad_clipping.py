"""Exercise 5: gradient clipping, with stderr progress, a NamedTuple and pathlib."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from matplotlib.figure import Figure

Params = dict[str, dict[str, jax.Array]]


def make_optimizer(
    clip: bool = True, learning_rate: float = 1e-3, max_norm: float = 1.0
) -> optax.GradientTransformation:
    """Adam, after clipping by global norm when `clip`."""
    adam = optax.adam(learning_rate)
    if not clip:
        return adam
    return optax.chain(optax.clip_by_global_norm(max_norm), adam)


def _init(key: jax.Array, sizes: tuple[int, ...]) -> Params:
    params = {}
    for i, k in enumerate(jax.random.split(key, len(sizes) - 1)):
        n_in, n_out = sizes[i], sizes[i + 1]
        params[f"layer{i + 1}"] = {
            "w": jax.random.normal(k, (n_in, n_out)) * np.sqrt(2.0 / n_in),
            "b": jnp.zeros(n_out),
        }
    return params


def _logits(params: Params, x: jax.Array) -> jax.Array:
    n = len(params)
    for i in range(1, n + 1):
        x = x @ params[f"layer{i}"]["w"] + params[f"layer{i}"]["b"]
        x = jax.nn.relu(x) if i < n else x
    return x


def _loss(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    return optax.softmax_cross_entropy_with_integer_labels(_logits(params, x), y).mean()


def _global_norm(tree: Any) -> jax.Array:
    return jnp.sqrt(sum(jnp.vdot(leaf, leaf) for leaf in jax.tree.leaves(tree)))


class StepRecord(NamedTuple):
    loss: float
    grad_norm: float


def train_recording_grad_norms(
    key: jax.Array,
    data: tuple[Any, Any, Any, Any],
    n_steps: int,
    clip: bool,
    batch_size: int = 128,
    learning_rate: float = 1e-3,
) -> dict[str, list[float]]:
    """Loss and raw (pre-clip) gradient norm of every step."""
    x_train, y_train = np.asarray(data[0]), np.asarray(data[1])
    init_key, key = jax.random.split(key)
    params = _init(init_key, (x_train.shape[1], 256, 128, 10))
    opt = make_optimizer(clip=clip, learning_rate=learning_rate)
    opt_state = opt.init(params)

    @jax.jit
    def step(params: Params, opt_state: Any, x: jax.Array, y: jax.Array) -> tuple[Any, ...]:
        loss, grads = jax.value_and_grad(_loss)(params, x, y)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss, _global_norm(grads)

    records: list[StepRecord] = []
    order: np.ndarray[Any, Any] = np.empty(0, dtype=np.int64)
    cursor = 0
    for t in range(n_steps):
        if cursor + batch_size > len(order):  # the set is used up: reshuffle with a fresh key
            key, perm_key = jax.random.split(key)
            order = np.asarray(jax.random.permutation(perm_key, len(x_train)))
            cursor = 0
        idx = order[cursor : cursor + batch_size]
        cursor += batch_size
        params, opt_state, loss, norm = step(params, opt_state, x_train[idx], y_train[idx])
        records.append(StepRecord(float(loss), float(norm)))
        if (t + 1) % 100 == 0:
            print(f"step {t + 1}: loss {records[-1].loss:.4f}", file=sys.stderr)
    return {
        "loss": [r.loss for r in records],
        "grad_norm": [r.grad_norm for r in records],
    }


def plot_grad_norms(
    with_clip: list[float], without_clip: list[float], path: str | os.PathLike[str]
) -> str | os.PathLike[str]:
    """Both gradient-norm curves in one PNG at `path`; returns `path`."""
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.plot(range(len(with_clip)), with_clip, label="with clipping")
    ax.plot(range(len(without_clip)), without_clip, label="without clipping")
    ax.set_xlabel("step")
    ax.set_ylabel("gradient norm (before clipping)")
    ax.legend()
    fig.savefig(Path(path), format="png")
    return path


if __name__ == "__main__":
    from grader.data import load_data

    d = load_data()
    runs = [train_recording_grad_norms(jax.random.key(0), d, 50, clip) for clip in (True, False)]
    print(plot_grad_norms(runs[0]["grad_norm"], runs[1]["grad_norm"], "norms.png"))
