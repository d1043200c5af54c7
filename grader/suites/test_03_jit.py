"""Hidden checks for 03_jit.py: jax.jit and structured control flow.

Values are searched with Hypothesis against references written here; whether
the exercise's tool was used is read from the jaxpr (`cond` for piecewise,
`scan` for running_sum, a loop primitive for newton_sqrt), and "no Python loop"
from the jaxpr staying the same size as the input or `n_iters` grows.
"""

import itertools
from typing import Any

import jax
import numpy as np
from hypothesis import strategies as st

from grader import explain
from grader.authoring import Credit, check
from grader.checks import diagnose, growth, jit, primitives, purity, traces, values
from grader.checks.failure import CheckFailure, fail
from grader.plugin import Gate
from grader.sandbox import client
from grader.sandbox.client import Remote, StudentError
from grader.suites._shared import Tolerance, compiled, score_cases, with_cause

LESSON = "03_jit"
TITLE = "jit and structured control flow"
# What this file's checks penalise: no help of this file may recommend it (`grade verify`).
AVOID = {
    "jnp.where": "piecewise must branch with `jax.lax.cond` (its jaxpr contains `cond`): "
    "`jnp.where` costs test_piecewise_cond's points",
}
explain.avoid(AVOID)

_COND_FIX = "branch with `jax.lax.cond(x > 0, lambda v: v ** 2, lambda v: -v, x)`"
_SCAN_FIX = (
    "carry the total with `jax.lax.scan(step, 0.0, xs)`, where `step(total, x)` "
    "returns `(total + x, total + x)`"
)
_LOOP_FIX = "run the Newton step with `jax.lax.fori_loop(0, n_iters, body, x0)`"

# -- tolerances (besides _shared's) --
# running sums of up to 12 float32 values of up to 100 in another order: TIGHT's rtol, an
# atol for partial sums that cancel to near zero
SUM_TOL: Tolerance = {"rtol": 1e-5, "atol": 1e-4}
# a square root or a Newton step, float32 against float64: relative only (roots span 0.1 to 100)
ROOT_TOL: Tolerance = {"rtol": 1e-5, "atol": 0.0}
# the same compiled program with the default n_iters and n_iters=20 passed: a few ulps
SAME_PROGRAM_TOL: Tolerance = {"rtol": 1e-6, "atol": 0.0}
# did the iterates move at all between 1 and 6 steps (a diagnosis only)
MOVED_RTOL = 1e-3
# newton_sqrt(a, 1) against sqrt(a): float32 rounding of a step that lands near sqrt(a)
SHORT_RTOL = 1e-4


# -- references (written independently of solutions/) ---------------------------------


def _ref_piecewise(x: Any) -> Any:
    x = np.float32(x)
    return np.float32(x * x) if x > 0 else np.float32(-x)


def _ref_piecewise_batch(xs: Any) -> Any:
    """_ref_piecewise on each point of a batch (what jax.vmap of piecewise gives), written as
    the lesson writes the branches, `x ** 2` and `-x`: it is the diagnosis's reference, and
    one edit of it is a student's edit of a branch (the power 1: the true branch returns x)."""
    return np.where(xs > 0, xs**2, -xs)


def _ref_running_sum(xs: Any) -> Any:
    partial = np.cumsum(np.asarray(xs, np.float64)).astype(np.float32)
    return np.float32(partial[-1]), partial


def _ref_sqrt(a: Any, n_iters: int = 20) -> Any:
    return np.float32(np.sqrt(np.float64(a)))


_SCALARS = st.floats(-50, 50, width=32).map(lambda v: (np.float32(v),))
# The series' lengths come from a fixed set: each length is one more program for the
# sandbox to compile (running_sum jitted, `compiled`). One element, a few, the jit check's
# 8 (that program is then loaded from the sandbox's cache) and the longest, 12.
_SERIES_LENGTHS = (1, 2, 3, 8, 12)
_SERIES = st.sampled_from(_SERIES_LENGTHS).flatmap(
    lambda n: st.lists(st.floats(-100, 100, width=32), min_size=n, max_size=n).map(
        lambda v: (np.asarray(v, np.float32),)
    )
)
_PIECEWISE_EDGES = (-1.0, -0.25, 0.0, 0.25, 0.5, 1.0, 1.5)
_POSITIVES = st.floats(-2, 4).map(lambda e: (np.float32(10.0**e),))  # a in [1e-2, 1e4], log-spread


