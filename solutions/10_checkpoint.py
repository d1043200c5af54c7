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
    ### BEGIN SOLUTION
    leaves, treedef = jax.tree.flatten(tree)
    arrays, described = {}, []
    for i, leaf in enumerate(leaves):
        array = np.asarray(jax.device_get(leaf))
        described.append({"dtype": array.dtype.name, "shape": list(array.shape)})
        if array.dtype.kind == "V":  # bfloat16 & co.: NumPy cannot name them, keep the bits
            array = array.view(f"u{array.dtype.itemsize}")
        arrays[_leaf_name(i)] = array
    meta = {"format": FORMAT, "version": VERSION, "treedef": str(treedef), "leaves": described}
    arrays[META] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    path = os.fspath(path)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as handle:
        np.savez(handle, **arrays)
    os.replace(tmp, path)
    ### END SOLUTION


def restore_checkpoint(path, like):
    """Read the checkpoint at `path` into the structure of the pytree `like`.

    Returns a tree with `like`'s structure (dicts, tuples, namedtuples) and
    the SAVED values and dtypes. Raises FileNotFoundError if there is no file
    at `path`; ValueError if the file is not a readable checkpoint or its
    structure or shapes do not match `like`. Messages name the path.
    """
    # TODO: load the leaves, check they fit like's structure, unflatten with like's treedef
    ### BEGIN SOLUTION
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no checkpoint at {path}")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path} is not a checkpoint: it is not an .npz (zip) archive")
    try:
        with np.load(path, allow_pickle=False) as archive:
            meta = json.loads(bytes(archive[META]).decode())
            if meta.get("format") != FORMAT:
                raise ValueError("not written by save_checkpoint")
            stored = [archive[_leaf_name(i)] for i in range(len(meta["leaves"]))]
    except Exception as exc:  # a zip error, a missing entry, bad JSON: all mean "damaged"
        raise ValueError(
            f"{path} is not a readable checkpoint ({type(exc).__name__}: {exc})"
        ) from None

    like_leaves, treedef = jax.tree.flatten(like)
    if str(treedef) != meta["treedef"]:
        raise ValueError(
            f"the checkpoint {path} does not match the structure of `like`:\n"
            f"  saved: {meta['treedef']}\n  like:  {treedef}"
        )
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(like)[0]]
    leaves = []
    for name, info, array, like_leaf in zip(
        paths, meta["leaves"], stored, like_leaves, strict=True
    ):
        array = array.view(jnp.dtype(info["dtype"])).reshape(info["shape"])
        if tuple(np.shape(like_leaf)) != array.shape:
            raise ValueError(
                f"the checkpoint {path} does not match `like` at {name}: "
                f"saved shape {array.shape}, like has {tuple(np.shape(like_leaf))}"
            )
        if isinstance(like_leaf, (np.ndarray, np.generic)):
            leaves.append(array)  # NumPy in, NumPy out
        else:
            leaves.append(jnp.asarray(array))
    return jax.tree.unflatten(treedef, leaves)
    ### END SOLUTION
