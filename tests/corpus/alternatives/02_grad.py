"""02 - autodiff with functools.wraps closures and jax.hessian."""

import functools

import jax
import jax.numpy as jnp


def derivative(f):
    df = jax.grad(f)

    @functools.wraps(f)
    def wrapped(x):
        return df(x)

    return wrapped


def second_derivative(f):
    return jax.grad(jax.grad(f))


def hessian(f):
    return jax.hessian(f)


def mse_value_and_grad(w, x, y):
    def loss(w_):
        return jnp.mean(jnp.square(x @ w_ - y))

    return jax.value_and_grad(loss)(w)
