"""The ex1_dropout suite graded against the solution, the stub, an alternative solution
and broken submissions (each in its own subprocess)."""

import pytest
from harness import lesson_files

from grader.catalog import read_suite

LESSON = "ex1_dropout"
MAX_SCORE = 25
HIDDEN = {"test_dropout_independent", "test_dropout_pure", "test_forward_logits"}
# the broken fixtures leave compare_dropout unwritten (it trains twice)
COMPARE = {
    "test_compare",
    "test_compare_defaults_and_key",
    "test_compare_trained",
    "test_compare_without_ignores_rate",
    "test_compare_test_set",
    "test_compare_same_start",
}
# Properties of dropout, judged once its values (rate and scale) are right.
DROPOUT_GATED = {
    "test_dropout_shape",
    "test_dropout_independent",
    "test_dropout_key_use",
    "test_dropout_jit",
}


def test_suite_manifest():
    spec = read_suite(lesson_files(LESSON).suite)
    assert spec.max_score == MAX_SCORE
    assert {c.id for c in spec.checks if c.visibility == "hidden"} == HIDDEN
    assert all("?" in c.hint for c in spec.checks)  # hints are leading questions


def _unfinished(graded_folder, check_ids):
    """Checks of the functions a partly done fixture leaves as stubs: not attempted."""
    for check_id in check_ids:
        assert graded_folder.results[check_id]["not_implemented"], check_id
    return set(check_ids)


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_full_marks()


@pytest.mark.slow
def test_alternative_solution_passes(graded):
    graded("alternative").assert_full_marks()


@pytest.mark.slow
@pytest.mark.parametrize("idiom", ["flax_scan", "class_fori", "flag_helper", "lockstep"])
def test_correct_alternatives_in_other_idioms_pass(graded, idiom):
    """flax_scan: flax.linen.Dropout applied functionally, epochs as a jitted lax.scan over
    batches; class_fori: a Dropout class with lax.select, a split chain, einsum, a
    lax.fori_loop over batches; flag_helper: both runs through one helper whose flag is
    forward_with_dropout's train (rate passed to both), each run shuffling with a key of its
    own; lockstep: both runs in one jitted step (rate static), the same batches."""
    graded(idiom).assert_full_marks()


def _dropout_gated(g, pure_fraction=0.5):
    """dropout's wrong values block its properties; its purity case (half the check) too."""
    for check_id in DROPOUT_GATED:
        assert g.results[check_id]["blocked_by"] in {"test_dropout_rate", "test_dropout_scale"}
        assert "values are wrong" in g.message(check_id)
    pure = g.results["test_dropout_pure"]
    assert pure["fraction"] == pytest.approx(pure_fraction)
    assert "this property is judged once the values are right" in pure["message"]
    return DROPOUT_GATED | {"test_dropout_pure"}


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_rate_read_as_keep_probability(graded):
    g = graded("keep_probability")
    g.assert_statuses(
        failed={"test_dropout_rate", "test_dropout_scale", "test_forward_masks"}
        | _dropout_gated(g, pure_fraction=0.0)  # forward_with_dropout's masks are wrong too
        | _unfinished(g, COMPARE)
    )
    masks = g.message("test_forward_masks")  # rate=0.2: each layer drops 80%
    assert "rate=0.2" in masks and "read as the KEEP probability" in masks
    rate = g.message("test_dropout_rate")
    assert "about 70% of units were zeroed with rate=0.3" in rate
    assert "rate is the DROP probability" in rate
    assert "KEEP probability" in rate
    assert "1 / rate, the keep-probability convention" in g.message("test_dropout_scale")


@pytest.mark.slow
def test_one_key_for_both_dropout_layers(graded):
    g = graded("one_key")
    g.assert_statuses(
        failed={"test_forward_key_reuse", "test_forward_masks", "test_dropout_pure"}
        | _unfinished(g, COMPARE)
    )
    pure = g.results["test_dropout_pure"]  # forward_with_dropout's case stands on its masks
    assert pure["fraction"] == pytest.approx(0.5)
    assert "forward_with_dropout: this property is judged once" in pure["message"]
    reuse = g.message("test_forward_key_reuse")
    assert "key-reuse checker" in reuse
    assert "line" in reuse and "bernoulli" in reuse  # points at the student's draw
    masks = g.message("test_forward_masks")
    assert "SAME mask" in masks
    assert "The same key (or the same subkey) was used for both dropout layers" in masks


@pytest.mark.slow
def test_survivors_not_rescaled(graded):
    g = graded("no_rescale")
    g.assert_statuses(
        failed={"test_dropout_scale", "test_dropout_expectation"}
        | _dropout_gated(g)
        | _unfinished(g, COMPARE)
    )
    assert "not rescaled" in g.message("test_dropout_scale")
    assert "non-inverted" in g.message("test_dropout_scale")
    assert "mean shrank by 1 - rate" in g.message("test_dropout_expectation")