def _f32(value: Any) -> Any:
    """`value` as a float32 JAX array, built in NumPy and put on the device: the same array
    `jnp.float32`/`jnp.arange` would give, without an eager JAX op (a compile per shape) in
    the judge."""
    return jax.device_put(np.asarray(value, np.float32))


def _series(n: int) -> Any:
    # only the jaxpr of running_sum on it is read: its values do not matter
    return (_f32(np.linspace(-1.0, 1.0, n)),)


# -- piecewise ----------------------------------------------------------------------


@check(
    "piecewise returns x**2 for x > 0 and -x otherwise",
    points=2,
    hint="Which branch should x = 0 take, and what does each branch return?",
    nudge="The strict comparison decides the branch: only values above zero are squared, zero and below are negated.",
    spec="`piecewise(x)` -> `x**2` if `x > 0` else `-x`, for a scalar traced `x`",
)
def test_piecewise_values(student: Remote) -> None:
    piecewise = compiled(student.piecewise)
    try:
        for x in _PIECEWISE_EDGES:  # both sides of the branch point, where a search may not look
            values.assert_close(piecewise(np.float32(x)), _ref_piecewise(x), what=f"piecewise({x})")
        values.assert_matches_reference(
            piecewise, _ref_piecewise, _SCALARS, what="piecewise(x)", max_examples=40
        )
    except CheckFailure as failure:
        cause = _piecewise_cause(student)
        if not cause:
            raise
        raise with_cause(failure, cause=cause, fix=_COND_FIX) from failure.__cause__


# points on both sides of 0, in two batches of different sizes: piecewise is a function of
# a scalar, so its batched form (jax.vmap of the student's function) gives the sizes
_PIECEWISE_BATCHES = ((-1.5, 0.5, 2.0), (-2.0, -0.5, 0.25, 1.0, 3.0))


def _piecewise_cause(student: Remote) -> str:
    """The mistake the student's piecewise confirms on two batches of points, mapped with
    jax.vmap (lax.cond maps to a select), or "" (a Python `if` does not map: no cause)."""
    batched = client.vmap(student.piecewise)
    seen = []
    for points in _PIECEWISE_BATCHES:
        xs = np.asarray(points, np.float32)
        try:
            got = batched(_f32(xs))
        except StudentError:
            return ""
        seen.append(((xs,), got, _ref_piecewise_batch(xs)))
    return diagnose.confirmed(seen, _piecewise_diagnostics, reference=_ref_piecewise_batch)


def _piecewise_diagnostics(args: Any) -> Any:
    (xs,) = args
    return (
        diagnose.matches(
            np.where(xs > 0, -xs, xs * xs),
            "the two branches are in each other's place: -x where x > 0 and x ** 2 where "
            "x <= 0 (`lax.cond(pred, true_fn, false_fn, x)` runs its FIRST function when the "
            "predicate holds)",
            kind="branches_swapped",
        ),
        diagnose.matches(
            np.where(xs > 0, xs * xs, xs),
            "the false branch returns x itself where -x is wanted: x ** 2 where x > 0 is "
            "right, but every x <= 0 comes back unchanged (the minus sign of the false "
            "branch is missing)",
            kind="false_unnegated",
        ),
        diagnose.matches(
            np.where(xs > 0, xs * xs, -(xs * xs)),
            "the false branch returns -x ** 2 where -x is wanted: x ** 2 where x > 0 is "
            "right, but every x <= 0 gives minus its square",
            kind="false_squared",
        ),
    )


@check(
    "piecewise compiles under jax.jit",
    points=2,
    requires=("test_piecewise_values",),
    hint="What does a Python `if` do with a value that is only known when the compiled program runs?",
    nudge="A Python `if` needs a concrete boolean, but under jit the comparison is a tracer; a structured control-flow primitive takes the predicate as data.",
    spec="Checks: all three jit-compile (no ConcretizationTypeError)",
)
def test_piecewise_jit(student: Remote) -> None:
    for x in (-2.0, 0.0, 1.5):
        jit.assert_jittable(student.piecewise, (_f32(x),), what="piecewise(x)")


