"""02 - functional autodiff with jax.grad.

PyTorch attaches gradients to tensors (`loss.backward()`, then `w.grad`). JAX
attaches them to functions: `jax.grad(f)` takes a Python function and returns
a NEW function that computes the derivative.

    def f(x):
        return x ** 2

    df = jax.grad(f)      # a function
    df(3.0)               # 6.0

Because the derivative is just another function, it composes with everything:
`jax.grad(jax.grad(f))` is the second derivative, `jax.jit(jax.grad(f))` is a
compiled derivative, `jax.vmap(jax.grad(f))` evaluates it on a batch of points,
and `jax.hessian(f)` (forward-over-reverse, `jax.jacfwd(jax.jacrev(f))`) gives
the matrix of second derivatives of `f: R^n -> R`.

The derivatives are exact up to floating-point rounding: JAX differentiates
the operations your function performs, it does not sample it. A
finite-difference estimate `(f(x + h) - f(x - h)) / (2 * h)` is not the same
thing: in float32 it is off by orders of magnitude more than rounding.

`jax.value_and_grad(loss)` returns `(loss(w), grad(loss)(w))` from ONE forward
and ONE backward pass, which is what a training step wants.

`grad` only works on pure functions: no printing (it runs at trace time only),
no mutation of outside state, no hidden randomness.
"""

import jax
import jax.numpy as jnp


def derivative(f):
    """Return a function computing df/dx of the scalar function `f`.

    `f` maps a float scalar to a float scalar. The returned function must be
    exact to float32 precision and usable under `jax.jit` and `jax.vmap`
    (and by `jax.grad` again). Use `jax.grad`.
    """
    # TODO: return the derivative of f as a function, with jax.grad
    ### BEGIN SOLUTION
    return jax.grad(f)
    ### END SOLUTION


def second_derivative(f):
    """Return a function computing d2f/dx2 of the scalar function `f`.

    Compose `jax.grad` with itself: the derivative of the derivative.
    """
    # TODO: return the second derivative of f, composing jax.grad with itself
    ### BEGIN SOLUTION
    return jax.grad(jax.grad(f))
    ### END SOLUTION


def hessian(f):
    """Return a function giving the (n, n) Hessian matrix of `f: R^n -> R`.

    `H[i, j] = d2f / (dx_i dx_j)`. Use `jax.hessian` (or compose
    `jax.jacfwd` with `jax.jacrev`).
    """
    # TODO: return the Hessian of f as a function, with jax.hessian
    ### BEGIN SOLUTION
    return jax.hessian(f)
    ### END SOLUTION


def mse_value_and_grad(w, x, y):
    """Return `(loss, dloss/dw)` for `loss = mean((x @ w - y) ** 2)`.

    `w` has shape (d,), `x` shape (n, d), `y` shape (n,). Compute both in one
    forward and one backward pass with `jax.value_and_grad` (do not evaluate
    the loss a second time).
    """
    # TODO: define the loss as a function of w and call jax.value_and_grad on it
    ### BEGIN SOLUTION
    def loss(w):
        return jnp.mean((x @ w - y) ** 2)

    return jax.value_and_grad(loss)(w)
    ### END SOLUTION
