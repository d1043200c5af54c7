"""10 - saving and restoring pytrees (checkpoints).

A training run's whole state is pytrees: the params dict and the optimizer
state (for Adam a tuple of namedtuples: `ScaleByAdamState(count, mu, nu)`
and `EmptyState()`). Saving a checkpoint is therefore two questions:
where do the numbers go, and how do you get the tree shape back?

Split a pytree into its two parts with `jax.tree.flatten`:

    leaves, treedef = jax.tree.flatten(state)      # list of arrays, structure
    state = jax.tree.unflatten(treedef, leaves)     # and back

The leaves are arrays: store them in a format that holds arrays and nothing
else, such as NumPy's `.npz` (a zip of `.npy` files, readable anywhere with
`np.load(..., allow_pickle=False)`). The structure is code (namedtuple
classes, dict keys), so do not store it as a pickle, which runs arbitrary
code when loaded and breaks when a class moves. Instead the caller passes a
`like` tree of the right structure (a freshly initialized state) and
restoring means: read the leaves, check they fit `like`, unflatten with
`like`'s treedef. The checkpoint records the structure it was saved from
only to check it.

Keep each leaf's dtype: an int32 step count must come back int32, and
bfloat16 weights as bfloat16 (NumPy has no name for bfloat16, so store its
raw bits and the dtype's name beside them).

A checkpoint a user can trust fails loudly: a missing file raises
`FileNotFoundError`, and a damaged file, or one saved from a different model
(other layers, other shapes), raises `ValueError`, each naming the path, so
a run never silently continues from the wrong weights. Write to a temporary
file and rename it, so a crash mid-save cannot leave half a checkpoint
under the real name. (Production code uses Orbax, which does all of this
plus sharded, asynchronous saves.)
"""

import json
import os
import zipfile

import jax
import jax.numpy as jnp
import numpy as np

FORMAT = "jax-lesson-checkpoint"
VERSION = 1
META = "__checkpoint__"


def _leaf_name(i):
    return f"leaf_{i:05d}"


def save_checkpoint(path, tree):
    """Write the pytree `tree` (arrays as leaves) to the file `path`.

    The file is exactly at `path` (no extension added). It holds every leaf's
    values and dtype and a record of the tree's structure.
    """
    # TODO: flatten the tree; store the leaves (values + dtypes) and the structure in one file
    raise NotImplementedError("save_checkpoint is not implemented yet")


def restore_checkpoint(path, like):
    """Read the checkpoint at `path` into the structure of the pytree `like`.

    Returns a tree with `like`'s structure (dicts, tuples, namedtuples) and
    the SAVED values and dtypes. Raises FileNotFoundError if there is no file
    at `path`; ValueError if the file is not a readable checkpoint or its
    structure or shapes do not match `like`. Messages name the path.
    """
    # TODO: load the leaves, check they fit like's structure, unflatten with like's treedef
    raise NotImplementedError("restore_checkpoint is not implemented yet")
