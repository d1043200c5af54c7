"""The 08_mlp suite graded against the solution, the stub, an alternative solution and
broken submissions, each in its own subprocess."""

import pytest
from harness import lesson_files

from grader.catalog import read_suite

LESSON = "08_mlp"
# the checks of train's loop, gated on its accuracy
LOOP_CHECKS = {
    "test_train_reshuffles",
    "test_train_carries_opt_state",
    "test_train_defaults_and_key",
    "test_train_key_reuse",
}
TRAIN_CHECKS = {"test_train_accuracy", "test_train_history"} | LOOP_CHECKS
MAX_SCORE = 27
HIDDEN = {"test_train_reshuffles"}
# gated on train_step's one-step values (the purity check per case: accuracy's half is earned)
STEP_GATED = {
    "test_train_step_trajectory",
    "test_train_step_compiles_once",
    "test_step_accuracy_pure",
}


def test_suite_manifest():
    spec = read_suite(lesson_files(LESSON).suite)
    assert spec.max_score == MAX_SCORE
    assert {c.id for c in spec.checks if c.visibility == "hidden"} == HIDDEN
    assert spec.timeout_s == 240


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    g = graded("solution")
    g.assert_full_marks()
    metrics = [r for r in g.records if r["type"] == "metric" and r["name"] == "test_accuracy"]
    assert metrics and metrics[0]["value"] >= 0.95


@pytest.mark.slow
@pytest.mark.parametrize("name", ["alternative", "fori_loop_train", "class_scan_epoch"])
def test_alternative_solutions_pass(graded, name):
    # fori_loop_train: train_step runs inside lax.fori_loop (traced once per epoch shape),
    # loss_fn one-hot encodes the lesson's 10 classes; class_scan_epoch: lax.scan over the
    # epoch's batches, a class behind the module names, optax's integer-label loss.
    graded(name).assert_full_marks()


