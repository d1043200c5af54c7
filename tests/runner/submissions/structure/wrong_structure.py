"""03_jit with the right values and the wrong structure: jnp.where, Python loops."""
import jax.numpy as jnp


def piecewise(x):
    return jnp.where(x > 0, x**2, -x)


def running_sum(xs):
    total, partial = jnp.zeros((), xs.dtype), []
    for i in range(xs.shape[0]):
        total = total + xs[i]
        partial.append(total)
    return total, jnp.stack(partial)


def newton_sqrt(a, n_iters=20):
    x = jnp.maximum(a, 1.0)
    for _ in range(n_iters):
        x = 0.5 * (x + a / x)
    return x
