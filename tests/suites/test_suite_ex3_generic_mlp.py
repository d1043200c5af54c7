"""The ex3_generic_mlp suite graded against the solution, the stub, an alternative
solution and the two pytree traps (each in its own subprocess)."""

import pytest
from harness import lesson_files

from grader.catalog import read_suite

LESSON = "ex3_generic_mlp"
# spec revision 2: init_mlp initialised as 08's init_params (1 point), its draws normal (1)
MAX_SCORE = 17
HIDDEN = {"test_init_key_use", "test_forward_pure"}
FORWARD = {
    "test_forward_lesson",
    "test_forward_depths",
    "test_forward_pairing",
    "test_forward_order",
    "test_forward_jit",
    "test_forward_pure",
}


def test_suite_manifest():
    spec = read_suite(lesson_files(LESSON).suite)
    assert spec.max_score == MAX_SCORE
    assert {c.id for c in spec.checks if c.visibility == "hidden"} == HIDDEN
    assert all("?" in c.hint for c in spec.checks)  # hints are leading questions


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_full_marks()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["alternative", "tree_paths", "class_reduce_einsum"])
def test_alternative_solutions_pass(graded, name):
    # alternative: he_normal draws a truncated normal (the init statistics accept any
    # He-variance draw); tree_paths: fold_in keys, leaves regrouped by their tree paths;
    # class_reduce_einsum: a Dense class, einsum layers folded with functools.reduce
    graded(name).assert_full_marks()


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_naive_leaves_pairing_is_explained(graded):
    g = graded("naive_leaves")
    g.assert_statuses(failed=FORWARD)
    for check_id in ("test_forward_jit", "test_forward_pure"):  # gated on the values
        assert g.results[check_id]["blocked_by"] == "test_forward_lesson"
    for check_id in ("test_forward_lesson", "test_forward_depths", "test_forward_pairing"):
        message = g.message(check_id)
        assert "used each layer's 'b' as its weight" in message, check_id
        assert "[b, w], not [w, b]" in message, check_id
    # with 12 layers the same code also gets the order wrong; both halves are named
    order = g.message("test_forward_order")
    assert "paired the flat list of jax.tree.leaves" in order
    assert "'layer10' sorts before 'layer2'" in order
    # the student's error is named by its own type (not the judge's StudentError class)
    assert "it raised TypeError: dot_general requires contracting dimensions" in g.message(
        "test_forward_lesson"
    )


@pytest.mark.slow
def test_string_sorted_layers_are_explained(graded):
    g = graded("string_sorted")
    g.assert_statuses(failed={"test_forward_depths", "test_forward_order"})
    depths = g.results["test_forward_depths"]
    assert depths["fraction"] == pytest.approx(9 / 12)
    assert "wrong for 10, 11, 12 layer(s)" in depths["message"]
    order = g.message("test_forward_order")
    assert "layer1, layer10, layer11, layer12, layer2" in order
    assert "'layer10' sorts before 'layer2'" in order
    assert "int(k[5:])" in order  # the fix
    # it fails on the params built in numeric order already: not named as dict order
    assert "the params dict holds its keys" not in order


@pytest.mark.slow
def test_global_rng_drawn_at_trace_time_is_named(graded):
    g = graded("jit_global_jitter")
    g.assert_statuses(failed={"test_init_key_use"})
    message = g.message("test_init_key_use")
    assert "np.random.seed" in message
    assert "baked into the compiled function" in message


@pytest.mark.slow
def test_a_numpy_float64_bias_is_not_initialised_as_08(graded):
    # spec revision 2: "initialised as 08's `init_params` (He, zero biases, a key per layer,
    # float32)": a NumPy zero bias (float64) costs that check alone; the forward pass stays
    # float32 and every other check passes
    g = graded("numpy_bias")
    g.assert_fails(
        "test_init_like_08", "the dtype of init_mlp", "observed: float64", "jnp.zeros", only=True
    )


@pytest.mark.slow
def test_biases_drawn_at_random_are_named_and_ones_are_not(graded):
    # random biases: nearly every entry differs from the others, a draw; biases of ones are
    # not zeros either, but nothing in them says how they were made
    g = graded("random_bias")
    g.assert_fails(
        "test_init_like_08", "all zeros", cause="drawn at random like the weights", only=True
    )
    g = graded("bias_ones")
    g.assert_fails("test_init_like_08", "all zeros", not_cause=("drawn at random",), only=True)
    assert g.cause("test_init_like_08") == ""


@pytest.mark.slow
def test_one_key_for_every_layer_fails_the_key_check_alone(graded):
    g = graded("one_key")
    g.assert_statuses(failed={"test_init_keys"})
    assert "identical matrices" in g.message("test_init_keys")


@pytest.mark.slow
def test_lecun_scaled_weights_are_not_initialised_as_08(graded):
    # spec revision 2: init_mlp is "initialised as 08's `init_params` (He, ...)"; the
    # distribution's check divides each layer by its own std: the scale costs one check
    g = graded("lecun_scale")
    message = g.assert_fails(
        "test_init_like_08", "standard deviation sqrt(2 / 64)", "(0.71 x the He value)", only=True
    )
    assert "jnp.sqrt(2.0 / fan_in)" in message
    assert "every layer's standard deviation is sqrt(1 / fan_in)" in g.cause("test_init_like_08")