@pytest.mark.slow
def test_stub_fails_every_check(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    # `optimizer = None` is the stub's "not done" marker: named as such, not a crash.
    assert "None (still the TODO)" in stub.message("test_optimizer_is_adam")
    others = {k: r for k, r in stub.results.items() if k != "test_optimizer_is_adam"}
    assert all(r["not_implemented"] for r in others.values())


@pytest.mark.slow
def test_xavier_scale_and_one_key_for_all_layers(graded):
    g = graded("xavier_reuse")
    # train calls that init_params: the key it reuses is reused in train's run too
    g.assert_statuses(
        failed={
            "test_init_he_statistics",
            "test_init_normal",
            "test_init_keys",
            "test_train_key_reuse",
        }
    )
    assert g.results["test_init_normal"]["blocked_by"] == "test_init_he_statistics"
    assert "sqrt(1 / fan_in)" in g.message("test_init_he_statistics")
    assert "0.71 x the He value" in g.message("test_init_he_statistics")
    assert "key-reuse checker" in g.message("test_init_keys")
    assert "08_mlp.py, line" in g.message("test_init_keys")


@pytest.mark.slow
def test_naive_softmax_overflows_and_sum_is_not_mean(graded):
    g = graded("naive_softmax_sum")
    g.assert_statuses(
        failed={
            "test_loss_value",
            "test_loss_stable",
            "test_loss_gradients",
            "test_train_step_values",
        }
        | STEP_GATED
        | {"test_forward_loss_jit_pure"}
    )
    for check_id in STEP_GATED - {"test_step_accuracy_pure"} | {"test_forward_loss_jit_pure"}:
        assert g.results[check_id]["blocked_by"], check_id
    pure = g.results["test_step_accuracy_pure"]  # gated per case: accuracy's half is earned
    assert pure["fraction"] == pytest.approx(0.5)
    assert "fix the values first" in pure["message"]
    assert "summed over the batch" in g.message("test_loss_value")
    assert "NaN" in g.message("test_loss_stable")
    assert "jax.nn.log_softmax" in g.message("test_loss_stable")
    assert "summed over the batch" in g.message("test_loss_gradients")
    # the step is Adam's on the student's own loss, and forward is right: loss_fn is named
    assert "loss_fn itself differs" in g.cause("test_train_step_values")


@pytest.mark.slow
def test_train_step_not_jitted(graded):
    g = graded("not_jitted")
    g.assert_statuses(failed={"test_train_step_compiles_once"} | TRAIN_CHECKS)
    assert "a plain Python function" in g.message("test_train_step_compiles_once")
    assert "@jax.jit" in g.message("test_train_step_compiles_once")
    assert all(g.results[k]["not_implemented"] for k in TRAIN_CHECKS)


@pytest.mark.slow
def test_train_step_retraces_every_call(graded):
    g = graded("retracing")
    g.assert_statuses(failed={"test_train_step_compiles_once"} | TRAIN_CHECKS)
    message = g.message("test_train_step_compiles_once")
    assert "traced 1 more time(s)" in message
    assert "applied inside train_step" in message


@pytest.mark.slow
def test_no_reshuffle_array_history_and_wrong_learning_rate(graded):
    g = graded("no_reshuffle")
    g.assert_statuses(
        failed={
            "test_optimizer_is_adam",
            "test_train_step_values",
            "test_train_history",
            "test_train_reshuffles",
        }
        | STEP_GATED
    )
    assert "3 x Adam's at 1e-3" in g.message("test_optimizer_is_adam")
    assert "not optax.adam(1e-3)" in g.message("test_train_step_values")
    assert "Python floats" in g.message("test_train_history")
    assert "same permutation in two epochs" in g.message("test_train_reshuffles")


@pytest.mark.slow
def test_reshuffling_is_seen_through_lax_loops(graded):
    # the batches train_step runs inside lax.fori_loop are observed by their values
    g = graded("fori_loop_same_order")
    # one shuffle key for every epoch: the same order, and that key consumed again
    g.assert_statuses(failed={"test_train_reshuffles", "test_train_key_reuse"})
    assert "same permutation in two epochs" in g.message("test_train_reshuffles")
    assert "jax.random.permutation(shuffle_key" in g.message("test_train_key_reuse")


@pytest.mark.slow
def test_stale_opt_state_shows_over_several_steps(graded):
    g = graded("stale_opt_state")
    assert g.status("test_train_step_values") == "passed"  # one step is exact
    assert g.status("test_train_step_trajectory") == "failed"
    message = g.message("test_train_step_trajectory")
    assert "returns the opt_state it was given" in message
    assert "step 2 of 4" in message
    # train carries the state it gets back: the count is stuck because train_step returns the
    # old state, which the loop check says instead of blaming the loop
    g.assert_fails(
        "test_train_carries_opt_state",
        "observed: [0, 0, 0]",
        cause="whose step count has not advanced",
        not_cause=("is dropped",),
    )


@pytest.mark.slow
def test_a_train_loop_that_drops_the_opt_state(graded):
    # the accuracy target is still reached: only the observed loop shows the mistake
    g = graded("drops_opt_state")
    g.assert_statuses(failed={"test_train_carries_opt_state"})
    message = g.message("test_train_carries_opt_state")
    assert "observed: [0, 0, 0]" in message
    assert "the opt_state train_step returns is dropped" in message


@pytest.mark.slow
def test_a_train_loop_that_starts_a_new_opt_state_every_epoch(graded):
    # spec revision 2: "one optimizer state is carried through every step of every epoch";
    # within an epoch the count advances, so only the epochs' first steps show it
    g = graded("opt_state_per_epoch")
    g.assert_statuses(failed={"test_train_carries_opt_state"})
    message = g.assert_fails(
        "test_train_carries_opt_state",
        "at the first train_step of each epoch",
        "observed: [0, 0, 0]",
        cause="a new optimizer state every epoch",
    )
    assert "expected: [0, 3, 6]" in message


@pytest.mark.slow
def test_trace_time_counter_is_impure(graded):
    g = graded("trace_counter")
    g.assert_statuses(failed={"test_step_accuracy_pure"})
    result = g.results["test_step_accuracy_pure"]
    assert result["fraction"] == pytest.approx(0.5)  # accuracy is pure; train_step is not
    assert "N_TRACES" in result["message"]
    assert "happens once, not once per call" in result["message"]


@pytest.mark.slow
def test_one_hot_width_is_named(graded):
    g = graded("onehot_width")
    values = {
        "test_loss_value",
        "test_loss_stable",
        "test_loss_gradients",
        "test_train_step_values",
        "test_train_accuracy",
    }
    gated = {"test_forward_loss_jit_pure", "test_train_step_compiles_once"}
    g.assert_statuses(failed=values | gated | STEP_GATED | {"test_train_history"} | LOOP_CHECKS)
    for check_id in values - {"test_train_accuracy", "test_train_step_trajectory"}:
        assert "your one-hot has 5 columns, the logits have 10" in g.message(check_id), check_id
    assert "your one-hot has 256 columns, the logits have 10" in g.message("test_train_accuracy")
    for check_id in gated | LOOP_CHECKS:
        assert g.results[check_id]["blocked_by"], check_id


@pytest.mark.slow
def test_train_acc_measured_on_the_test_set(graded):
    g = graded("train_acc_on_test")
    g.assert_statuses(failed={"test_train_history"})
    assert "the training accuracy was measured on the test set" in g.cause("test_train_history")


@pytest.mark.slow
def test_default_sizes_and_trained_shapes_are_the_lessons(graded):
    # init_params(key) with the signature's default sizes, and the network train builds: the
    # spec fixes both at the lesson's (784 / x_train.shape[1], 256, 128, 10)
    g = graded("sizes_off")
    g.assert_statuses(
        failed={
            "test_init_shapes",
            "test_init_normal",
            "test_init_keys",
            "test_train_accuracy",
        }
        | LOOP_CHECKS
    )
    assert "init_params(key)" in g.message("test_init_shapes")
    assert "(x_train.shape[1], 256, 128, 10)" in g.message("test_train_accuracy")
    for check_id in {"test_init_normal", "test_init_keys"} | LOOP_CHECKS:  # after the values
        assert g.results[check_id]["blocked_by"], check_id


@pytest.mark.slow
def test_history_loss_is_the_mean_batch_loss(graded):
    g = graded("loss_per_example")
    g.assert_statuses(failed={"test_train_history"})
    message = g.message("test_train_history")
    assert "history[-1]['loss']" in message
    assert "x that mean" in message  # how far from the mean batch loss; no cause guessed
    assert g.cause("test_train_history") == ""


@pytest.mark.slow
def test_a_default_other_than_the_signatures(graded):
    # train(key, data) must run the spec's n_epochs=10: the digits runs pass n_epochs, so only
    # the run with the defaults against the explicit one sees it
    g = graded("default_epochs")
    g.assert_statuses(failed={"test_train_defaults_and_key"})
    message = g.message("test_train_defaults_and_key")
    assert "the defaults of n_epochs or batch_size differ from the lesson's" in message
    assert "(11 epochs in the history)" in message
    assert "def train(key, data, n_epochs=10, batch_size=128)" in message


@pytest.mark.slow
def test_the_init_key_used_again_for_the_first_shuffle(graded):
    g = graded("init_key_reused")
    g.assert_statuses(failed={"test_train_key_reuse"})
    message = g.message("test_train_key_reuse")
    assert "JAX's key-reuse checker saw one key consumed twice" in message


@pytest.mark.slow
def test_an_epoch_order_from_numpys_global_rng(graded):
    # every epoch still has a new permutation (test_train_reshuffles passes): only the same
    # key after the global RNG moved shows that the key does not decide the run
    g = graded("numpy_order")
    g.assert_statuses(failed={"test_train_defaults_and_key"})
    message = g.message("test_train_defaults_and_key")
    assert "not decided by its key alone" in g.cause("test_train_defaults_and_key")
    assert "twice with jax.random.key(0)" in message


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fixture", "check", "words"),
    [
        ("logsumexp_batch_axis", "test_loss_value", "log_softmax taken over axis 0"),
        ("label_columns", "test_loss_value", "log_softmax(logits)[:, y]"),
        ("lr_applied_twice", "test_train_step_values", "the learning rate was applied a second"),
    ],
)
def test_loss_axis_label_columns_and_a_second_learning_rate_are_named(
    graded, fixture, check, words
):
    g = graded(fixture)
    assert g.results[check]["status"] == "failed", check
    assert words in g.cause(check), g.message(check)


