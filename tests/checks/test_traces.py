"""traces: traced once for same-shaped calls; a student's jitted step compiles once."""

import functools

import jax
import jax.numpy as jnp
import pytest
from jax import lax

from grader.checks import traces
from grader.checks.failure import CheckFailure


def newton_fori(a, n_iters=20):
    return lax.fori_loop(0, n_iters, lambda i, x: 0.5 * (x + a / x), a)


newton_jitted = functools.partial(jax.jit, static_argnames=("n_iters",))(newton_fori)
newton_all_static = functools.partial(jax.jit, static_argnums=(0, 1))(newton_fori)

CALLS = [(2.0, 20), (3.0, 20), (10.0, 20)]


@pytest.mark.parametrize("impl", [newton_fori, newton_jitted])
def test_traced_once_passes(impl):
    assert (
        traces.assert_traced_once(
            impl, CALLS, static_argnames=("n_iters",), what="newton_sqrt(a, n_iters)"
        )
        == 1
    )


def test_a_static_value_argument_recompiles_every_call():
    with pytest.raises(CheckFailure) as info:
        traces.assert_traced_once(
            newton_all_static, CALLS, static_argnames=("n_iters",), what="newton_sqrt(a, n_iters)"
        )
    text = str(info.value)
    assert "3 new compilations for 3 calls" in text and "marked static" in text
    assert "argument 0 (2.0 -> 10.0)" in text


def test_changing_argument_types_retrace():
    with pytest.raises(CheckFailure, match="call 2 traced again") as info:
        traces.assert_traced_once(
            newton_fori,
            [(2.0, 20), (jnp.float32(3.0), 20)],
            static_argnames=("n_iters",),
            what="newton_sqrt",
        )
    assert "weak-typed" in str(info.value)
    assert "likely cause" not in str(info.value)  # the arguments changed: the observed line


@jax.jit
def sgd_step(params, x):
    return params - 0.1 * x


@jax.jit
def sgd_step_with_loss(params, x):
    return params - 0.1 * x, jnp.sum(params**2)


@jax.jit
def step_growing_history(history, x):
    return jnp.concatenate([history, jnp.sum(x)[None]])


def test_jitted_steps_compile_once():
    p, x = jnp.ones(3), jnp.ones(3)
    traces.assert_compiles_once(
        sgd_step, [(p, x)], what="train_step", feed=lambda out, a: (out, a[1])
    )
    traces.assert_compiles_once(
        sgd_step_with_loss,
        [(p, x)],
        what="train_step",
        feed=lambda out, a: (out[0], a[1]),
        n_calls=4,
    )


def test_a_state_that_changes_shape_recompiles():
    with pytest.raises(CheckFailure) as info:
        traces.assert_compiles_once(
            step_growing_history,
            [(jnp.zeros(1), jnp.ones(3))],
            what="train_step",
            feed=lambda out, a: (out, a[1]),
        )
    text = str(info.value)
    assert "more trace(s)/compilation(s) after the first call" in text
    assert "float32[1]" in text and "float32[5]" in text
    assert "argument leaf 0 is float32[1] in call 1 and float32[2] in call 2" in text


@functools.partial(jax.jit, static_argnums=1)
def step_static_count(params, k):
    return params * 0.5 + k


def test_a_new_static_value_recompiles_with_no_leaf_blamed():
    with pytest.raises(CheckFailure) as info:
        traces.assert_compiles_once(
            step_static_count,
            [(jnp.ones(3), 1)],
            what="train_step",
            feed=lambda out, a: (out, a[1] + 1),
        )
    text = str(info.value)
    assert "more trace(s)/compilation(s) after the first call" in text
    assert "likely cause" not in text


def test_a_plain_function_is_not_a_jitted_step():
    with pytest.raises(CheckFailure, match=r"decorate `sgd_plain` with `@jax\.jit`"):

        def sgd_plain(params, x):
            return params - x

        traces.assert_compiles_once(sgd_plain, [(jnp.ones(2), jnp.ones(2))], what="train_step")
