"""Functions and objects the judge may hand to student code, by name.

A check that passes a function into student code (a loss for `per_example_grads`,
an `f` for `derivative`, a timed step for a student's timer) names it here; the
sandbox builds it from this module, never from the suite, so no reference
solution ever reaches student code. Everything here is public: it ships in the
student release.

    @public
    def wave(x):
        return jnp.sin(3.0 * x) + 0.5 * x ** 2

    student.derivative(Public("wave"))           # in a suite
    timer(Public("sleep_step", (0.02,)))         # a factory, built with these arguments
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

REGISTRY: dict[str, Callable[..., Any]] = {}
FACTORIES: set[str] = set()


def _register(fn: Callable[..., Any]) -> None:
    known = REGISTRY.get(fn.__name__)
    if known is not None and known is not fn:
        raise ValueError(
            f"two public inputs are named {fn.__name__!r} ({known.__module__} and {fn.__module__}): "
            "names are global, prefix them with the lesson's topic"
        )
    REGISTRY[fn.__name__] = fn


def public(fn: F) -> F:
    """Register `fn` under its name: the sandbox passes `fn` itself to student code."""
    _register(fn)
    return fn


def factory(fn: F) -> F:
    """Register `fn` as a factory: `Public(name, (arg, ...))` is `fn(arg, ...)`, built in the sandbox."""
    _register(fn)
    FACTORIES.add(fn.__name__)
    return fn


def build(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    fn = REGISTRY.get(name)
    if fn is None:
        raise LookupError(f"no public input named {name!r}")
    if name in FACTORIES:
        return fn(*args, **kwargs)
    if args or kwargs:
        raise TypeError(f"public input {name!r} takes no arguments (it is not a factory)")
    return fn
