"""exported: the judge reads, refuses and runs the compiled program itself."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export, lax

from grader.checks import exported
from grader.checks.failure import CheckFailure


def piecewise_cond(x):
    return lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)


def _ref_piecewise(x):
    x = np.float32(x)
    return np.float32(x * x) if x > 0 else np.float32(-x)


def _module(fn, *args, **options):
    structs = [jax.ShapeDtypeStruct(np.shape(a), np.asarray(a).dtype) for a in args]
    exp = export.export(jax.jit(fn), **options)(*structs)
    return exp.mlir_module_serialized, list(exp.module_kept_var_idx)


F32 = ((), np.dtype(np.float32))


def test_the_judge_reads_the_structure_of_the_program_it_ran():
    program = exported.checked(
        piecewise_cond, (np.float32(1.5),), what="piecewise(x)", reference=_ref_piecewise
    )
    assert program.ops["case"] == 1 and exported.matching(program.ops, "cond") == 1
    assert program([np.float32(-3.0)])[0] == np.float32(3.0)


def test_a_program_with_the_structure_and_the_wrong_values_fails():
    with pytest.raises(CheckFailure, match="the values of the grader's reference") as info:
        exported.checked(
            piecewise_cond,
            (np.float32(1.5),),
            what="piecewise(x)",
            reference=lambda x: _ref_piecewise(x) + 1,
        )
    # the function itself returns the program's values: a wrong function, no other program
    assert "likely cause" not in str(info.value)


def two_faced(x):
    """Right when called, another computation when traced for its program."""
    if isinstance(x, jax.core.Tracer):
        return x * 0.0
    return _ref_piecewise(x)


def test_a_program_other_than_the_functions_own_is_named():
    with pytest.raises(CheckFailure, match="the values of the grader's reference") as info:
        exported.checked(
            two_faced, (np.float32(1.5),), what="piecewise(x)", reference=_ref_piecewise
        )
    assert "it is not the program of your function" in str(info.value)


def test_inputs_are_drawn_by_the_judge_in_the_domain_of_the_arguments():
    rng = np.random.default_rng(0)
    layout = [("arg", 0), ("kw", "y")]
    args, kwargs = exported.draw(
        layout, (np.float32(2.0), 5), {"y": np.arange(-2, 3, dtype=np.float32), "n": 3}, rng
    )
    assert 1.0 <= args[0] <= 4.0 and args[1] == 5 and kwargs["n"] == 3
    assert np.all(np.sign(kwargs["y"]) == np.sign(np.arange(-2, 3)))


def newton_printing(a, n_iters=20):
    def body(i, g):
        jax.debug.print("iteration {i}: {g}", i=i, g=g)
        jax.debug.print("ordered {g}", g=g, ordered=True)
        jax.debug.callback(lambda v: None, g)
        return 0.5 * (g + a / g)

    return lax.fori_loop(0, n_iters, body, jnp.maximum(a, 1.0))


def test_debug_prints_and_callbacks_are_left_out_and_the_values_judged():
    jitted = jax.jit(newton_printing, static_argnames="n_iters")
    batch = np.array([2.0, 9.0], np.float32)
    for fn, x in ((newton_printing, np.float32(2.0)), (jitted, np.float32(2.0)),
                  (jax.vmap(newton_printing), batch)):  # fmt: skip
        program = exported.checked(
            fn, (x,), what="newton_sqrt(a)", reference=lambda a: np.sqrt(np.float64(a))
        )
        assert program.ops["while"] == 1
        assert not any("custom_call" in op for op in program.ops)
    with pytest.raises(CheckFailure, match="the values of the grader's reference"):
        exported.checked(
            newton_printing,
            (np.float32(2.0),),
            what="newton_sqrt(a)",
            reference=lambda a: np.sqrt(np.float64(a)) + 1,
        )


def test_callbacks_that_feed_values_back_are_refused():
    from jax.experimental import io_callback

    def pure(x):
        jax.debug.print("x = {}", x)
        doubled = jax.pure_callback(
            lambda v: np.asarray(v * 2, np.float32), jax.ShapeDtypeStruct((), np.float32), x
        )
        return doubled + 1

    def impure(x):
        got = io_callback(
            lambda v: np.asarray(v * 2, np.float32), jax.ShapeDtypeStruct((), np.float32), x
        )
        return got + 1

    for fn in (pure, impure):
        with pytest.raises(CheckFailure, match="the grader refused the program") as info:
            exported.checked(fn, (np.float32(1.5),), what="f(x)", reference=lambda x: 2 * x + 1)
        assert "host callback" in str(info.value) and "pure_callback" in str(info.value)
        assert "the function calls back into Python" in str(info.value)


def _nested_cases(depth):
    """A module of `depth` `stablehlo.case`s nested in each other, made by hand."""
    from jax.extend import mlir as jex_mlir
    from jax.extend.mlir import ir
    from jax.interpreters import mlir as jax_mlir

    body = "%r = stablehlo.add %a, %a : tensor<f32>\nstablehlo.return %r : tensor<f32>"
    for i in range(depth):
        body = (
            f"%c{i} = stablehlo.convert %a : (tensor<f32>) -> tensor<i32>\n"
            f'%r{i} = "stablehlo.case"(%c{i}) ({{\n{body}\n}}) : (tensor<i32>) -> tensor<f32>\n'
            f"stablehlo.return %r{i} : tensor<f32>"
        )
    body = body.rsplit("stablehlo.return", 1)[0] + f"func.return %r{depth - 1} : tensor<f32>"
    text = (
        "module @deep attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}"
        " {\nfunc.func public @main(%a: tensor<f32>) -> tensor<f32> {\n" + body + "\n}\n}"
    )
    with jax_mlir.make_ir_context():
        bytecode = jax_mlir.module_to_bytecode(ir.Module.parse(text))
    return jex_mlir.serialize_portable_artifact(bytecode, "1.0.0")


def test_a_deeply_nested_program_is_refused_and_a_nested_one_read():
    program = exported.parse(_nested_cases(exported.MAX_DEPTH - 2), [F32], [0])
    assert program.ops["case"] == exported.MAX_DEPTH - 2
    assert program([np.float32(2.0)])[0] == np.float32(4.0)
    for depth in (exported.MAX_DEPTH + 1, 1500):  # 1500: past Python's recursion limit
        with pytest.raises(exported.Refused, match=f"nests regions more than {exported.MAX_DEPTH}"):
            exported.parse(_nested_cases(depth), [F32], [0])


def test_custom_calls_are_refused():
    def foreign(x):
        return jax.ffi.ffi_call("evil_target", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    module, kept = _module(
        foreign,
        np.float32(1.0),
        disabled_checks=[export.DisabledSafetyCheck.custom_call("evil_target")],
    )
    with pytest.raises(exported.Refused, match="a custom call to `evil_target`"):
        exported.parse(module, [F32], kept)


def test_a_signature_other_than_the_judges_arguments_is_refused():
    module, kept = _module(lambda x: x * 2, np.zeros(3, np.float32))
    with pytest.raises(exported.Refused, match="signature"):
        exported.parse(module, [F32], kept)
    with pytest.raises(exported.Refused, match="kept"):
        exported.parse(module, [F32], [3])
    with pytest.raises(exported.Refused, match="deserialize"):
        exported.parse(b"not a module", [F32], [0])


def test_huge_tensors_are_refused():
    module, kept = _module(lambda x: jnp.zeros((1 << 14, 1 << 13)) + x, np.float32(0))
    with pytest.raises(exported.Refused, match="elements"):
        exported.parse(module, [F32], kept)


def test_unused_arguments_are_dropped_as_the_judge_expects():
    def first(x, y):
        return x * 2

    program = exported.checked(
        first, (np.float32(1.0), np.float32(5.0)), what="first(x, y)", reference=lambda x, y: 2 * x
    )
    assert program.ops["multiply"] == 1


def test_static_arguments_stay_python_values():
    def newton(a, n_iters=20):
        return lax.fori_loop(0, n_iters, lambda i, g: 0.5 * (g + a / g), jnp.maximum(a, 1.0))

    for args, kwargs in (((np.float32(2.0), 20), {}), ((np.float32(2.0),), {"n_iters": 20})):
        program = exported.checked(
            newton,
            args,
            kwargs,
            ("n_iters",),
            what="newton_sqrt(a, n_iters)",
            reference=lambda a, n_iters=20: np.sqrt(np.float64(a)),
        )
        assert program.ops["while"] == 1


def test_a_missing_or_oversized_module_is_refused():
    with pytest.raises(exported.Refused, match="the module is missing or too large"):
        exported.parse(None, [F32], [0])
    with pytest.raises(exported.Refused, match="the module is missing or too large"):
        exported.parse(b"\0" * (exported.MAX_MODULE_BYTES + 1), [F32], [0])
    with pytest.raises(exported.Refused, match="the kept arguments are malformed"):
        exported.parse(b"", [F32, F32], [1, 0])


def test_shape_polymorphism_is_refused():
    (b,) = export.symbolic_shape("b")
    exp = export.export(jax.jit(lambda x: x * 2))(jax.ShapeDtypeStruct((b,), np.float32))
    with pytest.raises(exported.Refused, match=r"^it contains shape polymorphism, "):
        exported.parse(exp.mlir_module_serialized, [F32], list(exp.module_kept_var_idx))


def test_every_refusal_is_named_once_in_the_order_found():
    def foreign(x):
        y = jax.ffi.ffi_call("evil_target", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
        z = jax.ffi.ffi_call("evil_target", jax.ShapeDtypeStruct(x.shape, x.dtype))(y)
        return jnp.zeros((1 << 14, 1 << 13)) + z

    module, kept = _module(
        foreign,
        np.float32(1.0),
        disabled_checks=[export.DisabledSafetyCheck.custom_call("evil_target")],
    )
    with pytest.raises(exported.Refused) as info:
        exported.parse(module, [F32], kept)
    assert str(info.value) == (
        "it contains a custom call to `evil_target` (a host callback or foreign code), "
        f"a tensor of {1 << 27} elements"
    )


def test_an_accepted_program_counts_its_ops_and_keeps_its_signature():
    module, kept = _module(lambda x, y: jnp.sin(x) * 2 + jnp.sin(x), np.zeros(3, np.float32), 1)
    aval = ((3,), np.dtype(np.float32))
    program = exported.parse(module, [aval, ((), np.dtype(np.int32))], kept)
    assert program.kept == (0,) and program.outputs == (aval,) and program.devices == 1
    assert program.ops["sine"] == 2 and program.ops["multiply"] == 1 and program.ops["add"] == 1
    assert "return" not in program.ops and "func" not in program.ops


def test_a_program_whose_outputs_are_shaped_otherwise_fails():
    with pytest.raises(CheckFailure, match="outputs shaped as the grader's reference") as info:
        exported.checked(
            piecewise_cond,
            (np.float32(1.5),),
            what="piecewise(x)",
            reference=lambda x: np.zeros(2, np.float32),
        )
    assert "[(2,)]" in str(info.value) and "[()]" in str(info.value)


def test_the_checks_own_inputs_are_used_and_must_keep_the_shapes():
    seen = []

    def inputs(rng):
        x = np.float32(rng.uniform(-2, 2))
        seen.append(x)
        return (x,)

    exported.checked(
        piecewise_cond, (np.float32(1.5),), what="piecewise(x)", reference=_ref_piecewise,
        inputs=inputs,
    )  # fmt: skip
    assert len(seen) == exported.DRAWS
    with pytest.raises(ValueError, match="`inputs` must keep the arguments' shapes"):
        exported.checked(
            piecewise_cond, (np.float32(1.5),), what="piecewise(x)", reference=_ref_piecewise,
            inputs=lambda rng: (np.zeros(2, np.float32),),
        )  # fmt: skip


def test_without_a_reference_the_program_is_returned_unrun():
    program = exported.checked(piecewise_cond, (np.float32(1.5),), what="piecewise(x)")
    assert program.ops["case"] == 1


@pytest.mark.parametrize(
    ("why", "named"),
    [
        ("it contains a host callback (JAX cannot export one)", True),
        (
            "it contains a custom call to `xla_ffi_python_cpu_callback` (a host callback or foreign code)",
            True,
        ),
        ("it contains a custom call to `evil_target` (a host callback or foreign code)", False),
        ("its signature is not the judge's arguments: expected ['f32[]'], found ['f64[]']", False),
        ("the argument layout is malformed", False),
    ],
)
def test_a_refusal_names_a_callback_only_where_it_shows_one(why, named):
    assert bool(exported._refused_cause(why)) is named
