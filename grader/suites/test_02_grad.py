"""Hidden checks for 02_grad.py: functional autodiff.

The derivatives are compared with analytic derivatives computed in float64, at
a tolerance (1e-5) that `jax.grad` meets with a wide margin in float32 and that
no finite difference reaches: the test functions are chosen so that central
differences are off by 1e-4 or more at every step size (a large constant
offset makes the rounding error of `f(x + h) - f(x - h)` dominate; curvature
makes the truncation error dominate).
"""

import importlib
from typing import Any

import jax
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.authoring import Credit, check
from grader.checks import calls, diagnose, jit, purity, values, vmap
from grader.checks.failure import CheckFailure, fail
from grader.plugin import Gate
from grader.sandbox import client
from grader.sandbox.client import Remote, SandboxGone, StudentError
from grader.suites._shared import Tolerance, compiled, no_trace_effects, score_cases

LESSON = "02_grad"
TITLE = "functional autodiff with jax.grad"

# Against float64 analytic derivatives: TIGHT's rtol, with an atol of 1e-5 (not 1e-6) for
# the derivatives near zero, still far below what a finite difference misses by.
_ANALYTIC: Tolerance = {"rtol": 1e-5, "atol": 1e-5}
_POINTS = st.floats(-2, 2, width=32, allow_nan=False, allow_infinity=False)

_NOT_EXACT = (
    "every value is within 5% of the exact derivative yet off by more than float32 rounding: "
    "the derivative is approximated, as a finite difference such as (f(x + h) - f(x - h)) / "
    "(2h) does, not computed exactly"
)
_FIRST = "the values are the first derivative: the gradient is taken once, not twice"
_FIRST_SQUARED = (
    "the values are the square of the first derivative, (df/dx) ** 2: the first derivative is "
    "multiplied by itself where it is differentiated again"
)
# "an approximation" is named only when every value is this close to the exact one (a share
# of the largest exact value): near, but off by more than rounding; a wrong formula is not
_NEAR = 0.05
# where a failed derivative is held to a cause (float32, inside the searched range)
_GRID = tuple(float(x) for x in np.linspace(-1.9, 1.9, 9, dtype=np.float32))


def _approximates(got: Any, exact: Any) -> bool:
    """Every value of `got` is near `exact` (within _NEAR of the largest exact value)."""
    a = np.asarray(got, dtype=np.float64)
    e = np.asarray(exact, dtype=np.float64)
    if a.shape != e.shape or not np.isfinite(a).all():
        return False
    return bool(np.all(np.abs(a - e) <= _NEAR * max(1.0, float(np.abs(e).max(initial=0.0)))))


def _derivative_cause(fn: Any, exact: Any, first: Any = None) -> str:
    """The cause the student's derivative `fn` confirms on _GRID, or "": the first derivative
    (`first`) where its values are those of `first` at every point, or its square where they
    are `first` squared; an approximation where every value is near the exact one."""
    try:
        got = [np.asarray(fn(jax.device_put(np.float32(x))), dtype=np.float64) for x in _GRID]
    except (NotImplementedError, SandboxGone):
        raise
    except Exception:  # the student's error, which the failure already shows
        return ""
    if first is not None and np.allclose(got, [first(x) for x in _GRID], **_ANALYTIC):
        return _FIRST
    if first is not None and np.allclose(got, [first(x) ** 2 for x in _GRID], **_ANALYTIC):
        return _FIRST_SQUARED
    return _NOT_EXACT if _approximates(got, [exact(x) for x in _GRID]) else ""


def _with_cause(failure: CheckFailure, cause: str) -> CheckFailure:
    """`failure` with the likely cause `cause` (a closed gate or a refusal stays as it is)."""
    if not cause or type(failure) is not CheckFailure:
        return failure
    f = failure.finding
    return CheckFailure(
        f.checked, expected=f.expected, observed=f.observed, cause=cause, fix=f.fix, where=f.where
    )


# -- test functions and their analytic derivatives ------------------------------------

