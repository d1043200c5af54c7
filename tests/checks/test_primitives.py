"""primitives: op counts over every function of the compiled program; assert_contains /
assert_lacks."""

import functools
import inspect
import os

import jax
import jax.numpy as jnp
import pytest
from jax import lax

from grader.checks import primitives
from grader.checks.failure import CheckFailure


def piecewise_cond(x):
    return lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)


@jax.jit
def piecewise_jitted_switch(x):
    return lax.switch(jnp.int32(x > 0), [jnp.negative, jnp.square], x)


def piecewise_where(x):
    return jnp.where(x > 0, x**2, -x)


def running_sum_scan(xs):
    def step(total, x):
        total = total + x
        return total, total

    return lax.scan(step, jnp.zeros((), xs.dtype), xs)


@jax.jit
def _scan_helper(xs):
    return running_sum_scan(xs)


def running_sum_nested(xs):  # the scan sits inside a jitted helper
    return _scan_helper(xs)


def running_sum_loop(xs):
    total, partial = 0.0, []
    for i in range(xs.shape[0]):
        total = total + xs[i]
        partial.append(total)
    return total, jnp.stack(partial)


def newton_fori(a, n_iters=20):
    return lax.fori_loop(0, n_iters, lambda i, x: 0.5 * (x + a / x), a)


def newton_while(a, n_iters=20):
    def body(carry):
        i, x = carry
        return i + 1, 0.5 * (x + a / x)

    return lax.while_loop(lambda c: c[0] < n_iters, body, (0, a))[1]


XS = (jnp.arange(6.0),)


@pytest.mark.parametrize("impl", [piecewise_cond, piecewise_jitted_switch])
def test_cond_found_at_any_depth(impl):
    counts = primitives.assert_contains(impl, (1.5,), "cond", what="piecewise(x)")
    assert counts["case"] == 1


def test_where_instead_of_cond_fails_and_says_why():
    with pytest.raises(CheckFailure) as info:
        primitives.assert_contains(piecewise_where, (1.5,), "cond", what="piecewise(x)")
    text = str(info.value)
    assert "jnp.where" in text and "BOTH branches" in text and "jax.lax.cond" in text
    assert "the program selects element-wise (`select_n`" in text
    assert "select_n x1" in text  # the jaxpr's name, as the lesson shows it


@pytest.mark.parametrize("impl", [running_sum_scan, running_sum_nested])
def test_scan_found_in_nested_jit(impl):
    primitives.assert_contains(impl, XS, "scan", what="running_sum(xs)")


def test_python_loop_running_sum_fails_and_says_scan():
    with pytest.raises(CheckFailure) as info:
        primitives.assert_contains(running_sum_loop, XS, "scan", what="running_sum(xs)")
    text = str(info.value)
    assert "`scan`" in text and "jax.lax.scan" in text and "Python loop" in text
    assert "unrolled" in text


def test_a_loop_free_program_without_scan_names_no_loop():
    with pytest.raises(CheckFailure) as info:
        # no loop of the student's: nothing is said to have unrolled
        primitives.assert_contains(running_sum_cumsum, XS, "scan", what="running_sum(xs)")
    text = str(info.value)
    assert "jax.lax.scan" in text and "unrolled" not in text and "likely cause" not in text


@pytest.mark.parametrize(
    ("text", "loop"),
    [
        ("for x in xs:", True),
        ("while i < n:", True),
        ("return jnp.stack([f(x) for x in xs])", True),
        ("total = total + x", False),
        ("partial = jnp.stack([", False),  # a comprehension cut across lines says nothing
        ("# for each x", False),
    ],
)
def test_is_loop_line(text, loop):
    assert primitives.is_loop_line(text) is loop


def _line_of(fn, fragment):
    """(this file's name, the line of `fn`'s source holding `fragment`, that line)."""
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, text in enumerate(lines) if fragment in text)
    return os.path.basename(__file__), start + offset, lines[offset].strip()


def running_sum_comprehension(xs):
    partial = jnp.stack([jnp.sum(xs[: i + 1]) for i in range(xs.shape[0])])
    return partial[-1], partial


def _add(total, x):
    return total + x * 1.0


def running_sum_helper_loop(xs):  # the body is a helper's line, the loop is here
    total, partial = 0.0, []
    for x in xs:
        total = _add(total, x)
        partial.append(total)
    return total, jnp.stack(partial)


