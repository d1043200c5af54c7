"""06 - explicit PRNG keys.

JAX has no global random state. Every random function takes a key, and the
same key always gives the same numbers:

    key = jax.random.key(42)             # or the older jax.random.PRNGKey(42)
    key, subkey = jax.random.split(key)  # two new, independent keys
    w = jax.random.normal(subkey, (784, 256))

The rule that makes this work: use every key exactly once. A key is a
"consumable": once you have drawn numbers with it (or split it), it is used up.
Need more randomness? Split: `jax.random.split(key, n)` gives `n` independent
subkeys in one call. Drawing two arrays from the same key gives correlated
(for equal shapes: identical) numbers, a bug that no error message reports
unless you turn on JAX's checker, `jax.debug_key_reuse(True)`.

Why bother? A random function becomes a pure function of its key: results are
reproducible across runs, devices and compilations, and `jit`/`vmap` can treat
randomness like any other input. `np.random` and Python's `random` hide a
global state, which breaks all of that: never use them inside JAX code.

Keys made by `jax.random.key` are typed key arrays; `jax.random.PRNGKey` makes
the older raw `uint32[2]` form. The `jax.random` functions accept both, and so
should your functions.
"""

import jax
import jax.numpy as jnp


def split_into(key, n):
    """Return `n` independent subkeys of `key` (a key array of length `n`).

    `n` is a Python int. None of the subkeys may equal `key` itself. Use
    `jax.random.split`.
    """
    # TODO: split the key into n subkeys with jax.random.split
    ### BEGIN SOLUTION
    return jax.random.split(key, n)
    ### END SOLUTION


def init_weights(key, shapes):
    """Return a list of standard normal arrays, one per shape in `shapes`.

    `shapes` is a sequence of shape tuples (a Python value). Each array must
    be drawn with its OWN key: split `key` into `len(shapes)` subkeys and use
    each subkey once, with `jax.random.normal`.
    """
    # TODO: split the key once per shape and draw each array with jax.random.normal
    ### BEGIN SOLUTION
    keys = jax.random.split(key, len(shapes))
    return [jax.random.normal(k, tuple(shape)) for k, shape in zip(keys, shapes)]
    ### END SOLUTION


def noisy(key, x, sigma):
    """Return `x + sigma * noise`, with independent N(0, 1) noise for every element.

    The noise has the shape of `x` and comes from `jax.random.normal(key, ...)`;
    `sigma` is the standard deviation of the added noise.
    """
    # TODO: draw standard normal noise shaped like x and add sigma times it
    ### BEGIN SOLUTION
    return jnp.asarray(x) + sigma * jax.random.normal(key, jnp.shape(x))
    ### END SOLUTION
