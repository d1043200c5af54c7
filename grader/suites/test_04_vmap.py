"""Hidden checks for 04_vmap.py: automatic vectorization.

Batched results are compared with a Python loop over an in-suite reference;
"params are not batched" is checked with a batch whose size equals the
leading dimension of the weights (where mapping over params by mistake runs
silently and returns the wrong shape) and one where it does not (where it
raises); "no Python loop" is checked by the jaxpr staying the same size as
the batch grows.
"""

import re
from typing import Any

import jax
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.authoring import Credit, check
from grader.checks import diagnose, growth, jit, purity, values, vmap
from grader.checks.failure import CheckFailure
from grader.plugin import Gate
from grader.sandbox.client import Remote, StudentError
from grader.suites._shared import Tolerance, compiled, score_cases, with_cause

LESSON = "04_vmap"
TITLE = "automatic vectorization with jax.vmap"

_QUARTERS = st.integers(-12, 12).map(lambda k: k / 4)  # sums of products stay exact in float32
# TIGHT's rtol with an atol of 1e-5: the compiled distances of normal points (not quarters)
# may sum their squares in another order than the eager call, entries near zero included.
_JIT_DISTANCES: Tolerance = {"rtol": 1e-5, "atol": 1e-5}


# -- references -----------------------------------------------------------------------


def _ref_predict(params: Any, x: Any) -> Any:
    w, b = np.asarray(params["w"], np.float64), np.asarray(params["b"], np.float64)
    return np.einsum("oi,i->o", w, np.asarray(x, np.float64)) + b


def _ref_batch_predict(params: Any, xs: Any) -> Any:
    """_ref_predict on every example of xs: the (batch, out) predictions."""
    w, b = np.asarray(params["w"], np.float64), np.asarray(params["b"], np.float64)
    return np.einsum("oi,bi->bo", w, np.asarray(xs, np.float64)) + b


def _ref_pairwise(a: Any, b: Any) -> Any:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    out = np.empty((len(a), len(b)))
    for i, u in enumerate(a):
        for j, v in enumerate(b):
            out[i, j] = float(np.dot(u - v, u - v))
    return out