@pytest.mark.parametrize(
    ("impl", "fragment"),
    [
        (running_sum_loop, "for i in range"),
        (running_sum_comprehension, "for i in range"),
        (running_sum_helper_loop, "for x in xs"),
    ],
)
def test_an_unrolled_loop_is_shown_at_its_line_in_the_lessons_words(impl, fragment):
    with pytest.raises(CheckFailure) as info:
        primitives.assert_contains(impl, (jnp.arange(8.0),), "scan", what="running_sum(xs)")
    finding = info.value.finding
    where = _line_of(impl, fragment)
    assert finding.where == where, finding
    assert f"at line {where[1]}" in finding.cause
    text = str(info.value)
    assert "stablehlo" not in text.lower(), text  # the compiled program's own names
    assert "read from its compiled program" in finding.checked
    assert "loop primitive (`scan`" in finding.expected


def test_a_missing_cond_is_said_in_the_lessons_words():
    with pytest.raises(CheckFailure) as info:
        primitives.assert_contains(lambda x: jnp.abs(x) * 2.0, (1.5,), "cond", what="piecewise(x)")
    text = str(info.value)
    assert "stablehlo" not in text.lower() and "`case`" not in text, text
    assert "a `cond`" in info.value.finding.expected
    assert info.value.finding.where is None  # nothing repeats: no loop to point at


@pytest.mark.parametrize("impl", [newton_fori, newton_while])
def test_loop_primitive_alternatives(impl):
    primitives.assert_contains(
        impl,
        (2.0, 20),
        ("while", "scan"),
        static_argnames=("n_iters",),
        what="newton_sqrt(a, n_iters)",
    )


def test_fori_loop_with_static_bounds_is_one_while():
    counts = primitives.primitives_of(
        newton_fori, (2.0,), {"n_iters": 5}, static_argnames=("n_iters",)
    )
    assert counts["while"] == 1


def test_custom_jvp_and_shard_map_bodies_are_walked():
    counts = primitives.primitives_of(jax.nn.relu, (jnp.ones(3),))
    assert counts["maximum"] == 1
    pmapped = jax.pmap(lambda x: lax.pmean(x * 2, "i"), axis_name="i")
    primitives.assert_contains(pmapped, (jnp.ones((1, 3)),), "psum", what="the pmapped step")


def test_assert_lacks():
    primitives.assert_lacks(running_sum_scan, XS, "cond", what="running_sum(xs)")
    with pytest.raises(CheckFailure, match=r"`scan` x1") as info:
        primitives.assert_lacks(
            running_sum_scan, XS, ("scan",), what="running_sum(xs)", fix="use jnp.cumsum"
        )
    assert "use jnp.cumsum" in str(info.value)


def test_tracing_errors_are_explained():
    def piecewise(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(CheckFailure, match="TracerBoolConversionError"):
        primitives.assert_contains(piecewise, (1.0,), "cond", what="piecewise(x)")
    with pytest.raises(NotImplementedError):
        primitives.primitives_of(functools.partial(_stub), (1.0,))


def _stub(x):
    raise NotImplementedError("TODO")


def test_where_piecewise_has_the_right_values_all_the_same():
    from hypothesis import strategies as st

    from grader.checks import values

    def ref(x):
        return x * x if x > 0 else -x

    values.assert_matches_reference(
        piecewise_where,
        ref,
        st.floats(-50, 50, width=32).map(lambda v: (v,)),
        what="piecewise(x)",
        max_examples=20,
    )


def running_sum_cumsum(xs):
    partial = jnp.cumsum(xs)
    return partial[-1], partial


def test_lacks_passes_without_the_primitive():
    primitives.assert_lacks(running_sum_cumsum, XS, ("while", "cond"), what="running_sum(xs)")
    primitives.assert_lacks(running_sum_scan, XS, ("cond",), what="running_sum(xs)")


def test_scan_and_while_loop_are_one_op_in_the_program():
    # both compile to stablehlo.while: a program tells a loop from no loop, not which one
    with pytest.raises(CheckFailure, match=r"`while` x1"):
        primitives.assert_lacks(running_sum_scan, XS, ("while",), what="running_sum(xs)")