# The functions handed to student code are public (grader/inputs/02_grad.py): the
# sandbox builds them by name. Their derivatives, the references, stay here.
_inputs = importlib.import_module("grader.inputs.02_grad")
_A = _inputs.A
_f_offset = client.Public("autodiff_offset")  # x**3 + 1000
_f_wave = client.Public("autodiff_wave")  # sin(3x) * exp(x / 2)
_f_bowl_offset = client.Public("autodiff_bowl_offset")  # f: R^4 -> R, dense Hessian, + 1000
_f_poly = client.Public("autodiff_poly")  # a cheaper f: R^4 -> R for the composition checks
_f_chain = client.Public("autodiff_chain")  # f: R^n -> R for any n >= 2, banded Hessian


def _d_offset(x: Any) -> Any:
    return 3.0 * np.float64(x) ** 2


def _dd_offset(x: Any) -> Any:
    return 6.0 * np.float64(x)


def _d_wave(x: Any) -> Any:
    x = np.float64(x)
    return np.exp(x / 2) * (3 * np.cos(3 * x) + 0.5 * np.sin(3 * x))


def _dd_wave(x: Any) -> Any:
    x = np.float64(x)
    return np.exp(x / 2) * (-8.75 * np.sin(3 * x) + 3 * np.cos(3 * x))


def _ref_hessian(v: Any) -> Any:
    v = np.asarray(v, dtype=np.float64)
    h = np.diag(6.0 * v) + _A
    e = np.exp(v[0] * v[1])
    h[:2, :2] += e * np.array([[v[1] ** 2, 1 + v[0] * v[1]], [1 + v[0] * v[1], v[0] ** 2]])
    return h


def _ref_chain_hessian(v: Any) -> Any:
    """The Hessian of sum(v**4) / 4 + sum(sin(v[:-1]) * v[1:]) (autodiff_chain)."""
    v = np.asarray(v, dtype=np.float64)
    h = np.diag(3.0 * v**2)
    i = np.arange(len(v) - 1)
    h[i, i] -= np.sin(v[:-1]) * v[1:]
    h[i, i + 1] = h[i + 1, i] = np.cos(v[:-1])
    return h


def _ref_mse(w: Any, x: Any, y: Any) -> Any:
    w, x, y = (np.asarray(a, dtype=np.float64) for a in (w, x, y))
    r = x @ w - y
    return np.mean(r**2), 2.0 * x.T @ r / len(y)


def _lesson_mse(w: Any, x: Any, y: Any) -> Any:
    """mse_value_and_grad as the lesson writes it, for the diagnosis only: the loss
    mean((x @ w - y) ** 2) as a function of w, and its value and gradient in w (the gradient
    by a complex step, exact to float64 rounding for this loss and its one-edit mutants,
    which are polynomials in w). It equals _ref_mse on every input (a test holds them on
    many); its mutants are a student's edits of the loss (the residual's sign, the square
    left out), each carried into the gradient as jax.value_and_grad carries it, where an
    edit of _ref_mse's closed-form gradient changes one output alone."""
    w, x, y = (np.asarray(a, dtype=np.float64) for a in (w, x, y))

    def loss(w: Any) -> Any:
        return np.mean((x @ w - y) ** 2)

    return loss(w), _complex_step_grad(loss, w)


# the imaginary step of `_complex_step_grad`: the derivative is Im(f(w + i h e_k)) / h, with
# no difference taken (and so no cancellation) whatever h is
_COMPLEX_STEP = 1e-30


def _complex_step_grad(f: Any, w: Any) -> Any:
    """The gradient of the real function `f` at the vector `w`, one complex step per entry
    (exact to rounding where f is analytic: a polynomial, a mean, a matrix product)."""
    grad = np.empty(len(w))
    for k in range(len(w)):
        step = w.astype(np.complex128)
        step[k] += 1j * _COMPLEX_STEP
        grad[k] = np.imag(f(step)) / _COMPLEX_STEP
    return grad


# -- helpers -----------------------------------------------------------------------------


# -- exactness -----------------------------------------------------------------------------


