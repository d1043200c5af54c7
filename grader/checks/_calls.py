"""Calling a student's function the way a check needs: static arguments bound,
JAX's exceptions turned into `CheckFailure`s, the student's own line found.

Two sides. In the sandbox, probes use `split_static` and `attempt` (an exception
becomes data, `ErrorInfo`). In the judge, `observed` turns such an error back
into the check's failure (`translate`), letting a stub's NotImplementedError
through so the report says "not attempted".

Private to the check kinds.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from grader.checks import _bound
from grader.checks.failure import CheckFailure, fail
from grader.explain import explain, student_frame
from grader.sandbox.client import Remote, StudentError


def name_of(fn: Callable[..., Any]) -> str:
    """The function's own name, seen through `functools.partial` and `jax.jit`."""
    if isinstance(fn, Remote):
        return fn.__name__
    while hasattr(fn, "func"):  # functools.partial
        fn = fn.func
    return str(getattr(inspect.unwrap(fn), "__name__", None) or getattr(fn, "__name__", "fn"))


def type_name(fn: Any) -> str:
    """The type of the student's object (a handle knows the type it stands for)."""
    return fn._type if isinstance(fn, Remote) else type(fn).__name__


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


def student_line(exc: BaseException) -> str:
    """`"03_jit.py, line 14: if x > 0:"` for the innermost frame outside JAX, Python and
    the grader, following chained exceptions; "" if there is none."""
    frame = student_frame(exc)
    return f"{os.path.basename(frame[0])}, line {frame[1]}: {frame[2]}" if frame else ""


def first_line(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else ""
    return line if len(line) <= limit else line[:limit] + " [...]"


def translate(exc: BaseException, *, checked: str, attempted: str, expected: str) -> CheckFailure:
    """A CheckFailure for an exception JAX (or the student's code) raised while `attempted`
    ran, with the cause and the fix from `grader.explain` when the exception is known."""
    __tracebackhide__ = True
    where = student_line(exc)
    kind = exc.info.type if isinstance(exc, StudentError) else type(exc).__name__
    observed = f"{attempted} raised {kind}: {first_line(exc)}"
    if where:
        observed += f"\n    at {where}"
    explained = explain(exc)
    cause, fix = (explained.cause, explained.fix) if explained else ("", "")
    return fail(checked, expected=expected, observed=observed, cause=cause, fix=fix)


PASS_THROUGH: tuple[type[BaseException], ...] = (NotImplementedError, CheckFailure, MemoryError)
"""Exceptions a check lets propagate: the plugin reports a stub as not attempted."""


def ready(value: Any) -> Any:
    """`jax.block_until_ready`: wait for asynchronous results before judging them."""
    return _bound.block_until_ready(value)  # type: ignore[no-untyped-call]


# -- both sides of a probe -------------------------------------------------------------


def attempt(thunk: Callable[[], Any]) -> Any:
    """In the sandbox: `thunk()` (waited for), or the exception it raised as `ErrorInfo`."""
    from grader.sandbox import server

    try:
        return ready(thunk())
    except Exception as exc:
        assert server.CURRENT is not None
        return server.CURRENT.error_info(exc)


def observed(value: Any, *, checked: str, attempted: str, expected: str) -> Any:
    """In the judge: a probe's observation, or its error raised as the check's failure
    (a stub's NotImplementedError and a MemoryError pass through unchanged)."""
    __tracebackhide__ = True
    if isinstance(value, StudentError):
        if isinstance(value, PASS_THROUGH):
            raise value
        raise translate(value, checked=checked, attempted=attempted, expected=expected) from value
    return value
