"""explain: real JAX errors, raised by real tracing, get the student-facing cause and fix."""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader.explain import explain, shape_error
from grader.sandbox import client
from grader.sandbox.client import StudentError


def raised(fn, *args, **kwargs) -> BaseException:  # type: ignore[no-untyped-def]
    with pytest.raises(Exception) as info:
        fn(*args, **kwargs)
    return info.value


def python_if(x):  # type: ignore[no-untyped-def]
    return x**2 if x > 0 else -x


def numpy_call(x):  # type: ignore[no-untyped-def]
    return np.sin(np.asarray(x))


def test_python_if_under_jit_points_to_lax_cond() -> None:
    found = explain(raised(jax.jit(python_if), 1.0))
    assert found is not None and "lax.cond" in found.fix and "`if`" in found.cause


def test_numpy_on_a_tracer_points_to_jnp() -> None:
    found = explain(raised(jax.jit(numpy_call), jnp.ones(3)))
    assert found is not None and "jnp" in found.fix


def test_shape_from_a_traced_value_points_to_static_arguments() -> None:
    found = explain(raised(jax.jit(lambda n: jnp.zeros(n)), 3))
    assert found is not None and "static" in found.fix


@pytest.mark.parametrize(
    "fn",
    [
        lambda: jnp.zeros((8, 16 / 8)),  # `/` where `//` belongs
        lambda: jnp.ones((4, 6)).reshape(2, 6 / 2, 4),
        lambda: jnp.ones(10).reshape(2, np.float64(5)),
    ],
)
def test_a_float_size_in_a_shape_is_named_as_a_float_not_a_traced_value(fn) -> None:  # type: ignore[no-untyped-def]
    found = explain(raised(fn))
    assert found is not None and "is a float" in found.cause and "traced" not in found.cause


def test_a_shape_error_that_shows_neither_a_tracer_nor_a_float_names_no_cause() -> None:
    text = "Shapes must be 1D sequences of concrete values of integer type, got (8, None)."
    assert explain(TypeError(text)) is None


@pytest.mark.parametrize(
    "fn",
    [
        lambda: (jnp.ones(2), jnp.ones(3)).block_until_ready(),
        lambda: {"w": jnp.ones(2)}.block_until_ready(),
    ],
)
def test_block_until_ready_on_a_pytree_is_named(fn) -> None:  # type: ignore[no-untyped-def]
    found = explain(raised(fn))
    assert found is not None and "container" in found.cause
    assert "jax.block_until_ready" in found.fix


def test_block_until_ready_on_a_number_names_no_container() -> None:
    assert explain(raised(lambda: (1.0).block_until_ready())) is None  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "fn",
    [
        lambda: jnp.arange(5.0)[jnp.ones(2)],
        lambda: jnp.arange(5.0)[jax.random.permutation(jax.random.key(0), jnp.arange(5.0))],
        lambda: np.arange(5.0)[np.ones(2)],
    ],
)
def test_a_float_index_is_named(fn) -> None:  # type: ignore[no-untyped-def]
    found = explain(raised(fn))
    assert found is not None and "array of floats was used as an index" in found.cause


def test_array_marked_static_is_recognised_by_its_message() -> None:
    found = explain(raised(jax.jit(lambda x: x, static_argnums=0), jnp.ones(3)))
    assert found is not None and "hashable" in found.cause


def test_key_reuse_points_to_split() -> None:
    def twice(key):  # type: ignore[no-untyped-def]
        return jax.random.normal(key) + jax.random.normal(key)

    with jax.debug_key_reuse(True):
        found = explain(raised(twice, jax.random.key(0)))
    assert found is not None and "split" in found.fix


def test_unrelated_errors_are_not_explained() -> None:
    assert explain(KeyError("w")) is None
    assert explain(ValueError("shapes (3,) and (4,) not aligned")) is None


def add_at_in_place(x, indices, values):  # type: ignore[no-untyped-def]
    return jnp.add.at(x, indices, values)  # NumPy's habit: JAX refuses to update in place


def stub(x):  # type: ignore[no-untyped-def]
    raise NotImplementedError