@pytest.mark.slow
def test_compare_reports_accuracies_as_metrics(graded):
    metrics = {r["name"]: r["value"] for r in graded("solution").records if r["type"] == "metric"}
    assert set(metrics) == {"test accuracy with dropout", "test accuracy without dropout"}
    assert all(0.85 <= v <= 1.0 for v in metrics.values())


@pytest.mark.slow
def test_a_numpy_salt_drawn_at_trace_time_is_seen_once_np_random_moves(graded):
    g = graded("numpy_salt")
    g.assert_statuses(
        failed={"test_forward_key_use", "test_dropout_pure"} | _unfinished(g, COMPARE)
    )
    # a call that traces anew (positional rate and train) draws from np.random: seen there too
    assert "NumPy's global RNG (`np.random`) was drawn from" in g.message("test_dropout_pure")
    message = g.message("test_forward_key_use")
    assert "the same key after NumPy's global RNG moved" in message
    assert "under jax.jit" in message and "baked into the compiled function" in message


@pytest.mark.slow
def test_a_module_counter_in_forward_with_dropout_is_impure(graded):
    g = graded("layer_counter")
    g.assert_statuses(failed={"test_dropout_pure"} | _unfinished(g, COMPARE))
    pure = g.results["test_dropout_pure"]
    assert pure["fraction"] == pytest.approx(0.5)  # dropout itself is pure
    assert "forward_with_dropout: " in pure["message"]
    assert "the global `DROPOUT_CALLS`['applied'] changed" in pure["message"]


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["rate_one_nan", "rate_one_zero_division"])
def test_dropout_undefined_at_rate_one_gets_full_marks(graded, variant):
    """The spec scales survivors by 1 / (1 - rate), which has no value at rate=1.0: a
    dropout that returns NaN there (x * mask / (1 - rate)) or raises ZeroDivisionError
    (the scale computed in Python) is correct, and no check may call it there."""
    g = graded(variant)
    g.assert_full_marks()


@pytest.mark.slow
def test_a_rate_not_passed_on_to_the_dropout_layers(graded):
    g = graded("fixed_rate")
    g.assert_statuses(failed={"test_forward_masks", "test_dropout_pure"} | _unfinished(g, COMPARE))
    message = g.message("test_forward_masks")
    assert "rate=0.2" in message and "the rate argument is not passed on to dropout" in message
    pure = g.results["test_dropout_pure"]  # forward_with_dropout's case stands on its masks
    assert pure["fraction"] == pytest.approx(0.5)


@pytest.mark.slow
def test_defaults_are_the_signatures(graded):
    # forward_with_dropout(params, x, key) must train with rate 0.5, as its signature says
    g = graded("eval_by_default")
    g.assert_statuses(failed={"test_forward_masks", "test_dropout_pure"})
    message = g.message("test_forward_masks")
    assert "rate and train left at their defaults" in message
    assert "nothing is dropped, as with train=False" in message
    assert "def forward_with_dropout(params, x, key, rate=0.5, train=True)" in message
    pure = g.results["test_dropout_pure"]  # gated per function: dropout's half is earned
    assert pure["fraction"] == pytest.approx(0.5)


@pytest.mark.slow
def test_compare_with_a_default_other_than_the_signatures(graded):
    g = graded("compare_defaults")
    g.assert_statuses(failed={"test_compare_defaults_and_key"})
    message = g.message("test_compare_defaults_and_key")
    assert "the defaults of rate or n_epochs differ from the lesson's" in message
    assert "def compare_dropout(key, data, rate=0.5, n_epochs=10)" in message


@pytest.mark.slow
def test_compare_returning_jax_scalars(graded):
    # the spec's "(floats; ...)": the defaults check stands on test_compare
    g = graded("compare_arrays")
    g.assert_statuses(failed=COMPARE)
    assert g.results["test_compare_defaults_and_key"]["blocked_by"] == "test_compare"
    assert g.results["test_compare_without_ignores_rate"]["blocked_by"] == "test_compare"
    assert "a Python float test accuracy" in g.message("test_compare")


@pytest.mark.slow
def test_compare_whose_run_without_dropout_uses_rate(graded):
    # both runs train through forward_with_dropout with the rate (the flag is never used):
    # on digits the accuracies stay plausible, but after one epoch the run "without" dropout
    # is 0.50 with rate=0.5 and 0.76 with rate=0.0
    g = graded("without_dropout_uses_rate")
    g.assert_statuses(failed={"test_compare_without_ignores_rate"})
    message = g.message("test_compare_without_ignores_rate")
    assert "0.5028 with rate=0.5" in message and "0.7639 with rate=0.0" in message
    assert "the accuracy of the run without dropout changes with rate" in g.cause(
        "test_compare_without_ignores_rate"
    )


