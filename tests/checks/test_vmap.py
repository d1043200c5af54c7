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
    with pytest.raises(CheckFailure, match="the batch axis is missing"):
        vmap.assert_matches_loop(
            lambda p, x, y: per_example_mean(_loss, p, x, y),
            jax.grad(_loss),
            (PARAMS, XS, YS),
            (None, 0, 0),
            what="per_example_grads",
        )


def test_loop_reference_stacks_pytrees():
    ref = vmap.loop_reference(jax.grad(_loss), (PARAMS, XS, YS), (None, 0, 0))
    assert ref["b"].shape == (6, 3)
