"""The warm worker's warm-up (`grader.runner.worker.warm_up`): what every judge would pay
for on its first check is paid once, before the fork, and starts no JAX backend (a judge
sets its devices before its own)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, os, sys
os.environ["JAX_PLATFORMS"] = "cpu"
import jax
from jax._src import xla_bridge
before = "scipy.linalg" in sys.modules
from grader.runner import worker
worker.warm_up()
print(json.dumps({"before": before, "after": "scipy.linalg" in sys.modules,
                  "backends": sorted(xla_bridge._backends)}))
"""


def test_warm_up_loads_lapack_without_starting_a_backend() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"before": False, "after": True, "backends": []}


def test_lapack_is_what_an_exported_programs_lowering_asks_for() -> None:
    """Without the warm-up the first call of an exported program imports SciPy's LAPACK (so
    the warm-up saves the judge real work, and a JAX that stops asking for it shows here)."""
    probe = """
import json, os, sys
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.export, jax.numpy as jnp
exp = jax.export.export(jax.jit(lambda x: x * 2))(jax.ShapeDtypeStruct((2,), jnp.float32))
before = "scipy.linalg" in sys.modules
jax.jit(exp.call)(jnp.ones(2, jnp.float32))
print(json.dumps({"before": before, "after": "scipy.linalg" in sys.modules}))
"""
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"before": False, "after": True}