@check(
    "piecewise branches with jax.lax.cond",
    points=2,
    requires=("test_piecewise_values",),
    hint="Which jax.lax function takes a predicate and two functions, and runs only one of them?",
    nudge="The exercise asks for the conditional primitive of jax.lax, which takes the predicate and one function per branch.",
    spec="with `jax.lax.cond` ... the jaxpr of `piecewise` contains `cond`",
)
def test_piecewise_cond(student: Remote) -> None:
    primitives.assert_contains(
        student.piecewise,
        (_f32(1.5),),
        "cond",
        what="piecewise(x)",
        fix=_COND_FIX,
        reference=_ref_piecewise,
        inputs=lambda rng: (np.float32(rng.uniform(-4.0, 4.0)),),  # both branches
    )


# -- running_sum --------------------------------------------------------------------


@check(
    "running_sum returns (total, partial_sums)",
    points=2,
    hint="What should partial_sums[0] be, and how does total relate to partial_sums?",
    nudge="Each partial sum includes the current element, and the total is the last partial sum: record the carry after adding, not before.",
    spec="`running_sum(xs)` -> `(total, partial_sums)` for a 1-D array ... (partial_sums[i] = xs[0] + ... + xs[i])",
)
def test_running_sum_values(student: Remote) -> None:
    # two fixed series first, of two sizes: long enough for an off-by-one shift to show as
    # one, and for a cause to be confirmed on both
    series = ([3.0, -1.0, 4.0, 1.0, -5.0, 9.0], [2.0, 7.0, -3.0, 0.5])
    seen = []
    for values_ in series:
        xs = np.asarray(values_, np.float32)
        seen.append(((xs,), student.running_sum(_f32(xs)), _ref_running_sum(xs)))
    cause = diagnose.confirmed(seen, _running_sum_diagnostics, reference=_ref_running_sum)
    for (_, got, want), values_ in zip(seen, series, strict=True):
        values.assert_close(
            got,
            want,
            what=f"running_sum({values_})",
            **SUM_TOL,
            cause=cause,
            fix=_SCAN_FIX,
        )
    values.assert_matches_reference(
        compiled(student.running_sum),
        _ref_running_sum,
        _SERIES,
        what="running_sum(xs)",
        **SUM_TOL,
        max_examples=30,
    )


def _running_sum_diagnostics(args: Any) -> Any:
    """The mistakes running_sum(xs) can be confirmed to have made, applied to the reference:
    partial sums shifted a place, the elements emitted instead of the running total, the
    carry started at xs[0] while the scan still runs over every element, a total that sums
    the partial sums, or a carry of xs's shape (every entry of it the running total: total
    of shape (n,), partial_sums (n, n))."""
    xs = np.asarray(args[0], np.float64)
    total, partial = np.sum(xs), np.cumsum(xs)
    n = len(xs)
    return (
        lambda got, want: diagnose.shifted(got[1], want[1]),
        diagnose.matches(
            (total, xs),
            "partial_sums are the elements of xs themselves: the scan step returns the "
            "element x as its output, `(total + x, x)`, where the running total belongs",
            kind="emits_element",
        ),
        diagnose.matches(
            (total + xs[0], partial + xs[0]),
            "every sum holds xs[0] once too often: the carry starts at xs[0] and the scan "
            "still adds every element of xs, the first included",
            kind="init_first",
        ),
        diagnose.matches(
            (np.sum(partial), partial),
            "partial_sums are right, but the total is the sum of the partial sums (each "
            "element counted once per partial sum it is in), where it is the last partial sum",
            kind="total_of_partials",
        ),
        diagnose.matches(
            (np.full(n, total), np.repeat(partial[:, None], n, axis=1)),
            "total has xs's shape, every entry of it the total, and partial_sums the shape "
            "(len(xs), len(xs)): the carry starts as an array of xs's shape "
            "(`jnp.zeros_like(xs)`), where the running total is one number (a scalar zero: "
            "`jnp.zeros((), xs.dtype)` or `0.0`)",
            kind="carry_like_xs",
        ),
    )


@check(
    "running_sum compiles under jax.jit",
    points=1,
    requires=("test_running_sum_values",),
    hint="Is every operation inside running_sum a JAX operation on its argument?",
    nudge="Under jit the array's values are unknown while tracing, so the loop must be a JAX primitive over the traced array, not Python over its values.",
    spec="Checks: all three jit-compile (no ConcretizationTypeError)",
)
def test_running_sum_jit(student: Remote) -> None:
    jit.assert_jittable(
        student.running_sum, (_f32(np.arange(8)),), what="running_sum(xs)", atol=1e-5
    )


