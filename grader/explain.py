"""Student-facing explanations of the exceptions JAX raises.

Maps an exception (by class name, so no JAX import is needed here) to the
likely cause and the fix, in JAX terms. Used by the jit check and by the plugin
whenever a student's code raises.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Explanation:
    cause: str
    fix: str
    also: tuple[tuple[str, str], ...] = ()  # (construct, clause): more ways, each dropped in a
    # lesson file whose checks penalise its construct (`avoid`)

    def for_lesson(self, avoided: Iterable[str] | None = None) -> Explanation:
        """This explanation with the `also` clauses the lesson file allows (none of `avoided`,
        default `AVOIDED`) joined to its fix."""
        skip = AVOIDED if avoided is None else set(avoided)
        kept = [clause for construct, clause in self.also if construct not in skip]
        if not kept:
            return Explanation(self.cause, self.fix)
        return Explanation(self.cause, f"{self.fix} ({'; '.join(kept)})")


AVOIDED: set[str] = set()
"""Constructs the lesson file being judged penalises (its suite's `AVOID`, set by `avoid`):
no explanation recommends them there."""


def avoid(constructs: Iterable[str]) -> None:
    """The suite being judged penalises `constructs` (`jnp.where` where `piecewise` must branch
    with `lax.cond`): explanations leave them out. A suite calls it with its `AVOID`."""
    AVOIDED.update(constructs)


EXPLANATIONS: dict[str, Explanation] = {
    "TracerBoolConversionError": Explanation(
        cause="a Python `if`, `while`, `and`/`or` or `bool()` on a traced value: under jit the "
        "value is not known while the function is traced",
        fix="branch with `jax.lax.cond`; loop with `jax.lax.while_loop`/`fori_loop`",
        also=(("jnp.where", "`jnp.where` for element-wise choices between arrays"),),
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
        fix="keep the shape fixed: select with the mask instead of indexing by it",
        also=(("jnp.where", "`jnp.where(mask, x, 0)`"),),
    ),
    "NotImplementedError": Explanation(
        cause="the function raised NotImplementedError, which the stub raises until its body "
        "is written",
        fix="replace the `raise NotImplementedError` under the TODO with your implementation",
    ),
    "MemoryError": Explanation(
        cause="the code tried to allocate more memory than the grader allows",
        fix="look for an array whose size grows with a loop or a shape built from the data",
    ),
}


FLOAT_INDEX = Explanation(
    cause="an array of floats was used as an index: the index of an array (a permutation, "
    "positions) holds integers",
    fix="index with an integer array (print its `dtype` where it is made): "
    "`jax.random.permutation(key, n)` with `n` an int gives the positions 0..n-1, while "
    "given an array it shuffles that array's values",
)

# Errors JAX raises as plain ValueError/TypeError, recognised by their text.
BY_MESSAGE: dict[str, Explanation] = {
    "Non-hashable static arguments": Explanation(
        cause="an array (or a traced value) was passed for an argument that a `jax.jit` marks static (`static_argnums`/`static_argnames`); static arguments must be hashable Python values, and every new value compiles again",
        fix="mark static only Python values such as `n_iters`; leave array arguments traced",
    ),
    "Shapes must be 1D sequences of concrete values": Explanation(  # `_shape_sizes`
        cause="a shape was computed from a traced value",
        fix="build shapes from Python ints (`x.shape`, static arguments), not from array values",
    ),
    "inconsistent sizes": Explanation(
        cause="`jax.vmap` mapped arguments whose batch axes have different sizes",
        fix="check `in_axes`: use `None` for arguments that are shared by every example",
    ),
    "RESOURCE_EXHAUSTED": EXPLANATIONS["MemoryError"],
    "' as a data type": Explanation(
        cause="a size was passed where the dtype goes: a shape is ONE tuple "
        "(`jnp.zeros((3, 4))`, `jax.random.normal(key, (3, 4))`), so a second size given on "
        "its own (`jnp.zeros(3, 4)`, `jax.random.normal(key, *shape)`) is read as the dtype",
        fix="pass the shape as one tuple: `(n, m)`, or `shape` itself",
    ),
    "subdtype of <class 'numpy.integer'>": Explanation(
        cause="an integer array was expected and a float array was given (integer class "
        "labels, for a cross-entropy with integer labels or an index): the labels are "
        "floats here, or another array was passed where the labels go",
        fix="pass the integer labels themselves (print `y.dtype` and `y.shape` where they are "
        "passed)",
    ),
    "indices must be of integer type": Explanation(
        cause="indices were given as floats: indexing and `take_along_axis` take integer "
        "arrays (integer class labels, positions), so a float array was passed where they go",
        fix="pass the integer array itself (print its `dtype` where it is passed); cast with "
        "`.astype(jnp.int32)` only if the values are whole numbers",
    ),
    "Indexer must have integer or boolean type, got indexer with type float": FLOAT_INDEX,
    "arrays used as indices must be of integer (or boolean) type": FLOAT_INDEX,
    "cannot operate inplace": Explanation(
        cause="a `jnp` ufunc's `.at` (`jnp.add.at(x, indices, values)`) was called with its "
        "default `inplace=True`, which JAX refuses: JAX arrays are immutable, so nothing can "
        "be updated in place",
        fix="pass `inplace=False` (it returns the updated copy), or write "
        "`x.at[indices].add(values)`",
    ),
}


def every_fix(avoided: Iterable[str]) -> list[str]:
    """Every fix an explanation can give in a lesson file that penalises `avoided`."""
    known = [*EXPLANATIONS.values(), *BY_MESSAGE.values(), FLOAT_SIZE, CONTAINER_BLOCK]
    return [e.for_lesson(avoided).fix for e in known]


def explain(exc: BaseException) -> Explanation | None:
    """The explanation for `exc`'s class or its nearest explained base class. For an exception
    raised in the sandbox (it carries `info`), the student's class names are used. A shape
    error (operands that do not broadcast, a matrix product whose inner sizes differ, a
    reshape to another size...) is explained with its shapes and the student's line."""
    info = getattr(exc, "info", None)
    names = (
        (info.type, *info.bases)
        if info is not None
        else tuple(c.__name__ for c in type(exc).__mro__)
    )
    for name in names:
        if name == "NotImplementedError" and info is not None and not info.in_student:
            break  # raised by a library (JAX refusing an operation), not by the stub's line
        found = EXPLANATIONS.get(name)
        if found is not None:
            return found.for_lesson()
    text = str(exc)
    shaped = shape_error(text, _student_line(exc))
    if shaped is not None:
        return shaped
    renamed = _RENAME.search(text)
    if renamed and renamed.group(2).startswith(renamed.group(1)) and "tmp" in renamed.group(2):
        return RENAME_SWAPPED
    known = next((known for marker, known in BY_MESSAGE.items() if marker in text), None)
    if known is BY_MESSAGE["' as a data type"] and not _SIZE_AS_DTYPE.search(text):
        return None  # something else than a size where the dtype goes
    if known is BY_MESSAGE[_SHAPES]:
        return _shape_sizes(text)
    if known is None and (blocked := _NO_BLOCK.search(text)) is not None:
        return CONTAINER_BLOCK if blocked.group(1) in ("tuple", "list", "dict") else None
    return known.for_lesson() if known is not None else None


def _shape_sizes(text: str) -> Explanation | None:
    """JAX's "Shapes must be 1D sequences of concrete values of integer type, got (...)":
    what the sizes it shows are (a tracer, a float), else no cause."""
    got = text.partition(", got ")[2].split("\n", 1)[0]
    if "Tracer" in got or "Traced<" in got:
        return BY_MESSAGE[_SHAPES].for_lesson()
    if _FLOAT_SIZE.search(got):
        return FLOAT_SIZE
    return None


_SHAPES = "Shapes must be 1D sequences of concrete values"
_NO_BLOCK = re.compile(r"'(\w+)' object has no attribute 'block_until_ready'")
CONTAINER_BLOCK = Explanation(
    cause="`.block_until_ready()` was called on a Python container of arrays (a tuple, list or "
    "dict: a pytree): the method belongs to each array, not to the container",
    fix="`jax.block_until_ready(out)` waits for every array of a pytree and returns it",
)
_FLOAT_SIZE = re.compile(r"(?<![\w.])\d+\.\d*(?![\w.])|float\d*\(")
FLOAT_SIZE = Explanation(
    cause="a size in the shape is a float, not an int (`/` gives a float even where it divides "
    "evenly: `16 / 8` is 2.0)",
    fix="compute sizes with `//` (or `int(...)` of a Python number): `x.shape[0] // n`",
)


_SIZE_AS_DTYPE = re.compile(r"Cannot interpret '\d+' as a data type")
_RENAME = re.compile(r"No such file or directory: '([^']+)' -> '([^']+)'")

RENAME_SWAPPED = Explanation(
    cause="a rename whose source does not exist, from the final path to a temporary one: "
    "`os.replace(src, dst)` (and `os.rename`) moves src to dst, so the final path and the "
    "temporary file are in each other's place",
    fix="write the temporary file first, then `os.replace(temporary, path)`",
)
"""A rename (`os.replace`, `os.rename`, `Path.replace`) from a path that does not exist to that
path with a temporary suffix: the message shows the two, the source first."""


# -- shape errors -----------------------------------------------------------------------------

_SHAPE = r"\((?:\d+(?:, *\d+)*,?)?\)"
_BINARY = re.compile(rf"^(\w+) got incompatible shapes for broadcasting: ({_SHAPE}), ({_SHAPE})")
_MANY = re.compile(r"Incompatible shapes for broadcasting: shapes=\[([^\]]*)\]")
_CONTRACT = re.compile(
    rf"dot_general requires contracting dimensions to have the same shape, got ({_SHAPE}) and ({_SHAPE})"
)
_MATMUL = re.compile(
    r"Incompatible types for matmul arguments: \w+\[([\d,]*)\] and \w+\[([\d,]*)\]"
)
_EINSUM = re.compile(
    r"Size of label '(\w)' for operand (\d+) \((\d+)\) does not match previous terms \((\d+)\)"
)
_RESHAPE = re.compile(
    rf"cannot reshape array of shape ({_SHAPE}) \(size (\d+)\) into shape (.+?) \(size (\d+)\)"
)
_CONCAT = re.compile(rf"along dimension (\d+) for shapes ((?:{_SHAPE}(?:, )?)+)")
_SAME_SHAPE = re.compile(rf"All input arrays must have the same shape. Got ((?:{_SHAPE}(?:, )?)+)")
_PARAM_SHAPE = re.compile(
    rf'For parameter "(\w+)" in "([^"]*)", the given initializer is expected to generate '
    rf"shape ({_SHAPE}), but the existing parameter it received has shape ({_SHAPE})"
)
_TO_TYPE = re.compile(
    r"Incompatible types for broadcasting: input type=\w+\[([\d,]*)\] and requested type=\w+\[([\d,]*)\]"
)

# The lax primitive in a broadcasting error, as the student wrote it.
_OPERATORS: dict[str, tuple[str, str]] = {  # primitive -> (operator, jnp function)
    "add": ("+", "jnp.add"),
    "sub": ("-", "jnp.subtract"),
    "mul": ("*", "jnp.multiply"),
    "div": ("/", "jnp.divide"),
    "rem": ("%", "jnp.remainder"),
    "pow": ("**", "jnp.power"),
    "max": ("", "jnp.maximum"),
    "min": ("", "jnp.minimum"),
    "eq": ("==", "jnp.equal"),
    "ne": ("!=", "jnp.not_equal"),
    "lt": ("<", "jnp.less"),
    "le": ("<=", "jnp.less_equal"),
    "gt": (">", "jnp.greater"),
    "ge": (">=", "jnp.greater_equal"),
    "and": ("&", "jnp.logical_and"),
    "or": ("|", "jnp.logical_or"),
    "xor": ("^", "jnp.logical_xor"),
    "atan2": ("", "jnp.arctan2"),
    "select_n": ("", "jnp.where"),
}

_BROADCAST_FIX = (
    "print the shapes of both sides (`x.shape`) and make them agree: equal sizes, or size 1 "
    "on the axis that should be repeated (`keepdims=True` in a reduction, `x[:, None]`); a "
    "one-hot needs as many columns as there are classes (logits' last axis)"
)


def shape_error(message: str, line: tuple[int, str] | None) -> Explanation | None:
    """The explanation of a JAX shape error from its message and the student's line
    (`(line number, code)`, or None when unknown), naming the shapes in the student's terms."""
    at = f" at line {line[0]}" if line else ""
    code = line[1] if line else ""
    for pattern, explained in _SHAPE_ERRORS:
        found = pattern.search(message)
        if found:
            return explained(found, at, code)
    return None


# Each builder takes the message's match, ` at line N` (or "") and the student's code (or "").
_Builder = Callable[[re.Match[str], str, str], Explanation]


def _binary(found: re.Match[str], at: str, code: str) -> Explanation:
    """Two operands of an element-wise primitive that do not broadcast."""
    op, left, right = found.group(1), _shape(found.group(2)), _shape(found.group(3))
    return Explanation(
        cause=f"{_operands(op, code)}{at} have shapes {_text(left)} and {_text(right)}: "
        f"{_mismatch([left, right], code if _on_line(op, code) else '')}",
        fix=_BROADCAST_FIX,
    )


def _many(found: re.Match[str], at: str, code: str) -> Explanation:
    """More than two arrays that do not broadcast together."""
    shapes = [_shape(s) for s in re.findall(_SHAPE, found.group(1))]
    return Explanation(
        cause=f"the arrays combined{at} have shapes {_join([_text(s) for s in shapes])}: "
        f"{_mismatch(shapes, code if _combines(code) else '')}",
        fix=_BROADCAST_FIX,
    )


def _contract(found: re.Match[str], at: str, code: str) -> Explanation:
    """A matrix product whose summed axes differ in size."""
    left, right = _shape(found.group(1)), _shape(found.group(2))
    product = "`@`" if "@" in code else "the matrix product (`@`, `jnp.dot`, `jnp.matmul`)"
    sizes = f"{_join([str(d) for d in left])} and {_join([str(d) for d in right])}"
    return Explanation(
        cause=f"{product}{at} sums over axes of different sizes: {sizes}. For `a @ b` the "
        "last axis of `a` must have the size of the first axis of `b` (its second-to-last "
        "when `b` has more than two axes)",
        fix="compare the two operands' shapes: one of them may need a transpose (`w.T`), or "
        "a weight matrix has the wrong size for its input (check the layer sizes)",
    )


def _matmul(found: re.Match[str], at: str, code: str) -> Explanation:
    """A matrix product whose batch axes do not broadcast."""
    left, right = _shape(f"({found.group(1)})"), _shape(f"({found.group(2)})")
    return Explanation(
        cause=f"the matrix product{at} multiplies shapes {_text(left)} and {_text(right)}: "
        "their leading (batch) axes do not broadcast",
        fix="give both operands the same batch axes (or size 1 there), or use `jax.vmap` over "
        "the batch",
    )


def _einsum(found: re.Match[str], at: str, code: str) -> Explanation:
    """An einsum index given two sizes."""
    label, operand, size, before = found.groups()
    return Explanation(
        cause=f"in `jnp.einsum`{at}, the index '{label}' has size {size} in operand {operand} "
        f"but {before} in the operands before it: an index names one axis size",
        fix="check the subscripts against each operand's shape, operand by operand",
    )


def _reshape(found: re.Match[str], at: str, code: str) -> Explanation:
    """A reshape to another number of elements."""
    old, old_size, new, new_size = found.groups()
    return Explanation(
        cause=f"the reshape{at} asks for shape {new.strip()} ({new_size} elements) from an "
        f"array of shape {old} ({old_size} elements): a reshape keeps the number of elements",
        fix="compute the new shape from the array's own shape, or put -1 for the one axis "
        "JAX should work out",
    )


def _concat(found: re.Match[str], at: str, code: str) -> Explanation:
    """Arrays joined along an axis whose other sizes differ."""
    axis, shapes = int(found.group(1)), [_shape(s) for s in re.findall(_SHAPE, found.group(2))]
    return Explanation(
        cause=f"the arrays joined{at} along axis {axis} have shapes "
        f"{_join([_text(s) for s in shapes])}: every axis but axis {axis} must match",
        fix="check which axis to join along, or give the arrays the same other sizes",
    )


def _same_shape(found: re.Match[str], at: str, code: str) -> Explanation:
    """Arrays of different shapes stacked."""
    shapes = [_shape(s) for s in re.findall(_SHAPE, found.group(1))]
    return Explanation(
        cause=f"the arrays stacked{at} have shapes {_join([_text(s) for s in shapes])}: "
        "`jnp.stack` needs them all the same shape",
        fix="make the arrays the same shape first, or use `jnp.concatenate` to join along "
        "an existing axis",
    )


def _param_shape(found: re.Match[str], at: str, code: str) -> Explanation:
    """A Flax parameter created at `init` for one input size, applied to another."""
    name, where = found.group(1), found.group(2).strip("/") or "the module"
    wanted, existing = _shape(found.group(3)), _shape(found.group(4))
    cause = (
        f"{where}'s {name} was created with shape {_text(existing)} by `init`, and the input "
        f"of this call{at} needs {_text(wanted)}: the layer's input size differs between "
        "`init` and `apply`"
    )
    fix = "give `init` an input of the shape `apply` gets: examples of the same size"
    if (
        len(wanted) == len(existing) == 2
        and wanted[1:] == existing[1:]
        and existing[0] > 0
        and wanted[0] % existing[0] == 0
        and wanted[0] // existing[0] > 1
    ):
        k = wanted[0] // existing[0]
        cause += (
            f", {wanted[0]} = {k} x {existing[0]} features: as many as {k} examples' (a whole "
            "batch flattened into one example, `x.reshape(-1)` or `x.ravel()`, gives that)"
        )
        fix = (
            "flatten each example on its own, keeping the batch axis: `x.reshape((x.shape[0], -1))`"
        )
    return Explanation(cause=cause, fix=fix)


def _to_type(found: re.Match[str], at: str, code: str) -> Explanation:
    """An array put where a shape it does not broadcast to is needed."""
    have, want = _shape(f"({found.group(1)})"), _shape(f"({found.group(2)})")
    return Explanation(
        cause=f"an array of shape {_text(have)} was put{at} where shape {_text(want)} is "
        f"needed (`jnp.broadcast_to`, or `.at[...].set(...)` with a value that does not fit "
        f"the selected slice): {_mismatch([have, want])}",
        fix="give the value the shape of what it replaces, or select a slice of its shape",
    )


# The shape errors in the order they are tried: the first pattern found explains the message.
_SHAPE_ERRORS: tuple[tuple[re.Pattern[str], _Builder], ...] = (
    (_BINARY, _binary),
    (_MANY, _many),
    (_CONTRACT, _contract),
    (_MATMUL, _matmul),
    (_EINSUM, _einsum),
    (_RESHAPE, _reshape),
    (_CONCAT, _concat),
    (_SAME_SHAPE, _same_shape),
    (_TO_TYPE, _to_type),
    (_PARAM_SHAPE, _param_shape),
)


def _operands(op: str, code: str) -> str:
    """`the two sides of `*``, or `the operands of `jnp.maximum`` when no operator was used."""
    symbol, function = _OPERATORS.get(op, ("", f"`{op}`"))
    if symbol and _has_operator(code, symbol):
        return f"the two sides of `{symbol}`"
    if function.startswith("jnp.") and function.split(".")[1] in code:
        return f"the operands of `{function}`"
    spelled = f"`{symbol}` or `{function}`" if symbol else f"`{function}`"
    return f"the operands of {spelled}"


def _on_line(op: str, code: str) -> bool:
    """The student's line itself applies `op` (its operator or its jnp function), rather than
    a library function called there."""
    symbol, function = _OPERATORS.get(op, ("", f"`{op}`"))
    if symbol and _has_operator(code, symbol):
        return True
    return function.startswith("jnp.") and function.split(".")[1] in code


def _combines(code: str) -> bool:
    """The student's line itself combines arrays element-wise (an operator or a jnp
    element-wise function), rather than only calling a library function that does."""
    return any(_on_line(op, code) for op in _OPERATORS)


def _has_operator(code: str, symbol: str) -> bool:
    if symbol == "*":
        return re.search(r"(?<![*])\*(?![*=])", code) is not None
    if symbol in ("<", ">"):
        return re.search(rf"(?<![{symbol}]){re.escape(symbol)}(?![{symbol}=])", code) is not None
    if symbol == "-":
        return re.search(r"\w\s*\)?\]?\s*-(?![=>])", code) is not None
    return symbol in code


def _shape(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in re.findall(r"\d+", text))


def _text(shape: tuple[int, ...]) -> str:
    return f"({shape[0]},)" if len(shape) == 1 else str(shape)


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _axis(k: int) -> str:
    return {1: "last axis", 2: "second-to-last axis"}.get(k, f"axis -{k}")


_REDUCTION = re.compile(r"\b(?:mean|sum|std|var|max|min|prod)\(")


def _mismatch(shapes: list[tuple[int, ...]], code: str = "") -> str:
    """Why `shapes` do not broadcast, axis by axis from the right; `code`, the student's line
    that combines them itself, where a reduction on it without `keepdims` explains a shorter
    operand."""
    width = max(len(s) for s in shapes)
    for k in range(1, width + 1):
        sizes = [s[-k] for s in shapes if len(s) >= k]
        if len(set(sizes) - {1}) > 1:
            shown = [n for n in sizes if n != 1]
            neither = " and neither is 1" if len(sizes) == 2 else ""
            why = (
                f"on the {_axis(k)} they have sizes {_join([str(n) for n in shown])}, which "
                f"differ{neither}, so they do not broadcast (shapes are matched from the last "
                "axis: each pair of sizes must be equal, or one of them 1)"
            )
            shorter = [s for s in shapes if len(s) < width]
            longer = [s for s in shapes if len(s) == width]
            if shorter and any(d in longer[0][:-1] for d in shorter[0][-1:]):
                why += (
                    f"; the shorter one, {_text(shorter[0])}, lines up with the last axis, "
                    f"while its size is that of an earlier axis of {_text(longer[0])}"
                )
                if _REDUCTION.search(code) and "keepdims" not in code:
                    why += ": the reduction on this line drops its axis (no `keepdims=True`)"
            elif len(shapes) == 2 and shapes[0] == shapes[1][::-1]:
                why += "; one is the other transposed"
            return why
    return "they do not broadcast"


def student_frame(exc: BaseException) -> tuple[str, int, str] | None:
    """The student's innermost line behind `exc` as (path, line, code): the sandbox's record
    of it, or (for an exception raised in this process) the innermost frame outside Python,
    libraries and the grader, following chained exceptions."""
    info = getattr(exc, "info", None)
    if info is not None:
        location: tuple[str, int, str] | None = info.location
        return location
    from grader.sandbox.server import is_library

    current: BaseException | None = exc
    seen: set[int] = set()
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames = [
            f for f in traceback.extract_tb(current.__traceback__) if not is_library(f.filename)
        ]
        lineno = frames[-1].lineno if frames else None
        if lineno is not None:
            return frames[-1].filename, lineno, (frames[-1].line or "").strip()
        current = current.__cause__ or current.__context__
    return None


def _student_line(exc: BaseException) -> tuple[int, str] | None:
    frame = student_frame(exc)
    return (frame[1], frame[2]) if frame else None
