"""Short, readable text for the values a check shows: arrays as NumPy prints them
(`[0., 1.]`), pytrees as nested literals, long values cut with `...`.

Used by the probes (what they report) and the check kinds (their messages); private to
the grader.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

LIMIT = 160


def show(value: Any, limit: int = LIMIT) -> str:
    text = _show(value)
    return text if len(text) <= limit else text[: limit - 5] + " ...]"


def _show(value: Any) -> str:
    if isinstance(value, np.floating | np.complexfloating):
        return str(value)  # the shortest text of its own precision: float32 0.1 is `0.1`
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, str | bytes | bool | int | float | complex) or value is None:
        return repr(value)
    if is_key(value):
        return f"<PRNG key {value.shape}>"
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        arr = np.asarray(value)
        if arr.ndim == 0:
            return _show(arr[()])
        text = np.array2string(
            arr, separator=", ", threshold=24, edgeitems=4, precision=6, max_line_width=10**6
        )
        return re.sub(r" +([,\]])", r"\1", re.sub(r"\n\s*", " ", text))
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        inner = ", ".join(f"{f}={_show(getattr(value, f))}" for f in value._fields)
        return f"{type(value).__name__}({inner})"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k!r}: {_show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Sequence):
        inner = ", ".join(_show(v) for v in value)
        if isinstance(value, tuple):
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        return f"[{inner}]"
    return repr(value)


def produced_dtype(dtype: Any) -> np.dtype[Any]:
    """The dtype JAX gives a value of `dtype` by default: with 64-bit mode off (JAX's default,
    and the lessons' spec) float64 is float32, int64 int32, complex128 complex64."""
    import jax

    return np.dtype(jax.dtypes.canonicalize_dtype(dtype))


def as_produced(value: Any) -> Any:
    """`value` (what a reference returned) for showing next to what the student's code
    returned: NumPy arrays and scalars in the dtype JAX produces (`produced_dtype`), so an
    expected pytree reads `float32[3]`, not `float64[3]`, and its numbers in float32.
    Python numbers, JAX arrays and keys are kept; only for messages, never for comparing."""
    import jax

    def leaf(x: Any) -> Any:
        if isinstance(x, np.ndarray | np.generic) and x.dtype.kind in "fiuc":
            wanted = produced_dtype(x.dtype)
            return x.astype(wanted) if wanted != x.dtype else x
        return x

    return jax.tree.map(leaf, value)


def is_key(value: Any) -> bool:
    try:
        import jax

        dtype = getattr(value, "dtype", None)
        return dtype is not None and bool(jax.numpy.issubdtype(dtype, jax.dtypes.prng_key))
    except (TypeError, ImportError):
        return False


def call(name: str, args: Sequence[Any], kwargs: Mapping[str, Any] | None = None) -> str:
    """`add_at([0.], [0, 0], [1., 1.])`."""
    parts = [show(a, 80) for a in args] + [f"{k}={show(v, 80)}" for k, v in (kwargs or {}).items()]
    return f"{name}({', '.join(parts)})"


def aval(value: Any) -> str:
    """`float32[8]` (weak-typed Python scalars shown as `float (Python)`)."""
    if isinstance(value, bool | int | float | complex):
        return f"{type(value).__name__} (Python)"
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is None or dtype is None:
        return type(value).__name__
    weak = " weak-typed" if getattr(getattr(value, "aval", None), "weak_type", False) else ""
    return f"{dtype}[{','.join(str(d) for d in shape)}]{weak}"


def counts(counter: Mapping[str, int], limit: int = 10) -> str:
    """`scan x1, add x3, mul x2` (most frequent first)."""
    items = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{k} x{v}" for k, v in items[:limit])
    if len(items) > limit:
        text += f", ... ({len(items) - limit} more kinds)"
    return text or "no equations"
