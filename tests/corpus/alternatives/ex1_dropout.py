"""Exercise 1: dropout with a uniform draw compared to rate, and fold_in keys per layer."""

import jax
import jax.numpy as jnp
import numpy as np
import optax


def init_params(key, sizes=(784, 256, 128, 10)):
    params = {}
    for i, k in enumerate(jax.random.split(key, len(sizes) - 1), start=1):
        n_in, n_out = sizes[i - 1], sizes[i]
        params[f"layer{i}"] = {
            "w": jax.random.normal(k, (n_in, n_out)) * jnp.sqrt(2.0 / n_in),
            "b": jnp.zeros(n_out),
        }
    return params


def forward(params, x):
    n = len(params)
    for i in range(1, n + 1):
        x = x @ params[f"layer{i}"]["w"] + params[f"layer{i}"]["b"]
        if i < n:
            x = jax.nn.relu(x)
    return x


def dropout(key, x, rate, train=True):
    if not train or rate <= 0:
        return x
    u = jax.random.uniform(key, jnp.shape(x))
    return jnp.where(u >= rate, x / (1.0 - rate), 0.0).astype(jnp.result_type(x))


def forward_with_dropout(params, x, key, rate=0.5, train=True):
    n = len(params)
    for i in range(1, n + 1):
        x = x @ params[f"layer{i}"]["w"] + params[f"layer{i}"]["b"]
        if i < n:
            x = dropout(jax.random.fold_in(key, i), jax.nn.relu(x), rate, train)
    return x


def _fit(params, key, x, y, n_epochs, logits):
    opt = optax.adam(1e-3)
    state = opt.init(params)

    @jax.jit
    def step(params, state, xb, yb, k):
        def loss(p):
            return optax.softmax_cross_entropy_with_integer_labels(logits(p, xb, k), yb).mean()

        g = jax.grad(loss)(params)
        updates, state = opt.update(g, state, params)
        return optax.apply_updates(params, updates), state

    n = len(x) // 128
    for epoch in range(n_epochs):
        epoch_key = jax.random.fold_in(key, epoch)
        perm = np.asarray(jax.random.permutation(jax.random.fold_in(epoch_key, 0), len(x)))
        for b in range(n):
            idx = perm[b * 128 : (b + 1) * 128]
            params, state = step(
                params, state, x[idx], y[idx], jax.random.fold_in(epoch_key, b + 1)
            )
    return params


def compare_dropout(key, data, rate=0.5, n_epochs=10):
    x_train, y_train, x_test, y_test = map(np.asarray, data)
    k_init, k_plain, k_drop = jax.random.split(key, 3)
    params = init_params(k_init, (x_train.shape[1], 256, 128, 10))
    plain = _fit(params, k_plain, x_train, y_train, n_epochs, lambda p, xb, k: forward(p, xb))
    dropped = _fit(
        params, k_drop, x_train, y_train, n_epochs,
        lambda p, xb, k: forward_with_dropout(p, xb, k, rate=rate, train=True),
    )  # fmt: skip

    def acc(p):
        return float(jnp.mean(jnp.argmax(forward(p, x_test), -1) == y_test))

    return {"with_dropout": acc(dropped), "without_dropout": acc(plain)}