def _lesson_pairwise(a: Any, b: Any) -> Any:
    """pairwise_sq_dists as the lesson writes it, for the diagnosis only: the squared
    distance of one pair, sum((u - v) ** 2), mapped over b inside and over a outside (the
    nested vmap's order), in plain NumPy. It equals _ref_pairwise on every input (a test
    holds them on many); its one-edit mutants are a student's edits of that formula (a
    difference added, the square left out), where _ref_pairwise's dot product is not."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.array([[np.sum((u - v) ** 2) for v in b] for u in a]).reshape(len(a), len(b))


def _params(out: int, inp: int, seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    w = rng.integers(-8, 9, size=(out, inp)).astype(np.float32) / 4
    b = rng.integers(-8, 9, size=out).astype(np.float32) / 4
    return {"w": jax.device_put(w), "b": jax.device_put(b)}


def _batch(n: int, inp: int, seed: int = 1) -> Any:
    rng = np.random.default_rng(seed)
    return jax.device_put(rng.integers(-8, 9, size=(n, inp)).astype(np.float32) / 4)


# Shapes come from a few fixed sets (the smallest first, as Hypothesis shrinks towards it),
# with the jit checks' shapes among them: each new shape costs the student's function a
# compile in the sandbox. Arrays go to the device with `jax.device_put`: `jnp.asarray`
# compiles a program of its own per shape in the judge.


@st.composite
def _predict_args(draw: Any) -> Any:
    out, inp = draw(st.sampled_from(((1, 1), (2, 3), (3, 3), (5, 2))))  # w's shape
    w = draw(hnp.arrays(np.float32, (out, inp), elements=_QUARTERS))
    b = draw(hnp.arrays(np.float32, out, elements=_QUARTERS))
    x = draw(hnp.arrays(np.float32, inp, elements=_QUARTERS))
    return {"w": jax.device_put(w), "b": jax.device_put(b)}, jax.device_put(x)


@st.composite
def _pairwise_args(draw: Any) -> Any:
    # (len(a), len(b), dim)
    n, m, d = draw(st.sampled_from(((1, 1, 1), (4, 2, 3), (3, 3, 2), (2, 5, 4))))
    a = draw(hnp.arrays(np.float32, (n, d), elements=_QUARTERS))
    b = draw(hnp.arrays(np.float32, (m, d), elements=_QUARTERS))
    return jax.device_put(a), jax.device_put(b)


def _predict_diagnostics(args: Any) -> Any:
    """The mistakes predict(params, x) can be confirmed to have made: the bias left out or
    subtracted. (w
    used as (in, out), `x @ w`, raises for the non-square shapes the search finds first.)"""
    params, x = args
    w = np.asarray(params["w"], np.float64)
    return (
        diagnose.matches(
            w @ np.asarray(x, np.float64),
            "the values are `w @ x` without the bias: `params['b']` is not added",
            kind="no_bias",
        ),
        diagnose.matches(
            w @ np.asarray(x, np.float64) - np.asarray(params["b"], np.float64),
            "the values are `w @ x - b`: the bias is subtracted where it is added",
            kind="bias_subtracted",
        ),
    )


_PAIRWISE_FIX = (
    "inner `jax.vmap(sq_dist, in_axes=(None, 0))` over b, outer `in_axes=(0, None)` over a"
)


def _pairwise_diagnostics(args: Any) -> Any:
    """pairwise_sq_dists's confirmable mistakes: the matrix transposed (a and b swapped in
    the nesting) and the distances not squared (a norm), the latter only where the input
    tells a norm from other distances (pairs differing in one coordinate do not: there
    |u - v| is every norm of u - v)."""
    a, b = (np.asarray(v, np.float64) for v in args)
    norms = np.sqrt(_ref_pairwise(a, b))
    l1 = np.abs(a[:, None, :] - b[None, :, :]).sum(axis=-1)
    if np.allclose(norms, l1, rtol=diagnose.RTOL, atol=diagnose.ATOL):
        return (diagnose.transposed,)
    diff = a[:, None, :] - b[None, :, :]
    return (
        diagnose.transposed,
        diagnose.matches(
            norms,
            "the values are the distances ||a[i] - b[j]||, not their squares: a norm (or a "
            "square root) was taken where the sum of squared differences is wanted",
            kind="not_squared",
        ),
        diagnose.matches(
            l1,
            "the values are the sums of absolute differences sum(|a[i] - b[j]|) (an L1 "
            "distance), not the sums of squared differences",
            kind="l1",
        ),
        diagnose.matches(
            diff.sum(axis=-1) ** 2,
            "the values are the square of the summed difference, (sum(a[i] - b[j])) ** 2: the "
            "square is taken after the sum, not of each coordinate's difference before it",
            kind="square_of_sum",
        ),
        diagnose.matches(
            (a**2).sum(-1)[:, None] + (b**2).sum(-1)[None, :] - a @ b.T,
            "the values are |a[i]|^2 + |b[j]|^2 - a[i] . b[j]: the expansion's cross term is "
            "taken once, where the squared distance takes it twice",
            kind="cross_term_once",
        ),
        diagnose.matches(
            (a**2).sum(-1)[:, None] - (b**2).sum(-1)[None, :],
            "each entry is ||a[i]||^2 - ||b[j]||^2, a difference of squares (it can be "
            "negative): the distance squares the difference, sum((a[i] - b[j]) ** 2)",
            kind="difference_of_squares",
        ),
    )


_PARAMS_BATCHED = (
    "params were batched too: `jax.vmap(predict)` maps over axis 0 of EVERY argument, so each "
    "example got one row of w and one entry of b"
)
_IN_AXES_FIX = "`jax.vmap(predict, in_axes=(None, 0))(params, xs)`: None leaves params unbatched"


def _batch_predict_call(student: Remote, params: Any, xs: Any, what: str) -> Any:
    """Call batch_predict, explaining vmap's size error when params were mapped: the error
    lists a mapped axis of params' size (w's rows, b's length), which no axis of xs has."""
    try:
        return student.batch_predict(params, xs)
    except ValueError as exc:
        out = int(np.shape(params["w"])[0])
        mapped = re.search(rf"had size {out}\b", str(exc)) is not None
        if "inconsistent sizes" not in str(exc) or out in np.shape(xs) or not mapped:
            raise
        raise CheckFailure(
            what,
            expected=f"predictions of shape ({xs.shape[0]}, {params['w'].shape[0]})",
            observed=f"ValueError: {str(exc).splitlines()[0]}",
            cause=_PARAMS_BATCHED,
            fix=_IN_AXES_FIX,
        ) from None


