"""The probes of `grader.checks.keys`: a student's function on fresh copies of its typed
keys, under JAX's key-reuse checker, and again after the global RNGs were moved."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax

from grader.probes import _bound, _calls, _format
from grader.sandbox.probes import probe


def _is_key(leaf: Any) -> bool:
    return bool(_format.is_key(leaf))


def _fresh(tree: Any) -> Any:
    """The same tree with every typed key replaced by an unconsumed copy."""

    def copy(leaf: Any) -> Any:
        if _is_key(leaf):
            return jax.random.wrap_key_data(
                jax.random.key_data(leaf), impl=jax.random.key_impl(leaf)
            )
        return leaf

    return jax.tree.map(copy, tree)


@probe
def observe_key_use(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    static_argnames: tuple[str, ...],
    modes: tuple[str, ...],
) -> list[Any]:
    """In the sandbox: `fn` on fresh copies of the keys under `jax.debug_key_reuse(True)`,
    once per mode ("eagerly", "under jax.jit"); each output, or the error it raised."""
    seen = []
    for mode in modes:
        call = fn if mode == "eagerly" else _bound.jit(fn, static_argnames=static_argnames)

        def run(call: Callable[..., Any] = call) -> Any:
            with _bound.debug_key_reuse(True):
                return _calls.ready(call(*_fresh(args), **kwargs))

        seen.append(_calls.attempt(run))
    return seen


def _key_data(tree: Any) -> Any:
    """Typed keys replaced by their raw data, so that outputs holding keys compare as arrays."""
    return jax.tree.map(lambda leaf: jax.random.key_data(leaf) if _is_key(leaf) else leaf, tree)


@probe
def observe_global_rng(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    static_argnames: tuple[str, ...],
    seeds: tuple[int, ...],
    jit: bool = True,
) -> dict[str, list[Any]]:
    """In the sandbox: `fn` on fresh copies of the same keys, once after each of `seeds` was
    given to NumPy's and Python's global RNGs, eagerly and under a `jax.jit` JAX has never
    seen (so a draw made while tracing is made again); each output or the error it raised.
    The global RNG states are restored afterwards."""
    target = getattr(fn, "__wrapped__", fn) if callable(getattr(fn, "lower", None)) else fn

    def fresh_jit() -> Callable[..., Any]:
        @functools.wraps(target)
        def fresh(*a: Any, **k: Any) -> Any:
            return target(*a, **k)

        return _bound.jit(fresh, static_argnames=tuple(static_argnames))

    saved = _bound.np_get_state(), _bound.py_getstate()
    seen: dict[str, list[Any]] = {"eagerly": []}
    if jit:
        seen["under jax.jit"] = []
    try:
        for mode, outputs in seen.items():
            for seed in seeds:
                call = fn if mode == "eagerly" else fresh_jit()
                _bound.np_seed(seed)
                _bound.py_seed(seed)

                def run(call: Callable[..., Any] = call) -> Any:
                    return _key_data(call(*_fresh(args), **kwargs))

                outputs.append(_calls.attempt(run))
    finally:
        _bound.np_set_state(saved[0])
        _bound.py_setstate(saved[1])
    return seen
