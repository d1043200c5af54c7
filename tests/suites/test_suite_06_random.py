"""The 06_random suite graded against the solution, an alternative solution, the stub and
broken submissions (each folder in its own subprocess, two at a time)."""

import pytest
from harness import lesson_files

from grader.catalog import read_suite

LESSON = "06_random"


# The checks that judge the three functions case by case, each case gated on its value check.
PER_FUNCTION = {
    "test_deterministic",
    "test_varies_with_key",
    "test_no_global_rng",
    "test_raw_keys",
    "test_jit",
}


def _gated(g, check_ids, function, value_check):
    """`function`'s case of each check is blocked by its wrong values; the others pass."""
    for check_id in check_ids:
        r = g.results[check_id]
        if check_id in PER_FUNCTION:
            assert r["fraction"] == pytest.approx(2 / 3), check_id
            assert f"{function}: this property is judged once the values are right" in r["message"]
        else:
            assert r["blocked_by"] == value_check, check_id
            assert "values are wrong" in r["message"]
    return set(check_ids)


def test_suite_manifest():
    spec = read_suite(lesson_files(LESSON).suite)
    assert spec.max_score == 17
    hidden = {c.id for c in spec.checks if c.visibility == "hidden"}
    assert hidden == {"test_split_into_independent", "test_noisy_elementwise"}


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_full_marks()


@pytest.mark.slow
def test_alternative_solution_passes_every_check(graded):
    graded("alternative").assert_statuses()  # fold_in keys in a list, a split chain


@pytest.mark.slow
@pytest.mark.parametrize("idiom", ["jitted_fold_in", "key_stream"])
def test_correct_alternatives_in_other_idioms_pass_every_check(graded, idiom):
    """jitted_fold_in: functools.partial(jax.jit) decorators, a vmapped fold_in;
    key_stream: a class splitting a key chain, subkeys as a tuple."""
    graded(idiom).assert_full_marks()


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_one_key_for_every_array_and_variance_scaled_noise(graded):
    g = graded("same_key")
    noisy_gated = {"test_noisy_elementwise", "test_noisy_key_once"} | PER_FUNCTION
    g.assert_statuses(
        failed={"test_init_weights_own_keys", "test_noisy_statistics"}
        | _gated(g, noisy_gated, "noisy", "test_noisy_statistics")
    )
    message = g.message("test_init_weights_own_keys")
    assert "key-reuse checker" in message
    assert "return [jax.random.normal(key, shape) for shape in shapes]" in message
    assert "scaled by sigma**2 (the variance)" in g.message("test_noisy_statistics")


@pytest.mark.slow
def test_global_numpy_rng_and_the_parent_key_handed_out(graded):
    g = graded("global_rng")
    g.assert_statuses(
        failed={
            "test_split_into_distinct",
            "test_split_into_independent",
            "test_noisy_elementwise",
            "test_deterministic",
            "test_no_global_rng",
            "test_jit",
        }
        | _gated(
            g, {"test_varies_with_key", "test_raw_keys"}, "split_into", "test_split_into_distinct"
        )
    )
    assert "is the key itself" in g.message("test_split_into_distinct")
    # the parent key handed out again: named by the distinct-keys check the other stands on
    assert g.results["test_split_into_independent"]["blocked_by"] == "test_split_into_distinct"
    assert "global RNG" in g.message("test_noisy_elementwise")
    for check in ("test_deterministic", "test_no_global_rng", "test_jit"):
        r = g.results[check]  # split_into's case is gated, the others' failure is the message
        assert r["fraction"] == 0.0, check
        assert "this property is judged once the values are right" not in r["message"], check
    assert "the output depends on something besides the key" in g.message("test_deterministic")
    assert "NumPy's global RNG (`np.random`) was drawn from" in g.message("test_no_global_rng")


@pytest.mark.slow
def test_one_scalar_of_noise_for_every_element(graded):
    g = graded("scalar_noise")
    gated = {"test_noisy_elementwise", "test_noisy_key_once"} | PER_FUNCTION
    g.assert_statuses(
        failed={"test_noisy_statistics"} | _gated(g, gated, "noisy", "test_noisy_statistics")
    )
    assert "a scalar draw" in g.message("test_noisy_statistics")


@pytest.mark.slow
def test_hand_made_normal_noise_reusing_its_key(graded):
    g = graded("box_muller")
    gated = {"test_noisy_elementwise", "test_noisy_key_once"} | PER_FUNCTION
    gated = _gated(g, gated, "noisy", "test_noisy_statistics")
    g.assert_statuses(failed={"test_noisy_statistics"} | gated)
    message = g.message("test_noisy_statistics")  # the key-use check stands on it: named here
    assert "key-reuse checker saw one key consumed twice" in message
    assert (
        "u2 = jax.random.uniform(key, x.shape)" in message
    )  # the second use, in the student's file


