"""Step functions with known timing, for judging a student's timer (ex4's
`time_steps(step_fn, state, batch, n_steps)` and `jit_speedup(...)`), and the checks
that use them.

JAX dispatches asynchronously: a jitted call returns as soon as the work is queued,
long before it is done, so a timer that does not wait (`jax.block_until_ready`)
measures only the dispatch. And the first jitted call traces and compiles, so a timer
without a warm-up call charges the compilation to the steps. Each case below makes
one of these effects large and measures it on the machine at hand (so a suite judges
against measured numbers, not constants from another machine):

- `async_step(work_s)`: jitted; the call returns in well under a millisecond, the work
  (a chain of 256x256 matmuls in a `fori_loop`, calibrated here) takes about `work_s`.
  Measured on the 2-core grading machine (jax 0.10.2, CPU): one matmul ~1.1 ms;
  `async_step(0.1)`: `dispatch_s` ~0.0001 s, `step_s` 0.08-0.10 s, first call ~0.4 s.
  (Why matmuls and not a `jax.pure_callback` that sleeps: on the CPU backend a
  computation containing a host callback is dispatched synchronously; measured, 3
  chained calls of a jitted step with a 0.2 s callback took 0.61 s to dispatch and
  0.61 s in all, while 5 chained 1500x1500 matmul steps dispatched in 0.0002 s
  and finished after 0.62 s.)
- `slow_compile_step(compile_s)`: the function sleeps `compile_s` while being traced
  (only then), and its work is tiny: jitted, the first call takes `compile_s` + ~0.1 s
  (measured: 0.61 s for `compile_s=0.5`), later calls ~20 us. With `jitted=False` it is a
  plain function: eager calls are fast (~50 us), and the first call of `jax.jit(step)`
  pays `compile_s` (once per returned step: JAX caches the trace of a Python function).
- `sleep_step(step_s)`: a plain (eager) function that blocks `step_s` per call (measured:
  0.0205 s for `step_s=0.02`); under
  `jax.jit` the sleep happens once, at trace time (a huge, known "speedup").
- `RecordingStep`: records each call's state and batch, to check the warm-up call
  and that each returned state feeds the next call.

Where things run: the student's timer runs in the sandbox, so the step it is given is
built there, afresh for every call, by a public factory of `grader.probes.timing`
(`timing_async_step`, `timing_slow_compile_step`, `timing_sleep_step`); a case's
`step` is that factory's name and arguments (`client.Public`), to pass as the step.
The judge builds its own twin with the same factory (`case.local`) and measures the
timings on it itself (same machine, trusted code). The recording step lives in the
sandbox; a probe (`grader.probes.timing.timer_calls`) reports its call pattern.

A student timer is then judged with `assert_waits_for_work`, `assert_excludes_warmup`,
`assert_chains_state` and `assert_reports_compile`; it may be a handle
(`student.time_steps`) or, in tests, a plain function (run in an in-process sandbox).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from grader.checks import calls
from grader.checks.failure import CheckFailure, explainable, fail
from grader.probes.timing import (
    MATRIX_N,
    Step,
    sleeping_at_trace,
    small_inputs,
    timer_calls,
    timing_async_step,
    timing_sleep_step,
    timing_slow_compile_step,
)
from grader.sandbox import client
from grader.sandbox.client import StudentError


def _public(name: str, *args: Any) -> client.Public:
    return client.Public(name, tuple(args))


# -- the cases: a step for student code, and its timing measured by the judge -----------------


@dataclass(frozen=True)
class StepCase:
    """A step function `(state, batch) -> state`, inputs to run it on, and its timing as
    measured here: `step_s` per compiled step with the work waited for, `dispatch_s` for
    a call to return without waiting, `first_call_s` for the first call (trace + compile).

    `step` is what to pass to student code (built afresh in the sandbox by a public
    factory of `grader.probes.timing`); `local` is the judge's own step from the same factory."""

    name: str
    step: client.Public
    local: Step
    state: Any
    batch: Any
    step_s: float
    dispatch_s: float
    first_call_s: float


