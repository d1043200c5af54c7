"""08 - the MLP with optax's cross-entropy, a fold_in key per epoch and numpy batching."""

import jax
import jax.numpy as jnp
import numpy as np
import optax

optimizer = optax.adam(learning_rate=1e-3)


def init_params(key, sizes=(784, 256, 128, 10)):
    params = {}
    keys = jax.random.split(key, len(sizes) - 1)
    for i in range(len(sizes) - 1):
        fan_in, fan_out = sizes[i], sizes[i + 1]
        params["layer%d" % (i + 1)] = dict(  # noqa: UP031
            w=jax.random.normal(keys[i], (fan_in, fan_out)) * np.sqrt(2.0 / fan_in),
            b=jnp.zeros((fan_out,)),
        )
    return params


def forward(params, x):
    n = len(params)
    h = x
    for i in range(1, n):
        h = jax.nn.relu(jnp.dot(h, params[f"layer{i}"]["w"]) + params[f"layer{i}"]["b"])
    return jnp.dot(h, params[f"layer{n}"]["w"]) + params[f"layer{n}"]["b"]


def loss_fn(params, x, y):
    logits = forward(params, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@jax.jit
def train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, new_state = optimizer.update(grads, opt_state, params)
    new_params = optax.apply_updates(params, updates)
    return new_params, new_state, loss


@jax.jit
def accuracy(params, x, y):
    predictions = forward(params, x).argmax(axis=1)
    return (predictions == y).astype(jnp.float32).mean()


def train(key, data, n_epochs=10, batch_size=128):
    x_train, y_train, x_test, y_test = data
    x_train, y_train = jnp.asarray(x_train), jnp.asarray(y_train)
    key, init_key = jax.random.split(key)
    params = init_params(init_key, (x_train.shape[0 + 1], 256, 128, 10))
    opt_state = optimizer.init(params)
    n_batches = x_train.shape[0] // batch_size
    history = []
    for epoch in range(n_epochs):
        perm = jax.random.permutation(jax.random.fold_in(key, epoch), x_train.shape[0])
        batch_losses = []
        for b in range(n_batches):
            idx = perm[b * batch_size : (b + 1) * batch_size]
            params, opt_state, loss = train_step(params, opt_state, x_train[idx], y_train[idx])
            batch_losses.append(float(loss))
        history.append(
            {
                "loss": float(np.mean(batch_losses)),
                "train_acc": float(accuracy(params, x_train[:5000], y_train[:5000])),
                "test_acc": float(accuracy(params, x_test, y_test)),
            }
        )
    return params, history
