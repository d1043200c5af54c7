"""03_jit, value checks only."""

import jax.numpy as jnp
import numpy as np


def test_piecewise(jit03):
    x = jnp.linspace(-3.0, 3.0, 13)
    got = np.asarray([float(jit03.piecewise(v)) for v in x])
    want = np.where(np.asarray(x) > 0, np.asarray(x) ** 2, -np.asarray(x))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_running_sum(jit03):
    xs = jnp.arange(1.0, 11.0)
    total, partial = jit03.running_sum(xs)
    np.testing.assert_allclose(float(total), 55.0)
    np.testing.assert_allclose(np.asarray(partial), np.cumsum(np.arange(1.0, 11.0)))


def test_newton_sqrt(jit03):
    for a in (1e-2, 1.0, 2.0, 1e2, 1e4):
        np.testing.assert_allclose(float(jit03.newton_sqrt(jnp.float32(a))), np.sqrt(a), rtol=1e-5)
