"""Public inputs of 07_pmap: the losses the suite hands to `parallel_mean_grads`, and a
probe that reports where the result of a call lives.

The suite names the losses with `client.Public("pmap_mse")` (the sandbox passes these
very functions to student code) and imports them to compute its references on one
device. Placement (how many devices hold a result) does not survive the trip to the
judge, which receives plain arrays: `grads_and_placement` reports it from the sandbox.
"""

from typing import Any

import jax
import jax.numpy as jnp

from grader.probes import _calls
from grader.protocol.value_codec import ErrorInfo
from grader.sandbox.probes import probe
from grader.sandbox.public_inputs import public


@public
def pmap_mse(params: Any, x: Any, y: Any) -> Any:
    """Linear regression: mean squared error of x @ w + b."""
    return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)


@public
def pmap_cross_entropy(params: Any, x: Any, y: Any) -> Any:
    """A two-layer tanh classifier: mean cross-entropy."""
    h = jnp.tanh(x @ params["hidden"]["kernel"] + params["hidden"]["bias"])
    logits = h @ params["out"]["kernel"]
    return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(y.shape[0]), y])


def _placement(leaf: Any) -> dict[str, Any]:
    try:
        sharding = getattr(leaf, "sharding", None)
        devices = len(sharding.device_set) if sharding is not None else None
    except Exception:
        devices = None
    return {"type": type(leaf).__name__[:100], "devices": devices}


@probe
def grads_and_placement(
    parallel_mean_grads: Any, loss_fn: Any, params: Any, xs: Any, ys: Any
) -> dict[str, Any]:
    """In the sandbox: `parallel_mean_grads(loss_fn, params, xs, ys)` (or the error it
    raised) and, for each leaf of the result, its type and how many devices hold it."""
    out = _calls.attempt(lambda: parallel_mean_grads(loss_fn, params, xs, ys))
    if isinstance(out, ErrorInfo):
        return {"out": out, "placement": None}
    return {"out": out, "placement": jax.tree.map(_placement, out)}
