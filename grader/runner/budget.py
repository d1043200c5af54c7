"""What one grading may use of the machine: its share of the cores, and memory that counts
what it really uses, on any core count.

Threads. Every judge and sandbox would otherwise start XLA's thread pools (sized to the whole
machine), BLAS's and OpenMP's: with `--jobs N` on a C-core machine, 2N processes of C threads
each. Each process of a grading gets `share(jobs)` = C // N of them instead (at least one):
XLA sizes its pools from `NPROC` (`xla::DefaultThreadPoolSize`), BLAS and OpenMP from their own
variables. A judge and its sandbox take turns (one waits on the other), so about C threads
are busy at once.

Memory. The limit on a grading is an address-space limit (`RLIMIT_AS`): the warm worker's size
plus `--memory`. Address space is not memory: glibc reserves a 64 MiB malloc arena per thread
(up to 8 per core) and every thread a stack, so on 13 cores correct solutions ran out of a
4 GiB limit while using far less. So the processes we start cap the arenas
(`MALLOC_ARENA_MAX`), start only their share of threads, and the limit adds `headroom()` for
what those threads reserve without using: a large allocation (a 5 GiB array) is still
stopped, whatever the core count.
"""

from __future__ import annotations

import os
import resource

MALLOC_ARENAS = 2
"""malloc arenas per process: the main one and one for all other threads."""
ARENA_BYTES = 64 << 20
"""What glibc reserves per arena on 64-bit (HEAP_MAX_SIZE)."""
FIXED_THREADS = 24
"""Threads a JAX process starts whatever its share (measured: 15 with NPROC=1, 27 with 7,
73 with 30 on one process after a jit; about 2 per share and 13 more)."""
THREADS_PER_SHARE = 2
DEFAULT_STACK_BYTES = 8 << 20
"""A thread's stack when RLIMIT_STACK sets none (glibc takes the soft limit, else 2-8 MiB)."""
THREAD_VARIABLES = ("NPROC", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def cpus() -> int:
    """The CPUs this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def share(jobs: int, available: int | None = None) -> int:
    """Threads for each process of one of `jobs` gradings running at once."""
    return max(1, (cpus() if available is None else available) // max(1, jobs))


def environment(threads: int) -> dict[str, str]:
    """The variables that hold a grading's processes to `threads` threads and few arenas
    (set in a worker's environment: its judges and sandboxes are forked from it)."""
    env = {name: str(threads) for name in THREAD_VARIABLES}
    env["MALLOC_ARENA_MAX"] = str(MALLOC_ARENAS)
    return env


def _stack_bytes() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_STACK)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return DEFAULT_STACK_BYTES
    return int(soft)


def headroom(threads: int) -> int:
    """Address space a process of `threads` threads reserves without using it: the thread
    stacks of its pools and its malloc arenas (added to the limit, not to what it may use)."""
    stacks = (FIXED_THREADS + THREADS_PER_SHARE * max(1, threads)) * _stack_bytes()
    return stacks + MALLOC_ARENAS * ARENA_BYTES


def threads_of_this_process() -> int:
    """The share this process was started with (`environment`), or all CPUs."""
    try:
        return max(1, int(os.environ.get("NPROC", "")))
    except ValueError:
        return cpus()
