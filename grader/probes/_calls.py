"""Calling a student's function in the sandbox the way a probe needs: static arguments
bound (`split_static`), results waited for and exceptions turned into data (`attempt`,
an `ErrorInfo`). The judge's side (`grader.checks.calls`) turns such an error back into
the check's failure.

Private to the probes and the check kinds.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from grader.probes import _bound
from grader.sandbox.client import Remote


def name_of(fn: Callable[..., Any]) -> str:
    """The function's own name, seen through `functools.partial` and `jax.jit`."""
    if isinstance(fn, Remote):
        return fn.__name__
    while hasattr(fn, "func"):  # functools.partial
        fn = fn.func
    return str(getattr(inspect.unwrap(fn), "__name__", None) or getattr(fn, "__name__", "fn"))


def split_static(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None,
    static_argnames: Iterable[str],
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A function of the dynamic arguments only, with the static ones bound as Python values.

    `split_static(newton_sqrt, (2.0, 20), None, ("n_iters",))` gives `(g, (2.0,))` where
    `g(a) == newton_sqrt(a, n_iters=20)`: exactly what `jax.make_jaxpr` needs.
    """
    args = tuple(args)
    kw = dict(kwargs or {})
    static = set(static_argnames)
    if static & set(_positional_names(fn, len(args))):
        names = _positional_names(fn, len(args))
        first = min(i for i, n in enumerate(names) if n in static)
        kw.update(zip(names[first:], args[first:], strict=True))
        args = args[:first]
    fixed = {k: v for k, v in kw.items() if k in static}
    dynamic_names = [k for k in kw if k not in static]
    n_pos = len(args)

    def dynamic_fn(*dyn: Any) -> Any:
        return fn(*dyn[:n_pos], **dict(zip(dynamic_names, dyn[n_pos:], strict=True)), **fixed)

    dynamic_fn.__name__ = name_of(fn)
    return dynamic_fn, (*args, *(kw[k] for k in dynamic_names))


def dynamic_layout(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None,
    static_argnames: Iterable[str],
) -> list[tuple[str, Any]]:
    """Where each argument of `split_static`'s dynamic function comes from, in its order:
    `("arg", i)` for `args[i]`, `("kw", name)` for `kwargs[name]`."""
    args = tuple(args)
    kw = dict(kwargs or {})
    static = set(static_argnames)
    names = _positional_names(fn, len(args))
    first = len(args)
    if static & set(names):
        first = min(i for i, n in enumerate(names) if n in static)
    position = {n: i for i, n in enumerate(names)}
    moved = names[first:]
    layout: list[tuple[str, Any]] = [("arg", i) for i in range(first)]
    for name in [*(k for k in kw if k not in moved), *moved]:  # split_static's order
        if name not in static:
            layout.append(("arg", position[name]) if name in moved else ("kw", name))
    return layout


def _positional_names(fn: Callable[..., Any], n: int) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    names = []
    for p in params[:n]:
        if p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            break
        names.append(p.name)
    return names


def ready(value: Any) -> Any:
    """`jax.block_until_ready`: wait for asynchronous results before judging them."""
    return _bound.block_until_ready(value)  # type: ignore[no-untyped-call]


def attempt(thunk: Callable[[], Any]) -> Any:
    """In the sandbox: `thunk()` (waited for), or the exception it raised as `ErrorInfo`."""
    from grader.sandbox import server

    try:
        return ready(thunk())
    except Exception as exc:
        assert server.CURRENT is not None
        return server.CURRENT.error_info(exc)