@check(
    "running_sum uses jax.lax.scan",
    points=2,
    requires=("test_running_sum_values",),
    hint="How does jax.lax.scan carry a value from one element to the next, and what does it stack?",
    nudge="scan threads a carry through the elements and stacks what each step emits: the carry is the running total.",
    spec="with `jax.lax.scan` ... the jaxpr of `running_sum` contains `scan`",
)
def test_running_sum_scan(student: Remote) -> None:
    primitives.assert_contains(
        student.running_sum,
        _series(8),
        "scan",
        what="running_sum(xs)",
        fix=_SCAN_FIX,
        reference=_ref_running_sum,
    )


@check(
    "running_sum's jaxpr does not grow with the input length",
    points=2,
    requires=("test_running_sum_values",),
    hint="What does a Python loop over xs record while JAX traces it: one step, or one per element?",
    nudge="A Python loop runs while tracing and records one step per element; a scan records its body once whatever the length.",
    spec="the jaxpr of `running_sum` contains `scan` and its size does not grow with the input length (a Python loop unrolls)",
)
def test_running_sum_no_growth(student: Remote) -> None:
    growth.assert_no_growth(
        student.running_sum,
        _series,
        sizes=(4, 32),
        what="running_sum(xs)",
        fix=_SCAN_FIX,
        reference=_ref_running_sum,
    )


# -- newton_sqrt --------------------------------------------------------------------


@check(
    "newton_sqrt converges to sqrt(a) for a in [1e-2, 1e4]",
    points=2,
    hint="Does your starting guess stay positive, and is 20 steps of x <- (x + a/x)/2 enough from it?",
    nudge="Newton's step for x**2 = a averages x and a / x; from a positive guess it converges, and 20 steps suffice when the guess is not far off.",
    spec="`newton_sqrt(a, n_iters=20)` -> sqrt(a) (a > 0) by Newton's method ... any positive starting guess that converges in 20 iterations for a in [1e-2, 1e4]",
)
def test_newton_values(student: Remote) -> None:
    try:
        values.assert_matches_reference(
            compiled(student.newton_sqrt),
            _ref_sqrt,
            _POSITIVES,
            what="newton_sqrt(a)",
            **ROOT_TOL,
            max_examples=30,
        )
    except CheckFailure as failure:
        newton = compiled(student.newton_sqrt, static_argnames=("n_iters",))
        cause = (
            _index_as_iterate(newton)
            or _unconverged(newton)
            or _infinite_from_the_start(newton)
            or _step_not_halved(newton)
        )
        if not cause:
            raise
        raise with_cause(failure, cause=cause, fix=_LOOP_FIX) from failure.__cause__


# where newton_sqrt's iterates are held to a mistake: values of a and trip counts
_PROBE_A = (2.0, 30.0)
_PROBE_STEPS = (2, 3, 5)


def _newton_at(newton: Any, a: float, n: int) -> float | None:
    """newton_sqrt(a, n_iters=n) as a float, or None where the student's code raises or
    returns no single number (a tuple: the check's own structure cause says so)."""
    try:
        got = np.asarray(newton(np.float32(a), n_iters=n), np.float64)
    except (StudentError, TypeError, ValueError):
        return None
    return float(got) if got.shape == () else None


def _index_as_iterate(newton: Any) -> str:
    """The cause when newton_sqrt(a, n_iters=k) is one Newton step from the loop index k - 1,
    (k - 1 + a / (k - 1)) / 2, for every probe a and k: `fori_loop` calls `body(i, x)` and
    the body takes its first argument, the index, for x; else ""."""
    for a in _PROBE_A:
        for k in _PROBE_STEPS:
            got = _newton_at(newton, a, k)
            if got is None or not np.isclose(got, 0.5 * ((k - 1) + a / (k - 1)), rtol=1e-5):
                return ""
    return (
        "newton_sqrt(a, n_iters=k) is (k - 1 + a / (k - 1)) / 2, one Newton step from the loop "
        "index k - 1 (a = 2 and 30, k = 2, 3 and 5): the body takes the index for x; "
        "`jax.lax.fori_loop` calls `body(i, x)`, the index first"
    )


