"""jit.assert_jittable: compiles, agrees with the eager call, JAX errors explained."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from grader.checks import jit
from grader.checks.failure import CheckFailure


def piecewise_cond(x):
    return lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)


def piecewise_switch(x):
    return lax.switch(jnp.asarray(x > 0).astype(jnp.int32), [lambda v: -v, lambda v: v * v], x)


def piecewise_python_if(x):
    if x > 0:
        return x**2
    return -x


def total_with_numpy(xs):
    return np.asarray(xs).sum()


def newton_range(a, n_iters=20):
    x = a
    for _ in range(n_iters):
        x = 0.5 * (x + a / x)
    return x


def noisy_with_global_rng(x):
    return x + np.random.normal()


@pytest.mark.parametrize("impl", [piecewise_cond, piecewise_switch])
@pytest.mark.parametrize("x", [-2.0, 0.0, 1.5])
def test_correct_piecewise_jits(impl, x):
    out = jit.assert_jittable(impl, (x,), what="piecewise(x)")
    assert float(out) == pytest.approx(x**2 if x > 0 else -x)


def test_python_if_is_explained_with_its_line():
    with pytest.raises(CheckFailure) as info:
        jit.assert_jittable(piecewise_python_if, (1.5,), what="piecewise(x)")
    text = str(info.value)
    assert "TracerBoolConversionError" in text
    assert "jax.lax.cond" in text
    assert "test_jit.py, line" in text and "if x > 0:" in text


def test_numpy_on_a_tracer_says_use_jnp():
    with pytest.raises(CheckFailure, match="TracerArrayConversionError") as info:
        jit.assert_jittable(total_with_numpy, (jnp.arange(3.0),), what="running_sum(xs)")
    assert "`jax.numpy`" in str(info.value)


def test_static_argnames_are_honoured():
    out = jit.assert_jittable(
        newton_range,
        (2.0,),
        {"n_iters": 8},
        static_argnames=("n_iters",),
        what="newton_sqrt(a, n_iters)",
    )
    assert float(out) == pytest.approx(2**0.5, rel=1e-5)
    with pytest.raises(CheckFailure, match="Tracer"):  # a traced loop bound cannot drive range()
        jit.assert_jittable(newton_range, (2.0,), {"n_iters": 8}, what="newton_sqrt(a, n_iters)")


def test_trace_time_randomness_differs_from_eager():
    with pytest.raises(
        CheckFailure, match="computes something different from the eager one on the same inputs"
    ):
        jit.assert_jittable(noisy_with_global_rng, (jnp.zeros(3),), what="noisy(x)")


def test_stubs_propagate_and_eager_errors_are_located():
    def stub(x):
        raise NotImplementedError("TODO: piecewise")

    with pytest.raises(NotImplementedError):
        jit.assert_jittable(stub, (1.0,), what="piecewise(x)")

    def reciprocal(x):
        return 1 / 0

    with pytest.raises(
        CheckFailure, match=r"(?s)called eagerly.*raised ZeroDivisionError.*test_jit.py, line"
    ):
        jit.assert_jittable(reciprocal, (1.0,), what="f")


def test_an_array_passed_as_a_static_argument_is_explained():
    newton = functools.partial(jax.jit, static_argnums=(0, 1))(newton_range)
    with pytest.raises(CheckFailure, match="must be hashable Python values"):
        jit.assert_jittable(
            newton,
            (jnp.float32(2.0),),
            {"n_iters": 5},
            static_argnames=("n_iters",),
            what="newton_sqrt(a, n_iters)",
        )


def test_jitted_output_is_returned_for_pytrees():
    out = jit.assert_jittable(
        lambda p: jax.tree.map(lambda v: v * 2, p), ({"w": jnp.ones(2)},), what="f"
    )
    assert float(out["w"][0]) == 2.0


def test_a_mutating_function_is_judged_on_equal_inputs():
    """Both calls get their own copy, so in-place updates do not fake a jit mismatch."""
    import numpy as np

    def scale_in_place(x):
        y = jnp.asarray(x) * 2.0
        if isinstance(x, np.ndarray):
            x *= 10.0  # mutates the caller's array (eagerly only: under jit x is a tracer)
        return y

    data = np.ones(3, np.float32)
    out = jit.assert_jittable(scale_in_place, (data,), what="scale_in_place(x)")
    assert np.allclose(out, 2.0)
    assert np.allclose(data, 1.0)  # the caller's array is untouched too
