"""04 - automatic vectorization with jax.vmap.

Write the function for ONE example, and let `jax.vmap` turn it into a function
for a whole batch:

    def predict(params, x):                  # x: one example, shape (in,)
        return params['w'] @ x + params['b']

    batch_predict = jax.vmap(predict, in_axes=(None, 0))

`in_axes` says, argument by argument, which axis to map over: `None` for
`params` (the same weights for every example: not batched), `0` for `x` (the
examples are stacked along axis 0). The result stacks the per-example outputs
along axis 0.

This is not a hidden Python loop. `vmap` traces `predict` once and rewrites
each operation into its batched form (the matrix-vector product becomes one
matrix-matrix product), so the program is the same size for a batch of 4 or
of 4,000, and it composes with `jit` and `grad`: the lesson's one-liner
`jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))` gives per-example
gradients.

Mapping twice maps over two axes: an outer `vmap` over the rows of `a` around
an inner `vmap` over the rows of `b` evaluates a function on every pair.
"""

import jax
import jax.numpy as jnp


def predict(params, x):
    """Return `params['w'] @ x + params['b']` for ONE example `x`.

    `params['w']` has shape (out, in) here (as in the lesson's vmap demo),
    `params['b']` shape (out,), `x` shape (in,); the result has shape (out,).
    """
    # TODO: compute the affine map w @ x + b for a single example
    ### BEGIN SOLUTION
    return params["w"] @ x + params["b"]
    ### END SOLUTION


def batch_predict(params, xs):
    """Return the predictions for a batch `xs` of shape (batch, in): (batch, out).

    Build it from `predict` with `jax.vmap(predict, in_axes=(None, 0))`:
    the parameters are shared by all examples (not batched), the examples are
    stacked along axis 0. No Python loop.
    """
    # TODO: vectorize predict over the rows of xs with jax.vmap, keeping params unbatched
    ### BEGIN SOLUTION
    return jax.vmap(predict, in_axes=(None, 0))(params, xs)
    ### END SOLUTION


def pairwise_sq_dists(a, b):
    """Return the matrix `D[i, j] = ||a[i] - b[j]||^2`, shape (len(a), len(b)).

    `a` has shape (n, d), `b` shape (m, d). Write the squared distance of two
    single vectors, then map it twice with nested `jax.vmap`: the inner one
    over the rows of `b`, the outer one over the rows of `a`.
    """
    # TODO: write the distance of two vectors, then nest two jax.vmap calls over a and b
    ### BEGIN SOLUTION
    def sq_dist(u, v):
        return jnp.sum((u - v) ** 2)

    one_to_all = jax.vmap(sq_dist, in_axes=(None, 0))  # one row of a, every row of b
    return jax.vmap(one_to_all, in_axes=(0, None))(a, b)
    ### END SOLUTION
