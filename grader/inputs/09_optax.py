"""Public inputs and probes of 09_optax.

- `updates_only(tx)`: in the sandbox, a function `(grads, state, params) -> updates` of
  the student's transformation `tx`. The jit and purity checks judge the updates through
  it: an optimizer state is the student's own structure (a tuple of namedtuples from
  `optax.chain`, an OrderedDict from `optax.named_chain`, ...), carried between calls as
  a handle and never compared with anything.
"""

from collections.abc import Callable
from typing import Any

from grader.sandbox.probes import probe


@probe
def updates_only(tx: Any) -> Callable[..., Any]:
    """In the sandbox: `lambda grads, state, params: tx.update(grads, state, params)[0]`."""

    def update(grads: Any, state: Any, params: Any) -> Any:
        return tx.update(grads, state, params)[0]

    update.__qualname__ = update.__name__ = "make_optimizer(...).update"
    return update
