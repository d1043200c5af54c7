"""growth.assert_no_growth: a Python loop unrolls, scan/fori_loop/vmap do not."""

import inspect
import os

import jax
import jax.numpy as jnp
import pytest
from jax import lax

from grader.checks import growth
from grader.checks.failure import CheckFailure


def running_sum_scan(xs):
    return lax.scan(lambda c, x: (c + x, c + x), jnp.float32(0), xs)


def running_sum_cumsum(xs):
    partial = jnp.cumsum(xs)
    return partial[-1], partial


def running_sum_loop(xs):
    total, partial = jnp.float32(0), []
    for x in xs:
        total = total + x
        partial.append(total)
    return total, jnp.stack(partial)


def newton_fori(a, n_iters=20):
    return lax.fori_loop(0, n_iters, lambda i, x: 0.5 * (x + a / x), a)


def newton_while(a, n_iters=20):
    return lax.while_loop(
        lambda c: c[0] < n_iters, lambda c: (c[0] + 1, 0.5 * (c[1] + a / c[1])), (0, a)
    )[1]


def newton_unrolled(a, n_iters=20):
    x = a
    for _ in range(n_iters):
        x = 0.5 * (x + a / x)
    return x


def _loss(w, x, y):
    return (x @ w - y) ** 2


def grads_vmap(w, xs, ys):
    return jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(w, xs, ys)


def grads_loop(w, xs, ys):
    return jnp.stack([jax.grad(_loss)(w, xs[i], ys[i]) for i in range(xs.shape[0])])


def _sums(n):
    return (jnp.arange(n, dtype=jnp.float32),)


def _batch(n):
    return jnp.ones(3), jnp.ones((n, 3)), jnp.zeros(n)


@pytest.mark.parametrize("impl", [running_sum_scan, running_sum_cumsum])
def test_constant_size_running_sums_pass(impl):
    totals = growth.assert_no_growth(impl, _sums, what="running_sum(xs)")
    assert totals[4] == totals[32]


def test_python_loop_running_sum_fails_and_says_scan():
    with pytest.raises(CheckFailure) as info:
        growth.assert_no_growth(running_sum_loop, _sums, sizes=(5, 50), what="running_sum(xs)")
    text = str(info.value)
    assert "your loop unrolled" in text and "jax.lax.scan" in text
    assert "at n=5" in text and "at n=50" in text
    assert "`add` x5 -> x50" in text


def _line_of(fn, fragment):
    """(this file's name, the line of `fn`'s source holding `fragment`, that line)."""
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, text in enumerate(lines) if fragment in text)
    return os.path.basename(__file__), start + offset, lines[offset].strip()


@pytest.mark.parametrize(
    ("impl", "make_args", "static", "fragment"),
    [
        (running_sum_loop, _sums, (), "for x in xs"),
        (newton_unrolled, lambda n: (2.0, n), ("n_iters",), "for _ in range"),
        (grads_loop, _batch, (), "for i in range"),
    ],
)
def test_growth_points_at_the_loop_that_unrolled(impl, make_args, static, fragment):
    with pytest.raises(CheckFailure) as info:
        growth.assert_no_growth(
            impl, make_args, sizes=(5, 40), static_argnames=static, what="the function"
        )
    finding = info.value.finding
    where = _line_of(impl, fragment)
    assert finding.where == where, finding
    assert f"the Python loop at line {where[1]}" in finding.cause
    assert (
        "traced program" in finding.checked and "read from its compiled program" in finding.checked
    )
    assert "stablehlo" not in str(info.value).lower()


@pytest.mark.parametrize("impl", [newton_fori, newton_while])
def test_newton_does_not_grow_with_n_iters(impl):
    growth.assert_no_growth(
        impl,
        lambda n: (2.0, n),
        sizes=(5, 40),
        static_argnames=("n_iters",),
        what="newton_sqrt(a, n_iters)",
    )


def test_unrolled_newton_grows_with_n_iters():
    with pytest.raises(CheckFailure, match=r"grows with the input \(16 operations at n=5, 121"):
        growth.assert_no_growth(
            newton_unrolled,
            lambda n: (2.0, n),
            sizes=(5, 40),
            static_argnames=("n_iters",),
            what="newton_sqrt(a, n_iters)",
            fix="use jax.lax.fori_loop",
        )


def test_vmap_does_not_grow_with_batch_but_a_loop_does():
    growth.assert_no_growth(grads_vmap, _batch, what="per_example_grads")
    with pytest.raises(CheckFailure, match=r"jax\.vmap"):
        growth.assert_no_growth(grads_loop, _batch, what="per_example_grads")


def test_a_loop_whose_file_cannot_be_read_still_fails_without_a_line():
    namespace: dict = {"jnp": jnp}
    source = "def rs(xs):\n    t = 0.0\n    for x in xs:\n        t = t + x\n    return t\n"
    exec(compile(source, "<no file>", "exec"), namespace)  # no file behind the function
    with pytest.raises(CheckFailure) as info:
        growth.assert_no_growth(namespace["rs"], _sums, what="running_sum(xs)")
    assert info.value.finding.where is None
    assert "your loop unrolled: the program holds one copy" in info.value.finding.cause
