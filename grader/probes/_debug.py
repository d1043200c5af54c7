"""A traced program without its debug callbacks: what `jax.debug.print`,
`jax.debug.callback` and `jax.debug.inspect_array_sharding` stage out, removed from a
jaxpr and from every jaxpr nested in it (loops, branches, inner `jit`s, `remat`,
custom derivatives), together with the debug effects they carry.

Printing at run time is ordinary debugging, not something the grader needs to see: the
export probe (`grader.probes.exported`) lowers the program without it, since
`jax.export` refuses to serialize any host callback. Only primitives without outputs are
removed, so what the program computes cannot change; `jax.pure_callback` and
`jax.experimental.io_callback` are other primitives and stay (and are refused).

None of this is believed by the judge: it reads the program it is handed, refuses any
callback left in it, and checks the values against its own reference.
"""

from __future__ import annotations

from typing import Any

try:  # JAX's own primitives, bound before any student module runs
    from jax._src import core as _core
    from jax._src import debugging as _debugging

    PRIMITIVES: frozenset[Any] = frozenset(
        {_debugging.debug_callback_p, _debugging.debug_print_p, _debugging.inspect_sharding_p}
    )
    EFFECTS: frozenset[Any] = frozenset({_debugging.debug_effect, _debugging.ordered_debug_effect})
except (ImportError, AttributeError):  # another JAX: nothing is removed
    PRIMITIVES = EFFECTS = frozenset()


def has_debug(jaxpr: Any) -> bool:
    """Whether `jaxpr` (a `ClosedJaxpr`) carries a debug effect anywhere in it."""
    return bool(EFFECTS) and any(e in EFFECTS for e in jaxpr.effects)


def without_debug(closed: Any) -> Any:
    """The function of `closed` (a `ClosedJaxpr`) with every debug callback removed, at
    every depth."""
    return _core.jaxpr_as_fun(_core.ClosedJaxpr(_strip(closed.jaxpr), closed.consts))


def _strip(jaxpr: Any) -> Any:
    eqns = [
        eqn.replace(
            params={k: _param(v) for k, v in eqn.params.items()},
            effects=_kept(eqn.effects),
        )
        for eqn in jaxpr.eqns
        if not (eqn.primitive in PRIMITIVES and not eqn.outvars)
    ]
    return jaxpr.replace(eqns=eqns, effects=_kept(jaxpr.effects))


def _param(value: Any) -> Any:
    if isinstance(value, _core.ClosedJaxpr):
        return _core.ClosedJaxpr(_strip(value.jaxpr), value.consts)
    if isinstance(value, _core.Jaxpr):
        return _strip(value)
    if isinstance(value, tuple):
        return tuple(_param(v) for v in value)
    return value


def _kept(effects: Any) -> Any:
    return type(effects)(e for e in effects if e not in EFFECTS)
