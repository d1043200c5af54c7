"""05 - pytrees: nested containers of arrays.

JAX works on "pytrees": any nesting of lists, tuples, dicts (and namedtuples,
and `None`) whose leaves are arrays or scalars. The lesson's parameters are a
pytree:

    params = {
        'layer1': {'w': jnp.zeros((784, 256)), 'b': jnp.zeros(256)},
        'layer2': {'w': jnp.zeros((256, 128)), 'b': jnp.zeros(128)},
        'layer3': {'w': jnp.zeros((128, 10)),  'b': jnp.zeros(10)},
    }

Every JAX transformation (`grad`, `jit`, `vmap`) knows how to walk pytrees:
`jax.grad(loss)(params)` returns gradients with exactly the structure of
`params`. The `jax.tree` module gives you the same power:

    jax.tree.leaves(tree)            # the leaves, in a fixed order
    jax.tree.map(f, tree)            # apply f to every leaf, keep the structure
    jax.tree.map(f, tree1, tree2)    # f(leaf1, leaf2) for matching leaves
    jax.tree.structure(tree)         # the container structure without leaves

There is no `.parameters()` method and no parameter registry: the tree IS the
model. An optimizer step is one line:

    params = jax.tree.map(lambda p, g: p - lr * g, params, grads)

Write the functions below for ANY pytree, not only the lesson's dict of dicts:
lists, tuples, namedtuples and dicts nested in any way.
"""

import jax
import jax.numpy as jnp
import numpy as np


def count_params(tree):
    """Return the total number of scalars in all leaves of `tree` (a Python int).

    A leaf of shape (3, 4) counts 12, a scalar leaf counts 1. Walk the leaves
    with `jax.tree.leaves`.
    """
    # TODO: add up the sizes of all leaves from jax.tree.leaves
    ### BEGIN SOLUTION
    return sum(int(np.size(leaf)) for leaf in jax.tree.leaves(tree))
    ### END SOLUTION


def tree_sgd(params, grads, lr):
    """Return `params - lr * grads`, leaf by leaf, with the structure of `params`.

    `grads` has the same structure as `params`; `lr` is a float. Use
    `jax.tree.map` with a function of two leaves. Do not modify `params`.
    """
    # TODO: jax.tree.map a two-argument update over params and grads
    ### BEGIN SOLUTION
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)
    ### END SOLUTION


def tree_global_norm(tree):
    """Return the global L2 norm: sqrt of the sum of squares of ALL leaves.

    This is the norm of all leaves flattened into one long vector (what
    `optax.clip_by_global_norm` uses), returned as a JAX scalar.
    """
    # TODO: sum the squares of every leaf, then take one square root
    ### BEGIN SOLUTION
    squares = [jnp.sum(jnp.square(leaf)) for leaf in jax.tree.leaves(tree)]
    return jnp.sqrt(sum(squares, jnp.float32(0.0)))
    ### END SOLUTION


def layer_shapes(params):
    """Return the same tree with every leaf replaced by its shape tuple.

    For the lesson's params this is
    `{'layer1': {'w': (784, 256), 'b': (256,)}, ...}`. Tuples are pytrees
    themselves, so the result is compared with `==`. Use `jax.tree.map`.
    """
    # TODO: jax.tree.map a function returning each leaf's shape
    ### BEGIN SOLUTION
    return jax.tree.map(np.shape, params)
    ### END SOLUTION