# -- predict ---------------------------------------------------------------------------


@check(
    "predict computes w @ x + b for one example",
    points=2,
    hint="For w of shape (out, in) and x of shape (in,), which product gives a vector of shape (out,)?",
    nudge="Write predict for a single example only: with w stored (out, in), the matrix multiplies the vector from the left, and the bias is added after.",
    spec="`predict(params, x)` -> `params['w'] @ x + params['b']` for ONE example `x` (`params['w']` is (out, in) here, as in the lesson's vmap demo)",
)
def test_predict_values(student: Remote, seed: int) -> None:
    fix = "return `params['w'] @ x + params['b']`"
    try:
        values.assert_matches_reference(
            compiled(student.predict),
            _ref_predict,
            _predict_args(),
            what="predict(params, x)",
            max_examples=20,
            seed=seed,
            diagnostics=_predict_diagnostics,
            fix=fix,
        )
    except CheckFailure as failure:
        cause = _product_order_cause(student)
        if not cause:
            raise
        raise with_cause(failure, cause=cause, fix=fix) from failure.__cause__


def _product_order_cause(student: Remote) -> str:
    """The cause "x @ w" when, on square weights of two sizes (where x @ w runs), predict
    gives x @ w + b, which is not w @ x + b there; else ""."""
    for n, seed in ((2, 5), (3, 6)):
        params, x = _params(n, n, seed=seed), np.asarray(_batch(1, n, seed=seed))[0]
        try:
            got = np.asarray(student.predict(params, jax.device_put(x)), np.float64)
        except StudentError:
            return ""
        w, b = np.asarray(params["w"], np.float64), np.asarray(params["b"], np.float64)
        other = x.astype(np.float64) @ w + b
        if np.allclose(other, w @ x + b) or got.shape != other.shape:
            return ""
        if not np.allclose(got, other, rtol=1e-4, atol=1e-5):
            return ""
    return (
        "predict computes `x @ w`, where the lesson's w is (out, in) and the product is "
        "`w @ x`: on square weights, where `x @ w` runs, predict gives x @ w + b (on other "
        "shapes the product's sizes do not match)"
    )


@check(
    "predict compiles under jax.jit",
    points=1,
    requires=("test_predict_values",),
    hint="Under jit (and under vmap) x is a tracer: is every operation in predict from jax.numpy?",
    nudge="predict will be traced by vmap and jit, so it may only use jax.numpy operations on its arguments.",
    spec="Every function that is meant to be jittable is checked both eagerly and under `jax.jit`",
)
def test_predict_jit(student: Remote) -> None:
    # The shapes test_pure traces (params (2, 3), x (3,)): one program, which the sandbox's
    # compilation cache loads the second time (so in the other jit checks).
    jit.assert_jittable(
        student.predict,
        (_params(2, 3), jax.device_put(np.asarray(_batch(1, 3))[0])),
        what="predict(params, x)",
    )


# -- batch_predict -------------------------------------------------------------------


@check(
    "batch_predict matches a Python loop of predict",
    points=3,
    hint="What does jax.vmap(predict, in_axes=...) return, and which axis of xs holds the examples?",
    nudge="vmap turns the one-example predict into a batched function; in_axes says which argument carries the batch on which axis.",
    spec="`batch_predict(params, xs)` -> predictions for a batch, built with `jax.vmap(predict, in_axes=(None, 0))` ... Checks: match a Python loop",
)
def test_batch_predict_matches_loop(student: Remote) -> None:
    params, xs = _params(3, 5), _batch(6, 5)
    _batch_predict_call(student, params, xs, "batch_predict(params, xs) for 6 examples")
    try:
        vmap.assert_matches_loop(
            student.batch_predict,
            _ref_predict,
            (params, xs),
            (None, 0),
            what="batch_predict(params, xs)",
        )
    except CheckFailure as failure:
        cause = _batch_predict_cause(student)
        if not cause:
            raise
        raise with_cause(failure, cause=cause, fix=_IN_AXES_FIX) from None


# batch_predict's inputs of three sizes (params (out, in), batch), 4 x 4 the one where
# mapping params too raises nothing
_BATCH_PREDICT_SIZES = ((3, 5, 6), (3, 5, 2), (4, 3, 4))


