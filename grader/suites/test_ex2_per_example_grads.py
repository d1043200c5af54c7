"""Hidden checks for ex2_per_example_grads.py: per-example gradients with vmap(grad).

Per-example gradients are compared with a Python loop of `jax.grad` (tight
tolerance) on two losses with differently shaped params; their batch mean with
the full-batch gradient; "no loop over the examples" is read from the jaxpr
staying the same size as the batch grows. Norms and the top-k ordering are
compared with references computed here in float64.
"""

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from grader.authoring import Credit, check
from grader.checks import calls, diagnose, growth, jit, purity, values, vmap
from grader.checks.failure import CheckFailure, fail
from grader.inputs import ex2_per_example_grads as inputs
from grader.plugin import Gate
from grader.sandbox import client
from grader.sandbox.client import Remote, SandboxGone
from grader.suites._shared import (
    TIGHT,
    Tolerance,
    for_the_cache,
    labelled_batch,
    mlp_params,
    score_cases,
    with_cause,
)

LESSON = "ex2_per_example_grads"
TITLE = "Exercise 2: per-example gradients with vmap(grad)"

_VMAP_FIX = "`jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))(params, xs, ys)`"

# Tolerances other than _shared's:
# "one gradient repeated": copies of one float32 vector are equal, so TIGHT's rtol, with an
# atol below the smallest gradient entries that tell two examples apart
SAME_GRADIENT_TOL: Tolerance = {"rtol": 1e-5, "atol": 1e-7}
# "every norm the same": as above, relative (norms are of order one; atol is NumPy's default)
SAME_NORM_TOL: Tolerance = {"rtol": 1e-6, "atol": 1e-8}
# a sum in another order (a batch mean, a norm over all leaves): FLOAT32's rtol, with an atol
# ten times smaller so that gradient entries and norms much below one still count
SUM_TOL: Tolerance = {"rtol": 1e-4, "atol": 1e-6}


# -- losses of ONE example and their params (written here, not taken from solutions/) ---
# The losses are public (grader/inputs/ex2_per_example_grads.py): student code receives them
# built in its sandbox, `_sent(loss_fn)`; the references here call them directly.

_mlp_loss = inputs.example_mlp_loss  # cross-entropy of the lesson MLP, dict params
_linear_loss = inputs.example_linear_loss  # squared error of a linear model, (w, b) params


def _sent(loss_fn: Any) -> Any:
    """`loss_fn` as an argument of student code: the same public function, built in the sandbox."""
    return client.Public(loss_fn.__name__)


_SMALL = (8, 16, 4)
_PARAMS = mlp_params(_SMALL, w_std="he", b_std=0.1)
_XS, _YS = labelled_batch(12, 8, 4)
# One gradient function per loss, jitted once: the loop reference of test_matches_loop jits the
# same `jax.grad(loss)` object (JAX reuses that compiled program; a jit of the jitted function
# would compile again), and the other references call the jitted one.
_GRAD_FNS = {loss: jax.grad(loss) for loss in (_mlp_loss, _linear_loss)}
_GRADS = {loss: jax.jit(grad) for loss, grad in _GRAD_FNS.items()}


def _bound(fn: Any, loss_fn: Any, **kwargs: Any) -> Any:
    """The student's `fn` with `loss_fn` (and `kwargs`) bound in the sandbox, called eagerly:
    JAX caches each operation's compiled kernel per shape, so after the first call the eager
    run is fast, and a loop-based submission is not made to compile one huge unrolled program
    per check."""
    return client.partial(fn, _sent(loss_fn), **kwargs)


# The lesson's MLP and batch of 32 (test_batch_of_32); the linear model's batch of 7
# (test_matches_loop).
_LESSON_PARAMS = mlp_params((784, 256, 128, 10), 4, w_std="he", b_std=0.1)
_LIN_PARAMS = (jnp.asarray([0.5, -1.0, 2.0], jnp.float32), jnp.float32(0.25))
_LIN_XS = jnp.asarray(np.random.default_rng(2).normal(size=(7, 3)), jnp.float32)
_LIN_YS = jnp.asarray(np.linspace(-1, 1, 7), jnp.float32)


def _lesson_batch_of_32() -> tuple[Any, Any]:
    rng = np.random.default_rng(5)
    xs = jnp.asarray(rng.uniform(0, 1, size=(32, 784)), jnp.float32)
    return xs, jnp.asarray(rng.integers(0, 10, size=32), jnp.int32)