@pytest.mark.slow
def test_a_numpy_draw_at_trace_time_is_seen_once_np_random_moves(graded):
    g = graded("trace_time_numpy")
    g.assert_statuses(failed={"test_no_global_rng"})
    r = g.results["test_no_global_rng"]
    assert r["fraction"] == pytest.approx(2 / 3)  # split_into and init_weights are fine
    message = g.message("test_no_global_rng")
    assert "noisy: " in message and "the same key after NumPy's global RNG moved" in message
    assert "baked into the compiled function" in message


@pytest.mark.slow
def test_uniform_draws_named_only_where_the_values_confirm_it(graded):
    g = graded("uniform_draws")
    for check in ("test_init_weights_shapes_and_stats", "test_noisy_statistics"):
        assert g.results[check]["status"] == "failed", check
    init = g.message("test_init_weights_shapes_and_stats")
    assert "likely cause: the values are uniform on [0, 1)" in init, init
    noise = g.message("test_noisy_statistics")  # std 3 / sqrt(3): no known mistake's
    assert "likely cause" not in noise, noise
    assert "mean 0 +- 0.11 and std 3 +- 0.15" in noise


@pytest.mark.slow
def test_a_fan_in_scaling_is_named_and_a_constant_one_is_not(graded):
    he = graded("init_fan_in")
    assert he.results["test_init_weights_shapes_and_stats"]["status"] == "failed"
    assert "sqrt(2 / shape[0])" in he.cause("test_init_weights_shapes_and_stats")
    half = graded("init_half_std")
    assert half.results["test_init_weights_shapes_and_stats"]["status"] == "failed"
    assert "fan-in" not in half.message("test_init_weights_shapes_and_stats")


@pytest.mark.slow
def test_noise_that_vanishes_at_zero_is_not_called_one_number(graded):
    """noise scaled by x / 2: right at x = 2, none on zeros. The cause says what zeros got
    (nothing), not that one number was added to every element."""
    g = graded("noise_scaled_by_x")
    g.assert_statuses(failed={"test_noisy_elementwise"})
    cause = g.cause("test_noisy_elementwise")
    assert "no noise was added to x = zeros" in cause
    assert "the same number" not in cause


@pytest.mark.slow
def test_a_truncated_normal_init_is_told_apart_by_its_tails(graded):
    """init_weights drawing jax.random.truncated_normal(k, -2, 2, shape): std 0.88 passes the
    2,208-value statistics check with seed 3's draws (0.905); 200,000 draws show the std, the
    share beyond 2 (none) and the kurtosis (2.36) far off N(0, 1)'s."""
    g = graded("init_truncated_normal")
    g.assert_statuses(failed={"test_init_weights_normal"})
    message = g.message("test_init_weights_normal")
    assert "share beyond +-2 0," in message
    assert "off: std, share beyond +-2, kurtosis" in message
    assert "likely cause" not in message


@pytest.mark.slow
def test_raw_keys_stacked_for_a_typed_key_are_called_raw_not_unstacked(graded):
    """split_into ignoring its key, `jnp.stack([jax.random.PRNGKey(i) for i in range(n)])`:
    for a typed key it returns shape (n, 2) uint32. The keys are stacked; what the array shows
    is raw keys where a typed key was given, and the cause says that alone."""
    g = graded("raw_keys")
    message = g.assert_fails(
        "test_split_into_distinct",
        "an array of shape (4, 2), dtype uint32",
        cause=("raw uint32 keys", "a typed key (jax.random.key)"),
    )
    assert "stacked" not in g.cause("test_split_into_distinct"), message


@pytest.mark.slow
def test_a_generator_for_the_list_of_arrays_is_named(graded):
    """init_weights returning `(normal(k, s) for ...)`: it stays in the sandbox as a
    generator; the check says what it is (no internal handle's name, no length) and why."""
    g = graded("init_generator")
    message = g.assert_fails(
        "test_init_weights_shapes_and_stats",
        "observed: a generator (left in the sandbox",
        cause="a generator was returned",
    )
    assert "Remote" not in message


@pytest.mark.slow
def test_noise_that_sigma_never_scales_is_named(graded):
    """noisy returning x + N(0, 1): the noise has mean 0 and std 1 at sigma = 3 and at
    sigma = 0.5 (sigma = 1 would tell nothing), and the cause says sigma never scales it."""
    g = graded("sigma_ignored")
    g.assert_fails(
        "test_noisy_statistics",
        "std 1.0",
        cause=("the noise has std 1 whatever sigma is", "at sigma=3 and", "sigma never scales it"),
        not_cause=("sigma**2", "noise alone", "key was used"),
    )


@pytest.mark.slow
def test_noise_shifted_by_sigma_is_not_called_unscaled(graded):
    """x + sigma + N(0, 1) (sigma added where it multiplies): std 1 at every sigma too, but
    mean sigma, which noise that sigma merely fails to scale does not have: not named."""
    g = graded("sigma_added")
    g.assert_fails("test_noisy_statistics", "mean 3.0", not_cause=("whatever sigma is",))
