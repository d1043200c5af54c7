"""05 - pytrees with jax.tree.reduce, jnp.shape and a generator."""

import operator

import jax
import jax.numpy as jnp
import numpy as np


def count_params(tree):
    return int(jax.tree.reduce(operator.add, jax.tree.map(np.size, tree), 0))


def tree_sgd(params, grads, lr):
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)


def tree_global_norm(tree):
    return jnp.sqrt(sum(jnp.vdot(x, x).real for x in jax.tree.leaves(tree)))


def layer_shapes(params):
    return jax.tree.map(jnp.shape, params)
