"""The check kinds: one module per kind of property a JAX exercise can have.

- `values`     arrays and pytrees against a reference; Hypothesis search with shrinking
- `jit`        compiles under `jax.jit` and agrees with the eager call
- `traces`     traced/compiled once for repeated same-shaped calls
- `primitives` which operations the compiled program contains (every function of it)
- `growth`     the compiled program does not grow with the input (no unrolled Python loop)
- `vmap`       batched output equals a Python loop over the single-example function
- `keys`       PRNG keys: no reuse, deterministic, key-dependent, raw keys accepted
- `purity`     no mutation, no global state or RNG, no trace-time-only side effects
- `timing`     step functions with known timing, to judge a student's timer
- `files`      files student code wrote: listed, written or damaged in the sandbox (probes)

`exported` is not a kind: it is how `primitives` and `growth` get their evidence (the
program itself, parsed, refused or accepted, and run against a reference by the judge).

These modules are the judge's side. What runs in the sandbox next to the student's code
(the probes: observations, never verdicts) lives in `grader.probes`, which imports no
check; a check asks for a probe with `client.probe` and judges what it returns.

`diagnose` is not a kind: it confirms a failure's likely cause against the observed numbers
(ddof=1, a batch-size factor, a flipped update, a transpose, another axis, a shift, None
from an unwritten body) before a message names it.

Every check is a plain function `assert_*` that raises `failure.CheckFailure`
(what was checked / expected / observed / likely cause / fix). The modules import
JAX; this package file does not, so `grader.checks.failure` stays cheap to import.
"""

KINDS = (
    "values",
    "jit",
    "traces",
    "primitives",
    "growth",
    "vmap",
    "keys",
    "purity",
    "timing",
    "files",
)
