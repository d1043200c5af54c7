"""01 - jax.numpy and immutability.

`jax.numpy` (imported as `jnp`) re-implements the NumPy API: the same function
names, the same broadcasting rules, the same slicing. The one big difference
is that JAX arrays are immutable. `x[0] = 5` raises a `TypeError`; instead you
ask for a new array with the change applied:

    y = x.at[0].set(5.0)       # y is a new array, x is unchanged
    y = x.at[idx].add(v)       # scatter-add: repeated indices accumulate
    y = x.at[idx].multiply(v)  # ... and .min, .max, .get

Immutability is what lets `jax.grad`, `jax.jit` and `jax.vmap` treat your code
as a pure function of its inputs: nothing outside the returned value ever
changes. Under `jax.jit` the copy usually disappears (XLA updates in place when
the old array is no longer needed), so pure code costs nothing.

Broadcasting works as in NumPy: reducing with `keepdims=True` keeps the reduced
axis with size 1, so the result lines up with the original array again.

Write each function below as a pure function of its arguments: the inputs may
be NumPy or JAX arrays, and must not be changed.
"""

import jax.numpy as jnp


def set_element(x, index, value):
    """Return a new array equal to `x` except that `x[index]` is `value`.

    `x` itself must stay unchanged (also when it is a NumPy array). Use the
    `.at[...]` property of JAX arrays: `jnp.asarray(x).at[index].set(value)`
    is the functional form of `x[index] = value`.
    """
    # TODO: build a new array with `.at[index].set(value)`; do not modify x
    ### BEGIN SOLUTION
    return jnp.asarray(x).at[index].set(value)
    ### END SOLUTION


def add_at(x, indices, values):
    """Return a new array where each `values[k]` is added at `indices[k]`.

    Repeated indices accumulate: `add_at([0., 0.], [0, 0], [1., 1.])` is
    `[2., 0.]` (scatter-add semantics, NumPy's `np.add.at`). `x` must stay
    unchanged. Use `.at[indices].add(values)`.
    """
    # TODO: scatter-add the values with `.at[indices].add(values)`; do not modify x
    ### BEGIN SOLUTION
    return jnp.asarray(x).at[jnp.asarray(indices)].add(jnp.asarray(values))
    ### END SOLUTION


def standardize(x, axis=0):
    """Return `(x - mean) / (std + 1e-8)` with the mean and std taken along `axis`.

    Compute both statistics with `jnp.mean` / `jnp.std` and `keepdims=True`
    so that broadcasting lines them up with `x` for any `axis`. The `1e-8`
    keeps a constant column at 0 instead of NaN. `axis` is a Python int.
    """
    # TODO: subtract the mean and divide by (std + 1e-8), reducing along `axis` with keepdims
    ### BEGIN SOLUTION
    x = jnp.asarray(x)
    mean = jnp.mean(x, axis=axis, keepdims=True)
    std = jnp.std(x, axis=axis, keepdims=True)
    return (x - mean) / (std + 1e-8)
    ### END SOLUTION
