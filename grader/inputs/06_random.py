"""Public code of 06_random: the draws from split_into's subkeys, built in the sandbox.

JAX's key-reuse checker follows typed keys within one process: to see a key that
`split_into` consumed (by splitting it) and then handed out again, the draws from
its subkeys must run where `split_into` runs. The suite asks for that function with
`client.probe(draws_from_subkeys, student.split_into, n, shape)` (a handle) and
judges it with `keys.assert_no_key_reuse`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from grader.sandbox.probes import probe


@probe
def draws_from_subkeys(
    split_into: Callable[..., Any], n: int, shape: tuple[int, ...]
) -> Callable[[Any], Any]:
    """`key -> one N(0, 1) draw of `shape` from each of split_into(key, n)`, flattened and
    stacked (a stacked key array or a list of keys alike)."""

    def draw_each(key: Any) -> Any:
        out = split_into(key, n)
        found = list(out) if isinstance(out, list | tuple) else [out[i] for i in range(len(out))]
        return jnp.stack([jax.random.normal(k, shape).ravel() for k in found])

    return draw_each