@pytest.mark.slow
def test_checks_downstream_of_a_wrong_loss_point_to_loss_fn(graded):
    g = graded("label_columns")
    assert "loss_fn's own value on this batch" in g.cause("test_loss_gradients")
    assert "on the gradients of your loss_fn" in g.cause("test_train_step_values")
    assert "one train_step already gives other params" in g.cause("test_train_accuracy")
    # the label_columns loss is right where every row's logits are the same (the stability
    # check's): the batch-axis one is not
    stable = graded("logsumexp_batch_axis")
    assert "on a batch of ordinary logits" in stable.cause("test_loss_stable")


@pytest.mark.slow
def test_an_accuracy_that_counts_the_right_rows_is_named_where_it_shows(graded):
    # a count, confirmed on two sizes: batches of 8 and 12 rows, the training and test rows
    g = graded("accuracy_count")
    g.assert_statuses(failed={"test_accuracy", "test_train_history", "test_step_accuracy_pure"})
    for check in ("test_accuracy", "test_train_history"):
        assert "the NUMBER of right rows" in g.cause(check), g.message(check)
    assert "6 and 9" in g.message("test_accuracy")
    assert "rounded down" not in g.cause("test_accuracy")


@pytest.mark.slow
def test_an_accuracy_floored_by_an_integer_division_is_named(graded):
    # held-out case h08c: 0 for 6 of 8 right and 1 for 12 of 12, both integers
    g = graded("accuracy_floordiv")
    g.assert_statuses(failed={"test_accuracy", "test_train_history", "test_step_accuracy_pure"})
    assert "0 and 1, whole numbers (dtype int32)" in g.message("test_accuracy")
    assert "the fraction is rounded down to a whole number" in g.cause("test_accuracy")
    assert "NUMBER" not in g.cause("test_accuracy")