@pytest.mark.slow
def test_a_square_root_of_the_two_alone_is_named_by_its_scale(graded):
    # jnp.sqrt(2.0) / n_in: every layer sqrt(2) / fan_in, confirmed on all four layers
    g = graded("he_root_of_two")
    g.assert_fails(
        "test_init_like_08",
        "(0.13 x the He value)",
        cause="every layer's standard deviation is sqrt(2) / fan_in: the square root covers",
        only=True,
    )
    # look-alikes: another scale names its own, not this one
    for other, words in (("lecun_scale", "sqrt(1 / fan_in)"), ("he_fan_out", "fan_out")):
        cause = graded(other).cause("test_init_like_08")
        assert words in cause and "covers the 2" not in cause, cause


@pytest.mark.slow
def test_layers_in_dict_order_fail_on_sorted_keys(graded):
    # `for layer in params.values()`: right on params built 'layer1', 'layer2', ..., wrong on
    # the same params as jax.tree.map returns them ('layer1', 'layer10', 'layer11', ...)
    g = graded("dict_order")
    message = g.assert_fails(
        "test_forward_order",
        "as jax.tree.map(lambda a: a, params) returns them",
        "with the keys in numeric order ('layer1', 'layer2', ..., 'layer12') the same params "
        "gave the right logits",
        "params[f'layer{i}']",  # the fix
        cause=("in the order the params dict holds its keys", "params.values()"),
        only=True,
    )
    assert "in string order" not in message


@pytest.mark.slow
def test_leaves_unpacked_in_dict_order_are_not_called_layer_order(graded):
    # the layers visited by number, each layer's `w, b = layer.values()`: on sorted keys its
    # w and b swap, not its layers, so the order check fails without the dict-order cause
    g = graded("unpacked_values")
    g.assert_statuses(failed={"test_forward_order", "test_forward_jit", "test_forward_pure"})
    g.assert_fails(
        "test_forward_order",
        "as jax.tree.map(lambda a: a, params) returns them",
        not_cause=("in the order the params dict holds its keys",),
    )
    assert g.cause("test_forward_order") == ""


@pytest.mark.slow
def test_a_loop_that_starts_late_is_named_on_two_depths(graded):
    # `range(2, n_layers + 1)`: layer1 is never applied, on the check's depth and one deeper
    g = graded("starts_late")
    for check_id in ("test_forward_lesson", "test_forward_depths", "test_forward_pairing"):
        g.assert_fails(check_id, cause="never applies the first layer")
    assert "and of 4 square layers of width 6" in g.message("test_forward_lesson")


@pytest.mark.slow
def test_unchained_layers_are_not_called_a_loop_that_starts_late(graded):
    # every layer applied to the original x (`h = x @ w + b`): the output is the last layer's
    # alone, what a loop that starts late gives on two layers but not on three
    g = graded("unchained_layers")
    for check_id in ("test_forward_lesson", "test_forward_depths", "test_forward_pairing"):
        g.assert_fails(
            check_id,
            cause="applies every layer to the original x",
            not_cause=("never applies the first layer", "starts one layer"),
        )


@pytest.mark.slow
def test_a_return_inside_the_loop_is_named_and_not_as_a_loop_that_stops_early(graded):
    # `return h` indented into the loop: the first layer's ReLU activations at every depth
    g = graded("return_in_loop")
    g.assert_fails(
        "test_forward_depths", cause="returns after the first layer", not_cause=("stops one layer",)
    )
    g.assert_fails("test_forward_lesson", cause="returns after the first layer")


@pytest.mark.slow
def test_a_he_uniform_init_fails_the_distribution_alone(graded):
    """He-uniform weights, uniform on [-sqrt(6 / fan_in), sqrt(6 / fan_in)]: He's std, so
    init_mlp is initialised as 08's by its statistics; its 57,984 weights over their layer's std
    have none beyond +-2 (N(0, 1): 4.55%) and kurtosis 1.80 (3): bounded draws, said as seen."""
    g = graded("he_uniform")
    message = g.assert_fails(
        "test_init_normal",
        "57,984 weights",
        "share beyond +-2 0,",
        "off: share beyond +-2, kurtosis",
        cause=("none of the 57,984 values lies beyond +-2", "a bounded distribution"),
        only=True,
    )
    assert "jax.random" not in message  # the fix leads to the normal, it names no sampler


@pytest.mark.slow
def test_relu_on_each_layers_input_is_named(graded):
    # held-out case h_ex3b: relu(x) @ w + b per layer (the raw input clipped too, no ReLU after
    # the last), confirmed on the check's input and the square probes
    g = graded("relu_before_layer")
    g.assert_fails(
        "test_forward_lesson", cause="applies ReLU to each layer's input, the raw x included"
    )
    # look-alikes: a ReLU on the logits, tanh in the hidden layers
    for other in ("relu_on_logits", "tanh_hidden"):
        assert "each layer's input" not in graded(other).cause("test_forward_lesson"), other


@pytest.mark.slow
def test_weights_that_are_all_zero_are_not_called_a_shared_key(graded):
    # sqrt(2 // n_in) is 0: every layer's weights are zeros, each drawn with its own key. The
    # layers are alike because they are zero, not because of a key ("the same key" was said),
    # and the normal check judges zeros without crashing (it raised ZeroDivisionError)
    g = graded("he_floor_division")
    g.assert_statuses(failed={"test_init_like_08", "test_init_normal", "test_init_key_use"})
    assert g.status("test_init_keys") == "passed"
    assert g.status("test_init_normal") == "failed"
    assert "raised" not in g.message("test_init_normal")
    assert "kurtosis nan" in g.message("test_init_normal")
    assert not g.cause("test_init_normal")  # zeros are no "bounded distribution"
    assert g.status("test_init_like_08") == "failed"
