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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

REGISTRY: dict[str, Callable[..., Any]] = {}
FACTORIES: set[str] = set()


def public(fn: F) -> F:
    """Register `fn` under its name: the sandbox passes `fn` itself to student code."""
    REGISTRY[fn.__name__] = fn
    return fn


def factory(fn: F) -> F:
    """Register `fn` as a factory: `Public(name, *args)` is `fn(*args)`, built in the sandbox."""
    REGISTRY[fn.__name__] = fn
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