def test_jaxs_own_not_implemented_error_is_not_called_the_stubs() -> None:
    exc = _student_raised(add_at_in_place, jnp.zeros(3), jnp.array([0, 0]), jnp.ones(2))
    assert isinstance(exc, StudentError) and exc.info.is_a("NotImplementedError")
    assert not exc.info.in_student  # raised inside JAX, not on a line of the student's file
    found = explain(exc)
    assert found is not None
    assert "stub" not in found.cause and "inplace=True" in found.cause
    assert "inplace=False" in found.fix and ".at[indices].add(values)" in found.fix


def test_the_stubs_not_implemented_error_is_called_the_stubs() -> None:
    exc = _student_raised(stub, jnp.zeros(3))
    assert exc.info.in_student
    found = explain(exc)
    assert found is not None and "which the stub raises" in found.cause


def normal_of_separate_sizes(key, shape):  # type: ignore[no-untyped-def]
    return jax.random.normal(key, *shape)


def cross_entropy_of_float_labels(logits, y):  # type: ignore[no-untyped-def]
    import optax

    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


def take_with_float_labels(logits, y):  # type: ignore[no-untyped-def]
    return jnp.take_along_axis(logits, y[:, None], axis=1)


def test_a_shape_given_as_separate_sizes_is_named() -> None:
    exc = _student_raised(normal_of_separate_sizes, jax.random.key(0), (16, 32))
    found = explain(exc)
    assert found is not None and "a size was passed where the dtype goes" in found.cause
    assert "one tuple" in found.fix
    # a name that is no dtype is not a size given on its own
    assert explain(TypeError("Cannot interpret 'floatt' as a data type")) is None


@pytest.mark.parametrize("fn", [cross_entropy_of_float_labels, take_with_float_labels])
def test_float_labels_where_integers_go_are_named(fn) -> None:  # type: ignore[no-untyped-def]
    exc = _student_raised(fn, jnp.ones((3, 4)), jnp.ones(3))
    found = explain(exc)
    assert found is not None and "float" in found.cause and "integer" in found.cause


def replace_in_the_wrong_order(path):  # type: ignore[no-untyped-def]
    import os

    os.replace(path, path + ".tmp-1")  # the final path moved to the temporary one


def test_a_rename_from_the_final_path_to_a_temporary_one_is_named(tmp_path) -> None:
    exc = _student_raised(replace_in_the_wrong_order, str(tmp_path / "params.ckpt"))
    found = explain(exc)
    assert found is not None and "in each other's place" in found.cause
    # a missing file of another kind is not a swapped rename
    assert explain(FileNotFoundError("No such file or directory: 'a.ckpt' -> 'b.ckpt'")) is None
    assert explain(FileNotFoundError("[Errno 2] No such file or directory: 'a.ckpt'")) is None


# -- shape errors: real JAX exceptions from real code, through the sandbox's codec -----------


def _line_of(fn, marker: str) -> int:  # type: ignore[no-untyped-def]
    """The line number of the first line of `fn`'s source containing `marker`."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if marker in line)


def _student_raised(fn, *args):  # type: ignore[no-untyped-def]
    """What `fn(*args)` raised, as the judge sees it: a StudentError from the (in-process)
    sandbox, carrying the student's line."""
    with pytest.raises(StudentError) as info:
        client.local(fn)(*args)
    return info.value


def loss_with_ten_classes(logits, y):  # type: ignore[no-untyped-def]
    onehot = jax.nn.one_hot(y, 10)
    return -jnp.mean(jnp.sum(onehot * jax.nn.log_softmax(logits), axis=-1))


def test_broadcasting_error_names_the_operator_line_and_shapes() -> None:
    exc = _student_raised(loss_with_ten_classes, jnp.ones((4, 3)), jnp.arange(4))
    assert str(exc) == "mul got incompatible shapes for broadcasting: (4, 10), (4, 3)."
    found = explain(exc)
    line = _line_of(loss_with_ten_classes, "onehot *")
    assert found is not None
    assert found.cause.startswith(
        f"the two sides of `*` at line {line} have shapes (4, 10) and (4, 3): on the last axis "
        "they have sizes 10 and 3, which differ and neither is 1, so they do not broadcast"
    )
    assert "one-hot needs as many columns" in found.fix


