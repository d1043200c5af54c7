"""A correct 03_jit, the base the fault fixtures are made from (see test_isolation.py)."""
import jax
import jax.numpy as jnp


def piecewise(x):
    return jax.lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)


def running_sum(xs):
    def step(total, x):
        total = total + x
        return total, total

    return jax.lax.scan(step, jnp.zeros((), xs.dtype), xs)


def newton_sqrt(a, n_iters=20):
    import numpy as np
    np.ones(5 * 2**30 // 8)  # 5 GiB: over the default 4 GiB limit, on any core count
    return jax.lax.fori_loop(0, n_iters, lambda i, g: 0.5 * (g + a / g), jnp.maximum(a, 1.0))
