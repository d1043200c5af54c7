"""The functions probes call, bound when the grader is imported: before the sandbox forks,
so before any student module runs.

A module that reassigns `jax.jit`, `jax.make_jaxpr`, `jax.debug_key_reuse`,
`copy.deepcopy` or `np.random.get_state` (directly, or through another name for the
module: `m = jax; m.jit = ...`, which the judge's reading of the source does not see)
changes what its own code calls, not what a probe calls: probes call these.

Private to the probes (and the judge's `_calls.ready`).
"""

from __future__ import annotations

import contextlib
import copy
import random

import jax
import jax.monitoring
import numpy as np

jit = jax.jit
make_jaxpr = jax.make_jaxpr
debug_key_reuse = jax.debug_key_reuse
checking_leaks = jax.checking_leaks
effects_barrier = jax.effects_barrier
block_until_ready = jax.block_until_ready
register_event_duration_listener = jax.monitoring.register_event_duration_secs_listener
deepcopy = copy.deepcopy
redirect_stdout = contextlib.redirect_stdout
np_get_state = np.random.get_state
np_set_state = np.random.set_state
np_seed = np.random.seed
py_getstate = random.getstate
py_setstate = random.setstate
py_seed = random.seed