def _clock(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _measure(step: Step, state: Any, batch: Any) -> tuple[float, float, float]:
    """(step_s, dispatch_s, first_call_s) of `step`, measured in the judge."""
    first_call_s, out = _clock(lambda: calls.ready(step(state, batch)))
    step_s = min(_clock(lambda: calls.ready(step(out, batch)))[0] for _ in range(2))
    dispatch_s, pending = _clock(lambda: step(out, batch))
    calls.ready(pending)
    return step_s, dispatch_s, first_call_s


@functools.cache
def _seconds_per_matmul() -> float:
    state, batch = _async_inputs()
    chain = timing_async_step(40)
    calls.ready(chain(state, batch))
    return min(_clock(lambda: calls.ready(chain(state, batch)))[0] for _ in range(3)) / 40


def _async_inputs() -> tuple[Any, Any]:
    state = jnp.full((MATRIX_N, MATRIX_N), 1.0 / MATRIX_N, jnp.float32)
    batch = jax.random.normal(jax.random.key(0), (MATRIX_N, MATRIX_N), jnp.float32) / 16
    return state, batch


def async_step(work_s: float = 0.1) -> StepCase:
    """A jitted step whose call returns at once but whose work takes about `work_s`."""
    iterations = max(1, round(work_s / _seconds_per_matmul()))
    state, batch = _async_inputs()
    local = timing_async_step(iterations)
    return StepCase(
        f"async_step({work_s:g})",
        _public("timing_async_step", iterations),
        local,
        state,
        batch,
        *_measure(local, state, batch),
    )


def slow_compile_step(compile_s: float = 0.5, *, jitted: bool = True) -> StepCase:
    """A step that sleeps `compile_s` at trace time only (a stand-in for a long compile).

    The step has never been called or traced: its first jitted call (with `jitted=False`:
    the first call of the first `jax.jit(step)`) pays `compile_s`. The timings are
    measured on a twin of it."""
    state, batch = small_inputs()
    twin = sleeping_at_trace(compile_s)
    step_s, dispatch_s, first_call_s = _measure(jax.jit(twin), state, batch)
    eager_s = min(_clock(lambda: calls.ready(twin(state, batch)))[0] for _ in range(3))
    return StepCase(
        name=f"slow_compile_step({compile_s:g}, jitted={jitted})",
        step=_public("timing_slow_compile_step", compile_s, jitted),
        local=timing_slow_compile_step(compile_s, jitted),
        state=state,
        batch=batch,
        step_s=step_s if jitted else eager_s,
        dispatch_s=dispatch_s if jitted else eager_s,
        first_call_s=first_call_s,
    )


def sleep_step(step_s: float = 0.02) -> StepCase:
    """A plain Python step that blocks `step_s` on every eager call (once under jit)."""
    state, batch = small_inputs()
    local = timing_sleep_step(step_s)
    return StepCase(
        f"sleep_step({step_s:g})",
        _public("timing_sleep_step", step_s),
        local,
        state,
        batch,
        *_measure(local, state, batch),
    )


@dataclass(frozen=True)
class RecordedCalls:
    """How a timer called the recording step (the judge's copy of the observation)."""

    inputs: list[Any]
    chained: list[bool]
    same_batch: list[bool]


# -- judging a timer ---------------------------------------------------------

Timer = Callable[..., Any]


def _attempted(timer: Timer, n_steps: int) -> str:
    return f"{calls.name_of(timer)}(step_fn, state, batch, {n_steps})"


def _seconds(reported: Any, what: str) -> float:
    __tracebackhide__ = True
    try:
        return float(reported)
    except (TypeError, ValueError):
        raise CheckFailure(
            f"{what} returns seconds per step",
            expected="a float",
            observed=f"{calls.type_name(reported)}: {reported!r}"[:300],
        ) from None


def _run_timer(timer: Timer, case: StepCase, n_steps: int, what: str) -> float:
    """The student's timer on the case's step (built in the timer's sandbox)."""
    __tracebackhide__ = True
    try:
        reported = client.handle(timer)(case.step, case.state, case.batch, n_steps)
    except StudentError as exc:
        if isinstance(exc, calls.PASS_THROUGH):
            raise
        raise calls.translate(
            exc,
            checked=f"{what} on a test step",
            attempted=_attempted(timer, n_steps),
            expected="it returns seconds per step",
        ) from exc
    return _seconds(reported, what)


@explainable
def assert_waits_for_work(
    timer: Timer,
    *,
    what: str,
    work_s: float = 0.1,
    n_steps: int = 3,
    fraction: float = 0.25,
    cause: str = "",
    fix: str = "",
) -> float:
    """On `async_step(work_s)` the timer reports about the real work per step, not the
    dispatch time: at least `fraction` of the step time the judge measured (a suite on a
    loaded machine may lower it: the sandbox's and the judge's timings of the same work
    were seen 5x apart there, while not waiting reports ~dispatch_s, 100x+ below). Returns
    the reported seconds per step."""
    __tracebackhide__ = True
    case = async_step(work_s)
    reported = _run_timer(timer, case, n_steps, what)
    if reported >= fraction * case.step_s:
        return reported
    raise fail(
        f"{what} waits for asynchronous results",
        expected=f"about {case.step_s:.3g} s per step: the measured work of each step of a test "
        f"step whose call returns in {case.dispatch_s:.2g} s but whose computation takes "
        f"{case.step_s:.3g} s",
        observed=f"{reported:.3g} s per step: the clock stopped before the work finished",
        cause=f"JAX dispatches asynchronously: a call of this step returned after "
        f"{case.dispatch_s:.2g} s while its work took {case.step_s:.3g} s (measured here), and "
        f"{reported:.3g} s per step is under {fraction:.0%} of that work: the clock was read "
        "while the steps were still computing",
        fix="call `jax.block_until_ready(state)` on the final state before reading the clock "
        "(and after the warm-up call)",
    )


@explainable
def assert_excludes_warmup(
    timer: Timer,
    *,
    what: str,
    compile_s: float = 0.5,
    n_steps: int = 5,
    cause: str = "",
    fix: str = "",
) -> float:
    """On `slow_compile_step(compile_s)` (jitted) the timer leaves the first, compiling call
    out of the timed steps. Returns the reported seconds per step."""
    __tracebackhide__ = True
    case = slow_compile_step(compile_s)
    reported = _run_timer(timer, case, n_steps, what)
    if reported < 0.5 * compile_s / n_steps:
        return reported
    raise fail(
        f"{what} leaves compilation out of the timed steps",
        expected=f"about {case.step_s:.2g} s per step (compiled steps), with the first call "
        f"(tracing and compiling, {compile_s:g} s here) untimed",
        observed=f"{reported:.3g} s per step, i.e. about {reported * n_steps:.3g} s over "
        f"{n_steps} steps: the first call's compilation was timed",
        cause=f"a call that traces and compiles the step was inside the clock: "
        f"{reported * n_steps:.3g} s over {n_steps} steps holds at least half of the "
        f"{compile_s:g} s this step's tracing takes, while a compiled call took "
        f"{case.step_s:.2g} s (measured here)",
        fix="make one untimed warm-up call (and wait for it with `jax.block_until_ready`) "
        "before starting the clock",
    )


@explainable
def assert_chains_state(
    timer: Timer, *, what: str, n_steps: int = 4, cause: str = "", fix: str = ""
) -> RecordedCalls:
    """The timer calls the step once untimed plus `n_steps` times, feeding each returned
    state into the next call, with the same batch every time."""
    __tracebackhide__ = True
    state, batch = jnp.zeros(3, jnp.float32), jnp.ones(3, jnp.float32)
    seen = client.probe(timer_calls, client.handle(timer), state, batch, n_steps)
    calls.observed(
        seen["reported"],
        checked=f"{what} on a test step",
        attempted=_attempted(timer, n_steps),
        expected="it returns seconds per step",
    )
    _seconds(seen["reported"], what)
    rec = RecordedCalls(
        list(seen["inputs"]),
        [bool(c) for c in seen["chained"]],
        [bool(b) for b in seen["same_batch"]],
    )
    count = len(rec.inputs)
    checked = f"how {what} calls the step function"
    if count != n_steps + 1:
        raise fail(
            checked,
            expected=f"{n_steps + 1} calls for n_steps={n_steps} (one untimed "
            "warm-up, then n_steps timed)",
            observed=f"{count} calls",
            fix="call step_fn once before the clock starts, then exactly n_steps times",
        )
    for k in range(2, count):
        if not rec.chained[k - 1]:
            raise fail(
                checked,
                expected="each timed call gets the state the previous call returned",
                observed=f"call {k + 1} got a state that is not call {k}'s result",
                cause=_swapped_cause(k)
                if seen["swapped"][k - 1]
                else _unchained_cause(rec.inputs, k, state),
                fix="`state = step_fn(state, batch)` inside the loop",
            )
    if not all(rec.same_batch):
        raise fail(
            checked,
            expected="the given batch passed to every call",
            observed="some calls got another batch",
        )
    return rec


def _swapped_cause(k: int) -> str:
    """Call `k + 1` got the batch as its state and call `k`'s result as its batch."""
    return (
        f"call {k + 1} got the batch as its first argument and call {k}'s result as its "
        "second: the arguments of step_fn are swapped (the step takes the state first, then "
        "the batch)"
    )


def _unchained_cause(inputs: list[Any], k: int, initial: Any) -> str:
    """What the state of call `k + 1` (0-based `inputs[k]`) was, where the recording step
    (it returns its state + 1) shows it: the state the timer was given, or the very state
    of call `k`; "" otherwise."""
    got, previous = np.asarray(inputs[k]), np.asarray(inputs[k - 1])
    if got.shape == np.shape(initial) and np.array_equal(got, np.asarray(initial)):
        return (
            f"call {k + 1} got the state the timer was given, not call {k}'s result: the "
            "state the step returns is not passed on to the next call"
        )
    if got.shape == previous.shape and np.array_equal(got, previous):
        return (
            f"call {k + 1} got the same state as call {k}: the state the step returns is not "
            "passed on to the next call"
        )
    return ""


@explainable
def assert_reports_compile(
    speedup_fn: Callable[..., Any],
    *,
    what: str,
    compile_s: float = 0.5,
    n_steps: int = 3,
    cause: str = "",
    fix: str = "",
) -> dict[str, Any]:
    """On `slow_compile_step(compile_s, jitted=False)`, `jit_speedup` reports the compile
    time in `compile_s` and keeps it out of `jit_s`. Returns the reported dict."""
    __tracebackhide__ = True
    got, whole_s = _timed_call(
        speedup_fn, slow_compile_step(compile_s, jitted=False), n_steps, what
    )
    missing = {"eager_s", "jit_s", "compile_s", "speedup"} - set(got)
    if missing:
        raise fail(
            f"{what} returns its timings",
            expected="keys eager_s, jit_s, compile_s, speedup",
            observed=f"missing {sorted(missing)}",
        )
    checked = f"{what} reports compilation separately"
    if float(got["compile_s"]) < 0.8 * compile_s:
        raise fail(
            checked,
            expected=f"compile_s >= {0.8 * compile_s:.3g} s for a step whose "
            f"tracing takes {compile_s:g} s",
            observed=f"compile_s = {float(got['compile_s']):.3g} s",
            fix="time the FIRST call of a fresh `jax.jit(step_fn)` (blocking on its result) "
            "as compile_s",
        )
    if not float(got["compile_s"]) <= whole_s:
        raise fail(
            checked,
            expected=f"compile_s at most {whole_s:.3g} s: the wall time of the whole "
            f"call of {calls.name_of(speedup_fn)}, which contains the first jitted call",
            observed=f"compile_s = {float(got['compile_s']):.3g} s",
            cause=f"compile_s is longer than the whole call of {calls.name_of(speedup_fn)} "
            f"({whole_s:.3g} s), which contains the first jitted call: it is not the seconds "
            "that call took",
            fix="compile_s = time.perf_counter() - start, with start read just before the "
            "first call of `jax.jit(step_fn)`",
        )
    if float(got["jit_s"]) >= 0.5 * compile_s / n_steps:
        raise fail(
            checked,
            expected=f"jit_s well under {compile_s / n_steps:.3g} s (compiled steps only)",
            observed=f"jit_s = {float(got['jit_s']):.3g} s: the compilation is inside it",
            fix="time the jitted steps only after the first (compiling) call",
        )
    return got


def _timed_call(
    speedup_fn: Callable[..., Any], case: StepCase, n_steps: int, what: str
) -> tuple[dict[str, Any], float]:
    """What `speedup_fn` reports on `case`, and the wall time of the whole call (the first
    jitted call is inside it)."""
    __tracebackhide__ = True
    started = time.perf_counter()
    try:
        got = dict(client.handle(speedup_fn)(case.step, case.state, case.batch, n_steps))
    except StudentError as exc:
        if isinstance(exc, calls.PASS_THROUGH):
            raise
        raise calls.translate(
            exc,
            checked=f"{what} on a test step",
            attempted=_attempted(speedup_fn, n_steps),
            expected="a dict of timings",
        ) from exc
    return got, time.perf_counter() - started
