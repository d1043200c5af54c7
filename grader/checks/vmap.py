"""Batched code checked against the obvious loop: a function built with `jax.vmap`
must give, example by example, what the single-example function gives in a Python loop.

    vmap.assert_matches_loop(
        lambda p, x, y: student.per_example_grads(loss, p, x, y),
        jax.grad(loss), (params, xs, ys), in_axes=(None, 0, 0),
        what="per_example_grads(loss_fn, params, xs, ys)")

A failure names the first example that differs and, within it, the leaf and index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from grader.checks import calls, values
from grader.checks.failure import explainable, fail
from grader.sandbox import client


def _batch_size(args: Sequence[Any], in_axes: Sequence[int | None]) -> int:
    sizes = {
        np.shape(leaf)[axis]
        for arg, axis in zip(args, in_axes, strict=True)
        if axis is not None
        for leaf in jax.tree.leaves(arg)
    }
    if len(sizes) != 1:
        raise ValueError(f"mapped arguments disagree on the batch size: {sorted(sizes)}")
    return int(sizes.pop())


def _example(args: Sequence[Any], in_axes: Sequence[int | None], i: int) -> tuple[Any, ...]:
    return tuple(
        arg
        if axis is None
        else jax.tree.map(lambda leaf, a=axis: np.take(np.asarray(leaf), i, axis=a), arg)
        for arg, axis in zip(args, in_axes, strict=True)
    )


def loop_reference(
    single_fn: Callable[..., Any], args: Sequence[Any], in_axes: Sequence[int | None]
) -> Any:
    """`single_fn` applied to each example in a Python loop, outputs stacked on axis 0."""
    n = _batch_size(args, in_axes)
    examples = [_example(args, in_axes, i) for i in range(n)]
    try:  # the same loop, each example run by one compiled program (much faster than eager)
        compiled = (
            client.jit(single_fn) if isinstance(single_fn, client.Remote) else jax.jit(single_fn)
        )
        outs = [compiled(*example) for example in examples]
    except calls.PASS_THROUGH:
        raise
    except Exception:
        outs = [single_fn(*example) for example in examples]
    return jax.tree.map(lambda *leaves: np.stack([np.asarray(x) for x in leaves]), *outs)


@explainable
def assert_matches_loop(
    batched_fn: Callable[..., Any],
    single_fn: Callable[..., Any],
    args: Sequence[Any],
    in_axes: Sequence[int | None],
    *,
    what: str,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    cause: str = "",
    fix: str = "",
) -> Any:
    """`batched_fn(*args)` equals stacking `single_fn` over the examples (`in_axes[i]` is
    the batch axis of argument i, None for an argument shared by all examples). Returns
    the batched output."""
    __tracebackhide__ = True
    args = tuple(args)
    in_axes = tuple(in_axes)
    n = _batch_size(args, in_axes)
    expected = loop_reference(single_fn, args, in_axes)
    actual = _run_batched(batched_fn, args, what=what, n=n)
    found = values.structure_difference(actual, expected)
    if found is not None:
        raise fail(
            f"{what} on a batch of {n}: one output per example, stacked on axis 0",
            expected=found.expected,
            observed=found.observed,
            cause=found.cause,
        )
    for (path, a_leaf), e_leaf in zip(
        jax.tree_util.tree_flatten_with_path(actual)[0], jax.tree.leaves(expected), strict=True
    ):
        name = jax.tree_util.keystr(path) if path else "the output"
        a = np.asarray(a_leaf)
        _require_batch_shape(a, e_leaf, f"the shape of {name} of {what} on a batch of {n}")
        _require_examples(a, e_leaf, name, what=what, n=n, rtol=rtol, atol=atol)
    return actual


def _run_batched(
    batched_fn: Callable[..., Any], args: tuple[Any, ...], *, what: str, n: int
) -> Any:
    """`batched_fn(*args)`, ready; what it raises becomes the check's failure."""
    __tracebackhide__ = True
    try:
        return calls.ready(batched_fn(*args))
    except calls.PASS_THROUGH:
        raise
    except Exception as exc:
        raise calls.translate(
            exc,
            checked=f"{what} on a batch of {n}",
            attempted=f"{calls.name_of(batched_fn)}(...) on a batch of {n}",
            expected="the batched function runs",
        ) from exc


def _require_batch_shape(
    a: np.ndarray[Any, Any], e_leaf: np.ndarray[Any, Any], checked: str
) -> None:
    """Fails unless the output leaf `a` has the loop's shape `e_leaf.shape` (batch axis first),
    saying what the values show: one example's shape (and, where it is, the mean or sum over
    the examples), or the loop's values with the batch on another axis."""
    __tracebackhide__ = True
    if a.shape == e_leaf.shape:
        return
    raise fail(
        checked,
        expected=f"{e_leaf.shape} (batch axis first)",
        observed=f"{a.shape}",
        cause=_shape_cause(a, np.asarray(e_leaf)),
    )


def _same(a: np.ndarray[Any, Any], e: np.ndarray[Any, Any]) -> bool:
    try:
        return a.shape == e.shape and bool(np.allclose(a, e, rtol=1e-4, atol=1e-6))
    except (TypeError, ValueError):
        return False


def _shape_cause(a: np.ndarray[Any, Any], e: np.ndarray[Any, Any]) -> str:
    """What the batched output's values show against the loop's `e` (batch axis first)."""
    if a.shape == e.shape[1:]:
        text = "the batch axis is missing: the output has the shape of one example's result"
        if e.dtype.kind in "fc" and a.dtype.kind in "fc":
            if _same(a, e.mean(axis=0)):
                text += ", and its values are the mean of the loop's results over the examples"
            elif _same(a, e.sum(axis=0)):
                text += ", and its values are the sum of the loop's results over the examples"
        return text
    if a.ndim == e.ndim and a.ndim > 1:
        for k in range(1, e.ndim):
            if _same(a, np.moveaxis(e, 0, k)):
                return (
                    f"the batch is on axis {k}: the values are the loop's with the batch axis "
                    f"moved from 0 to {k}"
                )
        if _same(a, e.T):
            return "the values are the loop's with every axis reversed (transposed)"
    return ""


def _require_examples(
    a: np.ndarray[Any, Any],
    e_leaf: np.ndarray[Any, Any],
    name: str,
    *,
    what: str,
    n: int,
    rtol: float,
    atol: float,
) -> None:
    """Fails at the first of the `n` examples where the output leaf `name` differs from the loop's."""
    __tracebackhide__ = True
    for i in range(n):
        diff = values.difference(a[i], e_leaf[i], rtol=rtol, atol=atol)
        if diff is not None:
            raise fail(
                f"{what} against a Python loop of the single-example function, example by example",
                expected=f"example {i} (of {n}), {name}: {diff.expected}",
                observed=diff.observed,
                cause=diff.cause or _alike_cause(a, np.asarray(e_leaf), n, rtol, atol),
                fix="write the function for ONE example and map it: `jax.vmap(f, in_axes=...)` "
                "with `None` for shared arguments such as params",
            )


def _alike_cause(
    a: np.ndarray[Any, Any], e: np.ndarray[Any, Any], n: int, rtol: float, atol: float
) -> str:
    """Every example's result is the same where the loop's are not: said as seen."""
    if n < 2 or not all(
        values.difference(a[i], a[0], rtol=0.0, atol=0.0) is None for i in range(n)
    ):
        return ""
    if all(values.difference(e[i], e[0], rtol=rtol, atol=atol) is None for i in range(n)):
        return ""
    return (
        f"all {n} examples get the same result, where the loop's results differ from example "
        "to example: the output does not follow the example"
    )
