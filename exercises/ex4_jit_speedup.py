"""Exercise 4: how much does `jax.jit` buy?

Time a training step with and without `jax.jit` and report the speedup.
Two things make such a measurement easy to get wrong:

- JAX dispatches work asynchronously: a call returns as soon as the work is
  queued, before the numbers exist. A timing that reads the clock without
  waiting for the result (`jax.block_until_ready`) measures the dispatch, not
  the work.
- The first call of a jitted function traces and compiles it. That one-off
  cost is real, but it is not the cost of a step: report it separately.

A step function has the signature `step_fn(state, batch) -> state`; the state
can be any pytree (for a training step, e.g. `(params, opt_state)`).
"""

import time

import jax


def time_steps(step_fn, state, batch, n_steps=100):
    """Average wall-clock seconds per call of `step_fn`.

    One untimed warm-up call first; then `n_steps` timed calls, each fed the
    state returned by the previous one; the clock stops only once the final
    state has been computed (`jax.block_until_ready`).

    Args:
        step_fn: `step_fn(state, batch) -> state`.
        state: the initial state (any pytree of arrays).
        batch: passed unchanged to every call.
        n_steps: the number of timed calls (a positive Python int).

    Returns:
        Seconds per step, a Python float.
    """
    # TODO: warm up once (untimed, and wait for it), then time n_steps chained
    # calls and wait for the final state before reading the clock.
    raise NotImplementedError("time_steps is not implemented yet")


def jit_speedup(step_fn, state, batch, n_steps=100):
    """Per-step time of `step_fn` run eagerly and under `jax.jit`, and the speedup.

    Args:
        step_fn: a plain Python `step_fn(state, batch) -> state` (not jitted).
        state, batch, n_steps: as in `time_steps`.

    Returns:
        {'eager_s': seconds per eager step,
         'jit_s': seconds per jitted step (compilation excluded),
         'compile_s': wall time of the first jitted call (trace + compile + run),
         'speedup': eager_s / jit_s}
    """
    # TODO: time step_fn as given; then wrap it with jax.jit, time its first
    # call on its own (compile_s) and time the compiled steps with time_steps.
    raise NotImplementedError("jit_speedup is not implemented yet")
