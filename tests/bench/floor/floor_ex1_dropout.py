"""ex1_dropout, value checks only."""

import jax
import jax.numpy as jnp
import numpy as np

from grader.data import load_digits


def test_dropout_shape_rate_and_scale(ex1):
    x = jnp.ones((200, 500), jnp.float32)
    out = ex1.dropout(jax.random.key(0), x, 0.3)
    assert out.shape == x.shape and out.dtype == x.dtype
    kept = np.asarray(out) != 0
    assert abs(1 - kept.mean() - 0.3) < 0.01
    np.testing.assert_allclose(np.asarray(out)[kept], 1 / 0.7, rtol=1e-6)


def test_dropout_eval_and_keys(ex1):
    x = jnp.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(ex1.dropout(jax.random.key(1), x, 0.5, train=False), x)
    a = ex1.dropout(jax.random.key(2), jnp.ones(1000), 0.5)
    b = ex1.dropout(jax.random.key(2), jnp.ones(1000), 0.5)
    c = ex1.dropout(jax.random.key(3), jnp.ones(1000), 0.5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_forward_with_dropout(ex1):
    params = ex1.init_params(jax.random.key(0), (64, 32, 16, 10))
    x = jax.random.normal(jax.random.key(1), (8, 64))
    np.testing.assert_allclose(
        ex1.forward_with_dropout(params, x, jax.random.key(2), train=False),
        ex1.forward(params, x),
        rtol=1e-6,
    )
    out = ex1.forward_with_dropout(params, x, jax.random.key(2), rate=0.5)
    assert out.shape == (8, 10)


def test_compare_dropout(ex1):
    result = ex1.compare_dropout(jax.random.key(0), load_digits(), rate=0.5, n_epochs=10)
    assert set(result) == {"with_dropout", "without_dropout"}
    assert 0.85 <= float(result["without_dropout"]) <= 1.0
    assert 0.8 <= float(result["with_dropout"]) <= 1.0