def _batch_predict_cause(student: Remote) -> str:
    """The mistake batch_predict confirms on inputs of three sizes, or "": its result the
    (out, batch) transpose of the expected (batch, out) (`out_axes=1`)."""
    seen = []
    for (out, inp, n), seeds in zip(_BATCH_PREDICT_SIZES, ((0, 1), (0, 4), (2, 3)), strict=True):
        params, xs = _params(out, inp, seed=seeds[0]), _batch(n, inp, seed=seeds[1])
        try:
            got = student.batch_predict(params, xs)
        except StudentError:
            return ""
        seen.append(((params, xs), got, _ref_batch_predict(params, xs)))
    return diagnose.confirmed(seen, _batch_predict_diagnostics, reference=_ref_batch_predict)


def _batch_predict_diagnostics(args: Any) -> Any:
    params, xs = args
    return (
        diagnose.matches(
            _ref_batch_predict(params, xs).T,
            "the batch is on the last axis: the result is (out, batch), the transpose of the "
            "expected (batch, out), what `out_axes=1` (or -1) gives; the batch belongs on axis 0",
            kind="batch_last",
        ),
    )


@check(
    "batch_predict does not batch params",
    points=2,
    hint="in_axes has one entry per argument: which entry says 'the same params for every example'?",
    nudge="vmap maps over axis 0 of every argument unless in_axes says otherwise; a None entry shares that argument with every example.",
    spec="built with `jax.vmap(predict, in_axes=(None, 0))` ... `params` is not batched",
)
def test_batch_predict_params_unbatched(student: Remote) -> None:
    # A batch of 4 examples and weights with 4 output rows: mapping over params by
    # mistake raises nothing here, it silently pairs example i with row i of w.
    params, xs = _params(4, 3, seed=2), _batch(4, 3, seed=3)
    what = "batch_predict(params, xs) with 4 examples and w of shape (4, 3)"
    got = _batch_predict_call(student, params, xs, what)
    expected = np.stack([_ref_predict(params, x) for x in np.asarray(xs)])
    try:
        values.assert_close(got, expected, what=what)
    except CheckFailure as failure:
        # what vmap over params as well gives: example i meets row i of w and entry i of b
        w, b = np.asarray(params["w"], np.float64), np.asarray(params["b"], np.float64)
        mapped = np.einsum("ij,ij->i", w, np.asarray(xs, np.float64)) + b
        confirmed = np.shape(got) == mapped.shape and np.allclose(
            np.asarray(got, np.float64), mapped, rtol=diagnose.RTOL, atol=diagnose.ATOL
        )
        cause = _PARAMS_BATCHED if confirmed else _batch_predict_cause(student)
        f = failure.finding
        raise CheckFailure(
            f.checked,
            expected=f.expected,
            observed=f.observed,
            cause=cause or f.cause,
            fix=_IN_AXES_FIX,
        ) from None


@check(
    "batch_predict's jaxpr does not grow with the batch size",
    points=2,
    requires=("test_batch_predict_matches_loop", "test_batch_predict_params_unbatched"),
    hint="Does a Python loop over the examples run while JAX traces your function? What does vmap do instead?",
    nudge="A Python loop over the examples is unrolled while tracing, one copy per example; vmap traces predict once and batches its operations.",
    spec="built with `jax.vmap(predict, in_axes=(None, 0))` ... the jaxpr does not grow with the batch size",
)
def test_batch_predict_no_growth(student: Remote) -> None:
    params = _params(3, 5)
    growth.assert_no_growth(
        student.batch_predict,
        lambda n: (params, _batch(n, 5)),
        sizes=(4, 32),
        what="batch_predict(params, xs)",
        reference=lambda params, xs: np.stack([_ref_predict(params, x) for x in np.asarray(xs)]),
        cause="a Python loop (or list comprehension) over the examples unrolls: one copy of "
        "predict per example",
        fix=_IN_AXES_FIX,
    )