@check(
    "derivative(f) is exact to float32 precision",
    points=3,
    hint="Does your derivative sample f at nearby points? Which JAX transformation gives the exact derivative of a function?",
    nudge="Automatic differentiation gives the exact derivative of the code itself, with no step size to choose: return the transformed function, not an approximation of it.",
    spec="`derivative(f)` -> a function computing df/dx of a scalar function ... Checks: exact to float32 precision against analytic derivatives (a finite difference fails)",
)
def test_derivative_exact(student: Remote, seed: int) -> None:
    for f, d, name in (
        (_f_wave, _d_wave, "sin(3x) * exp(x / 2)"),
        (_f_offset, _d_offset, "x**3 + 1000"),
    ):
        df = compiled(student.derivative(f))  # jitted in the sandbox while it compiles

        def derivative(x: Any, df: Any = df) -> Any:
            return df(x)

        try:
            values.assert_matches_reference(
                derivative,
                d,
                st.tuples(_POINTS),
                what=f"derivative(f)(x) for f(x) = {name}",
                max_examples=25,
                seed=seed,
                fix="return `jax.grad(f)`",
                **_ANALYTIC,
            )
        except CheckFailure as failure:
            raise _with_cause(failure, _derivative_cause(derivative, d)) from failure.__cause__


@check(
    "second_derivative(f) is exact to float32 precision",
    points=2,
    hint="The second derivative is the derivative of the derivative: how do you compose jax.grad with itself?",
    nudge="A transformed function is an ordinary function again, so the gradient transformation can be applied to its own output.",
    spec="`second_derivative(f)` -> a function computing d2f/dx2 (composition of grad) ... Checks: exact to float32 precision against analytic derivatives (a finite difference fails)",
)
def test_second_derivative_exact(student: Remote, seed: int) -> None:
    for f, dd, d, name in (
        (_f_wave, _dd_wave, _d_wave, "sin(3x) * exp(x / 2)"),
        (_f_offset, _dd_offset, _d_offset, "x**3 + 1000"),
    ):
        ddf = compiled(student.second_derivative(f))

        def second_derivative(x: Any, ddf: Any = ddf) -> Any:
            return ddf(x)

        try:
            values.assert_matches_reference(
                second_derivative,
                dd,
                st.tuples(_POINTS),
                what=f"second_derivative(f)(x) for f(x) = {name}",
                max_examples=25,
                seed=seed,
                fix="return `jax.grad(jax.grad(f))`",
                **_ANALYTIC,
            )
        except CheckFailure as failure:
            cause = _derivative_cause(second_derivative, dd, first=d)
            raise _with_cause(failure, cause) from failure.__cause__


@check(
    "hessian(f) is the exact (n, n) matrix of second derivatives",
    points=3,
    hint="H[i, j] is d2f / dx_i dx_j: which JAX function (or composition of jacfwd and jacrev) builds that matrix?",
    nudge="The Hessian is the Jacobian of the gradient; JAX builds it for any input size from forward- and reverse-mode Jacobians (or in one call).",
    spec="`hessian(f)` -> a function returning the Hessian matrix of `f: R^n -> R` ... Checks: exact to float32 precision against analytic derivatives (a finite difference fails)",
)
def test_hessian_exact(student: Remote, seed: int) -> None:
    hf = compiled(student.hessian(_f_bowl_offset))

    def hessian(v: Any) -> Any:
        return hf(v)

    vectors = hnp.arrays(np.float32, 4, elements=st.floats(-1.5, 1.5, width=32)).map(jax.device_put)
    try:
        _search_hessian(hessian, vectors, seed)
    except CheckFailure as failure:
        raise _with_cause(failure, _hessian_cause(student)) from failure.__cause__
    # Any n, as the spec says f: R^n -> R (a Hessian built for 4 inputs fails here).
    # jitted in the sandbox (one program per n; eager if it does not compile): eagerly, three
    # sizes of a Hessian cost ~170 one-operation compiles
    chain = compiled(student.hessian(_f_chain))
    seen = []
    for n in (2, 3, 7):
        v = np.linspace(-1.2, 0.9, n, dtype=np.float32)
        try:
            got = chain(jax.device_put(v))
        except (NotImplementedError, SandboxGone):
            raise
        except Exception as exc:
            kind = exc.info.type if isinstance(exc, StudentError) else type(exc).__name__
            raise CheckFailure(
                f"hessian(f)(v) for f: R^{n} -> R",
                expected=f"a ({n}, {n}) matrix",
                observed=f"{kind}: {str(exc).splitlines()[0] if str(exc) else ''}",
                cause=_one_size_cause(chain, n),
                fix="let `jax.hessian(f)` find n from the input",
            ) from None
        seen.append(((v,), got, _ref_chain_hessian(v)))
    cause = diagnose.confirmed(seen, _hessian_diagnostics)
    for (v,), got, expected in seen:
        values.assert_close(
            got,
            expected,
            what=f"hessian(f)(v) for f: R^{len(v)} -> R, f(v) = sum(v**4) / 4 "
            "+ sum(sin(v[:-1]) * v[1:])",
            cause=cause,
            fix="return `jax.hessian(f)`: it works for any n",
            **_ANALYTIC,
        )


