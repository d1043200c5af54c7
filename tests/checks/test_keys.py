"""keys: no key reuse (JAX's checker, eager and jit), determinism, key dependence, raw keys."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader.checks import keys
from grader.checks.failure import CheckFailure


def dropout(key, x, rate):
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


def forward_split(params, x, key, rate=0.5):
    k1, k2 = jax.random.split(key)
    h = dropout(k1, jax.nn.relu(x @ params["w1"]), rate)
    h = dropout(k2, jax.nn.relu(h @ params["w2"]), rate)
    return h @ params["w3"]


def forward_fold_in(params, x, key, rate=0.5):
    h = x
    for i, name in enumerate(("w1", "w2")):
        h = dropout(jax.random.fold_in(key, i), jax.nn.relu(h @ params[name]), rate)
    return h @ params["w3"]


def forward_reused_key(params, x, key, rate=0.5):
    h = dropout(key, jax.nn.relu(x @ params["w1"]), rate)
    h = dropout(key, jax.nn.relu(h @ params["w2"]), rate)  # the same key again
    return h @ params["w3"]


def noisy_numpy(key, x):
    return x + np.random.normal(size=x.shape).astype(np.float32)


def noisy_fixed_key(key, x):
    return x + jax.random.normal(jax.random.PRNGKey(0), x.shape)


def noisy_key_shaped(key, x):
    return x + jax.random.normal(key, key.shape + x.shape)  # assumes a typed key's shape ()


PARAMS = {"w1": jnp.ones((4, 8)) / 4, "w2": jnp.ones((8, 8)) / 8, "w3": jnp.ones((8, 2))}
X = jnp.ones((5, 4))


@pytest.mark.parametrize("impl", [forward_split, forward_fold_in])
def test_one_key_per_layer_passes(impl):
    out = keys.assert_no_key_reuse(
        impl,
        (PARAMS, X, jax.random.key(0)),
        static_argnames=("rate",),
        what="forward_with_dropout(params, x, key)",
    )
    assert out.shape == (5, 2)
    keys.assert_deterministic(impl, lambda k: (PARAMS, X, k), what="forward_with_dropout")
    keys.assert_varies_with_key(impl, lambda k: (PARAMS, X, k), what="forward_with_dropout")
    keys.assert_accepts_raw_keys(impl, lambda k: (PARAMS, X, k), what="forward_with_dropout")


@pytest.mark.parametrize("eager", [True, False])
def test_dropout_reusing_one_key_for_two_layers_fails(eager):
    with pytest.raises(CheckFailure) as info:
        keys.assert_no_key_reuse(
            forward_reused_key,
            (PARAMS, X, jax.random.key(0)),
            static_argnames=("rate",),
            eager=eager,
            what="forward_with_dropout",
        )
    text = str(info.value)
    assert "the key was reused" in text and "jax.random.split" in text
    assert ("eagerly" if eager else "under jax.jit") in text
    if eager:
        assert "test_keys.py, line" in text


def test_reuse_check_needs_typed_keys():
    with pytest.raises(ValueError, match="typed keys"):
        keys.assert_no_key_reuse(forward_split, (PARAMS, X, jax.random.PRNGKey(0)), what="f")


def test_global_numpy_rng_is_not_deterministic():
    with pytest.raises(CheckFailure, match="the output depends on something besides the key"):
        keys.assert_deterministic(
            noisy_numpy, lambda k: (k, jnp.zeros(4)), what="noisy(key, x, sigma)"
        )


def test_a_fixed_key_inside_does_not_vary():
    with pytest.raises(CheckFailure, match="the result does not change with the key"):
        keys.assert_varies_with_key(noisy_fixed_key, lambda k: (k, jnp.zeros(4)), what="noisy")


def test_raw_keys_break_key_shape_assumptions():
    with pytest.raises(CheckFailure, match=r"float32\[2,4\]"):
        keys.assert_accepts_raw_keys(noisy_key_shaped, lambda k: (k, jnp.zeros(4)), what="noisy")

    def typed_only(key, x):
        assert key.shape == (), "expected a typed key"
        return x

    with pytest.raises(CheckFailure, match="raised AssertionError: expected a typed key"):
        keys.assert_accepts_raw_keys(typed_only, lambda k: (k, jnp.zeros(4)), what="noisy")


def noisy_numpy_seeded_by_key(key, x):
    """Deterministic for one key in a row of calls only while nothing else moves np.random."""
    return x + jax.random.normal(key, x.shape) + 0.1 * np.float32(np.random.normal())


def noisy_numpy_at_trace_time(key, x):
    """Under jit the NumPy draw is made once, while tracing: a constant in the compiled code."""
    return x + jax.random.normal(key, x.shape) + np.float32(np.random.normal())


jitted_noisy_numpy_at_trace_time = jax.jit(noisy_numpy_at_trace_time)


def split_pair(key, n):
    return jax.random.split(key, n)


@pytest.mark.parametrize("impl", [dropout, forward_split, forward_fold_in])
def test_key_only_functions_ignore_the_global_rng(impl):
    args = (jax.random.key(0), X, 0.5) if impl is dropout else (PARAMS, X, jax.random.key(0))
    before = np.random.get_state()[1].copy()
    keys.assert_ignores_global_rng(impl, args, what="f", static_argnames=("rate",))
    assert np.array_equal(np.random.get_state()[1], before)  # the global state is restored


def test_outputs_holding_typed_keys_compare_as_key_data():
    out = keys.assert_ignores_global_rng(
        split_pair, (jax.random.key(3), 4), what="split_into(key, 4)", static_argnames=("n",)
    )
    assert np.shape(out) == (4, 2)


def test_a_global_numpy_draw_next_to_the_key_is_seen_eagerly():
    with pytest.raises(CheckFailure) as info:
        keys.assert_ignores_global_rng(
            noisy_numpy_seeded_by_key,
            (jax.random.key(0), jnp.zeros(4)),
            what="noisy(key, x, sigma)",
        )
    text = str(info.value)
    assert "the same key after NumPy's global RNG moved" in text and "eagerly" in text
    assert "global RNG (`np.random`, `random`)" in text


def test_a_global_numpy_draw_at_trace_time_is_seen_under_a_fresh_jit():
    jitted_noisy_numpy_at_trace_time(jax.random.key(0), jnp.zeros(4))  # traced once already
    with pytest.raises(CheckFailure) as info:
        keys.assert_ignores_global_rng(
            jitted_noisy_numpy_at_trace_time,
            (jax.random.key(0), jnp.zeros(4)),
            what="noisy(key, x, sigma)",
        )
    text = str(info.value)
    assert "under jax.jit" in text and "baked into the compiled function" in text


def noisy_counting(key, x):
    COUNTER.append(1)  # the output changes on every call, whatever the global seed
    return x + jax.random.normal(key, x.shape) + np.float32(len(COUNTER))


COUNTER: list[int] = []


def test_an_output_that_changes_on_every_call_is_not_blamed_on_the_global_rng():
    with pytest.raises(CheckFailure) as info:
        keys.assert_ignores_global_rng(
            noisy_counting, (jax.random.key(0), jnp.zeros(4)), what="noisy(key, x)", jit=False
        )
    text = str(info.value)
    assert "the result changes from call to call with the same key" in text
    assert "global RNG (`np.random`, `random`) as well" not in text


def test_jit_false_calls_the_function_eagerly_only():
    calls = []

    def counted(key, x):
        calls.append(isinstance(x, jax.core.Tracer))
        return x + jax.random.normal(key, x.shape)

    keys.assert_ignores_global_rng(counted, (jax.random.key(0), jnp.zeros(3)), what="f", jit=False)
    assert calls == [False, False, False]  # the third call: the first call's seed again
    keys.assert_ignores_global_rng(counted, (jax.random.key(0), jnp.zeros(3)), what="f")
    assert calls[3:] == [False, False, False, True, True, True]  # then three times traced anew


def test_a_function_that_raises_fails_naming_the_two_calls():
    def broken(key, x):
        raise ValueError("no draws today")

    with pytest.raises(CheckFailure) as info:
        keys.assert_ignores_global_rng(broken, (jax.random.key(0), jnp.zeros(3)), what="f")
    text = str(info.value)
    assert text.startswith("f: the same key after NumPy's global RNG moved")
    assert "observed: broken(...) with the same key twice raised ValueError: no draws today" in text


def test_an_error_only_under_jit_is_left_to_the_jit_check():
    def python_branch(key, x):
        noise = jax.random.normal(key, x.shape)
        return x + noise if float(noise.sum()) > -100.0 else x  # concrete only eagerly

    out = keys.assert_ignores_global_rng(python_branch, (jax.random.key(0), jnp.zeros(3)), what="f")
    assert np.shape(out) == (3,)
