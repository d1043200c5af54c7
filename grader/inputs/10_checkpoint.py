"""Public inputs and probes of 10_checkpoint: what the suite builds or observes in the sandbox.

- `import_optax(where)`: loads optax in the sandbox, so the optimizer states the suite
  sends there arrive as optax's own namedtuples (`ScaleByAdamState`, `EmptyState`),
  which only a process that imported optax can rebuild (see `grader.protocol.value_codec`).
- `tree_after_save(save, path, tree)`: calls `save(path, tree)` and returns `tree` as the
  sandbox holds it afterwards, so the judge sees whether saving changed its argument.
- `damaged_copy(where, source, target, fraction)`: a copy of a checkpoint with every file
  cut to its first `fraction`, whatever the layout: one file (npz, msgpack, pickle) or a
  folder (orbax). Symlinks, FIFOs and the like are skipped, never followed or opened.
"""

import os
import stat
from collections.abc import Callable
from typing import Any

from grader.probes import files
from grader.sandbox.probes import probe


@probe
def import_optax(where: Any) -> None:
    """In the sandbox: import optax (`where`, any handle, names the sandbox)."""
    import optax  # noqa: F401 - imported for its namedtuple classes


@probe
def tree_after_save(save: Callable[[Any, Any], Any], path: Any, tree: Any) -> Any:
    """In the sandbox: `save(path, tree)`, then `tree` itself (mutated or not)."""
    save(path, tree)
    return tree


MAX_DAMAGED_FILES = 500


@probe
def damaged_copy(where: Any, source: str, target: str, fraction: float = 0.5) -> dict[str, int]:
    """In the sandbox: `target` becomes `source` with every regular file cut to its first
    `fraction` (a file: one cut copy; a folder: the same tree of cut copies). Returns
    {"files": number of files written}."""
    mode = os.lstat(source).st_mode
    if stat.S_ISREG(mode):
        files.truncated_copy(where, source, target, fraction)
        return {"files": 1}
    if not stat.S_ISDIR(mode):
        raise ValueError(f"not a file or a folder: {source}")
    written = 0
    for root, dirs, names in os.walk(source, followlinks=False):
        relative = os.path.relpath(root, source)
        os.makedirs(os.path.normpath(os.path.join(target, relative)), exist_ok=True)
        dirs[:] = [d for d in dirs if stat.S_ISDIR(os.lstat(os.path.join(root, d)).st_mode)]
        for name in sorted(names):
            here = os.path.join(root, name)
            if written >= MAX_DAMAGED_FILES or not stat.S_ISREG(os.lstat(here).st_mode):
                continue
            files.truncated_copy(
                where, here, os.path.normpath(os.path.join(target, relative, name)), fraction
            )
            written += 1
    return {"files": written}