@pytest.mark.slow
def test_a_bias_after_the_relu_is_named_and_the_checks_downstream_point_at_forward(graded):
    g = graded("bias_after_relu")
    g.assert_fails(
        "test_forward_values",
        cause="the bias is added after the ReLU",
        not_cause=("last layer", "linear"),
    )
    # the step is Adam's on the student's loss, whose forward is wrong: forward is named, not
    # loss_fn alone; the history records the student's own (right) accuracy of a wrong forward
    for check_id in ("test_train_step_values", "test_train_history", "test_loss_gradients"):
        cause = g.cause(check_id)
        assert "forward(params, x)" in cause and "other logits" in cause, (check_id, cause)
        assert "loss_fn itself" not in cause and "test set" not in cause, (check_id, cause)
    assert g.cause("test_loss_value") == ""


@pytest.mark.slow
def test_a_train_step_that_drops_apply_updates_result(graded):
    g = graded("step_drops_update")
    for check_id in ("test_train_step_values", "test_train_accuracy"):
        cause = g.cause(check_id)
        assert "the update is not applied" in cause, (check_id, cause)
        assert "sign" not in cause and "loss_fn" not in cause, (check_id, cause)


@pytest.mark.slow
def test_an_init_scale_is_named_only_when_every_layer_fits_it(graded):
    g = graded("glorot_init")
    # the distribution's check stands on the scale: a wrong scale costs it behind the gate
    g.assert_statuses(failed={"test_init_he_statistics", "test_init_normal"})
    assert g.results["test_init_normal"]["blocked_by"] == "test_init_he_statistics"
    assert "Glorot/Xavier scale" in g.cause("test_init_he_statistics")
    # half the He scale: nearer Glorot's than He's on layer1, but not Glorot on every layer
    half = graded("he_half")
    half.assert_statuses(failed={"test_init_he_statistics", "test_init_normal"})
    assert "0.50 x the He value" in half.message("test_init_he_statistics")
    assert half.cause("test_init_he_statistics") == ""


@pytest.mark.slow
def test_a_he_uniform_init_fails_the_distribution_alone(graded):
    """He-uniform weights, uniform on [-sqrt(6 / fan_in), sqrt(6 / fan_in)]: He's std, so the
    shapes and the statistics pass; 234,752 weights over sqrt(2 / fan_in) have none beyond +-2
    (N(0, 1): 4.55%) and kurtosis 1.80 (3), and the check says what it saw, bounded draws."""
    g = graded("he_uniform")
    message = g.assert_fails(
        "test_init_normal",
        "234,752 weights",
        "share beyond +-2 0,",
        "off: share beyond +-2, kurtosis",
        "range [-1.732, 1.732]",
        cause=("none of the 234,752 values lies beyond +-2", "a bounded distribution"),
        only=True,
    )
    assert "jax.random" not in message  # the fix leads to the normal, it names no sampler


@pytest.mark.slow
def test_jax_he_normal_initializer_passes_the_distribution(graded):
    """jax.nn.initializers.he_normal draws a truncated normal (cut at +-2, rescaled to He's
    std): the library's He normal init, whose tails (share beyond +-2 0.035, kurtosis 2.37)
    the check accepts beside N(0, 1)'s."""
    graded("he_normal_init").assert_full_marks()


