"""The sandbox's side of `grader.checks.exported`: the student's function, `jax.jit`ted
with its static arguments bound, lowered by `jax.export` for the judge's shapes. A
`judged` probe: nothing it returns is believed, the judge parses and runs the program.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.export
import numpy as np

from grader.probes import _calls, _debug
from grader.sandbox.probes import judged

# Bound when the grader is imported, before any student module runs: a module that
# reassigns `jax.export.export` or `jax.jit` does not reach the probe.
_export = jax.export.export
_jit = jax.jit
_struct = jax.ShapeDtypeStruct
_flatten = jax.tree_util.tree_flatten
_make_jaxpr = jax.make_jaxpr


def aval_of(leaf: Any) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """The shape and dtype `jax.jit` gives `leaf` (Python scalars as JAX's defaults)."""
    dtype = np.result_type(getattr(leaf, "dtype", None) or leaf)
    return tuple(int(d) for d in np.shape(leaf)), np.dtype(jax.dtypes.canonicalize_dtype(dtype))


@judged
def export_program(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    static_argnames: tuple[str, ...],
) -> Any:
    """In the sandbox: `jax.jit(fn)` with the static arguments bound, lowered by
    `jax.export` for the shapes of the dynamic ones. Returns the module's bytes, the
    arguments it keeps, and which of the call's arguments are dynamic (`layout`); or the
    error tracing raised. Nothing here is believed: the judge checks the module."""

    def lower() -> dict[str, Any]:
        layout = _calls.dynamic_layout(fn, args, kwargs, static_argnames)
        dynamic_fn, dynamic_args = _calls.split_static(fn, args, kwargs, static_argnames)
        leaves, tree = _flatten(dynamic_args)
        structs = [_struct(*aval_of(leaf)) for leaf in leaves]  # type: ignore[no-untyped-call]

        def flat(*xs: Any) -> Any:
            return dynamic_fn(*jax.tree_util.tree_unflatten(tree, xs))

        flat.__name__ = _calls.name_of(fn)
        try:
            exp = _export(_jit(flat))(*structs)
        except NotImplementedError as exc:  # JAX's own refusal, not the student's stub
            if "host_callbacks" not in str(exc):
                raise
            exp = _without_debug(flat, structs)
            if exp is None:
                return {"refused": "a host callback (JAX cannot export one)"}
        return {
            "module": bytes(exp.mlir_module_serialized),
            "kept": [int(i) for i in exp.module_kept_var_idx],
            "layout": layout,
        }

    return _calls.attempt(lower)


def _without_debug(flat: Callable[..., Any], structs: list[Any]) -> Any:
    """The export of `flat` traced again and lowered without its debug callbacks; None
    when it has none or another callback is left (JAX refuses it again)."""
    closed = _make_jaxpr(flat)(*structs)
    if not _debug.has_debug(closed):
        return None
    try:
        stripped = _debug.without_debug(closed)
    except (AttributeError, TypeError):  # a JAX whose jaxprs this reading does not know
        return None
    try:
        return _export(_jit(stripped))(*structs)
    except NotImplementedError as exc:
        if "host_callbacks" not in str(exc):
            raise
        return None
