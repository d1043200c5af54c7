"""03_jit with the right structure whose functions all append to a module-level list."""
import jax
import jax.numpy as jnp

CALLS = []


def piecewise(x):
    CALLS.append("piecewise")
    return jax.lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)


def running_sum(xs):
    CALLS.append("running_sum")

    def step(total, x):
        total = total + x
        return total, total

    return jax.lax.scan(step, jnp.zeros((), xs.dtype), xs)


def newton_sqrt(a, n_iters=20):
    CALLS.append("newton_sqrt")
    return jax.lax.fori_loop(0, n_iters, lambda i, g: 0.5 * (g + a / g), jnp.maximum(a, 1.0))
