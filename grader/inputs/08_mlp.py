"""Public inputs of 08_mlp: a probe that watches the batches `train` hands to `train_step`.

The reshuffling check needs to see which rows each call of the module's `train_step`
receives during one `train(...)`. A handle cannot be monkeypatched from the judge, so
`train_step_batches` does it in the sandbox: it wraps the module attribute for the
duration of the call, records the `x` of every call as an array (None when it is not
concrete, e.g. a tracer), restores the attribute and returns what it saw. The judge
maps the rows back to dataset indices and decides.
"""

from typing import Any

import numpy as np

from grader.checks import _calls
from grader.protocol.values import ErrorInfo
from grader.sandbox.probes import probe


@probe
def train_step_batches(
    module: Any, key: Any, data: Any, n_epochs: int, batch_size: int
) -> dict[str, Any]:
    """In the sandbox: `module.train(key, data, n_epochs=..., batch_size=...)` with the
    module's `train_step` wrapped; the `x` of every call (or None when it could not be
    read as an array) and the error `train` raised, if any."""
    original = module.train_step
    seen: list[Any] = []

    def recording_step(params: Any, opt_state: Any, x: Any, y: Any) -> Any:
        try:
            rows = np.array(x, np.float32)
        except Exception:
            rows = None
        seen.append(rows)
        return original(params, opt_state, x, y)

    module.train_step = recording_step
    try:
        out = _calls.attempt(
            lambda: module.train(key, data, n_epochs=n_epochs, batch_size=batch_size)
        )
    finally:
        module.train_step = original
    return {"batches": seen, "error": out if isinstance(out, ErrorInfo) else None}
