"""The probes: grader code the judge runs in the sandbox, next to the student's code.

A probe observes and returns plain data (`grader.sandbox.probes`: `@probe`, `@judged`);
the check that asked for it (`grader.checks`) decides what the observation means. This
package is what the sandbox loads of the grader's checking code: it imports JAX, NumPy,
the standard library, `grader.protocol` and `grader.sandbox` only, never a check, the
plugin, a suite, the runner or the authoring API (`tests/test_layers.py`), so the
sandbox never holds judge-side code.

- `jit`       the function called eagerly and under `jax.jit`
- `traces`    a counting jit and JAX's compilation counters
- `jaxpr`     the function traced to a jaxpr, its primitives counted
- `exported`  the program lowered by `jax.export` (a `judged` probe: the judge checks it)
- `keys`      the function under JAX's key-reuse checker, and after the global RNGs moved
- `purity`    two calls and what else changed (arguments, globals, RNGs, printed output)
- `timing`    the steps a student's timer is given (public factories) and a recording step
- `files`     files the student's code wrote: listed, written, cut short

`_bound` holds the JAX functions probes call, bound before any student module runs;
`_calls` calls a student's function (static arguments bound, errors as data); `_format`
is the text of values (shared with the checks).
"""
