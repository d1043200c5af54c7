"""Exercise 2: per-example gradients, norms by a vmapped optax.global_norm, argsort."""

import jax
import jax.numpy as jnp
import optax


def per_example_grads(loss_fn, params, xs, ys):
    grad_fn = jax.grad(loss_fn)
    return jax.vmap(grad_fn, in_axes=(None, 0, 0))(params, xs, ys)


def per_example_grad_norms(loss_fn, params, xs, ys):
    grads = per_example_grads(loss_fn, params, xs, ys)
    return jax.vmap(optax.global_norm)(grads)


def largest_gradient_examples(loss_fn, params, xs, ys, k=5):
    norms = per_example_grad_norms(loss_fn, params, xs, ys)
    return jnp.argsort(-norms)[:k]