@pytest.mark.slow
def test_compare_whose_runs_share_params_names_the_shared_state(graded):
    # params and the Adam state made once, before both runs: the run without dropout goes
    # on from what the dropout run trained, so its accuracy moves with rate although rate is
    # never passed to it; the cause says both ways rate can reach it, and the check of the
    # initial params fails as well
    g = graded("runs_share_params")
    g.assert_statuses(failed={"test_compare_without_ignores_rate", "test_compare_same_start"})
    cause = g.cause("test_compare_without_ignores_rate")
    assert "through params or an optimizer state that the dropout run trained" in cause


@pytest.mark.slow
def test_compare_shuffling_with_numpy_is_not_blamed_on_rate(graded):
    # np.random.permutation for the batches: the key check names the global RNG; the rate
    # check's runs may differ by the shuffles alone, and it never says rate reached the run
    g = graded("numpy_shuffle")
    assert g.status("test_compare_defaults_and_key") == "failed"
    assert "NumPy's or Python's global RNG" in g.cause("test_compare_defaults_and_key")
    assert "changes with rate" not in g.message("test_compare_without_ignores_rate")


@pytest.mark.slow
def test_a_result_that_moves_with_a_call_counter_is_not_blamed_on_the_global_rng(graded):
    # a module-level counter folded into the key: two calls with the same arguments differ,
    # and seeding the global RNGs alike does not make them agree
    g = graded("call_counter_key")
    g.assert_fails(
        "test_compare_defaults_and_key",
        cause="something besides the key and the arguments",
        not_cause=("global RNG, which",),
    )


@pytest.mark.slow
def test_compare_measuring_another_network_than_the_trained_one(graded):
    # on digits the accuracy of forward with the last bias negated stays plausible; on zero
    # inputs of one label the trained network's is 1.0 and the negated bias's 0.0
    g = graded("eval_minus_bias")
    g.assert_statuses(failed={"test_compare_trained", "test_compare_test_set"})
    assert g.results["test_compare_test_set"]["blocked_by"] == "test_compare_trained"
    message = g.message("test_compare_trained")
    assert "the network whose accuracy is reported does not predict label 3" in message
    assert "0.0000" in message


@pytest.mark.slow
def test_a_mask_shared_by_the_rows_is_not_blamed_on_the_rate_or_scale(graded):
    # held-out case c28: a mask shared along one axis is named, not the rate or the scale
    g = graded("row_shared_mask")
    for check in ("test_dropout_rate", "test_dropout_expectation"):
        assert g.status(check) == "failed"
        assert "neither rate nor 1 - rate" not in g.message(check)
        assert "do not fit together" not in g.message(check)
        assert "the mask is shared along one axis" in g.cause(check)
    assert g.status("test_dropout_scale") == "passed"


@pytest.mark.slow
def test_a_train_default_of_false_is_named_where_nothing_else_drops_nothing(graded):
    # dropout(key, x, rate) drops nothing, dropout(key, x, rate, train=True) drops rate: the
    # default is named; a dropout that never applies its mask drops nothing either way
    g = graded("train_default_false")
    g.assert_fails("test_dropout_rate", cause="the default of train is not True")
    g = graded("mask_never_applied")
    g.assert_fails("test_dropout_rate", not_cause=("default of train",))


@pytest.mark.slow
def test_three_masks_are_put_on_the_logits_only_when_the_logits_show_it(graded):
    # dropout on the inputs and after both hidden ReLUs: three masks on the identity probe,
    # as dropout on the logits gives, but with a last bias of 10 no output is 0
    g = graded("input_and_hidden_dropout")
    g.assert_fails(
        "test_forward_masks",
        cause="three dropout masks",
        not_cause=("on the logits",),
    )
    g = graded("dropout_every_layer")
    g.assert_fails("test_forward_masks", cause="(on the logits) as well")


@pytest.mark.slow
def test_an_eval_dropout_that_scales_is_said_to_scale(graded):
    g = graded("eval_scaled")
    g.assert_fails("test_dropout_eval", cause="every unit is 0.7 times x: the output is scaled")


@pytest.mark.slow
def test_compare_measuring_on_the_training_set(graded):
    # the accuracies taken on (x_train, y_train): on digits they stay plausible, and on zero
    # inputs whose test rows carry the training label too they are 1.0 as they should be;
    # with the test rows labelled 7 instead of the training label 3 the test accuracy is 0.0
    # and the training set's 1.0
    g = graded("accuracy_on_training_set")
    g.assert_statuses(failed={"test_compare_test_set"})
    message = g.message("test_compare_test_set")
    assert "every training label 3 and every test label 7" in message
    assert "observed: 1.0000" in message
    assert "likely cause" not in message
    assert "x_test, y_test = data[2], data[3]" in message


