"""The sandbox's side of `grader.checks.timing`: the steps a student's timer is given
(public factories, built in the sandbox; the judge builds twins of them to measure), and
the probe that watches how the timer calls a recording step."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from grader.probes import _calls
from grader.sandbox.probes import probe
from grader.sandbox.public_inputs import factory

Step = Callable[[Any, Any], Any]
MATRIX_N = 256  # matrix size of the async work: ~1 ms per matmul on 2 CPU cores


@factory
def timing_async_step(iterations: int) -> Step:
    """A jitted step that runs `iterations` chained 256x256 matmuls: its call returns at
    once, its work takes about `iterations` times one matmul."""
    n = max(1, int(iterations))

    @jax.jit
    def step(state: Any, batch: Any) -> Any:
        return lax.fori_loop(0, n, lambda i, x: jnp.tanh(x @ batch), state)

    return step


def small_inputs() -> tuple[Any, Any]:
    """The state and batch of the cheap steps (sleeping, slow to compile)."""
    return jnp.zeros(8, jnp.float32), jnp.ones(8, jnp.float32)


def _affine(state: Any, batch: Any) -> Any:
    """The work of the cheap steps."""
    return state * 0.5 + batch


def _warm_eager() -> None:
    """Run the cheap steps' operations once on their inputs, untimed: the first eager call of
    an operation compiles it (per process), which must not count as a step. (In the judge
    the measurement itself warms them; in a fresh sandbox nothing has run them yet.)"""
    _calls.ready(_affine(*small_inputs()))


def sleeping_at_trace(compile_s: float) -> Step:
    """A new function each time: JAX caches traces per Python function, even across
    separate `jax.jit` wrappers, so only a never-traced function sleeps again."""

    def step(state: Any, batch: Any) -> Any:
        if isinstance(state, jax.core.Tracer):
            time.sleep(compile_s)
        return _affine(state, batch)

    return step


@factory
def timing_slow_compile_step(compile_s: float, jitted: bool = True) -> Step:
    """A never-traced step that sleeps `compile_s` while being traced (only then): jitted,
    or plain (the first call of the first `jax.jit(step)` pays `compile_s`)."""
    step = sleeping_at_trace(float(compile_s))
    if jitted:
        return jax.jit(step)
    _warm_eager()
    return step


@factory
def timing_sleep_step(step_s: float) -> Step:
    """A plain Python step that blocks `step_s` on every eager call (once under jit)."""
    seconds = float(step_s)

    def step(state: Any, batch: Any) -> Any:
        time.sleep(seconds)
        return _affine(state, batch)

    _warm_eager()
    return step


# -- the recording step: lives in the sandbox, observed by a probe ----------------------------


@dataclass
class RecordingStep:
    """A cheap eager step that records what it was called with."""

    inputs: list[Any] = field(default_factory=list)
    batches: list[Any] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)

    def __call__(self, state: Any, batch: Any) -> Any:
        self.inputs.append(state)
        self.batches.append(batch)
        out = state + 1.0
        self.outputs.append(out)
        return out


@probe
def timer_calls(timer: Callable[..., Any], state: Any, batch: Any, n_steps: int) -> dict[str, Any]:
    """In the sandbox: `timer(recording_step, state, batch, n_steps)`, and how it called the
    step: the states it passed, whether each call got the previous call's result and whether
    each got the batch the timer was given (the very object, or a copy of its values: the
    recording step's state grows by one on every call, so a copy of an older state differs),
    and whether each got the batch and the previous result in each other's places."""
    rec = RecordingStep()
    reported = _calls.attempt(lambda: timer(rec, state, batch, n_steps))
    return {
        "reported": reported,
        "inputs": list(rec.inputs),
        "chained": [_same(rec.inputs[k], rec.outputs[k - 1]) for k in range(1, len(rec.inputs))],
        "same_batch": [_same(b, batch) for b in rec.batches],
        # the batch first and the previous call's result second: step_fn(batch, state)
        "swapped": [
            _same(rec.inputs[k], batch) and _same(rec.batches[k], rec.outputs[k - 1])
            for k in range(1, len(rec.inputs))
        ],
    }


def _same(got: Any, want: Any) -> bool:
    """`got` is `want`, or an array of its shape, dtype and values (a copy of it)."""
    if got is want:
        return True
    try:
        a, b = np.asarray(got), np.asarray(want)
    except Exception:
        return False
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
