"""Public inputs and probes of 10_checkpoint: what the suite builds or observes in the sandbox.

- `pathlib_path(text)`: a `pathlib.Path` (student code must accept one as `path`); in a
  suite, `client.Public("pathlib_path", (str(path),))`.
- `import_optax(where)`: loads optax in the sandbox, so the optimizer states the suite
  sends there arrive as optax's own namedtuples (`ScaleByAdamState`, `EmptyState`),
  which only a process that imported optax can rebuild (see `grader.protocol.values`).
- `tree_after_save(save, path, tree)`: calls `save(path, tree)` and returns `tree` as the
  sandbox holds it afterwards, so the judge sees whether saving changed its argument.
"""

import pathlib
from collections.abc import Callable
from typing import Any

from grader.sandbox.probes import probe
from grader.sandbox.public import factory


@factory
def pathlib_path(text: str) -> pathlib.Path:
    return pathlib.Path(text)


@probe
def import_optax(where: Any) -> None:
    """In the sandbox: import optax (`where`, any handle, names the sandbox)."""
    import optax  # noqa: F401 - imported for its namedtuple classes


@probe
def tree_after_save(save: Callable[[Any, Any], Any], path: Any, tree: Any) -> Any:
    """In the sandbox: `save(path, tree)`, then `tree` itself (mutated or not)."""
    save(path, tree)
    return tree