def _unconverged(newton: Any) -> str:
    """The cause when newton_sqrt(a) (20 steps) misses sqrt(a) for one of a few a in
    [1e-2, 1e4] and newton_sqrt(a, n_iters=200) reaches it for all: the iteration converges,
    more slowly than 20 steps allow; else ""."""
    missed = []
    for a in (0.01, 1.0, 100.0, 1e4):
        twenty, more = _newton_at(newton, a, 20), _newton_at(newton, a, 200)
        if twenty is None or more is None or not np.isclose(more, np.sqrt(a), rtol=1e-5):
            return ""
        if not np.isclose(twenty, np.sqrt(a), rtol=1e-5):
            missed.append(a)
    if not missed:
        return ""
    return (
        f"newton_sqrt(a, n_iters=200) reaches sqrt(a) where 20 steps do not (a = "
        f"{', '.join(f'{a:g}' for a in missed)}): the iteration converges, but not within 20 "
        "steps from this starting guess"
    )


def _infinite_from_the_start(newton: Any) -> str:
    """The cause when one Newton step already gives an infinite value for a = 2 and a = 30,
    and so do 20: the first step's a / x divides by zero, so the starting guess is 0; else
    ""."""
    for a in _PROBE_A:
        one, twenty = _newton_at(newton, a, 1), _newton_at(newton, a, 20)
        if one is None or twenty is None or not (np.isinf(one) and not np.isfinite(twenty)):
            return ""
    return (
        f"one step already gives inf (a = {', '.join(f'{a:g}' for a in _PROBE_A)}), and the "
        "iterates never come back: the first step's a / x divides by zero, so the starting "
        "guess is 0"
    )


# the trip counts whose iterates are held to one step of a mistaken iteration: n and n + 1
_TRAJECTORY = (1, 2, 3, 4)


def _step_not_halved(newton: Any) -> str:
    """The cause when each further step takes newton_sqrt(a, n_iters=k) = x to x + a / x, for
    a = 2 and 30 and k = 1 to 3 (whatever the starting guess): the step leaves out the 1/2 of
    (x + a / x) / 2; else ""."""
    for a in _PROBE_A:
        xs = [_newton_at(newton, a, k) for k in _TRAJECTORY]
        for x, nxt in itertools.pairwise(xs):
            if x is None or nxt is None or not np.isfinite(x) or x == 0.0:
                return ""
            if not np.isclose(nxt, x + a / x, rtol=1e-5):
                return ""
    return (
        "each step is x + a / x (a = 2 and 30, n_iters = 1 to 4): the average of x and a / x "
        "is not taken (Newton's step for sqrt(a) is (x + a / x) / 2)"
    )


@check(
    "newton_sqrt compiles under jax.jit with n_iters static",
    points=1,
    requires=("test_newton_values",),
    hint="Which of a and n_iters must be a Python value while tracing, and which can be traced?",
    nudge="Under jit a is a tracer and n_iters a static Python int: the loop must take a traced initial value and a fixed trip count.",
    spec="Checks: all three jit-compile (no ConcretizationTypeError) ... `n_iters` is a Python int ... arguments documented as Python values, such as `train`, `rate`, `n_iters` or `sizes`, are static",
)
def test_newton_jit(student: Remote) -> None:
    jit.assert_jittable(
        student.newton_sqrt,
        (_f32(2.0),),
        {"n_iters": 20},
        static_argnames=("n_iters",),
        what="newton_sqrt(a, n_iters)",
    )


@check(
    "newton_sqrt loops with a JAX loop primitive",
    points=1,
    requires=("test_newton_values",),
    hint="Which jax.lax function runs a body a given number of times inside the compiled program?",
    nudge="The exercise asks for the jax.lax loop that runs a body a given number of times inside the compiled program.",
    spec="by Newton's method with `jax.lax.fori_loop` ... `newton_sqrt` contains a loop primitive (`while` or `scan`)",
)
def test_newton_loop_primitive(student: Remote) -> None:
    primitives.assert_contains(
        student.newton_sqrt,
        (_f32(2.0), 20),
        ("while", "scan"),
        static_argnames=("n_iters",),
        what="newton_sqrt(a, n_iters)",
        fix=_LOOP_FIX,
        reference=_ref_sqrt,
    )


