"""02 - functional autodiff, with type hints and `inspect` in the demo."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import jax
import jax.numpy as jnp

Scalar = Callable[[jax.Array], jax.Array]


def derivative(f: Scalar) -> Scalar:
    """df/dx of a scalar function (exact, composable)."""
    return jax.grad(f)


def second_derivative(f: Scalar) -> Scalar:
    """d2f/dx2: the derivative of the derivative."""
    return derivative(derivative(f))


def hessian(f: Callable[[jax.Array], jax.Array]) -> Callable[[jax.Array], jax.Array]:
    """The (n, n) Hessian of f: R^n -> R, forward over reverse."""
    return jax.jacfwd(jax.jacrev(f))


def _mse(w: jax.Array, x: jax.Array, y: jax.Array) -> jax.Array:
    residual = jnp.dot(x, w) - y
    return jnp.mean(residual**2)


def mse_value_and_grad(w: jax.Array, x: jax.Array, y: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(loss, dloss/dw) in one forward and one backward pass."""
    loss, grad = jax.value_and_grad(_mse)(w, x, y)
    return loss, grad


if __name__ == "__main__":
    for fn in (derivative, second_derivative, hessian, mse_value_and_grad):
        print(fn.__name__, inspect.signature(fn))
    print(derivative(jnp.sin)(0.0), second_derivative(jnp.sin)(0.0))