@check(
    "batch_predict compiles under jax.jit",
    points=1,
    requires=("test_batch_predict_matches_loop", "test_batch_predict_params_unbatched"),
    hint="Is everything inside batch_predict a JAX operation on its arguments?",
    nudge="A vmapped function is an ordinary JAX function: jit can trace it as long as nothing inside leaves jax.numpy.",
    spec="Every function that is meant to be jittable is checked both eagerly and under `jax.jit`",
)
def test_batch_predict_jit(student: Remote) -> None:
    jit.assert_jittable(
        student.batch_predict, (_params(2, 3), _batch(4, 3)), what="batch_predict(params, xs)"
    )


# -- pairwise_sq_dists ------------------------------------------------------------------


@check(
    "pairwise_sq_dists matches a double loop",
    points=3,
    hint="D[i, j] pairs row i of a with row j of b: which vmap maps over a, which over b, and in which order?",
    nudge="Write the squared distance of two single points, then map it over b inside and over a outside, so rows follow a and columns follow b.",
    spec="`pairwise_sq_dists(a, b)` -> matrix `D[i, j] = ||a[i] - b[j]||^2` using nested `vmap` ... Checks: match a Python loop",
)
def test_pairwise_values(student: Remote, seed: int) -> None:
    # two fixed pairs of point sets first, whose pairs differ in several coordinates: there a
    # norm, an L1 distance and the squared distance all differ, so a diagnosis can tell them
    # apart (the search below shrinks towards one coordinate, where they coincide); and a
    # second pair of other sizes, points of 4 coordinates where the first have 3, so that a
    # cause is named only when both show it and a mean over the coordinates (1/d) is told
    # from a constant 1/3
    pairwise = compiled(student.pairwise_sq_dists)
    a = np.array([[1, 0, 2], [0, -1, 1], [2, 2, 0], [-1, 1, -2]], np.float32) / 4
    b = np.array([[0, 1, -1], [3, -2, 1]], np.float32) / 4
    a4 = np.array([[2, 0, -1, 1], [0, 1, 2, -2], [-1, 3, 0, 1]], np.float32) / 4
    b4 = (
        np.array(
            [[0, -2, 1, 1], [1, 1, -1, 0], [3, 0, 2, -1], [-2, 1, 1, 2], [1, -1, 0, 3]], np.float32
        )
        / 4
    )
    try:
        seen = [
            (args, pairwise(*map(jax.device_put, args)), _ref_pairwise(*args))
            for args in ((a, b), (a4, b4))
        ]
    except StudentError as exc:
        cause = _mapped_together_cause(pairwise, ((a, b), (a4, b4))) if _unequal(exc) else ""
        if not cause:
            raise
        raise CheckFailure(
            "pairwise_sq_dists(a, b) for a of shape (4, 3) and b of shape (2, 3)",
            expected="a (4, 2) matrix of squared distances",
            observed=f"it raised {exc.info.type}: {str(exc).splitlines()[0]}",
            cause=cause,
            fix=_PAIRWISE_FIX,
        ) from None
    cause = diagnose.confirmed(
        seen, _pairwise_diagnostics, names=("a", "b"), reference=_lesson_pairwise
    )
    for (x, y), got, expected in seen:
        values.assert_close(
            got,
            expected,
            what=f"pairwise_sq_dists(a, b) for a of shape {x.shape} and b of shape {y.shape}",
            cause=cause,
            fix=_PAIRWISE_FIX,
        )
    values.assert_matches_reference(
        pairwise,
        _ref_pairwise,
        _pairwise_args(),
        what="pairwise_sq_dists(a, b)",
        max_examples=20,
        seed=seed,
        diagnostics=_pairwise_diagnostics,
        fix=_PAIRWISE_FIX,
    )


def _unequal(exc: StudentError) -> bool:
    """JAX's error for one vmap over arguments whose mapped axes differ in size."""
    return "inconsistent sizes for array axes to be mapped" in str(exc)


def _mapped_together_cause(pairwise: Any, pairs: Any) -> str:
    """The cause "one vmap over a and b together" when, for each pair (a, b) of unequal row
    counts, the student's function on a and b cut to the same number of rows gives the
    row-wise squared distances ||a[i] - b[i]||^2 (two sizes); else ""."""
    for a, b in pairs:
        n = min(len(a), len(b))
        try:
            got = np.asarray(pairwise(jax.device_put(a[:n]), jax.device_put(b[:n])))
        except StudentError:
            return ""
        rows = np.sum((a[:n].astype(np.float64) - b[:n]) ** 2, axis=-1)
        if got.shape != rows.shape or not np.allclose(got, rows, rtol=1e-4, atol=1e-5):
            return ""
    return (
        "one `jax.vmap` maps a and b together: it pairs a[i] with b[i] (on a and b of as many "
        "rows it returns the rows' own distances, one per row) and raises where their row "
        "counts differ; the matrix pairs every row of a with every row of b, a vmap over a "
        "whose function maps over b"
    )


