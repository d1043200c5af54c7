import jax
from jax.lax import scann  # typo: there is no such function


def piecewise(x):
    return jax.lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)
