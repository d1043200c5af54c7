"""ex2_per_example_grads, value checks only."""

import jax
import jax.numpy as jnp
import numpy as np


def _setup():
    k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
    params = {
        "layer1": {"w": jax.random.normal(k1, (6, 5)) * 0.5, "b": jnp.zeros(5)},
        "layer2": {"w": jax.random.normal(k2, (5, 3)) * 0.5, "b": jnp.zeros(3)},
    }
    xs = jax.random.normal(k3, (16, 6))
    ys = jnp.arange(16) % 3

    def loss_fn(p, x, y):
        h = jax.nn.relu(x @ p["layer1"]["w"] + p["layer1"]["b"])
        logits = h @ p["layer2"]["w"] + p["layer2"]["b"]
        return -jax.nn.log_softmax(logits)[y]

    return loss_fn, params, xs, ys


def test_per_example_grads(ex2):
    loss_fn, params, xs, ys = _setup()
    got = ex2.per_example_grads(loss_fn, params, xs, ys)
    for i in range(xs.shape[0]):
        want = jax.grad(loss_fn)(params, xs[i], ys[i])
        for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
            np.testing.assert_allclose(g[i], w, rtol=1e-5, atol=1e-6)
    mean = jax.tree.map(lambda g: g.mean(0), got)
    full = jax.grad(lambda p: jnp.mean(jax.vmap(loss_fn, (None, 0, 0))(p, xs, ys)))(params)
    for g, w in zip(jax.tree.leaves(mean), jax.tree.leaves(full), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_norms_and_top_k(ex2):
    loss_fn, params, xs, ys = _setup()
    norms = ex2.per_example_grad_norms(loss_fn, params, xs, ys)
    want = [
        np.sqrt(sum(float(jnp.sum(g**2)) for g in jax.tree.leaves(jax.grad(loss_fn)(params, x, y))))
        for x, y in zip(xs, ys, strict=True)
    ]
    np.testing.assert_allclose(norms, want, rtol=1e-5)
    top = ex2.largest_gradient_examples(loss_fn, params, xs, ys, k=5)
    np.testing.assert_array_equal(top, np.argsort(-np.asarray(want))[:5])
