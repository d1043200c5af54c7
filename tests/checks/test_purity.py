"""purity: no mutated arguments, globals or global RNGs; no trace-time-only side effects."""

import random
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader.checks import purity
from grader.checks.failure import CheckFailure

CALLS = 0
HISTORY = []
SETTINGS = {"scale": 1.0}


def set_element_at(x, index, value):
    return jnp.asarray(x).at[index].set(value)


def set_element_copy(x, index, value):
    y = np.array(x, copy=True)
    y[index] = value
    return jnp.asarray(y)


def set_element_in_place(x, index, value):
    x[index] = value
    return jnp.asarray(x)


def append_to_list(items, value):
    items.append(value)
    return jnp.asarray(items)


def counting(x):
    global CALLS
    CALLS += 1
    return x * 2


def configuring(x):
    SETTINGS["scale"] = 2.0
    return x * SETTINGS["scale"]


def numpy_noise(x):
    return x + np.random.normal()


def python_noise(x):
    return x + random.random()


def reseeding(x):
    np.random.seed(0)
    return x + np.random.normal()


def _args():
    return (np.zeros(4, np.float32), 2, 5.0)


@pytest.mark.parametrize("impl", [set_element_at, set_element_copy])
def test_pure_functions_pass(impl):
    out = purity.assert_pure(impl, _args(), what="set_element(x, index, value)")
    assert float(out[2]) == 5.0


def test_in_place_numpy_write_is_reported_with_the_index():
    with pytest.raises(CheckFailure) as info:
        purity.assert_pure(set_element_in_place, _args(), what="set_element(x, index, value)")
    text = str(info.value)
    assert "argument `x` was modified in place: at index (2,) it went from 0.0 to 5.0" in text
    assert ".at[i].set(v)" in text


def test_list_append_to_an_argument_is_reported():
    with pytest.raises(CheckFailure, match="argument `items` grew from 2 to 3 items"):
        purity.assert_pure(append_to_list, ([1.0, 2.0], 3.0), what="f(items, value)")


@pytest.mark.parametrize(
    ("impl", "rng"), [(numpy_noise, "NumPy"), (python_noise, "Python"), (reseeding, "NumPy")]
)
def test_global_rngs_are_watched(impl, rng):
    with pytest.raises(CheckFailure, match=f"{rng}'s global RNG"):
        purity.assert_pure(impl, (1.0,), what="noisy(x)")


def test_module_globals_are_watched():
    with pytest.raises(CheckFailure, match="the global `CALLS` changed from 0 to 1"):
        purity.assert_pure(counting, (1.0,), what="f(x)")
    with pytest.raises(
        CheckFailure, match=r"the global `SETTINGS`\['scale'\] changed from 1.0 to 2.0"
    ):
        purity.assert_pure(configuring, (1.0,), what="f(x)", module=sys.modules[__name__])


# -- trace-time side effects ---------------------------------------------------
def running_total_plain(xs):
    return jnp.cumsum(xs)


def running_total_debug_print(xs):
    out = jnp.cumsum(xs)
    jax.debug.print("total = {}", out[-1])
    return out


def running_total_print(xs):
    out = jnp.cumsum(xs)
    print("total =", out[-1])
    return out


def running_total_logging(xs):
    HISTORY.append(xs.shape)
    return jnp.cumsum(xs)


def running_total_leaking(xs):
    out = jnp.cumsum(xs)
    HISTORY.append(out)
    return out


XS = (jnp.arange(4.0),)


@pytest.mark.parametrize("impl", [running_total_plain, running_total_debug_print])
def test_no_trace_side_effects_passes(impl):
    purity.assert_no_trace_side_effects(impl, XS, what="running_sum(xs)")


def test_print_at_trace_time_is_reported():
    jax.jit(running_total_print)(*XS)  # traced before: the check must still see the print
    with pytest.raises(CheckFailure) as info:
        purity.assert_no_trace_side_effects(running_total_print, XS, what="running_sum(xs)")
    text = str(info.value)
    assert "the first (tracing) call printed 'total = " in text and "jax.debug.print" in text
    assert "a Python `print` runs only while jit traces the function (and shows tracers" in text


def running_total_print_constant(xs):
    print("running the sum")  # no traced value in the text
    return jnp.cumsum(xs)


def test_a_print_without_a_tracer_is_not_said_to_show_tracers():
    with pytest.raises(CheckFailure) as info:
        purity.assert_no_trace_side_effects(
            running_total_print_constant, XS, what="running_sum(xs)"
        )
    text = str(info.value)
    assert "a Python `print` runs only while jit traces the function" in text
    assert "shows tracers" not in text


def test_list_append_at_trace_time_is_reported():
    with pytest.raises(
        CheckFailure, match=r"the global `HISTORY` grew .* the second call changed nothing"
    ):
        purity.assert_no_trace_side_effects(running_total_logging, XS, what="running_sum(xs)")


def test_a_leaked_tracer_is_reported():
    with pytest.raises(CheckFailure, match="a traced value was stored outside the function"):
        purity.assert_no_trace_side_effects(running_total_leaking, XS, what="running_sum(xs)")
    HISTORY.clear()


def test_a_global_that_already_holds_a_leaked_tracer_is_still_watched():
    # the first jitted call leaks a tracer into HISTORY; from then on HISTORY cannot be
    # deep-copied, yet every later (eager) call still appends to it
    jax.jit(running_total_leaking)(*XS)
    try:
        with pytest.raises(CheckFailure, match=r"the global `HISTORY` grew from 1 to 2 items"):
            purity.assert_pure(running_total_leaking, XS, what="running_sum(xs)")
    finally:
        HISTORY.clear()


def remembering(x, _seen=[]):  # noqa: B006 - state kept where no check of state looks
    _seen.append(x)
    return x * len(_seen)


def failing(x):
    raise ValueError("no purity without a result")


def test_a_second_call_that_differs_is_reported():
    with pytest.raises(CheckFailure, match="f\\(x\\): a second call with the same inputs") as info:
        purity.assert_pure(remembering, (1.0,), what="f(x)")
    assert "the output depends on something besides the arguments: two calls with the same" in str(
        info.value
    )


def test_a_function_that_raises_fails_the_purity_check():
    with pytest.raises(CheckFailure, match="purity of f\\(x\\)") as info:
        purity.assert_pure(failing, (1.0,), what="f(x)")
    assert "no purity without a result" in str(info.value)


def test_the_first_side_effect_found_is_the_one_reported():
    def everything(items):
        global CALLS
        CALLS += 1
        items.append(np.random.normal())
        return jnp.asarray(items)

    with pytest.raises(CheckFailure, match="argument `items` grew from 1 to 2 items") as info:
        purity.assert_pure(everything, ([1.0],), what="f(items)", module=sys.modules[__name__])
    assert "global RNG" not in str(info.value) and "`CALLS`" not in str(info.value)

    def noisy_counter(x):
        global CALLS
        CALLS += 1
        return x + np.random.normal()

    with pytest.raises(CheckFailure, match="NumPy's global RNG") as info:
        purity.assert_pure(noisy_counter, (1.0,), what="f(x)", module=sys.modules[__name__])
    assert "`CALLS`" not in str(info.value)