@check(
    "newton_sqrt's jaxpr does not grow with n_iters",
    points=1,
    requires=("test_newton_values",),
    hint="If you double n_iters, should the traced program double in size?",
    nudge="A Python for loop unrolls one Newton step per iteration into the traced program; a lax loop keeps one copy of the body.",
    spec="`newton_sqrt` contains a loop primitive (`while` or `scan`) and its jaxpr does not grow with `n_iters`",
)
def test_newton_no_growth(student: Remote) -> None:
    growth.assert_no_growth(
        student.newton_sqrt,
        lambda n: (_f32(2.0), n),
        sizes=(5, 40),
        static_argnames=("n_iters",),
        what="newton_sqrt(a, n_iters)",
        fix=_LOOP_FIX,
        reference=_ref_sqrt,  # a in [1, 4]: 5 Newton steps from any guess in [1, a] converge
    )


@check(
    "newton_sqrt takes n_iters Newton steps",
    points=1,
    requires=("test_newton_values",),
    hint="Is the loop's trip count the n_iters argument, and is each step x <- (x + a / x) / 2?",
    nudge="The loop's trip count is the n_iters argument (default 20), and each iteration applies exactly one Newton step.",
    spec="`newton_sqrt(a, n_iters=20)` -> sqrt(a) (a > 0) by Newton's method with `jax.lax.fori_loop`; `n_iters` is a Python int ... For any a > 0 the result is the iterate after exactly `n_iters` Newton steps.",
)
def test_newton_steps(student: Remote) -> None:
    # The starting guess is the student's: only the step between n and n + 1 iterations is
    # fixed, so the trajectory newton_sqrt(a, 1), ..., newton_sqrt(a, 6) is checked step by step.
    newton = compiled(student.newton_sqrt, static_argnames=("n_iters",))
    counts = range(1, 7)
    moved = False
    for a in (0.01, 2.0, 30.0, 1e4):
        xs = [np.float64(np.asarray(newton(np.float32(a), n_iters=k))) for k in counts]
        moved = moved or not np.isclose(xs[0], xs[-1], rtol=MOVED_RTOL)
        for k, (x, nxt) in enumerate(itertools.pairwise(xs), start=1):
            step = np.float32(0.5 * (x + a / x))
            wrong = values.difference(np.float32(nxt), step, **ROOT_TOL) is not None
            values.assert_close(
                np.float32(nxt),
                step,
                what=f"newton_sqrt({a:g}, n_iters={k + 1}) against one Newton step from "
                f"newton_sqrt({a:g}, n_iters={k}) = {x:.7g}",
                **ROOT_TOL,
                cause=_index_as_iterate(newton) if wrong else "",
                fix=_LOOP_FIX,
            )
        # One Newton step from any positive guess x gives (x + a / x) / 2 >= sqrt(a) (the mean
        # of x and a / x is at least their geometric mean): with the steps right, a value
        # below sqrt(a) after n_iters=1 was reached by no step at all.
        if xs[0] < np.sqrt(a) * (1 - SHORT_RTOL):
            raise fail(
                f"newton_sqrt({a:g}, n_iters=1)",
                expected=f"at least sqrt({a:g}) = {np.sqrt(a):.7g}: one Newton step "
                "(x + a / x) / 2 from any positive starting guess is never below sqrt(a)",
                observed=f"{xs[0]:.7g}, and each further n_iters adds one Newton step: the "
                "first step is missing",
                cause="the loop runs n_iters - 1 times (a `fori_loop` from 1, or a step "
                "taken out of the loop's count), so n_iters=1 returns the starting guess",
                fix=_LOOP_FIX,
            )
    # The default is n_iters=20: for a large a (still a > 0, the function's domain) twenty
    # steps from most starting guesses have not converged yet, so another default shows. The
    # same program with the same trip count must agree whatever it converged to; up to 1e16
    # the square of every iterate from a guess <= a stays finite in float32 (the step written
    # x - (x**2 - a) / (2 x) overflows to NaN from 1e30 on, a large guess like x = a**2 too).
    for a in (2.0, 1e12, 1e16):
        default, twenty = newton(np.float32(a)), newton(np.float32(a), n_iters=20)
        if np.array_equal(np.asarray(default), np.asarray(twenty), equal_nan=True):
            continue
        values.assert_close(
            default,
            twenty,
            what=f"newton_sqrt({a:g}) against newton_sqrt({a:g}, n_iters=20)",
            **SAME_PROGRAM_TOL,
            cause="the default number of iterations is not 20, as the signature `newton_sqrt(a, "
            "n_iters=20)` says",
            fix="keep the signature `def newton_sqrt(a, n_iters=20)`",
        )
    if not moved:
        raise fail(
            "newton_sqrt(a, n_iters) for n_iters = 1 to 6 and a in (0.01, 2, 30, 1e4)",
            expected="values that change with n_iters (one Newton step does not reach sqrt(a) "
            "from a starting guess that does not know it)",
            observed="the same value for every n_iters",
            cause="the result does not change with n_iters: n_iters is not used as the number "
            "of steps",
            fix=_LOOP_FIX,
        )


