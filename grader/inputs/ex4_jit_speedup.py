"""Public inputs of ex4_jit_speedup: the small lesson train step whose jit speedup the
suite measures with the student's `jit_speedup`, and its initial state.

The suite names them with `client.Public("ex4_train_step")` and
`client.Public("ex4_train_state", (sizes,))`: the sandbox builds a fresh (never traced)
step for every call, so its first jitted call pays the whole trace and compile. The
timed steps with known behaviour (async, slow to compile, sleeping) are public
factories of `grader.probes.timing`.

A heavy-first step (`ex4_heavy_first_step(jitted)`, state `ex4_heavy_first_state()`)
makes one call's work large and every later call's tiny: the state carries a number of
256x256 matmuls to run (a `while` loop whose trip count is data, so one compiled program
serves both), and each call hands the next a count of 0. Its call returns at once
(asynchronous dispatch) and it is compiled when built, so a fresh `jax.jit` of it finds
the program in JAX's cache. A timer that starts its clock before the heavy warm-up call
has finished times that work; a `compile_s` that does not wait for the first jitted call
misses it. `heavy_first_seconds` measures the heavy call in the sandbox itself (the same
process and moment as the student's timer), `step_calls` counts a timer's eager calls of
a recording step (the default `n_steps`).

optax is imported when a step is built (in the ex4 sandbox only), not when this module
is loaded before every sandbox starts.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from grader.probes import _calls
from grader.sandbox.probes import probe
from grader.sandbox.public_inputs import factory

LEARNING_RATE = 1e-3


def _optimizer() -> Any:
    import optax

    return optax.adam(LEARNING_RATE)


def _forward(params: Any, x: Any) -> Any:
    n = len(params)
    for i in range(1, n + 1):
        x = x @ params[f"layer{i}"]["w"] + params[f"layer{i}"]["b"]
        if i < n:
            x = jax.nn.relu(x)
    return x


@factory
def ex4_train_step() -> Any:
    """A fresh train step `(state, batch) -> state` of a lesson MLP (ReLU between layers,
    softmax cross-entropy, Adam 1e-3): `state = (params, opt_state)`, `batch = (x, y)`."""
    import optax

    optimizer = _optimizer()

    def loss_fn(p: Any, x: Any, y: Any) -> Any:
        return optax.softmax_cross_entropy_with_integer_labels(_forward(p, x), y).mean()

    def train_step(state: Any, batch: Any) -> Any:
        p, opt_state = state
        grads = jax.grad(loss_fn)(p, *batch)
        updates, opt_state = optimizer.update(grads, opt_state, p)
        return optax.apply_updates(p, updates), opt_state

    return train_step


@factory
def ex4_train_state(sizes: tuple[int, ...]) -> Any:
    """`(params, opt_state)` of an MLP of `sizes` for `ex4_train_step()`: He-initialised weights (NumPy
    seed 0), zero biases, Adam's initial state."""
    rng = np.random.default_rng(0)
    params = {
        f"layer{i + 1}": {
            "w": jnp.asarray(rng.normal(0.0, np.sqrt(2.0 / n_in), (n_in, n_out)), jnp.float32),
            "b": jnp.zeros(n_out, jnp.float32),
        }
        for i, (n_in, n_out) in enumerate(itertools.pairwise(tuple(sizes)))
    }
    return params, _optimizer().init(params)


HEAVY_MATMULS = 300  # the heavy call's work: ~0.1-0.3 s on the 2-core grading machine
_N = 256


@functools.cache
def _heavy_first() -> tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]:
    """The heavy-first kernel (jitted) and a plain step calling it, both compiled here once
    (per process) for the heavy-first state, so a fresh `jax.jit` of the plain step reuses
    the compiled program."""

    @jax.jit
    def kernel(state: Any, batch: Any) -> Any:
        x, budget = state
        x = jax.lax.fori_loop(0, budget, lambda i, x: jnp.tanh(x @ batch), x)
        return x, jnp.zeros_like(budget)

    def step(state: Any, batch: Any) -> Any:
        return kernel(state, batch)

    light, batch = _heavy_inputs(0)
    jax.block_until_ready(kernel(light, batch))  # type: ignore[no-untyped-call]
    jax.block_until_ready(jax.jit(step)(light, batch))  # type: ignore[no-untyped-call]
    return kernel, step


def _heavy_inputs(matmuls: int) -> tuple[Any, Any]:
    state = (jnp.full((_N, _N), 1.0 / _N, jnp.float32), jnp.asarray(matmuls, jnp.int32))
    batch = jnp.asarray(np.random.default_rng(0).normal(size=(_N, _N)) / 16, jnp.float32)
    return state, batch


@factory
def ex4_heavy_first_step(jitted: bool = True) -> Any:
    """The heavy-first step: the jitted kernel, or (`jitted=False`) a plain function calling
    it (what `jit_speedup` takes as `step_fn`)."""
    kernel, step = _heavy_first()
    return kernel if jitted else step


@factory
def ex4_heavy_first_state() -> Any:
    """The heavy-first step's initial state: its first call runs HEAVY_MATMULS matmuls."""
    return _heavy_inputs(HEAVY_MATMULS)[0]


@factory
def ex4_heavy_first_batch() -> Any:
    return _heavy_inputs(0)[1]


@probe
def heavy_first_seconds(where: Any) -> float:
    """In the sandbox: the wall time of the heavy call, compiled and waited for (the least of
    two readings)."""
    kernel, _ = _heavy_first()
    state, batch = _heavy_inputs(HEAVY_MATMULS)
    readings = []
    for _ in range(2):
        start = time.perf_counter()
        jax.block_until_ready(kernel(state, batch))  # type: ignore[no-untyped-call]
        readings.append(time.perf_counter() - start)
    return min(readings)


@probe
def step_calls(timer: Callable[..., Any], state: Any, batch: Any, *n_steps: int) -> dict[str, Any]:
    """In the sandbox: `timer(recording_step, state, batch, *n_steps)` (no `n_steps`: the
    timer's default) and how many times it called the step eagerly (calls made while
    tracing under `jax.jit` are not counted)."""
    states: list[Any] = []

    def recording_step(state: Any, batch: Any) -> Any:  # a function: jax.jit hashes it
        states.append(state)
        return state + 1.0

    reported = _calls.attempt(lambda: timer(recording_step, state, batch, *n_steps))
    eager = sum(not isinstance(s, jax.core.Tracer) for s in states)
    return {"reported": reported, "eager_calls": eager}
