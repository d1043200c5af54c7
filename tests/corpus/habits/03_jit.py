"""03 - jit and structured control flow, with debug prints under jit."""

from __future__ import annotations

import logging

import jax
import jax.numpy as jnp
from jax import lax

log = logging.getLogger(__name__)


def _square(v: jax.Array) -> jax.Array:
    return v * v


def _negate(v: jax.Array) -> jax.Array:
    return -v


def piecewise(x: jax.Array) -> jax.Array:
    """x**2 for x > 0, else -x, with a real branch (lax.cond)."""
    return lax.cond(x > 0, _square, _negate, x)


def running_sum(xs: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(total, partial sums) with lax.scan."""

    def step(total: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
        total = total + x
        return total, total

    init = jnp.zeros((), dtype=jnp.asarray(xs).dtype)
    return lax.scan(step, init, xs)


def newton_sqrt(a: jax.Array, n_iters: int = 20) -> jax.Array:
    """sqrt(a) by exactly `n_iters` Newton steps from (a + 1) / 2."""

    def body(i: jax.Array, guess: jax.Array) -> jax.Array:
        jax.debug.print("newton step {i}: {g}", i=i, g=guess)
        return 0.5 * (guess + a / guess)

    x0 = (a + 1.0) / 2.0
    return lax.fori_loop(0, n_iters, body, x0)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    log.info("piecewise(-2) = %s", jax.jit(piecewise)(-2.0))
    log.info("running_sum = %s", running_sum(jnp.arange(5.0)))
    log.info("sqrt(2) = %s", jax.jit(newton_sqrt, static_argnames="n_iters")(2.0))