def _one_size_cause(chain: Any, n: int) -> str:
    """Where hessian(f) of autodiff_chain raised for v of n entries: named when it gives the
    right (4, 4) Hessian of the same f for v of 4 entries (built for one size); else ""."""
    v = np.linspace(-1.2, 0.9, 4, dtype=np.float32)
    try:
        got = chain(jax.device_put(v))
    except (NotImplementedError, SandboxGone):
        raise
    except Exception:
        return ""
    if values.difference(got, _ref_chain_hessian(v), **_ANALYTIC) is not None:
        return ""
    return (
        f"the same f's Hessian is right for v of 4 entries and raises for {n}: the Hessian is "
        "built for one input size, 4 (a hard-coded number of basis vectors or rows)"
    )


def _search_hessian(hessian: Any, vectors: Any, seed: int) -> None:
    values.assert_matches_reference(
        hessian,
        _ref_hessian,
        st.tuples(vectors),
        what="hessian(f)(v) for f: R^4 -> R",
        max_examples=20,
        seed=seed,
        fix="return `jax.hessian(f)` (or `jax.jacfwd(jax.jacrev(f))`)",
        **_ANALYTIC,
    )


def _ref_chain_gradient(v: Any) -> Any:
    """The gradient of autodiff_chain: sum(v**4) / 4 + sum(sin(v[:-1]) * v[1:])."""
    v = np.asarray(v, dtype=np.float64)
    g = v**3
    g[:-1] += np.cos(v[:-1]) * v[1:]
    g[1:] += np.sin(v[:-1])
    return g


def _hessian_diagnostics(args: Any) -> Any:
    """The mistakes hessian(f)(v) can be confirmed to have made, applied to the exact Hessian
    of autodiff_chain at v: the gradient alone, the outer product of the gradient with itself,
    the row sums (the gradient of sum(grad f), what `jax.grad` of a vector-valued gradient
    needs to run), or a near but inexact matrix (a finite difference)."""
    (v,) = args
    g, h = _ref_chain_gradient(v), _ref_chain_hessian(v)

    def approximation(got: Any, want: Any) -> diagnose.Cause | None:
        if _approximates(got, want):
            return diagnose.Cause(
                "approximation",
                "not the exact Hessian: every entry is near the exact one but off by more than "
                "rounding, what a finite-difference approximation gives",
            )
        return None

    return (
        diagnose.matches(
            g, "not the exact Hessian: the values are the gradient of f, taken once", "gradient"
        ),
        diagnose.matches(
            np.outer(g, g),
            "not the exact Hessian: the values are the outer product of gradients, "
            "grad f(v) grad f(v)^T, which is no second derivative",
            "outer",
        ),
        diagnose.matches(
            h.sum(axis=1),
            "not the exact Hessian: the values are its row sums, shape (n,): the gradient of "
            "sum(grad f(v)) (`jax.grad` of the summed gradient) differentiates the sum of the "
            "gradient's entries, not each entry; `jax.jacfwd` of the gradient keeps them apart",
            "row_sums",
        ),
        approximation,
    )


def _hessian_cause(student: Remote) -> str:
    """The cause the student's hessian confirms on autodiff_chain at three sizes, or ""."""
    chain = compiled(student.hessian(_f_chain))
    seen = []
    for n in (2, 3, 7):
        v = np.linspace(-1.2, 0.9, n, dtype=np.float32)
        try:
            got = chain(jax.device_put(v))
        except (NotImplementedError, SandboxGone):
            raise
        except Exception:  # the student's error: the chain check below shows it
            continue
        seen.append(((v,), got, _ref_chain_hessian(v)))
    return diagnose.confirmed(seen, _hessian_diagnostics)


# -- composition --------------------------------------------------------------------------

# These checks judge that the returned functions trace and compute the same thing under
# a transformation; precision is the exactness checks' business. The tolerance is loose
# because an approximate derivative (a finite difference) legitimately changes by a few
# percent when XLA reorders its float32 arithmetic under jit.
_LOOSE: Tolerance = {"rtol": 5e-2, "atol": 1e-1}