def test_the_same_error_raised_in_this_process_is_explained_the_same_way() -> None:
    found = explain(raised(loss_with_ten_classes, jnp.ones((4, 3)), jnp.arange(4)))
    line = _line_of(loss_with_ten_classes, "onehot *")
    assert found is not None and f"the two sides of `*` at line {line}" in found.cause


def center_without_keepdims(x):  # type: ignore[no-untyped-def]
    return x - x.mean(axis=1)


def test_a_reduction_without_keepdims_is_named() -> None:
    found = explain(_student_raised(center_without_keepdims, jnp.ones((4, 3))))
    line = _line_of(center_without_keepdims, "x.mean")
    assert found is not None
    assert found.cause.startswith(f"the arrays combined at line {line} have shapes (4, 3) and (4,)")
    assert "keepdims=True" in found.cause


def subtract_per_row(x, per_row):  # type: ignore[no-untyped-def]
    return x - per_row


def test_a_shorter_operand_without_a_reduction_on_the_line_names_no_keepdims() -> None:
    # the same shapes as above, but no reduction on the line: nothing says keepdims was
    # dropped (the shorter array may come from anywhere: integer labels, a wrong slice)
    found = explain(_student_raised(subtract_per_row, jnp.ones((4, 3)), jnp.ones(4)))
    assert found is not None
    assert "have shapes (4, 3) and (4,)" in found.cause
    assert "lines up with the last axis" in found.cause
    assert "keepdims" not in found.cause


def test_a_reduction_around_a_call_that_raised_names_no_keepdims() -> None:
    # JAX's message for a library call on the student's line (optax.softmax_cross_entropy
    # given integer labels): the line reduces, but the operands were combined inside the
    # library, and the mean only takes its result: no keepdims was dropped there
    message = "Incompatible shapes for broadcasting: shapes=[(8,), (8, 10)]"
    library = shape_error(message, (99, "return jnp.mean(optax.softmax_cross_entropy(logits, y))"))
    assert library is not None and "lines up with the last axis" in library.cause
    assert "keepdims" not in library.cause
    own = shape_error(message, (7, "return x - x.mean(axis=1)"))
    assert own is not None and "no `keepdims=True`" in own.cause


def forward_with_transposed_weights(x, w):  # type: ignore[no-untyped-def]
    return jax.nn.relu(x @ w)


def test_a_matrix_product_with_mismatched_inner_sizes_names_the_sizes() -> None:
    exc = _student_raised(forward_with_transposed_weights, jnp.ones((4, 3)), jnp.ones((10, 3)))
    assert "dot_general requires contracting dimensions" in str(exc)
    found = explain(exc)
    line = _line_of(forward_with_transposed_weights, "x @ w")
    assert found is not None
    assert found.cause.startswith(f"`@` at line {line} sums over axes of different sizes: 3 and 10")
    assert "`w.T`" in found.fix


def maximum_of_mismatched(a, b):  # type: ignore[no-untyped-def]
    return jnp.maximum(a, b)


def test_a_jnp_function_is_named_when_no_operator_was_written() -> None:
    found = explain(_student_raised(maximum_of_mismatched, jnp.ones((4, 3)), jnp.ones((3, 4))))
    assert found is not None
    assert "the operands of `jnp.maximum`" in found.cause
    assert "(4, 3) and (3, 4)" in found.cause and "one is the other transposed" in found.cause


def bad_reshape(x):  # type: ignore[no-untyped-def]
    return x.reshape(5)


def bad_einsum(a, b):  # type: ignore[no-untyped-def]
    return jnp.einsum("ij,jk->ik", a, b)


def bad_concat(a, b):  # type: ignore[no-untyped-def]
    return jnp.concatenate([a, b])


