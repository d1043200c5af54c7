"""One thread budget per grading (`grader.runner.budget`): the arithmetic, and that the real
XLA and glibc honour the variables it sets."""

from __future__ import annotations

import os
import subprocess
import sys

from grader.runner import budget

JIT_THEN_COUNT = """
import os, jax, jax.numpy as jnp
x = jnp.ones((256, 256))
jax.jit(lambda a: jnp.tanh(a) @ a)(x).block_until_ready()
print(len(os.listdir("/proc/self/task")))
"""


def test_each_grading_gets_its_share_of_the_cores() -> None:
    assert budget.share(1, available=13) == 13
    assert budget.share(4, available=13) == 3
    assert budget.share(12, available=13) == 1
    assert budget.share(64, available=13) == 1  # never none
    assert budget.share(0, available=2) == 2


def test_the_environment_names_every_pool() -> None:
    env = budget.environment(3)
    assert {env[name] for name in budget.THREAD_VARIABLES} == {"3"}
    assert env["MALLOC_ARENA_MAX"] == str(budget.MALLOC_ARENAS)


def test_headroom_counts_stacks_and_arenas() -> None:
    one, many = budget.headroom(1), budget.headroom(13)
    assert many - one == 12 * budget.THREADS_PER_SHARE * budget._stack_bytes()
    assert one >= budget.MALLOC_ARENAS * budget.ARENA_BYTES
    assert many < 1 << 30  # headroom, not a second memory limit


def _threads_after_a_jit(threads: int) -> int:
    env = {**os.environ, **budget.environment(threads), "JAX_PLATFORMS": "cpu"}
    env.pop("XLA_FLAGS", None)
    done = subprocess.run(
        [sys.executable, "-c", JIT_THEN_COUNT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return int(done.stdout.split()[-1])


def test_xla_sizes_its_pools_from_the_share() -> None:
    # Real JAX: a process given a share of 1 runs fewer threads than one given 8, whatever
    # the machine's core count (XLA reads NPROC: xla::DefaultThreadPoolSize).
    assert _threads_after_a_jit(1) + 8 <= _threads_after_a_jit(8)