@for_the_cache
def _vmapped_grads_cached() -> None:
    """Run the lesson's per_example_grads (`jax.vmap(jax.grad(loss_fn), in_axes=(None, 0,
    0))`) eagerly in the judge, once, on the losses and batches the value checks pass (the
    small MLP's 12 rows and their first 7 and 9, the lesson MLP's 32, the linear model's
    7): with a judge compilation cache the batched programs of its eager ops are in it,
    and a submission that maps the losses as the lesson shows loads them instead of
    compiling them. The losses are the public ones the sandbox builds (`_sent`)."""
    cases: list[tuple[Any, ...]] = [
        (_mlp_loss, _PARAMS, _XS[:n], _YS[:n])
        for n in (len(_XS), NORMS_SECOND_BATCH, ORDER_SECOND_BATCH)
    ]
    cases.append((_mlp_loss, _LESSON_PARAMS, *_lesson_batch_of_32()))
    cases.append((_linear_loss, _LIN_PARAMS, _LIN_XS, _LIN_YS))
    jax.block_until_ready(  # type: ignore[no-untyped-call]  # untyped in jax
        [jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(*args) for loss, *args in cases]
    )


def _ref_norms(loss_fn: Any, params: Any, xs: Any, ys: Any) -> Any:
    grad = _GRADS[loss_fn]
    norms = []
    for x, y in zip(np.asarray(xs), np.asarray(ys), strict=True):
        leaves = jax.tree.leaves(grad(params, x, y))
        norms.append(np.sqrt(sum(float(np.sum(np.asarray(g, np.float64) ** 2)) for g in leaves)))
    return np.asarray(norms)


@functools.partial(jax.jit, static_argnums=0)
def _ref_full_batch_grad(loss_fn: Any, params: Any, xs: Any, ys: Any) -> Any:
    """The gradient of the batch's mean loss, in one differentiation."""
    return jax.grad(lambda p: jnp.mean(jax.vmap(loss_fn, in_axes=(None, 0, 0))(p, xs, ys)))(params)


def _repeated(loss_fn: Any, params: Any, xs: Any, ys: Any) -> Any:
    """Every example got the same gradient: the gradient of the whole batch's mean (or
    summed) loss, or one gradient repeated (a diagnostic: a cause only when the per-example
    gradients are all equal while the loop's are not)."""

    def diagnostic(grads: Any, expected: Any) -> Any:
        leaves = [np.asarray(g, np.float64) for g in jax.tree.leaves(grads)]
        n = len(xs)
        if not leaves or any(np.ndim(g) < 1 or np.shape(g)[0] != n for g in leaves):
            return None
        if not all(np.allclose(g, g[:1], **SAME_GRADIENT_TOL) for g in leaves):
            return None
        first = jax.tree.map(lambda g: np.asarray(g)[0], grads)
        full = _ref_full_batch_grad(loss_fn, params, xs, ys)
        for scale, loss in ((1.0, "MEAN"), (float(n), "SUMMED")):
            target = jax.tree.map(lambda g, s=scale: np.asarray(g, np.float64) * s, full)
            if (
                values.structure_difference(first, target) is None
                and values.difference(first, target, **SUM_TOL) is None
            ):
                return diagnose.Cause(
                    "full_batch",
                    f"every example got the same gradient: the gradient of the whole batch's "
                    f"{loss} loss (the full-batch gradient), repeated {n} times. The loss was "
                    "computed on all of xs and ys, not on example i alone",
                )
        return diagnose.Cause(
            "repeated",
            f"every example got the same gradient, repeated {n} times: no example's gradient "
            "depends on its own x and y",
        )

    return diagnostic


def _batch_axis_moved(n: int) -> Any:
    """Each leaf holds the right per-example gradients with the batch on another axis than
    the first (`out_axes`, a stack or a transpose along another axis)."""

    def diagnostic(grads: Any, expected: Any) -> Any:
        if jax.tree.structure(grads) != jax.tree.structure(expected):  # type: ignore[operator]
            return None
        moved = False
        for a, e in zip(jax.tree.leaves(grads), jax.tree.leaves(expected), strict=True):
            a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
            if a.shape == e.shape and np.allclose(a, e, rtol=diagnose.RTOL, atol=diagnose.ATOL):
                continue
            fits = [
                i
                for i in range(1, a.ndim)
                if a.shape[i] == n
                and np.moveaxis(a, i, 0).shape == e.shape
                and np.allclose(np.moveaxis(a, i, 0), e, rtol=diagnose.RTOL, atol=diagnose.ATOL)
            ]
            if not fits:
                return None
            moved = True
        if not moved:
            return None
        return diagnose.Cause(
            "batch_axis",
            f"every leaf holds the right per-example gradients, but the batch of {n} is not "
            "the leading axis: the examples are stacked along another axis (`out_axes`, a "
            "transpose, or a stack along another axis)",
        )

    return diagnostic


@functools.partial(jax.jit, static_argnums=0)
def _grads_wrt_x(loss_fn: Any, params: Any, xs: Any, ys: Any) -> Any:
    """What differentiating each example's loss with respect to x (argnums=1) gives."""
    return jax.vmap(jax.grad(loss_fn, argnums=1), in_axes=(None, 0, 0))(params, xs, ys)