def test_reshape_einsum_and_concatenate_errors_name_their_shapes() -> None:
    reshape = explain(_student_raised(bad_reshape, jnp.ones(12)))
    assert reshape is not None and "asks for shape 5 (5 elements) from an array of shape (12,)" in (
        reshape.cause
    )
    einsum = explain(_student_raised(bad_einsum, jnp.ones((4, 3)), jnp.ones((10, 5))))
    assert einsum is not None and "the index 'j' has size 3 in operand 1 but 10" in einsum.cause
    concat = explain(_student_raised(bad_concat, jnp.ones((4, 3)), jnp.ones((5, 10))))
    assert concat is not None and "along axis 0 have shapes (4, 3) and (5, 10)" in concat.cause


def test_the_plugin_message_carries_the_shapes() -> None:
    from grader.plugin.wording import raised as _raised

    exc = _student_raised(loss_with_ten_classes, jnp.ones((4, 3)), jnp.arange(4))
    line = _line_of(loss_with_ten_classes, "onehot *")
    message, _fix = _raised("your code", exc.info.type, exc)
    assert message.splitlines()[1].startswith(
        f"  likely cause: the two sides of `*` at line {line} have shapes (4, 10) and (4, 3)"
    )


def batched_matmul(a, b):  # type: ignore[no-untyped-def]
    return jnp.matmul(a, b)


def bad_stack(a, b):  # type: ignore[no-untyped-def]
    return jnp.stack([a, b])


def bad_update(x, row):  # type: ignore[no-untyped-def]
    return x.at[0].set(row)


def test_matmul_stack_and_update_errors_name_their_shapes() -> None:
    matmul = explain(_student_raised(batched_matmul, jnp.ones((2, 4, 3)), jnp.ones((5, 3, 2))))
    line = _line_of(batched_matmul, "jnp.matmul")
    assert matmul is not None and matmul.cause == (
        f"the matrix product at line {line} multiplies shapes (2, 4, 3) and (5, 3, 2): their "
        "leading (batch) axes do not broadcast"
    )
    assert "`jax.vmap`" in matmul.fix
    stack = explain(_student_raised(bad_stack, jnp.ones((4, 3)), jnp.ones((3, 4))))
    assert stack is not None and stack.cause.startswith(
        f"the arrays stacked at line {_line_of(bad_stack, 'jnp.stack')} have shapes (4, 3) and "
        "(3, 4): `jnp.stack` needs them all the same shape"
    )
    assert "`jnp.concatenate`" in stack.fix
    update = explain(_student_raised(bad_update, jnp.ones((4, 3)), jnp.ones(5)))
    assert update is not None and update.cause.startswith(
        f"an array of shape (5,) was put at line {_line_of(bad_update, '.at[0]')} where shape "
        "(3,) is needed"
    )
    assert "sizes 5 and 3" in update.cause
    assert update.fix.startswith("give the value the shape of what it replaces")


def test_shape_errors_are_explained_without_the_students_line() -> None:
    found = explain(ValueError("All input arrays must have the same shape. Got (2,), (3,)."))
    assert found is not None and found.cause.startswith(
        "the arrays stacked have shapes (2,) and (3,)"
    )
    assert explain(ValueError("Incompatible types for matmul arguments: f32[2] and")) is None


def _flax_error(flatten, init_rows, apply_rows, features=12):  # type: ignore[no-untyped-def]
    nn = pytest.importorskip("flax.linen")

    class Model(nn.Module):  # type: ignore[misc]
        @nn.compact
        def __call__(self, x):  # type: ignore[no-untyped-def]
            return nn.Dense(4)(flatten(x))

    model = Model()
    variables = model.init(jax.random.key(0), jnp.ones((init_rows, features)))
    return raised(model.apply, variables, jnp.ones((apply_rows, features)))


def test_a_batch_flattened_into_one_example_is_named_by_its_multiple() -> None:
    found = explain(_flax_error(lambda x: x.reshape(-1), 1, 5))
    assert found is not None, "no explanation"
    assert "60 = 5 x 12 features: as many as 5 examples'" in found.cause, found.cause
    assert "x.reshape((x.shape[0], -1))" in found.fix


def test_another_input_size_at_apply_is_named_without_a_multiple() -> None:
    found = explain(_flax_error(lambda x: x[:, :7] if x.shape[0] > 1 else x, 1, 3))
    assert found is not None and "differs between `init` and `apply`" in found.cause, found
    assert "examples'" not in found.cause and "reshape" not in found.fix, found