@check(
    "pairwise_sq_dists's jaxpr does not grow with len(a) or len(b)",
    points=2,
    requires=("test_pairwise_values",),
    hint="A loop over the rows of a (or of b) unrolls while tracing: how do two nested vmaps avoid both loops?",
    nudge="Two nested vmaps trace the one-pair distance once; a Python loop over the rows of a or b unrolls one copy per row.",
    spec="`D[i, j] = ||a[i] - b[j]||^2` using nested `vmap` ... the jaxpr does not grow with the batch size",
)
def test_pairwise_no_growth(student: Remote) -> None:
    rng = np.random.default_rng(5)

    def points(n: int) -> Any:
        return jax.device_put(rng.normal(size=(n, 3)).astype(np.float32))

    growth.assert_no_growth(
        student.pairwise_sq_dists,
        lambda n: (points(n), points(n + 3)),
        sizes=(4, 24),
        what="pairwise_sq_dists(a, b)",
        reference=_ref_pairwise,
        cause="a Python loop over the rows of a or b unrolls: one copy of the distance per row",
        fix="nest two `jax.vmap`s: the inner over b, the outer over a",
    )


@check(
    "pairwise_sq_dists compiles under jax.jit",
    points=1,
    requires=("test_pairwise_values",),
    hint="Is everything inside pairwise_sq_dists a JAX operation on its arguments?",
    nudge="Nested vmaps compose with jit: keep the one-pair distance in jax.numpy and nothing is left for Python to evaluate.",
    spec="Every function that is meant to be jittable is checked both eagerly and under `jax.jit`",
)
def test_pairwise_jit(student: Remote) -> None:
    rng = np.random.default_rng(6)
    a = jax.device_put(rng.normal(size=(4, 3)).astype(np.float32))
    b = jax.device_put(rng.normal(size=(2, 3)).astype(np.float32))
    jit.assert_jittable(
        student.pairwise_sq_dists, (a, b), what="pairwise_sq_dists(a, b)", **_JIT_DISTANCES
    )


def _pure_case(gate: Gate, required: Any, fn: Any, args: Any, what: str, module: Any) -> Any:
    def run() -> None:
        gate.require(*required)
        purity.assert_pure(fn, args, what=what, module=module)
        try:
            purity.assert_no_trace_side_effects(
                fn, tuple(jax.device_put(args)), what=what, module=module
            )
        except CheckFailure as failure:  # a function that does not compile: its jit check says so
            if failure.finding.expected != "the function runs under jit":
                raise

    return run


@check(
    "predict, batch_predict and pairwise_sq_dists are pure",
    points=1,
    hint="Do your functions change their arguments or any module-level variable, or do something "
    "(print, append) only while jax.jit traces them?",
    nudge="Each function should only read its arguments and return new arrays, with nothing (prints, globals) that runs only while JAX traces.",
    spec="purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
)
def test_pure(student: Remote, credit: Credit, gate: Gate) -> None:
    params = {"w": np.ones((2, 3), np.float32), "b": np.zeros(2, np.float32)}
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    batch_values = ("test_batch_predict_matches_loop", "test_batch_predict_params_unbatched")
    score_cases(
        credit,
        [
            (
                "predict",
                _pure_case(
                    gate,
                    ("test_predict_values",),
                    student.predict,
                    (params, xs[0]),
                    "predict(params, x)",
                    student,
                ),
            ),
            (
                "batch_predict",
                _pure_case(
                    gate,
                    batch_values,
                    student.batch_predict,
                    (params, xs),
                    "batch_predict(params, xs)",
                    student,
                ),
            ),
            (
                "pairwise_sq_dists",
                _pure_case(
                    gate,
                    ("test_pairwise_values",),
                    student.pairwise_sq_dists,
                    (xs, xs[:2]),
                    "pairwise_sq_dists(a, b)",
                    student,
                ),
            ),
        ],
    )
