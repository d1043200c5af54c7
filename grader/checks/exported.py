"""The compiled program itself, checked in the judge: structure that cannot be observed
into passing.

A structural property (a `cond`, a loop primitive, a cross-device collective, a program
that does not grow with its input) is read from the program the student's function
compiles to, not from an observation made next to it. The sandbox lowers
`jax.jit(fn)` for the judge's shapes with `jax.export` (`grader.probes.exported`, a
`judged` probe) and hands over only the StableHLO
module (`mlir_module_serialized`, VHLO bytes) and which arguments it keeps. The judge:

1. parses the module itself and REFUSES any program that can leave the computation:
   custom calls (host callbacks are custom calls) other than the sharding markers and
   LAPACK routines, infeed/outfeed/send/recv, external functions, tokens, tensors over
   `MAX_ELEMENTS`, regions nested deeper than `MAX_DEPTH`, a signature that is not the
   judge's shapes (debug prints are not in the program: the probe lowers it without
   them, `grader.probes._debug`; a callback left in it is refused like any other);
2. builds the `jax.export.Exported` around it from its own metadata (shapes, dtypes,
   devices, calling convention, no effects, no disabled safety checks: the sandbox's
   word is taken for none of them; `jax.export.deserialize` would take it for all, and
   needs `flatbuffers`);
3. where the check gives a reference, RUNS it on inputs it draws itself (the check's
   arguments, each float scaled by a random factor in [0.5, 2], from system entropy)
   and requires the reference's values; without one, the structure is an observation,
   credited only where `client.require_observable` allows (comparing with what the
   student's function answers in the sandbox would add nothing: a function that knows
   it is being exported answers what its program computes);
4. reads the structure from the very program it ran: op counts over every function of
   the module (`stablehlo.case`/`if` for `cond`, `stablehlo.while` for `scan`,
   `fori_loop` and `while_loop`, `stablehlo.all_reduce` for `psum`/`pmean`).

A forged program must then compute the right values with the required structure:
that is the exercise itself.

    program = exported.checked(student.piecewise, (x,), what="piecewise(x)",
                               reference=_ref_piecewise)
    program.ops["case"]
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import jax
import jax.export
import jax.numpy as jnp
import numpy as np

from grader.checks import calls, values
from grader.checks.failure import CheckFailure, fail
from grader.probes import _format
from grader.probes.exported import aval_of, export_program
from grader.sandbox import client

MAX_MODULE_BYTES = 16 << 20
MAX_ELEMENTS = 1 << 26
"""The largest tensor a program the judge runs may hold (2^26 elements: 256 MiB of f32)."""
MAX_OPS = 200_000
MAX_DEPTH = 64
"""The deepest nesting of regions the judge reads (loops in branches in loops...): lesson
programs nest a few levels; XLA's compiler overflows its stack on a few hundred."""
STACK_PER_BYTE = 64
"""Stack the judge's reader is given per byte of module (MLIR's reader recurses once per
nested region, about 500 bytes of stack for each 40 bytes of module)."""
DRAWS = 3
"""Inputs the judge draws for each program it runs against its reference (runs of one
compiled program: cheap)."""
RTOL, ATOL = 1e-4, 1e-5

ALLOWED_CUSTOM_CALLS = frozenset({"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"})
"""Custom calls that only mark shardings; besides these, LAPACK routines (`lapack_*_ffi`)."""
REFUSED_OPS = frozenset(
    {"stablehlo.infeed", "stablehlo.outfeed", "stablehlo.send", "stablehlo.recv"}
)
_DIALECTS = ("builtin.", "func.", "stablehlo.", "chlo.", "sdy.")
_UNCOUNTED = frozenset(
    {"builtin.module", "func.func", "func.return", "stablehlo.return", "sdy.return", "sdy.mesh"}
)

# What each lesson-level name is in a compiled program.
OPS: dict[str, frozenset[str]] = {
    "cond": frozenset({"case", "if"}),
    "switch": frozenset({"case", "if"}),
    "scan": frozenset({"while"}),
    "while": frozenset({"while"}),
    "fori_loop": frozenset({"while"}),
    "psum": frozenset({"all_reduce"}),
    "pmean": frozenset({"all_reduce"}),
    "select_n": frozenset({"select"}),
    "dot_general": frozenset({"dot_general", "dot"}),
}


def ops_for(name: str) -> frozenset[str]:
    """The op names (dialect dropped) a lesson-level primitive name stands for."""
    return OPS.get(name, frozenset({name}))