GRAD_WRT_X = (
    "these are the gradients with respect to each example's x, not to params: the loss was "
    "differentiated in its second argument (`jax.grad(loss_fn, argnums=1)`); jax.grad "
    "differentiates in the FIRST argument by default, which is params here"
)


def _per_example_causes(loss_fn: Any, params: Any, xs: Any, ys: Any) -> Any:
    """The diagnostics of per-example gradients, in order."""
    n = len(xs)
    return (
        diagnose.batch_scale(n, what="the batch"),
        _batch_axis_moved(n),
        _repeated(loss_fn, params, xs, ys),
        diagnose.matches(_grads_wrt_x(loss_fn, params, xs, ys), GRAD_WRT_X, "grad_wrt_x"),
    )


LABELS_UNMAPPED = (
    "the labels are not mapped with the examples: each example's loss was given the whole "
    "ys instead of its own label, so it returns one loss per label, not a scalar, and "
    "jax.grad refuses it (ys carries the batch on its axis 0, as xs does)"
)


def _labels_unmapped(fn: Any, loss_fn: Any, params: Any, xs: Any, ys: Any) -> bool:
    """`fn` raises, on the batch and on its first half, the very error (type and message, the
    loss's output shape in it) that the reference raises with ys not mapped,
    `in_axes=(None, 0, None)`."""
    for n in (len(xs), max(2, len(xs) // 2)):
        args = (params, xs[:n], ys[:n])
        mistake = calls.error_of(
            lambda args=args: jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, None))(*args)
        )
        if mistake is None or calls.error_of(lambda args=args: fn(*args)) != mistake:
            return False
    return True