@check(
    "the returned functions compose with jax.jit",
    points=2,
    hint="Is what derivative/second_derivative/hessian return an ordinary JAX function of its input, with no float() or NumPy call on it?",
    nudge="What you return must stay traceable: it may only apply JAX operations to its input, never turn it into a Python or NumPy number.",
    spec="the returned functions compose with `jax.jit` and `jax.vmap`",
)
def test_compose_with_jit(student: Remote, credit: Credit, gate: Gate) -> None:
    x = jax.device_put(np.float32(0.7))
    v = jax.device_put(np.array([0.3, -0.8, 1.1, 0.5], np.float32))
    score_cases(
        credit,
        [
            (
                "derivative",
                lambda: (
                    gate.require("test_derivative_exact"),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    jit.assert_jittable(
                        student.derivative(_f_wave),
                        (x,),
                        what="the function derivative(f) returns",
                        **_LOOSE,
                    ),
                ),
            ),
            (
                "second_derivative",
                lambda: (
                    gate.require("test_second_derivative_exact"),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    jit.assert_jittable(
                        student.second_derivative(_f_wave),
                        (x,),
                        what="the function second_derivative(f) returns",
                        **_LOOSE,
                    ),
                ),
            ),
            (
                "hessian",
                lambda: (
                    gate.require("test_hessian_exact"),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    jit.assert_jittable(
                        student.hessian(_f_poly),
                        (v,),
                        what="the function hessian(f) returns",
                        **_LOOSE,
                    ),
                ),
            ),
        ],
    )


@check(
    "the returned functions compose with jax.vmap",
    points=2,
    hint="jax.vmap must be able to trace what you return: does it turn its input into a Python float or a NumPy array?",
    nudge="vmap traces the function with a batched tracer, so the returned function must be built from JAX transformations and jax.numpy only.",
    spec="the returned functions compose with `jax.jit` and `jax.vmap`",
)
def test_compose_with_vmap(student: Remote, credit: Credit, gate: Gate) -> None:
    # Built in NumPy (within an ulp of jnp.linspace's points): jnp would compile in the judge.
    xs = jax.device_put(np.linspace(-1.5, 1.5, 8, dtype=np.float32))
    vs = jax.device_put(np.outer([0.5, -1.0, 1.5], np.linspace(-1.0, 1.0, 4)).astype(np.float32))

    def case(required: Any, make: Any, f: Any, batch: Any, what: str) -> Any:
        # The batched function runs compiled: eager vmap of a Hessian costs seconds of
        # per-operation dispatch and says nothing more about composition.
        # The loop runs fn compiled too (in the sandbox, eager if it does not compile).
        def run() -> None:
            gate.require(required)
            fn = make(f)
            vmap.assert_matches_loop(
                client.jit(client.vmap(fn)), fn, (batch,), (0,), what=what, **_LOOSE
            )

        return run

    score_cases(
        credit,
        [
            (
                "derivative",
                case(
                    "test_derivative_exact",
                    student.derivative,
                    _f_wave,
                    xs,
                    "jax.vmap(derivative(f))",
                ),
            ),
            (
                "second_derivative",
                case(
                    "test_second_derivative_exact",
                    student.second_derivative,
                    _f_wave,
                    xs,
                    "jax.vmap(second_derivative(f))",
                ),
            ),
            (
                "hessian",
                case("test_hessian_exact", student.hessian, _f_poly, vs, "jax.vmap(hessian(f))"),
            ),
        ],
    )