def matching(ops: Mapping[str, int], name: str) -> int:
    return sum(ops.get(op, 0) for op in ops_for(name))


@dataclasses.dataclass(frozen=True)
class Program:
    """A compiled program the judge parsed, refused or accepted, and can run."""

    ops: Counter[str]
    outputs: tuple[tuple[tuple[int, ...], np.dtype[Any]], ...]
    devices: int
    module: bytes
    inputs: tuple[tuple[tuple[int, ...], np.dtype[Any]], ...]
    kept: tuple[int, ...]

    @property
    def exported(self) -> Any:
        """The `jax.export.Exported` the judge builds around the module (when it runs it)."""
        return _exported(self.module, self.inputs, self.kept, self.outputs, self.devices)

    @property
    def size(self) -> int:
        return sum(self.ops.values())

    def __call__(self, leaves: Sequence[Any]) -> list[np.ndarray[Any, Any]]:
        return [np.asarray(x) for x in _runner(self)(*leaves)]


_RUNNERS: dict[int, tuple[Program, Callable[..., Any]]] = {}


def _runner(program: Program) -> Callable[..., Any]:
    """`program.exported.call` under `jax.jit` (compiled once per program); on the judge's
    first `devices` devices, replicated, when the program spans several."""
    found = _RUNNERS.get(id(program))
    if found is not None and found[0] is program:
        return found[1]
    built = program.exported
    if program.devices > 1:
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        mesh = Mesh(np.array(jax.devices()[: program.devices]), ("devices",))
        replicated = NamedSharding(mesh, PartitionSpec())  # type: ignore[no-untyped-call]
        n_in = len(built.in_avals)
        run = jax.jit(built.call, in_shardings=(replicated,) * n_in, out_shardings=replicated)
    else:
        run = jax.jit(built.call)
    _RUNNERS.clear()  # one program at a time: a check runs its programs one after another
    _RUNNERS[id(program)] = (program, run)
    return run


class Refused(Exception):
    """The module is not a program the judge runs."""


def parse(module: bytes, inputs: Sequence[tuple[tuple[int, ...], np.dtype[Any]]],
          kept: Sequence[int]) -> Program:  # fmt: skip
    """The judge's reading of the sandbox's module for arguments of shapes `inputs`:
    `Refused` (with why) unless it is a plain computation on exactly those arguments."""
    from jax.extend.mlir import ir
    from jax.interpreters import mlir as jax_mlir

    _check_envelope(module, inputs, kept)
    with jax_mlir.make_ir_context() as context:
        mod = _deserialize(module, context)
        attributes = mod.operation.attributes
        partitions = _int_attribute(attributes, "mhlo.num_partitions")
        replicas = _int_attribute(attributes, "mhlo.num_replicas")
        reading = _Reading(ir)
        if "jax.uses_shape_polymorphism" in attributes and (
            str(attributes["jax.uses_shape_polymorphism"]) != "false"
        ):
            reading.refused.append("shape polymorphism")
        reading.walk(mod.operation)
        got_in, outputs = reading.signature()
    if reading.refused:
        raise Refused("it contains " + ", ".join(dict.fromkeys(reading.refused)))
    _check_signature(got_in, outputs, [inputs[i] for i in kept])
    if replicas not in (0, 1) or partitions < 0 or partitions > max(1, jax.device_count()):
        raise Refused(f"it spans {replicas} replicas x {partitions} partitions")
    devices = max(1, partitions)
    return Program(reading.ops, tuple(outputs), devices, module, tuple(inputs), tuple(kept))  # type: ignore[arg-type]


def _check_envelope(
    module: bytes, inputs: Sequence[tuple[tuple[int, ...], np.dtype[Any]]], kept: Sequence[int]
) -> None:
    """Refused unless `module` is bytes of a bounded size and `kept` indexes `inputs`, sorted."""
    if not isinstance(module, bytes) or len(module) > MAX_MODULE_BYTES:
        raise Refused("the module is missing or too large")
    if sorted(set(kept)) != list(kept) or any(not 0 <= i < len(inputs) for i in kept):
        raise Refused("the kept arguments are malformed")