@pytest.mark.slow
def test_a_loss_never_averaged_is_named_one_loss_per_example(graded):
    # held-out case h08b: the per-example cross-entropies, shape (8,)
    g = graded("loss_never_averaged")
    assert g.status("test_loss_value") == "failed"
    assert "(8,)" in g.message("test_loss_value")
    assert "one loss per example, never averaged" in g.cause("test_loss_value")
    for other in ("label_columns", "logsumexp_batch_axis", "naive_softmax_sum"):
        assert "per example" not in graded(other).cause("test_loss_value"), other


@pytest.mark.slow
def test_raw_gradients_applied_in_place_of_the_updates(graded):
    # optax.apply_updates(params, grads): the new params are params + grads on both batches,
    # and the checks downstream say the same one step is run on every batch
    g = graded("apply_grads_not_updates")
    g.assert_fails(
        "test_train_step_values",
        cause="the new params are params + grads: the raw gradients were applied",
        not_cause=("sign", "learning rate", "loss_fn", "not applied"),
    )
    for check_id in ("test_train_accuracy", "test_train_history"):
        g.assert_fails(
            check_id,
            cause=("one train_step already gives other params", "params + grads"),
        )
    # the run ends in NaN params: the history's loss cannot be held to their loss
    assert "a finite loss" in g.message("test_train_history")
    # look-alikes: other wrong steps (the update scaled by the learning rate again; the
    # update's result dropped) are not said to be the raw gradients
    for name, words in (
        ("lr_applied_twice", "the learning rate was applied a second"),
        ("step_drops_update", "the update is not applied"),
    ):
        graded(name).assert_fails(
            "test_train_step_values", cause=words, not_cause=("params + grads",)
        )


@pytest.mark.slow
def test_labels_left_in_place_while_the_rows_shuffle_are_named(graded):
    # held-out case h08c: x_train[order] with y_train unpermuted; the labels train_step receives
    # are the dataset's in order while the rows are shuffled
    g = graded("labels_not_shuffled")
    g.assert_fails(
        "test_train_accuracy",
        cause=("came with another row's label", "the labels come in the dataset's order"),
    )
    # a look-alike that also fails the accuracy: its batches pair rows with their labels
    cause = graded("apply_grads_not_updates").cause("test_train_accuracy")
    assert "another row's label" not in cause, cause


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variant", "words"),
    [
        ("softmax_twice", "the cross-entropy of softmax(logits) taken as logits"),
        ("sigmoid_bce", "the binary cross-entropy of sigmoid(logits) against the one-hot"),
    ],
)
def test_another_loss_is_named_by_its_formula(graded, variant, words):
    # held-out cases h08a, h08b of a later set: a softmax before the cross-entropy, and a
    # sigmoid binary cross-entropy, each confirmed on two batch sizes
    graded(variant).assert_fails("test_loss_value", cause=words)
    for other in ("loss_class_mean", "softmax_twice", "sigmoid_bce"):
        if other != variant:
            assert words not in graded(other).cause("test_loss_value"), other


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["batch_order_shuffled", "rows_shuffled_within_batches"])
def test_batches_that_always_hold_the_same_rows_are_named(graded, variant):
    # fresh keys every epoch, yet no row ever moves to another batch: no "same key" cause
    g = graded(variant)
    g.assert_statuses(failed={"test_train_reshuffles"})
    assert "each batch always holds the same rows" in g.cause("test_train_reshuffles")
    assert "key" not in g.cause("test_train_reshuffles")


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["no_reshuffle", "fori_loop_same_order"])
def test_one_permutation_for_every_epoch_names_no_batch_cause(graded, variant):
    g = graded(variant)
    assert "same permutation in two epochs" in g.message("test_train_reshuffles")
    assert "same rows" not in g.message("test_train_reshuffles")


@pytest.mark.slow
def test_weights_that_are_all_zero_are_not_called_a_shared_key(graded):
    # sqrt(2 // fan_in) is 0: layer2 and layer3 are alike because they are zeros, each drawn
    # with its own key ("drew their weights from the same key" would be a wrong cause)
    g = graded("he_floor_division")
    # (it fails on another ground: zeros do not change with the key, which is what it says)
    assert "drew their weights from the same key" not in g.message("test_init_keys")
    assert "changes with the key" in g.message("test_init_keys")
    assert g.status("test_init_he_statistics") == "failed"
    assert "raised" not in g.message("test_init_normal")