def _per_example_failure(
    failure: Any, fn: Any, loss_fn: Any, params: Any, xs: Any, ys: Any, mlp_fn: Any = None
) -> Any:
    """`failure` with the cause the diagnostics confirm on the student's outputs for the
    batch and for its first half (`fn` called again on both: a cause must hold on two batch
    sizes), or, for values that differ with no confirmed cause, with none (the loop
    comparison's own guess is dropped). Where `fn` raises, the labels left unmapped are named
    when that mistake raises the same error on both sizes, and on the MLP loss's batches
    too (`mlp_fn`, the student's function bound to the MLP loss, for another loss: a linear
    model's loss of a whole xs or of a whole ys has the same output shape, the MLP's not)."""
    inputs: list[diagnose.Input] = []
    for n in (len(xs), max(2, len(xs) // 2)):
        args = (params, xs[:n], ys[:n])
        try:
            grads = fn(*args)
            expected = vmap.loop_reference(_GRADS[loss_fn], args, (None, 0, 0))
        except SandboxGone:
            raise
        except Exception:
            if not inputs:
                if _labels_unmapped(fn, loss_fn, params, xs, ys) and (
                    loss_fn is _mlp_loss
                    or (
                        mlp_fn is not None
                        and _labels_unmapped(mlp_fn, _mlp_loss, _PARAMS, _XS, _YS)
                    )
                ):
                    return with_cause(failure, cause=LABELS_UNMAPPED, fix=_VMAP_FIX)
                return failure
            continue
        inputs.append((args, grads, expected))
    text = diagnose.confirmed(inputs, lambda args: _per_example_causes(loss_fn, *args))
    if text:
        return with_cause(failure, cause=text, fix=_VMAP_FIX)
    _, grads, expected = inputs[0]
    same_shapes = values.structure_difference(grads, expected) is None and all(
        np.shape(a) == np.shape(e)
        for a, e in zip(jax.tree.leaves(grads), jax.tree.leaves(expected), strict=True)
    )
    return with_cause(failure, cause="", fix=_VMAP_FIX) if same_shapes else failure


# -- per_example_grads ------------------------------------------------------------------


@check(
    "per_example_grads equals a Python loop of jax.grad",
    points=3,
    hint="Which argument of the loss is shared by all examples, and how do you tell jax.vmap so?",
    spec="the gradient of `loss_fn(params, x_i, y_i)` for each example, via `jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))` ... equal to a Python loop of `jax.grad` (tight tolerance)",
    nudge="jax.grad(loss_fn) is the gradient of ONE example's loss; jax.vmap maps it over the examples, and in_axes says which arguments carry the batch (xs, ys) and which are shared by all (params).",
)
def test_matches_loop(student: Remote, credit: Credit) -> None:
    _vmapped_grads_cached()
    lin_params, lin_xs, lin_ys = _LIN_PARAMS, _LIN_XS, _LIN_YS

    def case(loss_fn: Any, params: Any, xs: Any, ys: Any, what: str) -> Any:
        def run() -> None:
            fn = _bound(student.per_example_grads, loss_fn)
            try:
                vmap.assert_matches_loop(
                    fn,
                    _GRAD_FNS[loss_fn],
                    (params, xs, ys),
                    (None, 0, 0),
                    what=what,
                    **TIGHT,
                )
            except CheckFailure as failure:
                mlp_fn = _bound(student.per_example_grads, _mlp_loss)
                found = _per_example_failure(failure, fn, loss_fn, params, xs, ys, mlp_fn)
                raise found from failure.__cause__

        return run

    score_cases(
        credit,
        [
            (
                "MLP cross-entropy, dict params",
                case(_mlp_loss, _PARAMS, _XS, _YS, "per_example_grads(mlp_loss, params, xs, ys)"),
            ),
            (
                "linear squared error, (w, b) params",
                case(
                    _linear_loss,
                    lin_params,
                    lin_xs,
                    lin_ys,
                    "per_example_grads(linear_loss, (w, b), xs, ys)",
                ),
            ),
        ],
    )


@check(
    "per_example_grads is shaped like params with a leading batch axis",
    points=1,
    hint="What should the shape of the gradient of one example's loss be, and what does vmap add in front?",
    spec="a pytree like `params` with a leading batch axis",
    nudge="jax.vmap stacks each output leaf along a new axis 0 (its default out_axes), so the gradient pytree keeps params' structure and every leaf gains the batch axis in front.",
)
def test_structure(student: Remote) -> None:
    fn = _bound(student.per_example_grads, _mlp_loss)
    grads = fn(_PARAMS, _XS, _YS)
    try:
        values.assert_tree_structure(
            grads,
            _PARAMS,
            what="per_example_grads(loss_fn, params, xs, ys)",
            fix="return the pytree that vmap(grad) gives; do not flatten or stack leaves",
        )
    except CheckFailure as failure:
        found = _per_example_failure(failure, fn, _mlp_loss, _PARAMS, _XS, _YS)
        if found.finding.cause:
            raise found from None
        raise
    for path, leaf in jax.tree_util.tree_flatten_with_path(_PARAMS)[0]:
        got = jax.tree_util.tree_flatten_with_path(grads)[0]
        found = dict((jax.tree_util.keystr(p), g) for p, g in got)[jax.tree_util.keystr(path)]
        try:
            values.assert_shape(
                found,
                (12, *leaf.shape),
                what=f"per_example_grads(...){jax.tree_util.keystr(path)} for 12 examples",
                fix=_VMAP_FIX,
            )
        except CheckFailure as failure:
            raise _per_example_failure(failure, fn, _mlp_loss, _PARAMS, _XS, _YS) from None


@check(
    "the batch mean of the per-example gradients is the full-batch gradient",
    points=2,
    hint="The gradient of a mean is the mean of the gradients: which loss does your function differentiate?",
    requires=("test_matches_loop",),
    spec="mean over the batch equals the full-batch gradient",
    nudge="Differentiation is linear: the gradient of the batch's mean loss is the mean of the per-example gradients, provided each one differentiates only its own example's loss.",
)
def test_mean_is_full_batch_grad(student: Remote) -> None:
    grads = _bound(student.per_example_grads, _mlp_loss)(_PARAMS, _XS, _YS)
    mean = jax.tree.map(
        lambda g: np.mean(np.asarray(g, np.float64), axis=0).astype(np.float32), grads
    )
    values.assert_close(
        mean,
        _ref_full_batch_grad(_mlp_loss, _PARAMS, _XS, _YS),
        what="the mean over the batch of per_example_grads(...)",
        **TIGHT,
        diagnostics=(diagnose.batch_scale(len(_XS), what="the batch"),),
        fix=_VMAP_FIX,
    )


@check(
    "per_example_grads' jaxpr does not grow with the batch size",
    points=2,
    hint="Does your function loop over the examples in Python? What does jax.vmap trace instead?",
    requires=("test_matches_loop",),
    spec="jaxpr does not grow with the batch size (a loop is not vmap)",
    nudge="A Python loop is unrolled while JAX traces, one copy of the gradient per example; jax.vmap traces the single-example gradient once and batches each operation.",
)
def test_no_growth(student: Remote) -> None:
    params = mlp_params(_SMALL, w_std="he", b_std=0.1)
    xs, ys = labelled_batch(32, 8, 4, seed=3)
    growth.assert_no_growth(
        student.per_example_grads,
        lambda n: (_sent(_mlp_loss), params, xs[:n], ys[:n]),
        sizes=(4, 32),
        static_argnames=("loss_fn",),
        what="per_example_grads(loss_fn, params, xs, ys)",
        reference=lambda _loss, params, xs, ys: vmap.loop_reference(
            _GRADS[_mlp_loss], (params, xs, ys), (None, 0, 0)
        ),
        fix=_VMAP_FIX,
    )


@check(
    "per_example_grads handles a batch of 32 digits on the lesson's MLP",
    points=1,
    hint="Do your shapes hold for the lesson's 784-256-128-10 network and 32 examples?",
    spec="batch of 32 as in the lesson",
    nudge="The lesson's network and batch are only bigger shapes: vmap adds the batch axis in front of each of params' leaves, whatever their size.",
)
def test_batch_of_32(student: Remote) -> None:
    _vmapped_grads_cached()
    params = _LESSON_PARAMS
    xs, ys = _lesson_batch_of_32()
    fn = _bound(student.per_example_grads, _mlp_loss)
    grads = fn(params, xs, ys)
    try:
        values.assert_tree_structure(grads, params, what="per_example_grads on the lesson MLP")
    except CheckFailure as failure:
        found = _per_example_failure(failure, fn, _mlp_loss, params, xs, ys)
        if found.finding.cause:
            raise found from None
        raise
    try:
        values.assert_shape(
            grads["layer1"]["w"],
            (32, 784, 256),
            what="per_example_grads(...)['layer1']['w']",
            fix=_VMAP_FIX,
        )
    except CheckFailure as failure:
        raise _per_example_failure(failure, fn, _mlp_loss, params, xs, ys) from None
    values.assert_finite(grads, what="per_example_grads on 32 digits")
    grad = _GRADS[_mlp_loss]
    xs_np, ys_np = np.asarray(xs), np.asarray(ys)  # NumPy rows: no indexing program to compile
    for i in (0, 13, 31):
        try:
            values.assert_close(
                jax.tree.map(lambda g, i=i: np.asarray(g)[i], grads),
                grad(params, xs_np[i], ys_np[i]),
                what=f"per_example_grads(...) for example {i} of 32",
                **TIGHT,
            )
        except CheckFailure as failure:
            raise _per_example_failure(failure, fn, _mlp_loss, params, xs, ys) from None


# -- norms and the largest examples -----------------------------------------------------


@check(
    "per_example_grad_norms gives each example's global gradient norm",
    points=2,
    hint="The global norm squares and sums the entries of EVERY leaf before the square root: over which axes do you sum?",
    spec="`per_example_grad_norms(loss_fn, params, xs, ys)` -> array `(B,)` of global gradient norms.",
    nudge="A global norm is one square root over the squares of every entry of every leaf: reduce each leaf over all its axes but the batch axis, add the leaves, then take the root.",
)
def test_norms(student: Remote) -> None:
    _vmapped_grads_cached()
    fn = _bound(student.per_example_grad_norms, _mlp_loss)
    got = fn(_PARAMS, _XS, _YS)
    expected = _ref_norms(_mlp_loss, _PARAMS, _XS, _YS).astype(np.float32)
    right = np.shape(got) == (12,) and values.difference(got, expected, **SUM_TOL) is None
    cause = "" if right else _norms_cause(fn, ((_PARAMS, _XS, _YS), got, expected))
    values.assert_shape(
        got,
        (12,),
        what="per_example_grad_norms(...) for 12 examples",
        cause=cause,
        fix="one norm per example: reduce every axis of each leaf except the batch axis",
    )
    values.assert_close(
        got,
        expected,
        what="per_example_grad_norms(...)",
        **SUM_TOL,
        cause=cause,
        fix="sqrt(sum over all leaves of sum(g_i ** 2)) for each example i",
    )


NORMS_SECOND_BATCH = 7  # a second batch size, on which a cause of wrong norms must hold too


def _norms_cause(fn: Any, first: diagnose.Input) -> str:
    """The cause the norm diagnostics confirm on the student's norms for the check's batch
    (`first`) and for its first NORMS_SECOND_BATCH examples (two sizes), or ""."""
    inputs = [first]
    args = (_PARAMS, _XS[:NORMS_SECOND_BATCH], _YS[:NORMS_SECOND_BATCH])
    try:
        inputs.append((args, fn(*args), _ref_norms(_mlp_loss, *args).astype(np.float32)))
    except SandboxGone:
        raise
    except Exception:  # nothing to confirm on
        return ""
    return diagnose.confirmed(
        inputs, _norm_diagnostics, reference=functools.partial(_ref_norms, _mlp_loss)
    )


def _norm_diagnostics(args: Any) -> Any:
    params, xs, ys = args
    return (
        _same_norm,
        diagnose.batch_scale(len(xs), what="the batch"),
        *_norm_mistakes(_mlp_loss, params, xs, ys),
    )


def _same_norm(got: Any, expected: Any) -> Any:
    """Every example has the same norm while the loop's norms differ."""
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    if got.ndim != 1 or got.size < 2 or np.allclose(expected, expected[:1], **SAME_NORM_TOL):
        return None
    if np.allclose(got, got[:1], **SAME_NORM_TOL):
        return diagnose.Cause(
            "same_norm",
            "every example has the same norm: its gradient is not its own (the same "
            "gradient for every example, e.g. the full-batch gradient repeated)",
        )
    return None


def _norm_mistakes(loss_fn: Any, params: Any, xs: Any, ys: Any) -> Any:
    """The norms the common mistakes give, computed here, as diagnostics."""
    grad = _GRADS[loss_fn]
    per_leaf, weights = [], []
    for x, y in zip(np.asarray(xs), np.asarray(ys), strict=True):
        flat = jax.tree_util.tree_flatten_with_path(grad(params, x, y))[0]
        norms = [
            (jax.tree_util.keystr(path), float(np.sqrt(np.sum(np.asarray(g, np.float64) ** 2))))
            for path, g in flat
        ]
        per_leaf.append(sum(n for _, n in norms))
        weights.append(float(np.sqrt(sum(n**2 for name, n in norms if "'w'" in name))))
    norms = _ref_norms(loss_fn, params, xs, ys)
    in_x = np.asarray(_grads_wrt_x(loss_fn, params, xs, ys), np.float64)
    return (
        diagnose.matches(
            np.sqrt(np.sum(in_x.reshape(len(in_x), -1) ** 2, axis=1)),
            "these are the norms of the gradients with respect to each example's x, not to "
            "params: per_example_grads differentiates the loss in x (see its check)",
            "norms_wrt_x",
        ),
        diagnose.matches(
            np.sqrt(np.sum(norms**2)),
            "one number for the whole batch: each leaf was summed over all its axes, the batch "
            "axis too, so this is the norm of every example's gradient together; sum over "
            "every axis but the first",
            "batch_reduced",
        ),
        diagnose.matches(
            np.asarray(per_leaf),
            "not the global norm: these are the sums of each leaf's own norm; the global norm "
            "squares and sums the entries of every leaf, then takes one square root",
            "leaf_norm_sum",
        ),
        diagnose.matches(
            norms**2,
            "not the global norm: these are its squares, the square root is missing",
            "no_sqrt",
        ),
        diagnose.matches(
            np.asarray(weights),
            "not the global norm: only the weights ('w') are counted, the biases are left out",
            "weights_only",
        ),
    )


def _own_norms_cause(got: Any, norms: Any, own: Any, k: Any) -> str:
    """The indices are the k largest of the student's own per_example_grad_norms (`own`),
    which are not the global norms: "" unless both hold."""
    try:
        own = np.asarray(own, np.float64)
    except (TypeError, ValueError):
        return ""
    if own.shape != norms.shape or np.allclose(own, norms, rtol=1e-4, atol=1e-6):
        return ""
    if [int(i) for i in np.argsort(-own, kind="stable")[:k]] != [int(i) for i in got]:
        return ""
    return (
        "these are the examples with the largest norms as your per_example_grad_norms "
        "computes them, and those norms are not the global norms: fix per_example_grad_norms "
        "first (see its check)"
    )


def _losses(params: Any, xs: Any, ys: Any) -> Any:
    """Each example's loss (the MLP's), for the ranking by loss."""
    return np.asarray(jax.vmap(_mlp_loss, in_axes=(None, 0, 0))(params, xs, ys), np.float64)


def _order_cause(
    got: Any, expected: Any, norms: Any, k: Any, own: Any = None, losses: Any = None
) -> str:
    """What the indices `got` (not `expected`) show on one batch, or "": the k largest of the
    student's own norms `own`, the right ones reversed, the k smallest, the k largest
    `losses`, or the right set in an order the student's norms do not explain either."""
    got_list, exp_list = [int(i) for i in got], [int(i) for i in expected]
    by_loss = [] if losses is None else [int(i) for i in np.argsort(-losses, kind="stable")[:k]]
    ascending = [int(i) for i in np.argsort(norms, kind="stable")]
    own_order = (
        own is not None
        and [int(i) for i in np.argsort(-np.asarray(own, np.float64), kind="stable")[:k]]
        == got_list
    )
    cause = _own_norms_cause(got_list, norms, own, k) if own is not None else ""
    cause = cause or diagnose.first(
        np.asarray(got_list, np.float64),
        np.asarray(exp_list, np.float64),
        diagnose.matches(
            np.asarray(exp_list[::-1], np.float64),
            "the right examples in reverse order, smallest first: the ranking runs "
            "ascending (as `jnp.argsort` does), where the largest norm comes first",
            "reversed",
        ),
        diagnose.matches(
            np.asarray(ascending[:k], np.float64),
            "these are the k SMALLEST norms, smallest first: the ranking runs ascending "
            "(as `jnp.argsort` does), where the largest norm comes first",
            "smallest",
        ),
        diagnose.matches(
            np.asarray(ascending[::-1][1 : k + 1], np.float64),
            "these are the 2nd to (k + 1)-th largest, in order: the largest is left out (a "
            "slice that starts at 1, where the first index is 0)",
            "skips_largest",
        ),
        diagnose.matches(
            np.asarray(by_loss or [-1] * k, np.float64),
            "these are the k examples with the largest LOSS, largest first: the examples are "
            "ranked by loss_fn's value, where the norms of their gradients rank them",
            "by_loss",
        ),
    )
    # the right set in an order that the student's own norms do not explain either
    if not cause and sorted(got_list) == sorted(exp_list) and not own_order:
        cause = "the right examples in the wrong order: the largest norm must come first"
    return cause


def _top_values_cause(got: Any, norms: Any, k: Any) -> str:
    """The k largest norms themselves, largest first, where their indices belong; or ""."""
    top = np.sort(np.asarray(norms, np.float64))[::-1][:k]
    got = np.asarray(got, np.float64)
    if got.shape == top.shape and np.allclose(got, top, **SUM_TOL):
        return (
            "these are the k largest norms themselves, not their indices: `jax.lax.top_k` "
            "returns (values, indices), and the indices are its second output"
        )
    return ""


def _order_failure(what: str, got: Any, expected: Any, norms: Any, k: Any, cause: str) -> Any:
    got_list, exp_list = [int(i) for i in got], [int(i) for i in expected]
    return CheckFailure(
        f"{what}: the {k} examples with the largest gradient norms, largest first",
        expected=f"indices {exp_list} (norms {np.round(norms[exp_list], 4).tolist()})",
        observed=f"indices {got_list}",
        cause=cause,
        fix="`jnp.argsort(-norms)[:k]` or `jax.lax.top_k(norms, k)[1]`",
    )


ORDER_SECOND_BATCH = 9  # the second batch size of test_largest_order


def _top_k_pair_cause(got: Any, norms: Any, k: int) -> str:
    """A (2, k) result whose rows are the k largest norms and their indices, largest first:
    `jax.lax.top_k`'s (values, indices) pair, returned whole; or ""."""
    top = np.argsort(-norms, kind="stable")[:k]
    if (
        np.shape(got) == (2, k)
        and np.array_equal(got[1], top)
        and np.allclose(got[0], norms[top], rtol=1e-5, atol=1e-6)
    ):
        return (
            "the result is the pair (values, indices) that `jax.lax.top_k` returns: row 0 "
            "holds the k largest norms and row 1 their indices, where the indices alone are "
            "expected"
        )
    return ""


_ONE_SHORT = (
    "the indices are the k - 1 largest, in order: one index too few (a slice bound one short: "
    "`[-1:-k:-1]` stops before the k-th largest)"
)


@check(
    "largest_gradient_examples returns the top-k indices, largest first",
    points=2,
    hint="jnp.argsort sorts ascending: how do you get the largest norm first, and how many do you keep?",
    spec="`largest_gradient_examples(loss_fn, params, xs, ys, k=5)` -> indices of the `k` examples with the largest norms, largest first; `k` is a Python int",
    nudge="jnp.argsort orders from smallest to largest; jax.lax.top_k returns the k largest with their indices, largest first.",
)
def test_largest_order(student: Remote, credit: Credit) -> None:
    _vmapped_grads_cached()
    xs, ys = _XS, _YS
    norms = _ref_norms(_mlp_loss, _PARAMS, xs, ys)
    gaps = np.diff(np.sort(norms))
    assert gaps.min() > 1e-4 * norms.max(), "suite data must have distinct norms"

    # a second batch size: a cause is named only when the student's result on it shows the
    # same mistake
    second = (_PARAMS, xs[:ORDER_SECOND_BATCH], ys[:ORDER_SECOND_BATCH])
    second_norms = _ref_norms(_mlp_loss, *second)

    def _own(args: Any) -> Any:
        """The student's per_example_grad_norms on `args`, or None if it fails."""
        try:
            return np.asarray(_bound(student.per_example_grad_norms, _mlp_loss)(*args))
        except SandboxGone:
            raise
        except Exception:  # not written, or its error: its own check shows it
            return None

    def case(k: Any, kwargs: dict[str, Any]) -> Any:
        def call(args: Any) -> Any:
            return np.asarray(_bound(student.largest_gradient_examples, _mlp_loss, **kwargs)(*args))

        def on_second(cause_of: Any) -> str:
            """The cause `cause_of(got)` gives on the second batch ("" when it fails there)."""
            try:
                return str(cause_of(call(second)))
            except SandboxGone:
                raise
            except Exception:
                return ""

        def run() -> None:
            got = call((_PARAMS, xs, ys))

            def short(g: Any, ns: Any) -> str:
                """The cause where `g` is the k - 1 largest, in order (k = 3 and k = 5 both)."""
                top = np.argsort(-ns, kind="stable")
                return _ONE_SHORT if np.array_equal(g, top[: k - 1]) and k > 1 else ""

            cause = short(got, norms) if got.shape == (k - 1,) else ""
            if cause and on_second(lambda g: short(g, second_norms)) != cause:
                cause = ""
            if got.shape == (2, k):
                cause = _top_k_pair_cause(got, norms, k)
                if cause and on_second(lambda g: _top_k_pair_cause(g, second_norms, k)) != cause:
                    cause = ""
            values.assert_shape(
                got, (k,), what=f"largest_gradient_examples(..., k={k})", cause=cause
            )
            if got.dtype.kind not in "iu":
                cause = _top_values_cause(got, norms, k)
                if cause and on_second(lambda g: _top_values_cause(g, second_norms, k)) != cause:
                    cause = ""
                raise fail(
                    f"largest_gradient_examples(..., k={k}) returns indices",
                    expected="an integer array",
                    observed=f"dtype {got.dtype}",
                    cause=cause,
                    fix="return the indices (argsort / top_k), not the norms",
                )
            expected = np.argsort(-norms, kind="stable")[:k]
            if not np.array_equal(got, expected):
                cause = _order_cause(
                    got, expected, norms, k, _own((_PARAMS, xs, ys)), _losses(_PARAMS, xs, ys)
                )
                want = np.argsort(-second_norms, kind="stable")[:k]
                if cause and (
                    on_second(
                        lambda g: (
                            ""
                            if np.array_equal(g, want)
                            else _order_cause(
                                g, want, second_norms, k, _own(second), _losses(*second)
                            )
                        )
                    )
                    != cause
                ):
                    cause = ""
                raise _order_failure(
                    f"largest_gradient_examples(..., k={k})", got, expected, norms, k, cause
                )

        return run

    score_cases(credit, [("default k=5", case(5, {})), ("k=3", case(3, {"k": 3}))])


# -- all three -------------------------------------------------------------------------


_VALUES = {  # the value check each function's properties stand on
    "per_example_grads": "test_matches_loop",
    "per_example_grad_norms": "test_norms",
    "largest_gradient_examples": "test_largest_order",
}


@check(
    "the three functions compile under jax.jit",
    points=1,
    hint="Is every step a JAX operation? Which arguments must stay Python values (static) under jit?",
    spec="`k` is a Python int ... Every function that is meant to be jittable is checked both eagerly and under `jax.jit` (arguments documented as Python values, such as `train`, `rate`, `n_iters` or `sizes`, are static)",
    nudge="Under jax.jit every array is traced, so only JAX operations may touch it; loss_fn and k are Python values, passed as static arguments.",
)
def test_jittable(student: Remote, credit: Credit, gate: Gate) -> None:
    # The batch the value checks ran eagerly (their kernels are compiled) and test_pure traces
    # (the same program: the sandbox's compilation cache loads it).
    args = (_sent(_mlp_loss), _PARAMS, _XS, _YS)
    score_cases(
        credit,
        [
            (
                "per_example_grads",
                lambda: (
                    gate.require(_VALUES["per_example_grads"]),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    jit.assert_jittable(
                        student.per_example_grads,
                        args,
                        static_argnames=("loss_fn",),
                        what="per_example_grads(loss_fn, params, xs, ys)",
                    ),
                ),
            ),
            (
                "per_example_grad_norms",
                lambda: (
                    gate.require(_VALUES["per_example_grad_norms"]),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    jit.assert_jittable(
                        student.per_example_grad_norms,
                        args,
                        static_argnames=("loss_fn",),
                        what="per_example_grad_norms(loss_fn, params, xs, ys)",
                        **TIGHT,
                    ),
                ),
            ),
            (
                "largest_gradient_examples",
                lambda: (
                    gate.require(_VALUES["largest_gradient_examples"]),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    jit.assert_jittable(
                        student.largest_gradient_examples,
                        args,
                        {"k": 3},
                        static_argnames=("loss_fn", "k"),
                        what="largest_gradient_examples(loss_fn, params, xs, ys, k=3)",
                    ),
                ),
            ),
        ],
    )


@check(
    "the three functions are pure",
    points=1,
    hint="Do your functions change params, xs or ys, or anything at module level, or do "
    "something only while jit traces them?",
    spec="purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
    nudge="jax.jit runs the Python body once, while tracing: a print, a global list or a change to an argument happens then (or on every eager call) and is not part of the computation.",
)
def test_pure(student: Remote, credit: Credit, gate: Gate) -> None:
    params = jax.tree.map(np.asarray, _PARAMS)
    args = (_sent(_mlp_loss), params, np.asarray(_XS), np.asarray(_YS))

    def case(name: str) -> Any:
        def run() -> None:
            gate.require(_VALUES[name])
            fn = getattr(student, name)
            what = f"{name}(loss_fn, params, xs, ys)"
            purity.assert_pure(fn, args, what=what, module=student)
            # largest_gradient_examples with test_jittable's k=3: the same program, which
            # the sandbox's compilation cache then loads
            k = (3,) if name == "largest_gradient_examples" else ()
            purity.assert_no_trace_side_effects(
                fn,
                (_sent(_mlp_loss), _PARAMS, _XS, _YS, *k),
                static_argnames=("loss_fn", "k") if k else ("loss_fn",),
                what=f"{name}(loss_fn, params, xs, ys, k=3)" if k else what,
                module=student,
            )

        return run

    score_cases(credit, [(name, case(name)) for name in _VALUES])