@check(
    "derivative composes with itself: derivative(derivative(f)) is f''",
    points=1,
    hidden=True,
    hint="Can jax.grad differentiate the function your derivative returns?",
    nudge="The function derivative returns is itself a scalar function, so JAX must be able to differentiate it again.",
    spec="`derivative(f)` -> a function computing df/dx of a scalar function; JAX can differentiate the returned function again ... `second_derivative(f)` -> a function computing d2f/dx2 (composition of grad)",
)
def test_derivative_of_derivative(student: Remote) -> None:
    try:
        ddf = student.derivative(student.derivative(_f_wave))
        got = [ddf(jax.device_put(np.float32(x))) for x in (-1.0, 0.4, 1.3)]
    except (CheckFailure, NotImplementedError, SandboxGone):
        raise
    except Exception as exc:
        kind = exc.info.type if isinstance(exc, StudentError) else type(exc).__name__
        raise CheckFailure(
            "derivative(derivative(f))(x)",
            expected="the second derivative, like jax.grad(jax.grad(f))",
            observed=f"{kind}: {str(exc).splitlines()[0] if str(exc) else ''}",
            cause=_retrace_cause(student, kind),
            fix="return the function `jax.grad(f)` itself: it is differentiable again",
        ) from None
    exact = [_dd_wave(x) for x in (-1.0, 0.4, 1.3)]
    values.assert_close(
        got,
        exact,
        what="derivative(derivative(f))(x) for f(x) = sin(3x) * exp(x / 2)",
        cause=_NOT_EXACT if _approximates(got, exact) else "",
        fix="return `jax.grad(f)`",
        **_ANALYTIC,
    )


# the errors JAX raises where a traced value is made concrete (float(), np.asarray, an `if`)
_CONCRETE_ERRORS = (
    "ConcretizationTypeError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
)


def _retrace_cause(student: Remote, kind: str) -> str:
    """Why derivative(derivative(f)) raised, from what the error and derivative(f) show:
    a traced input made concrete (the error's type says so), or derivative(f)(x) returning
    several values where jax.grad needs one scalar; else ""."""
    if kind in _CONCRETE_ERRORS:
        return (
            f"the function derivative returns cannot be traced by JAX again: it makes its "
            f"traced input concrete ({kind}), as float() or a NumPy call on it does"
        )
    try:
        out = student.derivative(_f_wave)(jax.device_put(np.float32(0.4)))
    except (NotImplementedError, SandboxGone):
        raise
    except Exception:  # the student's error, which the failure already shows
        return ""
    if isinstance(out, list | tuple):
        return (
            f"derivative(f)(x) returns a {type(out).__name__} of {len(out)} values, not one "
            "scalar: jax.grad differentiates only a function whose output is one scalar"
        )
    return ""


# -- mse_value_and_grad -------------------------------------------------------------------


@st.composite
def _regression(draw: Any) -> Any:
    # (rows, features) from a few shapes, test_mse_jit_and_pure's (4, 3) among them: each new
    # shape costs the student's jitted function a compile in the sandbox.
    n, d = draw(st.sampled_from(((1, 1), (3, 2), (4, 3), (5, 1))))
    quarters = st.integers(-8, 8).map(lambda k: k / 4)  # products and sums stay exact in float32
    w = draw(hnp.arrays(np.float32, d, elements=quarters))
    x = draw(hnp.arrays(np.float32, (n, d), elements=quarters))
    y = draw(hnp.arrays(np.float32, n, elements=quarters))
    return jax.device_put(w), jax.device_put(x), jax.device_put(y)


def _ref_mse_broadcast(w: Any, x: Any, y: Any) -> Any:
    """What (n, 1) predictions minus (n,) targets give: the mean of an (n, n) residual
    r[i, j] = x[i] @ w - y[j], and its gradient."""
    w, x, y = (np.asarray(a, dtype=np.float64) for a in (w, x, y))
    r = (x @ w)[:, None] - y[None, :]
    return np.mean(r**2), 2.0 * x.T @ r.sum(axis=1) / r.size


def _mse_diagnostics(args: Any) -> Any:
    """A sum over the rows where the spec's loss takes their mean: the loss, the gradient or
    both are len(y) times too large; or an (n, 1) prediction broadcast against (n,) targets."""
    n = int(np.shape(args[2])[0])
    rows = diagnose.batch_scale(n, what="the rows of x")
    return (
        diagnose.matches(
            _ref_mse_broadcast(*args),
            f"the loss is the mean of an ({n}, {n}) residual: predictions of shape ({n}, 1) "
            f"minus targets of shape ({n},) broadcast to every prediction minus every target",
            kind="broadcast",
        ),
        rows,
        lambda got, want: rows(got[0], want[0]),  # the loss alone
        lambda got, want: rows(got[1], want[1]),  # the gradient alone
        *_mse_formula_diagnostics(*args),
    )


