"""Exercise 2: per-example gradients with jax.vmap(jax.grad(...)).

A training step needs the gradient of the MEAN loss over a batch. Some questions
need one gradient PER EXAMPLE instead: which examples pull hardest on the
weights (outliers, mislabelled digits), per-example clipping in differentially
private training, influence estimates. In JAX this is one line, because `grad`
and `vmap` compose:

    jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))(params, xs, ys)

`jax.grad(loss_fn)` is the gradient of the loss of ONE example with respect to
`params` (its first argument). `jax.vmap(..., in_axes=(None, 0, 0))` maps it
over the examples: `None` keeps `params` shared by every example, `0` walks
along axis 0 of `xs` and `ys`. The result is a pytree shaped like `params`
whose every leaf has a new leading batch axis: `grads['layer1']['w'][i]` is
example i's gradient for that weight.

A Python loop of `jax.grad` over the examples computes the same numbers, but it
unrolls while tracing (the program grows with the batch) and runs one small
gradient at a time; `vmap` traces the gradient once and batches every
operation.

`loss_fn(params, x, y)` takes ONE example: `x` of shape `(d,)`, `y` a scalar
integer label (the lesson MLP with cross-entropy is a good example to try, on a
batch of 32 digits as in the lesson).
"""

import jax  # noqa: F401 - the tools you will need
import jax.numpy as jnp  # noqa: F401


def per_example_grads(loss_fn, params, xs, ys):
    """Return the gradient of `loss_fn(params, x_i, y_i)` for every example i.

    `xs` has shape `(B, d)`, `ys` shape `(B,)`. The result is a pytree with the
    structure of `params` whose leaves have a leading batch axis of size B
    (`params['layer1']['w']` of shape `(in, out)` becomes `(B, in, out)`).
    Build it with `jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))`: no
    Python loop over the examples.
    """
    # TODO: map jax.grad(loss_fn) over the examples with jax.vmap (params not batched)
    ### BEGIN SOLUTION
    return jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))(params, xs, ys)
    ### END SOLUTION


def per_example_grad_norms(loss_fn, params, xs, ys):
    """Return an array of shape `(B,)`: the global norm of each example's gradient.

    The global norm of a pytree is the square root of the sum of the squares of
    ALL its entries, over every leaf (`optax.tree.norm` computes it for one
    tree). Start from `per_example_grads`, and reduce every leaf over all axes
    but the batch axis (or `jax.vmap` a per-example norm); then combine the
    leaves.
    """
    # TODO: square, sum and combine every leaf of the per-example gradients, per example
    ### BEGIN SOLUTION
    grads = per_example_grads(loss_fn, params, xs, ys)
    squares = [jnp.sum(jnp.reshape(g, (g.shape[0], -1)) ** 2, axis=1) for g in jax.tree.leaves(grads)]
    return jnp.sqrt(sum(squares))
    ### END SOLUTION


def largest_gradient_examples(loss_fn, params, xs, ys, k=5):
    """Return the indices of the `k` examples with the largest gradient norms,
    largest first: an integer array of shape `(k,)`.

    Use `per_example_grad_norms`, then sort: `jnp.argsort` sorts ascending, so
    think about how to get descending order (`jax.lax.top_k` returns the k
    largest values and their indices, largest first). `k` is a Python int.
    """
    # TODO: sort the per-example norms in descending order and keep the first k indices
    ### BEGIN SOLUTION
    norms = per_example_grad_norms(loss_fn, params, xs, ys)
    return jnp.argsort(-norms)[:k]
    ### END SOLUTION
