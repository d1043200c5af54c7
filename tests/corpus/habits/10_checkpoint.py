"""10 - checkpoints, with a dataclass header, pathlib and a traceback demo."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import sys
import tempfile
import traceback
import zipfile
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

HEADER = "header.json"
MAGIC = "corpus-checkpoint/1"


@dataclasses.dataclass
class Header:
    magic: str
    treedef: str
    shapes: list[list[int]]
    dtypes: list[str]

    def dump(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def load(cls, text: str) -> Header:
        raw = json.loads(text)
        return cls(
            magic=str(raw["magic"]),
            treedef=str(raw["treedef"]),
            shapes=[list(map(int, s)) for s in raw["shapes"]],
            dtypes=[str(d) for d in raw["dtypes"]],
        )


def _encode(leaf: Any) -> tuple[np.ndarray[Any, Any], str]:
    """The leaf's bytes as a NumPy array NumPy can store, and its dtype's name."""
    arr = np.asarray(leaf)
    name = jnp.dtype(arr.dtype).name
    if arr.dtype.kind == "V" or name == "bfloat16":
        arr = arr.view(np.uint16)
    return arr, name


def _decode(arr: np.ndarray[Any, Any], name: str) -> Any:
    dtype = jnp.dtype(name)
    if name == "bfloat16":
        arr = arr.view(dtype)
    arr = arr.astype(dtype, copy=False)
    if jnp.asarray(arr).dtype != dtype:  # a 64-bit dtype JAX would narrow: keep NumPy's
        return arr
    return jnp.asarray(arr)


def save_checkpoint(path: str | os.PathLike[str], tree: Any) -> None:
    """Write tree's leaves (values and dtypes) and structure to exactly `path`."""
    target = Path(path)
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    encoded = [_encode(leaf) for leaf in leaves]
    header = Header(
        magic=MAGIC,
        treedef=str(treedef),
        shapes=[list(np.shape(leaf)) for leaf in leaves],
        dtypes=[name for _, name in encoded],
    )
    fd, tmp = tempfile.mkstemp(prefix=target.name, suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w") as zf:
            zf.writestr(HEADER, header.dump())
            for i, (arr, _) in enumerate(encoded):
                buf = io.BytesIO()
                np.save(buf, arr, allow_pickle=False)
                zf.writestr(f"leaf{i}.npy", buf.getvalue())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read(target: Path) -> tuple[Header, list[np.ndarray[Any, Any]]]:
    try:
        with zipfile.ZipFile(target) as zf:
            header = Header.load(zf.read(HEADER).decode())
            arrays = [
                np.load(io.BytesIO(zf.read(f"leaf{i}.npy")), allow_pickle=False)
                for i in range(len(header.dtypes))
            ]
    except (OSError, KeyError, ValueError, TypeError, zipfile.BadZipFile, EOFError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise ValueError(f"{target}: not a readable checkpoint ({exc})") from exc
    if header.magic != MAGIC:
        raise ValueError(f"{target}: not a checkpoint of this format")
    return header, arrays


def restore_checkpoint(path: str | os.PathLike[str], like: Any) -> Any:
    """The saved values and dtypes in the structure of `like`."""
    target = Path(path)
    if not target.is_file():
        raise FileNotFoundError(f"no checkpoint at {target}")
    header, arrays = _read(target)
    like_leaves, treedef = jax.tree_util.tree_flatten(like)
    if header.treedef != str(treedef):
        raise ValueError(f"{target}: saved structure {header.treedef} does not match {treedef}")
    for i, (arr, like_leaf) in enumerate(zip(arrays, like_leaves, strict=True)):
        if list(arr.shape) != list(np.shape(like_leaf)) or header.shapes[i] != list(arr.shape):
            raise ValueError(
                f"{target}: leaf {i} has shape {arr.shape}, expected {np.shape(like_leaf)}"
            )
    leaves = [_decode(arr, name) for arr, name in zip(arrays, header.dtypes, strict=True)]
    return jax.tree_util.tree_unflatten(treedef, leaves)


if __name__ == "__main__":
    state = {"w": jnp.ones((2, 2), jnp.bfloat16), "step": jnp.int32(3)}
    with tempfile.TemporaryDirectory() as d:
        save_checkpoint(Path(d) / "ckpt", state)
        print(restore_checkpoint(Path(d) / "ckpt", state))
        try:
            restore_checkpoint(Path(d) / "missing", state)
        except FileNotFoundError:
            traceback.print_exc()
        try:
            restore_checkpoint(Path(d) / "ckpt", {"w": jnp.ones(3)})
        except ValueError as err:
            print(f"refused as expected: {err}", file=sys.stderr)
