"""10 - checkpoints as one .npz (np.savez) with a JSON record stored as a string array."""

import json
import os
import tempfile

import jax
import ml_dtypes
import numpy as np

_META = "__meta__"


def save_checkpoint(path, tree):
    leaves, treedef = jax.tree.flatten(tree)
    arrays, dtypes = {}, []
    for i, leaf in enumerate(leaves):
        a = np.asarray(leaf)
        dtypes.append(str(a.dtype))
        if a.dtype == ml_dtypes.bfloat16:
            a = a.view(np.uint16)
        arrays[f"a{i}"] = a
    meta = {
        "treedef": str(treedef),
        "dtypes": dtypes,
        "shapes": [list(np.shape(x)) for x in leaves],
    }
    arrays[_META] = np.array(json.dumps(meta))
    directory = os.path.dirname(os.path.abspath(path))
    handle, tmp = tempfile.mkstemp(dir=directory)
    try:
        with os.fdopen(handle, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def restore_checkpoint(path, like):
    if not os.path.exists(path):
        raise FileNotFoundError(f"checkpoint not found: {path}")
    try:
        with np.load(path, allow_pickle=False) as npz:
            meta = json.loads(str(npz[_META]))
            arrays = [npz[f"a{i}"] for i in range(len(meta["dtypes"]))]
    except Exception as e:
        raise ValueError(f"cannot read checkpoint {path}: {e}") from e
    like_leaves, treedef = jax.tree.flatten(like)
    if meta["treedef"] != str(treedef) or len(arrays) != len(like_leaves):
        raise ValueError(f"checkpoint {path} was saved from another structure")
    leaves = []
    for a, name, ref in zip(arrays, meta["dtypes"], like_leaves, strict=True):
        if a.shape != np.shape(ref):
            raise ValueError(f"checkpoint {path}: shape {a.shape} does not match {np.shape(ref)}")
        leaves.append(a.view(ml_dtypes.bfloat16) if name == "bfloat16" else a.astype(name))
    return jax.tree.unflatten(treedef, leaves)