def _mse_formula_diagnostics(w: Any, x: Any, y: Any) -> Any:
    """Another formula than mean((x @ w - y) ** 2), or the gradient taken with respect to x:
    each applied to the reference (the root of the mean where the mean is not 0: at a perfect
    fit its gradient is 0 / 0 and the input cannot tell)."""
    w, x, y = (np.asarray(a, dtype=np.float64) for a in (w, x, y))
    r = x @ w - y
    n = len(y)
    found = [
        diagnose.matches(
            (np.mean(r) ** 2, 2.0 * np.mean(r) * x.mean(axis=0)),
            "the loss is the square of the mean residual, mean(x @ w - y) ** 2: the square is "
            "taken after the mean, not of each residual before it",
            kind="square_of_mean",
        ),
        diagnose.matches(
            (np.mean(r**2), 2.0 * np.outer(r, w) / n),
            "the gradient is taken with respect to x, not w (`argnums` picks another argument, "
            "or the loss is differentiated in x): its shape is x's",
            kind="grad_wrt_x",
        ),
        diagnose.matches(
            (np.mean(r**2), np.zeros_like(w)),
            "the loss is right and its gradient is 0 everywhere: the function differentiated "
            "does not depend on its argument (its body uses a w from outside, the one "
            "mse_value_and_grad was given, in place of its own parameter)",
            kind="grad_zero",
        ),
    ]
    if np.all(r != 0):  # |r|'s gradient is sign(r), undefined where a residual is 0
        found.append(
            diagnose.matches(
                (np.mean(np.abs(r)), x.T @ np.sign(r) / n),
                "the loss is the mean absolute error, mean(abs(x @ w - y)): the residuals' "
                "absolute values are averaged where the spec averages their squares",
                kind="mae",
            )
        )
    mse = np.mean(r**2)
    if mse > 0:
        found.append(
            diagnose.matches(
                (np.sqrt(mse), x.T @ r / (n * np.sqrt(mse))),
                "the loss is the root of the mean squared error (an RMSE, `jnp.sqrt` of the "
                "mean): the spec's loss is the mean itself, with no square root",
                kind="rmse",
            )
        )
    return found


def _mse_probes() -> list[tuple[Any, Any, Any]]:
    """Two inputs of different sizes with no perfect fit (every residual nonzero)."""
    out = []
    for n, d in ((3, 2), (5, 1)):
        k = np.arange(n * d, dtype=np.float32)
        x = ((k % 7) - 3.0).reshape(n, d) / 4
        w = (np.arange(d, dtype=np.float32) + 1) / 2
        y = (np.arange(n, dtype=np.float32) % 3 + 1) / 4 + 2.0
        out.append((w, x, y))
    return out


@check(
    "mse_value_and_grad returns (loss, dloss/dw)",
    points=2,
    hint="Which JAX function returns the value of a function and its gradient together, as a pair?",
    nudge="Write the loss as a function of w alone (x and y closed over) and let JAX return its value together with its gradient.",
    spec="`mse_value_and_grad(w, x, y)` -> `(loss, dloss/dw)` for `loss = mean((x @ w - y)**2)`",
)
def test_mse_values(student: Remote, seed: int) -> None:
    mse = compiled(student.mse_value_and_grad)
    try:
        values.assert_matches_reference(
            mse,
            _ref_mse,
            _regression(),
            what="mse_value_and_grad(w, x, y)",
            max_examples=25,
            seed=seed,
            diagnostics=_mse_diagnostics,
            fix="define `loss(w) = jnp.mean((x @ w - y) ** 2)` and return "
            "`jax.value_and_grad(loss)(w)`",
        )
    except CheckFailure as failure:
        # The smallest input may not tell (a perfect fit, one row): two inputs of other
        # sizes with no perfect fit are held to the same diagnostics.
        raise _with_cause(failure, _mse_probe_cause(mse)) from failure.__cause__


def _mse_probe_cause(mse: Any) -> str:
    seen = []
    for args in _mse_probes():
        try:
            got = mse(*jax.device_put(args))
        except (NotImplementedError, SandboxGone):
            raise
        except Exception:  # the student's error, which the failure already shows
            return ""
        seen.append((args, got, _ref_mse(*args)))
    return diagnose.confirmed(seen, _mse_diagnostics, names=("w", "x", "y"), reference=_lesson_mse)