# -- all three ----------------------------------------------------------------------


@check(
    "each function is traced once for repeated same-shaped calls",
    points=1,
    hint="Does each function run under jax.jit at all, and once it does, what would make JAX trace it again for a call with the same shapes?",
    nudge="A function that cannot be traced (a Python `if` or loop bound on a traced value) fails here before anything is counted: fix that first. One that traces is traced again when a value marked static changes, or when it builds a new jax.jit on every call.",
    spec="each is traced once for repeated calls with same-shaped inputs",
)
def test_traced_once(student: Remote, credit: Credit, gate: Gate) -> None:
    score_cases(
        credit,
        [
            (
                "piecewise",
                lambda: (
                    gate.require("test_piecewise_values"),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    traces.assert_traced_once(
                        student.piecewise,
                        [(_f32(v),) for v in (-1.0, 2.0, 0.5)],
                        what="piecewise(x)",
                    ),
                ),
            ),
            (
                "running_sum",
                lambda: (
                    gate.require("test_running_sum_values"),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    traces.assert_traced_once(
                        student.running_sum,
                        [(_f32(np.arange(8) + v),) for v in (0, 1, 2)],
                        what="running_sum(xs)",
                    ),
                ),
            ),
            (
                "newton_sqrt",
                lambda: (
                    gate.require("test_newton_values"),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    traces.assert_traced_once(
                        student.newton_sqrt,
                        [(2.0, 20), (3.0, 20), (10.0, 20)],
                        static_argnames=("n_iters",),
                        what="newton_sqrt(a, n_iters)",
                    ),
                ),
            ),
        ],
    )


@check(
    "the three functions are pure (no mutation, globals, RNG or trace-time side effects)",
    points=1,
    hint="Does each function run under jax.jit, and does anything in it happen only while it is traced, or change module state?",
    nudge="A function that cannot be traced (a Python `if` on a traced value) fails here before its effects are looked at: fix that first. Whatever runs only while JAX traces (prints, appends, global updates) happens once, not per call: keep the functions free of it.",
    spec="purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
)
def test_pure(student: Remote, credit: Credit, gate: Gate) -> None:
    xs = np.arange(8, dtype=np.float32)  # the shape running_sum_jit compiles: its programs again
    score_cases(
        credit,
        [
            (
                "piecewise",
                lambda: (
                    gate.require("test_piecewise_values"),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    purity.assert_pure(
                        student.piecewise, (np.float32(1.5),), what="piecewise(x)", module=student
                    ),
                    purity.assert_no_trace_side_effects(
                        student.piecewise, (np.float32(-1.5),), what="piecewise(x)", module=student
                    ),
                ),
            ),
            (
                "running_sum",
                lambda: (
                    gate.require("test_running_sum_values"),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    purity.assert_pure(
                        student.running_sum, (xs,), what="running_sum(xs)", module=student
                    ),
                    purity.assert_no_trace_side_effects(
                        student.running_sum, (xs,), what="running_sum(xs)", module=student
                    ),
                ),
            ),
            (
                "newton_sqrt",
                lambda: (
                    gate.require("test_newton_values"),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    purity.assert_pure(
                        student.newton_sqrt,
                        (np.float32(2.0),),
                        what="newton_sqrt(a)",
                        module=student,
                    ),
                    purity.assert_no_trace_side_effects(
                        student.newton_sqrt,
                        (np.float32(2.0),),
                        what="newton_sqrt(a)",
                        module=student,
                    ),
                ),
            ),
        ],
    )