@pytest.mark.slow
def test_compare_starting_the_runs_from_different_params(graded):
    # the init key split once per run: at rate=0.0 on one batch of 128 rows the two runs
    # are the same training from two starts, hundreds of the 10,000 test points apart
    g = graded("init_key_per_run")
    g.assert_statuses(failed={"test_compare_same_start"})
    message = g.message("test_compare_same_start")
    assert "rate=0.0, n_epochs=1) on 128 training rows" in message
    assert "test points apart" in message
    assert "likely cause" not in message
    assert "make the initial params once" in message


@pytest.mark.slow
def test_compare_results_filed_under_each_others_names_are_called_swapped(graded):
    # 'with_dropout' holds the plain run: it is one accuracy at rate=0.5 and rate=0.0, and
    # at rate=0.0 both results agree; rate never reached the run without dropout
    g = graded("compare_swapped")
    g.assert_fails(
        "test_compare_without_ignores_rate",
        cause="the two results are filed under each other's names",
        not_cause=("rate reaches that run",),
    )


@pytest.mark.slow
def test_a_dropout_that_ignores_train_is_not_blamed_on_forward(graded):
    # forward_with_dropout passes train on, but the student's own dropout drops with
    # train=False: the eval pass is the train pass, and the dropout is pointed at
    g = graded("dropout_ignores_train")
    assert g.status("test_dropout_eval") == "failed"
    g.assert_fails(
        "test_forward_eval",
        cause="your dropout with train=False is not the identity",
        not_cause=("train does not reach the dropout calls", "default train=True"),
    )


ONE_DRAW = "each call keeps every unit or drops every unit"


@pytest.mark.slow
def test_a_mask_drawn_without_a_shape_is_named_as_one_draw_per_call(graded):
    # jax.random.bernoulli(key, keep) with no shape: each call keeps every unit (scaled) or
    # zeroes every unit; the forward pass then varies with the key by a few outcomes only,
    # and keys 0 and 1 give the same one: the one draw is named, not the key
    g = graded("mask_no_shape")
    for check in ("test_dropout_rate", "test_dropout_expectation"):
        g.assert_fails(check, cause=(ONE_DRAW, "one random draw is made for the whole array"))
    message = g.assert_fails(
        "test_forward_key_use",
        "jax.random.bernoulli(key, 1.0 - rate, x.shape)",
        cause=("your dropout keeps every unit or drops every unit", "one draw per layer"),
    )
    assert "not from a key made inside the function" not in message
    g.assert_fails(
        "test_forward_masks",
        "x.shape",
        cause=("your dropout keeps every unit or drops every unit", "kept whole or zeroed whole"),
    )


@pytest.mark.slow
def test_one_draw_is_not_named_where_units_are_dropped_one_by_one(graded):
    # a mask shared along one axis; a mask never applied (every unit kept, unscaled); a
    # forward pass that splits a key of its own (its dropout right): none is all-or-nothing
    g = graded("row_shared_mask")
    for check in ("test_dropout_rate", "test_dropout_expectation"):
        g.assert_fails(check, cause="shared along one axis", not_cause=(ONE_DRAW,))
    g = graded("mask_never_applied")
    for check in ("test_dropout_rate", "test_forward_masks"):
        g.assert_fails(check, not_cause=("keeps every unit or drops every unit",))
    g = graded("forward_own_key")
    g.assert_fails(
        "test_forward_key_use",
        "not from a key made inside the function",
        cause="the result does not change with the key",
        not_cause=("keeps every unit or drops every unit", "one draw per layer"),
    )


DROPPED_KEPT = (
    "every unit is x or x / (1 - rate)",
    "the units the mask drops keep their input value",
)


@pytest.mark.slow
def test_dropped_units_left_at_x_are_named_not_a_varying_scale(graded):
    # jnp.where(mask, x / keep, x): every unit is x or x / (1 - rate), the share rate at x
    g = graded("where_keeps_dropped")
    for check in ("test_dropout_rate", "test_dropout_scale", "test_dropout_expectation"):
        g.assert_fails(
            check,
            cause=DROPPED_KEPT,
            not_cause=("not all scaled by the same factor", "default of train"),
        )


@pytest.mark.slow
def test_dropped_units_left_at_x_are_not_named_where_no_unit_is_scaled(graded):
    # a mask never applied (every unit x) and survivors not rescaled (zeros and x): neither
    # output is x and x / (1 - rate) side by side
    g = graded("mask_never_applied")
    g.assert_fails("test_dropout_rate", not_cause=("no unit is zeroed",))
    g = graded("no_rescale")
    g.assert_fails("test_dropout_scale", cause="not rescaled", not_cause=("no unit is zeroed",))
    g.assert_fails(
        "test_dropout_expectation", cause="mean shrank", not_cause=("no unit is zeroed",)
    )
