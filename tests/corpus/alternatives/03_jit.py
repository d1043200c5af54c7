"""03 - control flow with closures, jitted definitions and a print callback for debugging."""

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def piecewise(x):
    return lax.cond(x > 0, lambda: x**2, lambda: -x)


@jax.jit
def running_sum(xs):
    def step(carry, x):
        new = carry + x
        return new, new

    total, partial_sums = lax.scan(step, jnp.zeros_like(xs[0]), xs)
    return total, partial_sums


def _report(i, x):
    if i == 0:
        print("first Newton iterate:", x)


@partial(jax.jit, static_argnames=("n_iters",))
def newton_sqrt(a, n_iters=20):
    a = jnp.asarray(a, jnp.float32)

    def body(i, x):
        jax.debug.callback(_report, i, x)
        return 0.5 * (x + a / x)

    return lax.fori_loop(0, n_iters, body, jnp.maximum(a, 1.0))