def _deserialize(module: bytes, context: Any) -> Any:
    """The MLIR module of the VHLO bytes (in IR `context`), or Refused. Read on a thread
    whose stack grows with the module (`STACK_PER_BYTE`): a deeply nested module would
    overflow the main thread's stack in MLIR's reader, killing the judge."""
    from jax.extend import mlir as jex_mlir

    found: list[Any] = []

    def read() -> None:
        try:
            with context:
                found.append(jex_mlir.deserialize_portable_artifact(module))
        except Exception as exc:
            found.append(exc)

    size = max(threading.stack_size(), 32 << 20, len(module) * STACK_PER_BYTE)
    previous = threading.stack_size(size)
    try:
        reader = threading.Thread(target=read, name="grader-module-reader")
        reader.start()
    except RuntimeError:  # no memory for the stack such a module needs
        raise Refused("the module is too large to read") from None
    finally:
        threading.stack_size(previous)
    reader.join()
    if not found or isinstance(found[0], Exception):
        why = type(found[0]).__name__ if found else "no result"
        raise Refused(f"the module does not deserialize ({why})") from None
    return found[0]


def _check_signature(
    got_in: Sequence[tuple[tuple[int, ...], np.dtype[Any]] | None],
    outputs: Sequence[tuple[tuple[int, ...], np.dtype[Any]] | None],
    want_in: Sequence[tuple[tuple[int, ...], np.dtype[Any]]],
) -> None:
    """Refused unless `main` takes exactly the judge's kept arguments and every input and
    output is a static tensor of a known dtype."""
    if None in got_in or None in outputs or list(got_in) != list(want_in):
        raise Refused(
            "its signature is not the judge's arguments: expected "
            f"{[_format_aval(a) for a in want_in]}, found "
            f"{[_format_aval(a) if a else '?' for a in got_in]}"
        )


@dataclasses.dataclass
class _Reading:
    """One walk over a module's operations (in the IR context of `ir`): the ops counted
    (dialect dropped), what is refused (in the order found), the type of `main`."""

    ir: Any
    ops: Counter[str] = dataclasses.field(default_factory=Counter)
    refused: list[str] = dataclasses.field(default_factory=list)
    main_type: Any = None
    count: int = 0

    def walk(self, top: Any) -> None:
        """Screen and count `top`, then every operation nested in it, depth first (on a
        stack of its own, not Python's); Refused past `MAX_OPS` operations or regions
        nested deeper than `MAX_DEPTH`."""
        pending: list[tuple[Any, int]] = [(top, 0)]
        while pending:
            op, depth = pending.pop()
            self.count += 1
            if self.count > MAX_OPS:
                raise Refused(f"the module has more than {MAX_OPS} operations")
            name = str(op.name)
            self._screen(op, name)
            for result in op.results:
                _check_size(self.ir, result.type, self.refused)
            if name not in _UNCOUNTED:
                self.ops[name.split(".", 1)[1]] += 1
            inner = [
                (nested.operation, depth + 1)
                for region in op.regions
                for block in region
                for nested in block
            ]
            if inner and depth + 1 > MAX_DEPTH + 1:  # the module and its functions: 2 levels
                raise Refused(f"it nests regions more than {MAX_DEPTH} deep")
            pending.extend(reversed(inner))

    def _screen(self, op: Any, name: str) -> None:
        """What about `op` itself is refused: a foreign dialect, data in or out, a custom
        call that is not a sharding marker or LAPACK, an external function."""
        if not name.startswith(_DIALECTS):
            self.refused.append(f"`{name}`")
        elif name in REFUSED_OPS:
            self.refused.append(f"`{name}` (data in or out of the program)")
        elif name == "stablehlo.custom_call":
            target = self.ir.StringAttr(op.attributes["call_target_name"]).value
            if not _allowed_custom_call(target):
                self.refused.append(
                    f"a custom call to `{target}` (a host callback or foreign code)"
                )
        elif name == "func.func":
            self._function(op)

    def _function(self, op: Any) -> None:
        """A function must have a body; `main`'s type is the program's signature."""
        ir = self.ir
        body = op.regions[0] if len(op.regions) else None
        if body is None or not len(body.blocks):
            self.refused.append("an external function")
        if ir.StringAttr(op.attributes["sym_name"]).value == "main":
            self.main_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)

    def signature(
        self,
    ) -> tuple[
        list[tuple[tuple[int, ...], np.dtype[Any]] | None],
        list[tuple[tuple[int, ...], np.dtype[Any]] | None],
    ]:
        """`main`'s inputs and outputs (None where not a static tensor of a known dtype);
        outputs over `MAX_ELEMENTS` refused. Refused when there is no `main`."""
        if self.main_type is None:
            raise Refused("the module has no `main` function")
        got_in = [_tensor(self.ir, t) for t in self.main_type.inputs]
        outputs = [_tensor(self.ir, t) for t in self.main_type.results]
        for t in self.main_type.results:
            _check_size(self.ir, t, self.refused)
        return got_in, outputs


