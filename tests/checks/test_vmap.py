"""vmap.assert_matches_loop: batched output equals a Python loop, example by example."""

import jax
import jax.numpy as jnp
import pytest

from grader.checks import vmap
from grader.checks.failure import CheckFailure


def _loss(params, x, y):
    logits = x @ params["w"] + params["b"]
    return -jax.nn.log_softmax(logits)[y]


def per_example_vmap(loss_fn, params, xs, ys):
    return jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))(params, xs, ys)


def per_example_closure(loss_fn, params, xs, ys):
    return jax.vmap(lambda x, y: jax.grad(loss_fn)(params, x, y))(xs, ys)


def per_example_batch_grad(loss_fn, params, xs, ys):  # one gradient of the batch, copied
    g = jax.grad(lambda p: jnp.mean(jax.vmap(loss_fn, in_axes=(None, 0, 0))(p, xs, ys)))(params)
    return jax.tree.map(lambda leaf: jnp.broadcast_to(leaf, (xs.shape[0], *leaf.shape)), g)


def per_example_mean(loss_fn, params, xs, ys):  # the batch axis reduced away
    return jax.tree.map(lambda g: g.mean(0), per_example_vmap(loss_fn, params, xs, ys))


PARAMS = {"w": jax.random.normal(jax.random.key(0), (4, 3)), "b": jnp.zeros(3)}
XS = jax.random.normal(jax.random.key(1), (6, 4))
YS = jnp.array([0, 1, 2, 0, 1, 2])


@pytest.mark.parametrize("impl", [per_example_vmap, per_example_closure])
def test_correct_per_example_grads_match_the_loop(impl):
    out = vmap.assert_matches_loop(
        lambda p, x, y: impl(_loss, p, x, y),
        jax.grad(_loss),
        (PARAMS, XS, YS),
        (None, 0, 0),
        what="per_example_grads",
    )
    assert out["w"].shape == (6, 4, 3)


def test_batch_gradient_copied_fails_at_the_first_example():
    with pytest.raises(CheckFailure) as info:
        vmap.assert_matches_loop(
            lambda p, x, y: per_example_batch_grad(_loss, p, x, y),
            jax.grad(_loss),
            (PARAMS, XS, YS),
            (None, 0, 0),
            what="per_example_grads",
        )
    text = str(info.value)
    assert "example 0 (of 6)" in text and "['b']" in text and "jax.vmap" in text


def test_missing_batch_axis_is_named():
    with pytest.raises(CheckFailure, match="the batch axis is missing") as info:
        vmap.assert_matches_loop(
            lambda p, x, y: per_example_mean(_loss, p, x, y),
            jax.grad(_loss),
            (PARAMS, XS, YS),
            (None, 0, 0),
            what="per_example_grads",
        )
    assert "the mean of the loop's results over the examples" in str(info.value)


def test_every_example_alike_is_said_and_a_wrong_example_is_not():
    def first_example_only(xs):
        return jnp.broadcast_to(jnp.sum(xs[0] * xs[0]), (xs.shape[0],))

    def norms(x):
        return jnp.sum(x * x)

    text = _assert_fails_with(first_example_only, norms)
    assert "all 6 examples get the same result" in text
    text = _assert_fails_with(lambda xs: jnp.sum(xs * xs, axis=1) * 2.0, norms)
    assert "likely cause" not in text


def _assert_fails_with(batched, single):
    with pytest.raises(CheckFailure) as info:
        vmap.assert_matches_loop(batched, single, (XS,), (0,), what="norms(xs)")
    return str(info.value)


def test_loop_reference_stacks_pytrees():
    ref = vmap.loop_reference(jax.grad(_loss), (PARAMS, XS, YS), (None, 0, 0))
    assert ref["b"].shape == (6, 3)


def _assert_fails(batched, match):
    with pytest.raises(CheckFailure, match=match) as info:
        vmap.assert_matches_loop(
            batched, jax.grad(_loss), (PARAMS, XS, YS), (None, 0, 0), what="per_example_grads"
        )
    return str(info.value)


def test_a_batched_function_that_raises_fails_naming_the_batch():
    def broken(p, x, y):
        raise ValueError("no batches here")

    text = _assert_fails(broken, "per_example_grads on a batch of 6")
    assert "no batches here" in text


def test_an_output_of_another_structure_fails():
    text = _assert_fails(
        lambda p, x, y: {"w": per_example_vmap(_loss, p, x, y)["w"]},
        r"per_example_grads on a batch of 6: one output per example, stacked on axis 0",
    )
    assert "'b'" in text


def test_the_batch_on_another_axis_is_named():
    text = _assert_fails(
        lambda p, x, y: jax.tree.map(jnp.transpose, per_example_vmap(_loss, p, x, y)),
        "the shape of \\['b'\\] of per_example_grads on a batch of 6",
    )
    assert "(6, 3) (batch axis first)" in text and "(3, 6)" in text
    assert "the batch is on axis 1: the values are the loop's with the batch axis" in text


def test_a_single_output_is_named_the_output():
    def norms(x):
        return jnp.sum(x * x)

    with pytest.raises(CheckFailure) as info:
        vmap.assert_matches_loop(lambda xs: jnp.sum(xs * xs, axis=1) + (jnp.arange(6) == 3),
                                 norms, (XS,), (0,), what="norms(xs)")  # fmt: skip
    text = str(info.value)
    assert "expected: example 3 (of 6), the output: " in text
    assert "observed: 3.49" in text and "likely cause" not in text  # nothing more is seen
    out = vmap.assert_matches_loop(
        lambda xs: jnp.sum(xs * xs, axis=1), norms, (XS,), (0,), what="norms(xs)"
    )
    assert out.shape == (6,)
