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


LOWERED = """
import json, os, sys
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, numpy as np
from jax import lax
from jax._src.interpreters import mlir
made = []
make = mlir.make_ir_context
def counted():
    made.append(1)
    return make()
mlir.make_ir_context = counted
if sys.argv[1] == "shared":
    from grader.runner import worker
    worker.warm_up()
    made.clear()  # the one warm_up made for the dialects' modules

def running_sum(xs):
    return lax.scan(lambda t, x: (t + x, t + x), np.float32(0), xs)

def piecewise(x):
    return lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)

texts = [jax.jit(running_sum).lower(np.ones(n, np.float32)).as_text() for n in (1, 4, 9)]
texts.append(jax.jit(piecewise).lower(np.float32(1.5)).as_text())
texts += [jax.jit(running_sum).lower(np.ones(n, np.float32)).as_text() for n in range(10, 80)]
child = os.fork()
if child == 0:  # a forked judge or sandbox lowers in a context of its own
    ok = jax.jit(piecewise).lower(np.float32(-1.0)).as_text() == texts[3]
    os._exit(0 if ok else 1)
_, status = os.waitpid(child, 0)
print(json.dumps({"texts": texts, "made": len(made), "child": status}))
"""


def _lowered(mode: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", LOWERED, mode],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    seen: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return seen


def test_shared_ir_contexts_lower_the_same_modules_in_fewer_contexts() -> None:
    """After the warm-up JAX lowers in one MLIR context per process (a fresh one every
    IR_CONTEXT_USES lowerings): the modules' text is the same as with a context each, and
    a forked process lowers in its own."""
    from grader.runner.worker import IR_CONTEXT_USES

    alone, shared = _lowered("alone"), _lowered("shared")
    assert shared["texts"] == alone["texts"]
    assert alone["made"] == 74  # one per lowering (the child's are its own)
    assert shared["made"] == -(-74 // IR_CONTEXT_USES)
    assert shared["child"] == 0 and alone["child"] == 0


def test_no_local_constants_after_the_warm_up(tmp_path: object) -> None:
    """Hypothesis draws no constant from the source of modules outside site-packages (the
    grader's own, run from a checkout): a search draws what an installed grader draws."""
    probe = """
import json, os, sys
os.environ["JAX_PLATFORMS"] = "cpu"
sys.path.insert(0, sys.argv[1])
with open(os.path.join(sys.argv[1], "local_constants_here.py"), "w") as fh:
    fh.write("A = 123456.75\\nB = 'a string of its own'\\n")
from hypothesis.internal.conjecture import providers
if sys.argv[2] == "shared":
    from grader.runner import worker
    worker.warm_up()
import local_constants_here
found = providers._get_local_constants()
print(json.dumps({"floats": [float(f) for f in found.floats]}))
"""
    seen = {}
    for mode in ("alone", "shared"):
        out = subprocess.run(
            [sys.executable, "-c", probe, str(tmp_path), mode],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        seen[mode] = json.loads(out.stdout.strip().splitlines()[-1])["floats"]
    assert 123456.75 in seen["alone"]  # without the warm-up, this module's constant is drawn
    assert seen["shared"] == []