def _allowed_custom_call(target: str) -> bool:
    """A sharding marker or a LAPACK routine."""
    return target in ALLOWED_CUSTOM_CALLS or (
        target.startswith("lapack_") and target.endswith("_ffi")
    )


def _int_attribute(attributes: Any, name: str) -> int:
    if name not in attributes:
        return 0
    text = str(attributes[name]).split(":")[0].strip()
    return int(text) if text.lstrip("-").isdigit() else -1


def _ranked(ir: Any, t: Any) -> Any:
    """`t` as a ranked tensor type, or None."""
    if isinstance(t, ir.RankedTensorType):
        return t
    try:
        return ir.RankedTensorType(t)
    except (ValueError, TypeError):
        return None


def _tensor(ir: Any, t: Any) -> tuple[tuple[int, ...], np.dtype[Any]] | None:
    rt = _ranked(ir, t)
    if rt is None:
        return None
    dtype = _DTYPES.get(str(rt.element_type))
    if dtype is None or not rt.has_static_shape:
        return None
    return tuple(int(d) for d in rt.shape), dtype


def _check_size(ir: Any, t: Any, refused: list[str]) -> None:
    rt = _ranked(ir, t)
    if rt is not None and rt.has_static_shape and math.prod(rt.shape) > MAX_ELEMENTS:
        refused.append(f"a tensor of {math.prod(rt.shape)} elements")


_DTYPES: dict[str, np.dtype[Any]] = {
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64), "f16": np.dtype(np.float16),
    "bf16": np.dtype(jnp.bfloat16), "i1": np.dtype(np.bool_), "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16), "i32": np.dtype(np.int32), "i64": np.dtype(np.int64),
    "ui8": np.dtype(np.uint8), "ui16": np.dtype(np.uint16), "ui32": np.dtype(np.uint32),
    "ui64": np.dtype(np.uint64), "complex<f32>": np.dtype(np.complex64),
    "complex<f64>": np.dtype(np.complex128),
}  # fmt: skip


def _format_aval(aval: tuple[tuple[int, ...], np.dtype[Any]]) -> str:
    shape, dtype = aval
    return f"{dtype.name}{list(shape)}"


@functools.lru_cache(maxsize=64)
def _template(
    inputs: tuple[tuple[tuple[int, ...], np.dtype[Any]], ...],
    outputs: tuple[tuple[tuple[int, ...], np.dtype[Any]], ...],
) -> Any:
    """The judge's export of a placeholder taking `inputs` and returning zeros of `outputs`:
    made once per signature in a judge (piecewise and newton_sqrt share theirs; a grading's
    sizes repeat), from the judge's own code only (an `Exported` is immutable)."""

    def placeholder(*xs: Any) -> Any:
        return tuple(jnp.zeros(shape, dtype) for shape, dtype in outputs)

    return jax.export.export(jax.jit(placeholder))(
        *(jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in inputs)  # type: ignore[no-untyped-call]
    )


def _exported(
    module: bytes,
    inputs: Sequence[tuple[tuple[int, ...], np.dtype[Any]]],
    kept: tuple[int, ...],
    outputs: Sequence[tuple[tuple[int, ...], np.dtype[Any]]],
    devices: int,
) -> Any:
    """An `Exported` of the judge's making around `module`: every field but the module and
    the kept arguments comes from the judge's own export of a placeholder of the same
    signature (so no effect, no disabled check, the judge's calling convention)."""
    return dataclasses.replace(
        _template(tuple(inputs), tuple(outputs)),
        fun_name="student",
        mlir_module_serialized=module,
        module_kept_var_idx=kept,
        nr_devices=devices,
    )


