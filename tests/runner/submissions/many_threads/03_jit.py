"""A correct 03_jit that, at import, runs 64 threads which all allocate at once (each gets a
malloc arena and a stack: address space that grows with threads and cores, not memory)."""
import threading

import jax
import jax.numpy as jnp
import numpy as np

_ready = threading.Barrier(65)


def _work(i):
    kept = [bytearray(1 << 16) for _ in range(8)]  # malloc'd in this thread's own arena
    kept.append(np.ones((64, 64)) * i)
    _ready.wait()
    return kept


_threads = [threading.Thread(target=_work, args=(i,)) for i in range(64)]
for _t in _threads:
    _t.start()
_ready.wait()
for _t in _threads:
    _t.join()


def piecewise(x):
    return jax.lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)


def running_sum(xs):
    def step(total, x):
        total = total + x
        return total, total

    return jax.lax.scan(step, jnp.zeros((), xs.dtype), xs)


def newton_sqrt(a, n_iters=20):
    return jax.lax.fori_loop(0, n_iters, lambda i, g: 0.5 * (g + a / g), jnp.maximum(a, 1.0))
