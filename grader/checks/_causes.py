"""The words of a confirmed cause, shared by `diagnose` and the tiers it holds
(`transformed`): what a cause is (`Cause`), what confirms one (`Diagnostic`, `matches`), the
tolerance it is confirmed to, and how an argument is named in its text."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

# Two float32 computations of the same number in another order: a ratio or a value that
# agrees to this is taken as confirmed (FLOAT32's rtol; the candidates below are far apart).
RTOL = 1e-4
ATOL = 1e-6


@dataclass(frozen=True)
class Cause:
    """A confirmed cause: `kind` names the mistake (for tests), `text` is the message."""

    kind: str
    text: str


Diagnostic = Callable[[Any, Any], Cause | None]

Input = tuple[Any, Any, Any]  # (the arguments, the student's result, the reference's result)


def _leaves(tree: Any) -> list[np.ndarray[Any, Any]] | None:
    """The leaves as float64 arrays, or None if a leaf is not numeric."""
    out = []
    for leaf in jax.tree.leaves(tree):
        arr = np.asarray(leaf)
        if arr.dtype.kind not in "fiub":
            return None
        out.append(arr.astype(np.float64))
    return out


def _pairs(actual: Any, expected: Any) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
    """Both trees flattened into one vector each, if they have the same structure and shapes."""
    if jax.tree.structure(actual) != jax.tree.structure(expected):  # type: ignore[operator]
        return None
    a, e = _leaves(actual), _leaves(expected)
    if a is None or e is None or any(x.shape != y.shape for x, y in zip(a, e, strict=True)):
        return None
    if not a:
        return None
    return np.concatenate([x.ravel() for x in a]), np.concatenate([y.ravel() for y in e])


def _close(a: Any, b: Any) -> bool:
    return bool(np.allclose(a, b, rtol=RTOL, atol=ATOL))


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")


def _argument(path: str, args: Any, names: Sequence[str] = ()) -> str:
    """`[1]['w']` as "params['w']" where the second argument is named params, else as "the
    second argument's ['w']" (when `args` is a tuple of arguments)."""
    if not isinstance(args, tuple | list) or not path.startswith("["):
        return f"the argument{path and f' {path}'}"
    index, _, rest = path[1:].partition("]")
    if not index.isdigit():
        return f"the argument {path}"
    i = int(index)
    if i < len(names) and names[i]:
        return f"{names[i]}{rest}"
    name = f"the {_ORDINALS[i]} argument" if i < len(_ORDINALS) else f"argument {i + 1}"
    return f"{name}'s {rest}" if rest else name


def matches(alternative: Any, text: str, kind: str = "known") -> Diagnostic:
    """The values are `alternative`, what a known mistake gives (computed by the suite)."""
    return _Matches(alternative, text, kind)


class _Matches:
    """`matches`'s diagnostic; `kinds` says which cause it can confirm, so that an input on
    which a suite does not offer it (the input cannot tell that mistake from another) is
    passed over by `across` instead of counted against the cause."""

    def __init__(self, alternative: Any, text: str, kind: str) -> None:
        self.alternative, self.text, self.kinds = alternative, text, frozenset({kind})

    def __call__(self, actual: Any, expected: Any) -> Cause | None:
        mistake = _pairs(actual, self.alternative)
        if mistake is None or not _close(*mistake):
            return None
        right = _pairs(expected, self.alternative)  # None: the mistake changes the layout
        if right is not None and _close(*right):
            return None  # the mistake would not show on these inputs
        return Cause(next(iter(self.kinds)), self.text)