def fetch(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None = None,
    static_argnames: Iterable[str] = (),
    *,
    what: str,
) -> tuple[Program, list[tuple[str, Any]]]:
    """The compiled program of `fn(*args, **kwargs)` as the judge accepted it, and the
    layout of its dynamic arguments. Tracing errors become the check's failure; a
    refused module fails the check saying why."""
    __tracebackhide__ = True
    kwargs = dict(kwargs or {})
    static = tuple(static_argnames)
    seen = client.probe(export_program, client.handle(fn), tuple(args), kwargs, static)
    seen = calls.observed(
        seen,
        checked=f"compiling {what} to one program",
        attempted=f"jax.jit({calls.name_of(fn)})",
        expected="the function traces with abstract (traced) inputs and compiles to one program",
    )
    try:
        if not isinstance(seen, dict):
            raise Refused("the sandbox sent no module")
        if "refused" in seen:
            raise Refused(f"it contains {str(seen['refused'])[:200]}")
        layout = _layout(seen.get("layout"), args, kwargs, static)
        leaves = jax.tree.leaves(_dynamic(layout, args, kwargs))
        kept = seen.get("kept")
        if not isinstance(kept, list) or not all(type(i) is int for i in kept):
            raise Refused("the kept arguments are malformed")
        program = parse(seen.get("module"), [aval_of(leaf) for leaf in leaves], kept)  # type: ignore[arg-type]
    except Refused as why:
        raise CheckFailure(
            f"the compiled program of {what}, as the grader reads it",
            expected="a program that only computes (no host callbacks, no custom calls, no "
            "data in or out) on the arguments the grader passes",
            observed=f"the grader refused the program your module handed over: {why}",
            cause=_refused_cause(str(why)),
            fix="compute with `jax.numpy`/`lax` instead of a callback, and let JAX compile "
            "your function as it is",
        ) from None
    return program, layout


_CALLBACK = re.compile(r"host callback \(JAX cannot export one\)|custom call to `[^`]*callback")


def _refused_cause(why: str) -> str:
    """The cause of a refusal where the refusal shows it (a host callback); "" otherwise
    (a malformed module, another signature, a huge tensor: the observed line says which)."""
    if not _CALLBACK.search(why):
        return ""
    return (
        "the function calls back into Python (a host callback, such as `jax.pure_callback` or "
        "`io_callback`): its values are computed outside the program, and the grader runs the "
        "program outside your process (debug prints are fine: the grader leaves them out)"
    )


def _layout(
    raw: Any, args: Sequence[Any], kwargs: Mapping[str, Any], static: tuple[str, ...]
) -> list[tuple[str, Any]]:
    if not isinstance(raw, list):
        raise Refused("the argument layout is malformed")
    out: list[tuple[str, Any]] = []
    for entry in raw:
        if not (isinstance(entry, tuple | list) and len(entry) == 2):
            raise Refused("the argument layout is malformed")
        kind, key = entry
        if kind == "arg" and type(key) is int and 0 <= key < len(args):
            out.append(("arg", key))
        elif kind == "kw" and isinstance(key, str) and key in kwargs and key not in static:
            out.append(("kw", key))
        else:
            raise Refused("the argument layout is malformed")
    return out


def _dynamic(
    layout: Sequence[tuple[str, Any]], args: Sequence[Any], kwargs: Mapping[str, Any]
) -> tuple[Any, ...]:
    return tuple(args[k] if kind == "arg" else kwargs[k] for kind, k in layout)


