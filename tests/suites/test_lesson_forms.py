"""The references written in the lesson's own form, which a check hands to its diagnosis
(`reference=` of `diagnose.confirmed`) so that one edit of it is a student's mistake, equal
the references the check judges values with, on many inputs: the diagnosis never changes
what a check accepts, and a mutant's text describes an edit of the right computation.
Each form's mutants are the student's edits the lesson form was written for."""

import importlib
from types import SimpleNamespace

import numpy as np
import pytest

from grader.authoring import MARKER
from grader.checks import ref_mutants

RNG_SEEDS = range(3)


@pytest.fixture(scope="module")
def suites(pytestconfig):
    """The suite modules, imported as the grader's plugin imports them: their checks'
    mark registered first (pytest refuses an unknown mark under --strict-markers)."""
    pytestconfig.addinivalue_line("markers", f"{MARKER}: a graded check")
    return SimpleNamespace(
        grad=importlib.import_module("grader.suites.test_02_grad"),
        jit=importlib.import_module("grader.suites.test_03_jit"),
        vmap=importlib.import_module("grader.suites.test_04_vmap"),
    )


def _texts(reference):
    return {m.text.removeprefix(ref_mutants._START) for m in ref_mutants.mutants(reference)}


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_the_lesson_mse_is_the_reference_with_its_gradient(suites, seed):
    rng = np.random.default_rng(seed)
    for _ in range(300):
        n, d = (int(v) for v in rng.integers(1, 9, 2))
        scale = 10.0 ** rng.uniform(-3, 3)
        w, x, y = rng.normal(size=d) * scale, rng.normal(size=(n, d)), rng.normal(size=n)
        loss, grad = suites.grad._ref_mse(w, x, y)
        lesson_loss, lesson_grad = suites.grad._lesson_mse(w, x, y)
        np.testing.assert_allclose(lesson_loss, loss, rtol=1e-12)
        np.testing.assert_allclose(lesson_grad, grad, rtol=1e-10, atol=1e-12 * np.abs(grad).max())
        assert lesson_grad.shape == grad.shape == (d,)
    # on the check's own probes, and on float32 quarters as the search draws them (a perfect
    # fit among them: a gradient of zeros)
    quarters = [
        tuple(rng.integers(-8, 9, shape).astype(np.float32) / 4 for shape in ((d,), (n, d), (n,)))
        for n, d in ((1, 1), (3, 2), (4, 3), (5, 1))
        for _ in range(25)
    ]
    for args in [*suites.grad._mse_probes(), *quarters]:
        lesson = suites.grad._lesson_mse(*args)
        for got, want in zip(lesson, suites.grad._ref_mse(*args), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_the_lesson_mse_mutants_carry_the_edit_into_the_gradient(suites):
    w, x, y = suites.grad._mse_probes()[0]
    plus = next(m for m in ref_mutants.mutants(suites.grad._lesson_mse) if "an addition" in m.text)
    loss, grad = plus.function(w, x, y)
    r = x.astype(np.float64) @ w + y  # the residual with y added: what x @ w + y gives
    np.testing.assert_allclose(loss, np.mean(r**2), rtol=1e-12)
    np.testing.assert_allclose(grad, 2.0 * x.T @ r / len(y), rtol=1e-10)
    assert {
        "a sum in place of its mean",
        "an addition in place of one of its subtractions",
        "the power 1 where it raises to the power 2",
    } <= _texts(suites.grad._lesson_mse)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_the_piecewise_batch_is_the_reference_on_each_point(suites, seed):
    # the batch reference, the lesson's `x ** 2` and `-x`, is the scalar reference on each
    # point and the `xs * xs` it was written with before, exactly
    rng = np.random.default_rng(seed)
    for _ in range(300):
        n = int(rng.integers(1, 12))
        xs = (rng.normal(size=n) * 10.0 ** rng.uniform(-3, 3)).astype(np.float32)
        xs[rng.random(n) < 0.2] = 0.0  # the branch point itself
        got = suites.jit._ref_piecewise_batch(xs)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, [suites.jit._ref_piecewise(x) for x in xs])
        np.testing.assert_array_equal(got, np.where(xs > 0, xs * xs, -xs))
    assert "the power 1 where it raises to the power 2" in _texts(suites.jit._ref_piecewise_batch)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_the_lesson_pairwise_is_the_reference(suites, seed):
    rng = np.random.default_rng(seed)
    for _ in range(300):
        n, m, d = (int(v) for v in rng.integers(1, 7, 3))
        a = rng.normal(size=(n, d)).astype(np.float32)
        b = rng.normal(size=(m, d)).astype(np.float32)
        want = suites.vmap._ref_pairwise(a, b)
        got = suites.vmap._lesson_pairwise(a, b)
        assert got.shape == want.shape == (n, m)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert {
        "an addition in place of one of its subtractions",
        "the power 1 where it raises to the power 2",
    } <= _texts(suites.vmap._lesson_pairwise)
