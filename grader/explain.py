"""Student-facing explanations of the exceptions JAX raises.

Maps an exception (by class name, so no JAX import is needed here) to the
likely cause and the fix, in JAX terms. Used by the jit check and by the plugin
whenever a student's code raises.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Explanation:
    cause: str
    fix: str


EXPLANATIONS: dict[str, Explanation] = {
    "TracerBoolConversionError": Explanation(
        cause="a Python `if`, `while`, `and`/`or` or `bool()` on a traced value: under jit the "
        "value is not known while the function is traced",
        fix="branch with `jax.lax.cond` (or `jnp.where` for element-wise choices); loop with "
        "`jax.lax.while_loop`/`fori_loop`",
    ),
    "ConcretizationTypeError": Explanation(
        cause="a traced value was used where Python needs a concrete number (a shape, "
        "`range(...)`, `int(...)`, a slice bound)",
        fix="keep shapes and loop counts as Python values (mark them static with "
        "`static_argnames`), or use `jax.lax.fori_loop`/`dynamic_slice` with traced bounds",
    ),
    "TracerArrayConversionError": Explanation(
        cause="a NumPy function (`np.asarray`, `np.sum`, ...) was called on a traced value; "
        "NumPy needs concrete data",
        fix="use the `jax.numpy` (`jnp`) version of the function inside traced code",
    ),
    "TracerIntegerConversionError": Explanation(
        cause="a traced value was turned into a Python int (`int(x)`, indexing a Python list "
        "or tuple with it)",
        fix="index arrays with `jnp` indexing or `jax.lax.dynamic_index_in_dim`; keep Python "
        "indices and loop counts static (`static_argnames`)",
    ),
    "UnexpectedTracerError": Explanation(
        cause="a traced value escaped the function it belongs to (stored in a global, a list "
        "or an object attribute during tracing) and was used later",
        fix="return values instead of storing them: keep the function pure",
    ),
    "KeyReuseError": Explanation(
        cause="a PRNG key was consumed twice, so two random draws are correlated",
        fix="split before each use: `key, subkey = jax.random.split(key)` and use every key "
        "exactly once",
    ),
    "NonConcreteBooleanIndexError": Explanation(
        cause="boolean-mask indexing (`x[x > 0]`) under jit: the result's shape depends on "
        "the values",
        fix="use `jnp.where(mask, x, 0)` to keep the shape fixed",
    ),
    "NotImplementedError": Explanation(
        cause="this function is still the stub",
        fix="replace the `raise NotImplementedError` under the TODO with your implementation",
    ),
    "MemoryError": Explanation(
        cause="the code tried to allocate more memory than the grader allows",
        fix="look for an array whose size grows with a loop or a shape built from the data",
    ),
}


# Errors JAX raises as plain ValueError/TypeError, recognised by their text.
BY_MESSAGE: dict[str, Explanation] = {
    "Non-hashable static arguments": Explanation(
        cause="an array (or a traced value) was passed for an argument that a `jax.jit` marks static (`static_argnums`/`static_argnames`); static arguments must be hashable Python values, and every new value compiles again",
        fix="mark static only Python values such as `n_iters`; leave array arguments traced",
    ),
    "Shapes must be 1D sequences of concrete values": Explanation(
        cause="a shape was computed from a traced value",
        fix="build shapes from Python ints (`x.shape`, static arguments), not from array values",
    ),
    "inconsistent sizes": Explanation(
        cause="`jax.vmap` mapped arguments whose batch axes have different sizes",
        fix="check `in_axes`: use `None` for arguments that are shared by every example",
    ),
    "RESOURCE_EXHAUSTED": EXPLANATIONS["MemoryError"],
}


def explain(exc: BaseException) -> Explanation | None:
    """The explanation for `exc`'s class or its nearest explained base class. For an exception
    raised in the sandbox (it carries `info`), the student's class names are used."""
    info = getattr(exc, "info", None)
    names = (info.type, *info.bases) if info is not None else tuple(c.__name__ for c in type(exc).__mro__)
    for name in names:
        found = EXPLANATIONS.get(name)
        if found is not None:
            return found
    text = str(exc)
    return next((known for marker, known in BY_MESSAGE.items() if marker in text), None)