@check(
    "mse_value_and_grad evaluates the model once (one pass)",
    points=1,
    requires=("test_mse_values",),
    hint="Do you compute the loss and then call jax.grad, which runs the forward pass again?",
    nudge="One transformation returns the value and the gradient from a single forward pass; computing the loss and then its gradient runs the model twice.",
    spec="`mse_value_and_grad(w, x, y)` -> `(loss, dloss/dw)` for `loss = mean((x @ w - y)**2)`, in one pass (`jax.value_and_grad`)",
)
def test_mse_one_pass(student: Remote) -> None:
    n, d = 7, 3
    w, x, y = jax.device_put(
        (np.ones(d, np.float32), np.ones((n, d), np.float32), np.zeros(n, np.float32))
    )
    # Every equation of the jaxpr (nested ones included), with its operand shapes, traced in the sandbox.
    equations = calls.observed(
        client.probe(_inputs.equation_shapes, student.mse_value_and_grad, (w, x, y)),
        checked="tracing mse_value_and_grad(w, x, y) to a jaxpr",
        attempted="jax.make_jaxpr(mse_value_and_grad)",
        expected="the function traces with abstract (traced) inputs",
    )
    # The forward pass is the contraction of x (n, d) down to the predictions (n,).
    forward = [
        eqn
        for eqn in equations
        if eqn["primitive"] in ("dot_general", "reduce_sum")
        and [tuple(s) for s in eqn["outs"]] == [(n,)]
        and any(tuple(s) in ((n, d), (d, n)) for s in eqn["ins"])
    ]
    if len(forward) > 1:
        raise fail(
            "the jaxpr of mse_value_and_grad(w, x, y) for x of shape (7, 3)",
            expected="one forward product x @ w (value and gradient from a single pass)",
            observed=f"{len(forward)} products x @ w ({', '.join(e['primitive'] for e in forward)})",
            cause=f"x @ w is computed {len(forward)} times in one call: the forward pass runs "
            "more than once, where `jax.value_and_grad` gives the value and the gradient from one",
            fix="`loss, grad = jax.value_and_grad(loss_fn)(w)` gives both from one forward pass",
        )


@check(
    "mse_value_and_grad compiles under jax.jit; all four functions are pure",
    points=1,
    hint="Do your functions only read their arguments (no globals, no caches, no changes to x or y), "
    "and do nothing (print, append) that happens only while jax.jit traces them?",
    nudge="Each function should compute its result from its arguments alone, with jax.numpy, and leave no trace (prints, caches, globals) outside it.",
    spec="Every function that is meant to be jittable is checked both eagerly and under `jax.jit` ... purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
)
def test_mse_jit_and_pure(student: Remote, credit: Credit, gate: Gate) -> None:
    w = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 4
    y = np.array([1.0, 0.0, -1.0, 2.0], dtype=np.float32)
    v = np.array([0.3, -0.8, 1.1, 0.5], dtype=np.float32)

    def mse() -> None:
        gate.require("test_mse_values")
        arrays = jax.device_put((w, x, y))
        jit.assert_jittable(student.mse_value_and_grad, arrays, what="mse_value_and_grad(w, x, y)")
        purity.assert_pure(
            student.mse_value_and_grad,
            (w, x, y),
            what="mse_value_and_grad(w, x, y)",
            module=student,
        )
        no_trace_effects(
            student.mse_value_and_grad, arrays, what="mse_value_and_grad(w, x, y)", module=student
        )

    def returned(required: Any, make: Any, f: Any, arg: Any, name: str) -> Any:
        def run() -> None:
            gate.require(required)
            fn = make(f)
            purity.assert_pure(fn, (arg,), what=f"{name}(f)(x)", module=student)
            no_trace_effects(fn, (jax.device_put(arg),), what=f"{name}(f)(x)", module=student)

        return run

    score_cases(
        credit,
        [
            ("mse_value_and_grad", mse),
            (
                "derivative",
                returned(
                    "test_derivative_exact",
                    student.derivative,
                    _f_wave,
                    np.float32(0.4),
                    "derivative",
                ),
            ),
            (
                "second_derivative",
                returned(
                    "test_second_derivative_exact",
                    student.second_derivative,
                    _f_wave,
                    np.float32(0.4),
                    "second_derivative",
                ),
            ),
            ("hessian", returned("test_hessian_exact", student.hessian, _f_poly, v, "hessian")),
        ],
    )