def draw(
    layout: Sequence[tuple[str, Any]],
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    rng: np.random.Generator,
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Fresh arguments: every float in a dynamic argument scaled by its own random factor
    in [0.5, 2] (signs, zeros, integers and static arguments kept, so the inputs stay in
    the function's domain)."""
    dynamic = {(kind, k) for kind, k in layout}

    def scale(leaf: Any) -> Any:
        shape, dtype = aval_of(leaf)
        if dtype.kind != "f":
            return leaf
        factor = rng.uniform(0.5, 2.0, size=shape)
        return np.asarray(np.asarray(leaf, np.float64) * factor, dtype)

    new_args = tuple(
        jax.tree.map(scale, a) if ("arg", i) in dynamic else a for i, a in enumerate(args)
    )
    new_kwargs = {
        k: jax.tree.map(scale, v) if ("kw", k) in dynamic else v for k, v in kwargs.items()
    }
    return new_args, new_kwargs


def _rng() -> np.random.Generator:
    """Inputs the sandbox cannot know in advance: seeded from the system's entropy."""
    return np.random.default_rng(random.SystemRandom().getrandbits(64))


def checked(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None = None,
    static_argnames: Iterable[str] = (),
    *,
    what: str,
    reference: Callable[..., Any] | None = None,
    inputs: Callable[[np.random.Generator], Sequence[Any]] | None = None,
) -> Program:
    """The compiled program of `fn(*args, **kwargs)` as the judge accepted it (`parse`).

    With `reference` (the judge's own function of the same arguments), the judge also runs
    the program on `DRAWS` inputs of its own (`inputs(rng)` if given, else `draw`) and
    requires `reference`'s values: the structure read from it is then verified, whatever
    the student's module does. Without one, the program's values are not checked (the
    student's function, asked in the sandbox, could answer whatever the program computes),
    and its structure is an observation: credited only where `client.require_observable`
    finds nothing in the module that can tamper with what the sandbox hands over."""
    __tracebackhide__ = True
    kwargs = dict(kwargs or {})
    static = tuple(static_argnames)
    program, layout = fetch(fn, args, kwargs, static, what=what)
    if reference is None:
        client.require_observable(client.handle(fn))
        return program
    rng = _rng()
    expected = [aval_of(leaf) for leaf in jax.tree.leaves(_dynamic(layout, args, kwargs))]
    for _ in range(DRAWS):
        if inputs is not None:
            new_args: tuple[Any, ...] = tuple(inputs(rng))
            new_kwargs = dict(kwargs)
        else:
            new_args, new_kwargs = draw(layout, args, kwargs, rng)
        leaves = jax.tree.leaves(_dynamic(layout, new_args, new_kwargs))
        if [aval_of(leaf) for leaf in leaves] != expected:
            raise ValueError("exported.checked: `inputs` must keep the arguments' shapes")
        got = program(leaves)
        want = [np.asarray(x) for x in jax.tree.leaves(reference(*new_args, **new_kwargs))]
        ran = f"the compiled program of {what}, run by the grader on " + _format.call(
            calls.name_of(fn), new_args, new_kwargs
        )
        _require_reference(ran, got, want, _answer(fn, new_args, new_kwargs))
    return program


def _answer(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> Callable[[], list[np.ndarray[Any, Any]] | None]:
    """What the student's function itself returns on these inputs (asked only when the
    program's values are wrong, to tell a wrong function from a program that is not its
    own); None when the call raises."""

    def ask() -> list[np.ndarray[Any, Any]] | None:
        try:
            out = calls.ready(fn(*args, **kwargs))
        except (NotImplementedError, MemoryError):
            raise
        except Exception:
            return None
        return [np.asarray(x) for x in jax.tree.leaves(out)]

    return ask


def _agrees(
    one: Sequence[np.ndarray[Any, Any]] | None, other: Sequence[np.ndarray[Any, Any]]
) -> bool:
    return (
        one is not None
        and len(one) == len(other)
        and all(
            values.difference(a, b, rtol=RTOL, atol=ATOL) is None
            for a, b in zip(one, other, strict=True)
        )
    )


def _require_reference(
    ran: str,
    got: Sequence[np.ndarray[Any, Any]],
    want: Sequence[np.ndarray[Any, Any]],
    answer: Callable[[], list[np.ndarray[Any, Any]] | None] = lambda: None,
) -> None:
    """Fails the check (`ran` says what ran on what) unless the program's outputs `got` have
    the shapes and, within `RTOL`/`ATOL`, the values of the reference's `want`. The cause
    that the program is not the function's own is named only where the function, called on
    the same inputs (`answer()`), returns the reference's values."""
    __tracebackhide__ = True
    if len(want) != len(got) or any(w.shape != g.shape for w, g in zip(want, got, strict=False)):
        cause, fix = _not_own(answer, want)
        raise fail(
            ran,
            expected=f"outputs shaped as the grader's reference: {[w.shape for w in want]}",
            observed=f"{[g.shape for g in got]}",
            cause=cause,
            fix=fix,
        )
    for w, g in zip(want, got, strict=True):
        diff = values.difference(g, w, rtol=RTOL, atol=ATOL)
        if diff is not None:
            cause, fix = _not_own(answer, want)
            raise fail(
                ran,
                expected=f"the values of the grader's reference: {diff.expected}",
                observed=diff.observed,
                cause=cause,
                fix=fix,
            )


def _not_own(
    answer: Callable[[], list[np.ndarray[Any, Any]] | None], want: Sequence[np.ndarray[Any, Any]]
) -> tuple[str, str]:
    """(cause, fix) where the function called on the program's inputs gives the reference's
    values, which its program does not; ("", "") where it does not (a wrong function)."""
    if not _agrees(answer(), want):
        return "", ""
    return (
        "your function, called on these inputs, returns the right values, and the program "
        "your module handed over for this check does not: it is not the program of your "
        "function",
        "let JAX compile your function as it is",
    )
