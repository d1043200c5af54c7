"""Exercise 4: timing jit, with a dataclass of results and a context-manager timer."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import jax

State = TypeVar("State")


@dataclasses.dataclass
class Stopwatch:
    seconds: float = 0.0

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds = time.perf_counter() - start


def time_steps(
    step_fn: Callable[[State, Any], State], state: State, batch: Any, n_steps: int = 100
) -> float:
    """Seconds per step: one untimed warm-up, then n_steps chained calls, waited for."""
    state = jax.block_until_ready(step_fn(state, batch))  # warm-up, not timed; chained on
    watch = Stopwatch()
    with watch.running():
        for _ in range(n_steps):
            state = step_fn(state, batch)
        jax.block_until_ready(state)
    return watch.seconds / n_steps


@dataclasses.dataclass(frozen=True)
class Speedup:
    eager_s: float
    jit_s: float
    compile_s: float

    @property
    def speedup(self) -> float:
        return self.eager_s / self.jit_s

    def as_dict(self) -> dict[str, float]:
        return {**dataclasses.asdict(self), "speedup": self.speedup}


def jit_speedup(
    step_fn: Callable[[State, Any], State], state: State, batch: Any, n_steps: int = 100
) -> dict[str, float]:
    """Per-step seconds eagerly and jitted, the first jitted call's wall time, the ratio."""
    eager_s = time_steps(step_fn, state, batch, n_steps)
    compiled = jax.jit(step_fn)
    first = Stopwatch()
    with first.running():
        jax.block_until_ready(compiled(state, batch))
    jit_s = time_steps(compiled, state, batch, n_steps)
    result = Speedup(eager_s=eager_s, jit_s=jit_s, compile_s=first.seconds)
    return result.as_dict()


if __name__ == "__main__":
    import jax.numpy as jnp

    def step(s: jax.Array, b: jax.Array) -> jax.Array:
        return jnp.tanh(s @ b)

    print(jit_speedup(step, jnp.ones((64, 64)), jnp.eye(64), n_steps=10), file=sys.stderr)
