"""08 - build: the lesson's MLP, trained with pure functions.

There is no model class here. A model is three things you can hold in your
hand: a pytree of parameters, a pure function from (params, x) to logits, and
a pure function from (params, x, y) to a loss. Training is a fourth pure
function, `train_step`, that maps (params, opt_state, batch) to new
(params, opt_state): no `.zero_grad()`, no `.backward()`, no `.step()`.

Parameters are the lesson's nested dict, weights stored (in, out):

    {'layer1': {'w': (784, 256), 'b': (256,)},
     'layer2': {'w': (256, 128), 'b': (128,)},
     'layer3': {'w': (128, 10),  'b': (10,)}}

He initialization keeps the activations' scale steady through ReLU layers:
`w = normal(key, (fan_in, fan_out)) * sqrt(2 / fan_in)`, biases zero, and
every layer drawn with its OWN key (`jax.random.split(key, n_layers)`); one
key reused for every layer gives correlated weights.

Cross-entropy from `jax.nn.log_softmax` is stable: it subtracts the largest
logit before exponentiating. `jnp.log(jax.nn.softmax(z))` is not: for logits
around 1e4 it takes the log of 0 (or exp overflows) and the loss becomes inf
or NaN.

`train_step` is decorated with `@jax.jit`: it is traced once, on the first
call, and every later call with the same shapes runs the compiled XLA
program without touching Python. The optimizer comes from Optax:
`optimizer.init(params)` builds its state (Adam's moments and step count),
`optimizer.update(grads, opt_state, params)` returns the updates and the new
state, and `optax.apply_updates(params, updates)` adds them.

The training loop is plain Python around the compiled step. Each epoch it
draws a fresh key, shuffles the training set with `jax.random.permutation`,
and walks over it in batches (a last partial batch is dropped, so every call
has the same shape and `train_step` compiles once).

The grader trains on scikit-learn's digits (8x8 images, 64 inputs), so
`train` sizes the first layer from the data: `(x_train.shape[1], 256, 128, 10)`.
"""

import jax
import jax.numpy as jnp
import optax

# TODO: the lesson's optimizer: Adam with learning rate 1e-3, from optax
### BEGIN SOLUTION
### STUB: optimizer = None  # TODO
optimizer = optax.adam(1e-3)
### END SOLUTION


def init_params(key, sizes=(784, 256, 128, 10)):
    """The lesson's parameter dict for layer sizes `sizes` (a tuple of Python ints).

    Layer `i` (named 'layer1', 'layer2', ...) maps `sizes[i-1]` to `sizes[i]`:
    `'w'` of shape (in, out) drawn as `normal * sqrt(2 / in)` (He init), `'b'`
    zeros of shape (out,). Every layer's weights come from their own key.
    """
    # TODO: split the key once per layer; He-init each weight matrix, zero each bias
    ### BEGIN SOLUTION
    keys = jax.random.split(key, len(sizes) - 1)
    params = {}
    layers = zip(keys, sizes[:-1], sizes[1:], strict=True)
    for i, (k, fan_in, fan_out) in enumerate(layers, start=1):
        params[f"layer{i}"] = {
            "w": jax.random.normal(k, (fan_in, fan_out)) * jnp.sqrt(2.0 / fan_in),
            "b": jnp.zeros((fan_out,)),
        }
    return params
    ### END SOLUTION


def forward(params, x):
    """Logits for a batch `x` of shape (batch, in): `x @ w + b` per layer, ReLU between.

    ReLU follows every layer but the last; the last layer's output is returned
    as is (logits, not probabilities).
    """
    # TODO: apply the layers in order (layer1, layer2, ...), ReLU on all but the last
    ### BEGIN SOLUTION
    n_layers = len(params)
    for i in range(1, n_layers + 1):
        layer = params[f"layer{i}"]
        x = x @ layer["w"] + layer["b"]
        if i < n_layers:
            x = jax.nn.relu(x)
    return x
    ### END SOLUTION


def loss_fn(params, x, y):
    """Mean cross-entropy of `forward(params, x)` against integer labels `y`.

    Use `jax.nn.log_softmax` (stable for large logits), not `log(softmax)`.
    """
    # TODO: mean over the batch of -log_softmax(logits)[label]
    ### BEGIN SOLUTION
    logits = forward(params, x)
    one_hot = jax.nn.one_hot(y, logits.shape[-1])
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * one_hot, axis=-1))
    ### END SOLUTION


@jax.jit
def train_step(params, opt_state, x, y):
    """One jitted optimizer step on the batch (x, y): returns (params, opt_state, loss).

    `loss` is the batch loss BEFORE the update; compute it and the gradients in
    one pass with `jax.value_and_grad`, then apply the module's `optimizer`.
    """
    # TODO: value_and_grad of loss_fn, optimizer.update, optax.apply_updates
    ### BEGIN SOLUTION
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state, loss
    ### END SOLUTION


@jax.jit
def accuracy(params, x, y):
    """Fraction (a scalar in [0, 1]) of rows of `x` whose argmax logit equals `y`."""
    # TODO: compare the argmax of the logits with the labels and average
    ### BEGIN SOLUTION
    predictions = jnp.argmax(forward(params, x), axis=-1)
    return jnp.mean(predictions == y)
    ### END SOLUTION


def train(key, data, n_epochs=10, batch_size=128):
    """Train the lesson MLP on `data = (x_train, y_train, x_test, y_test)`.

    Layer sizes are `(x_train.shape[1], 256, 128, 10)`. Each epoch draws a fresh
    key, reshuffles the training set with it and runs `train_step` on every
    full batch of `batch_size`. Returns `(params, history)`, where `history`
    has one dict per epoch: `{'loss': mean batch loss, 'train_acc': ...,
    'test_acc': ...}` (Python floats; train accuracy on up to 5,000 rows).
    """
    # TODO: init params and opt_state; per epoch split the key, permute, loop over batches
    ### BEGIN SOLUTION
    x_train, y_train, x_test, y_test = (jnp.asarray(a) for a in data)
    key, init_key = jax.random.split(key)
    params = init_params(init_key, (x_train.shape[1], 256, 128, 10))
    opt_state = optimizer.init(params)
    n_batches = x_train.shape[0] // batch_size
    history = []
    for _ in range(n_epochs):
        key, shuffle_key = jax.random.split(key)
        order = jax.random.permutation(shuffle_key, x_train.shape[0])
        x_shuffled, y_shuffled = x_train[order], y_train[order]
        epoch_loss = 0.0
        for i in range(n_batches):
            batch = slice(i * batch_size, (i + 1) * batch_size)
            params, opt_state, loss = train_step(
                params, opt_state, x_shuffled[batch], y_shuffled[batch]
            )
            epoch_loss += loss
        history.append(
            {
                "loss": float(epoch_loss) / n_batches,
                "train_acc": float(accuracy(params, x_train[:5000], y_train[:5000])),
                "test_acc": float(accuracy(params, x_test, y_test)),
            }
        )
    return params, history
    ### END SOLUTION


if __name__ == "__main__":
    from grader.data import load_data

    _, history = train(jax.random.key(0), load_data())
    for epoch, row in enumerate(history, start=1):
        print(
            f"Epoch {epoch:2d} | Loss: {row['loss']:.4f} | "
            f"Train Acc: {row['train_acc']:.4f} | Test Acc: {row['test_acc']:.4f}"
        )
