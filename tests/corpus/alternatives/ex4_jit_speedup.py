"""Exercise 4: timing with time.monotonic and tree-wide block_until_ready."""

import time

import jax


def time_steps(step_fn, state, batch, n_steps=100):
    state = step_fn(state, batch)
    jax.tree.map(lambda a: a.block_until_ready(), state)
    t0 = time.monotonic()
    for _ in range(n_steps):
        state = step_fn(state, batch)
    jax.block_until_ready(state)
    return (time.monotonic() - t0) / n_steps


def jit_speedup(step_fn, state, batch, n_steps=100):
    eager_s = time_steps(step_fn, state, batch, n_steps)
    jitted = jax.jit(step_fn)
    t0 = time.monotonic()
    jax.block_until_ready(jitted(state, batch))
    compile_s = time.monotonic() - t0
    jit_s = time_steps(jitted, state, batch, n_steps)
    return {"eager_s": eager_s, "jit_s": jit_s, "compile_s": compile_s, "speedup": eager_s / jit_s}
