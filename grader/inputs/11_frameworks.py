"""Probes of 11_frameworks: what the suite reads of a Flax or Equinox model in the sandbox.

A Flax module (class or instance) and an Equinox model are objects, not data: they stay
in the sandbox and the judge holds handles. These probes send back what the checks
need to know about them, as data:

- `type_names(obj)`: is it a class, the qualified names of its classes (its MRO, or its
  type's), its repr: enough for the judge to decide `issubclass(FlaxMLP, nn.Module)`.
- `array_leaves(model)`: the arrays of an Equinox model (`eqx.filter(model, eqx.is_array)`).
- `linear_layers(model)`: the weight and bias of each `eqx.nn.Linear` in the model.

flax and equinox are optional extras: they are imported only inside the probes, which
run only where the student's file (importing them) was imported.
"""

from typing import Any

import jax

from grader.sandbox.probes import probe


def _qualified(cls: type) -> str:
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', '?')}"


@probe
def type_names(obj: Any) -> dict[str, Any]:
    """In the sandbox: {"is_class", "type" (the name of obj's type), "mro" (qualified names of
    obj's classes if obj is a class, else of its type's), "repr"}."""
    is_class = isinstance(obj, type)
    cls = obj if is_class else type(obj)
    try:
        text = repr(obj)
    except Exception:  # a student's __repr__ may raise
        text = f"<{type(obj).__name__}>"
    return {
        "is_class": is_class,
        "type": type(obj).__name__,
        "mro": [_qualified(c) for c in cls.__mro__],
        "repr": text[:300],
    }


@probe
def array_leaves(model: Any) -> list[Any]:
    """In the sandbox: the array leaves of an Equinox model, in order."""
    import equinox as eqx

    return list(jax.tree.leaves(eqx.filter(model, eqx.is_array)))


@probe
def linear_layers(model: Any) -> list[dict[str, Any]]:
    """In the sandbox: {"weight", "bias" (None without one)} of each `eqx.nn.Linear` of the
    model, in order."""
    import equinox as eqx

    found = jax.tree.leaves(model, is_leaf=lambda n: isinstance(n, eqx.nn.Linear))
    return [
        {"weight": layer.weight, "bias": layer.bias}
        for layer in found
        if isinstance(layer, eqx.nn.Linear)
    ]
