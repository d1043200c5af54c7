"""Exercise 5: clipping with optax.global_norm, an epoch generator and pyplot-free plotting."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import optax
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def make_optimizer(clip=True, learning_rate=1e-3, max_norm=1.0):
    if clip:
        return optax.chain(optax.clip_by_global_norm(max_norm), optax.adam(learning_rate))
    return optax.adam(learning_rate)


def _epochs(key, n, batch_size):
    for epoch in itertools.count():
        perm = np.asarray(jax.random.permutation(jax.random.fold_in(key, epoch), n))
        for start in range(0, n - batch_size + 1, batch_size):
            yield perm[start : start + batch_size]


def train_recording_grad_norms(key, data, n_steps, clip, batch_size=128, learning_rate=1e-3):
    x_train, y_train = np.asarray(data[0]), np.asarray(data[1])
    k_init, k_data = jax.random.split(key)
    sizes = (x_train.shape[1], 256, 128, 10)
    params = {}
    for i, k in enumerate(jax.random.split(k_init, 3)):
        params[f"layer{i + 1}"] = {
            "w": jax.random.normal(k, (sizes[i], sizes[i + 1])) * jnp.sqrt(2.0 / sizes[i]),
            "b": jnp.zeros(sizes[i + 1]),
        }

    def loss_fn(p, x, y):
        h = x
        for name in ("layer1", "layer2"):
            h = jax.nn.relu(h @ p[name]["w"] + p[name]["b"])
        logits = h @ p["layer3"]["w"] + p["layer3"]["b"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], 1))

    opt = make_optimizer(clip, learning_rate)
    state = opt.init(params)

    @jax.jit
    def step(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss, optax.global_norm(grads)

    losses, norms = [], []
    for idx in itertools.islice(_epochs(k_data, len(x_train), batch_size), n_steps):
        params, state, loss, norm = step(params, state, x_train[idx], y_train[idx])
        losses.append(float(loss))
        norms.append(float(norm))
    return {"loss": losses, "grad_norm": norms}


def plot_grad_norms(with_clip, without_clip, path):
    fig = Figure()
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.semilogy(with_clip, label="clip_by_global_norm")
    ax.semilogy(without_clip, label="no clipping")
    ax.set(xlabel="training step", ylabel="global gradient norm", title="gradient norms")
    ax.legend(loc="best")
    fig.savefig(path, dpi=80)
    return path
