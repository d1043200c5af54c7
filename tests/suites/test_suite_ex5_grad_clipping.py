"""The ex5_grad_clipping suite graded against the solution, the stub, an alternative
solution and broken submissions (each in its own subprocess)."""

import base64

import pytest
from harness import lesson_files

from grader.catalog import read_suite

LESSON = "ex5_grad_clipping"
ALTERNATIVES = ("alternative", "manual_clip_scan", "trainer_class", "figure_legend")
MAX_SCORE = 24
HIDDEN = {
    "test_norms_exact",
    "test_plot_lines",
    "test_train_reshuffles",
    "test_train_passes_cover_the_set",
}
# two broken fixtures leave train_recording_grad_norms unwritten (its runs are the costly part)
TRAINING = {
    "test_first_step",
    "test_record_format",
    "test_norms_pre_clip",
    "test_norms_exact",
    "test_loss_decreases",
    "test_train_key_use",
    "test_lesson_mlp",
    "test_train_reshuffles",
    "test_train_passes_cover_the_set",
}
# the recording's properties stand on its first step, not on the whole trajectory: one wrong
# line in the update costs only test_loss_decreases (gates scoped to the function)
GATED_ON_FIRST_STEP = {
    "test_record_format",
    "test_norms_pre_clip",
    "test_train_key_use",
    "test_lesson_mlp",
    "test_train_reshuffles",
    "test_train_passes_cover_the_set",
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
@pytest.mark.parametrize("name", ALTERNATIVES)
def test_alternative_solutions_score_full_marks(graded, name):
    # a chain from a list, optax.global_norm, NumPy batch order, pyplot; a hand-written
    # clipping GradientTransformation, lax.scan over each epoch's batches, histories kept as
    # JAX arrays; scale_by_adam + scale, a Trainer class, one-hot cross-entropy, vdot norms
    g = graded(name)
    g.assert_full_marks()


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_clip_after_adam(graded):
    g = graded("clip_after_adam")
    g.assert_statuses(
        failed={"test_optimizer_default", "test_optimizer_arguments"} | _unfinished(g, TRAINING)
    )
    # with the lesson's defaults Adam's updates are below max_norm: indistinguishable from
    # plain Adam, and the message says both
    default = g.message("test_optimizer_default")
    assert "plain Adam" in default and "comes AFTER adam" in default
    # with learning_rate=0.5 the late clip bites, and is named exactly
    assert "the clip comes after Adam" in g.message("test_optimizer_arguments")


@pytest.mark.slow
def test_norms_recorded_after_clipping(graded):
    g = graded("norms_after_clipping")
    g.assert_statuses(failed={"test_norms_pre_clip"})
    message = g.message("test_norms_pre_clip")
    assert "the norm was taken AFTER clipping" in message
    assert "1.0000 with clip=True" in message


@pytest.mark.slow
def test_plot_with_one_curve(graded):
    g = graded("one_curve")
    g.assert_statuses(failed={"test_plot_two_series", "test_plot_lines"} | _unfinished(g, TRAINING))
    assert "1 colour" in g.message("test_plot_two_series")
    # the saved figure's lines say which list is drawn: the one cause its pixels leave open
    assert "only one of the two lists, without_clip, is drawn" in g.cause("test_plot_two_series")
    assert "no line with the values of with_clip" in g.message("test_plot_lines")


@pytest.mark.slow
def test_plot_without_a_legend(graded):
    # spec revision 2: "axes labelled, a legend naming each curve"
    g = graded("no_legend")
    g.assert_fails(
        "test_plot_lines", "the legend of the plot", "observed: no legend", "label=", only=True
    )


@pytest.mark.slow
def test_student_plot_is_attached(graded):
    for name in ("solution", "one_curve"):
        (image,) = [r for r in graded(name).records if r["type"] == "artifact"]
        assert image["id"] == "test_plot_file"
        assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")


@pytest.mark.slow
def test_dropped_optimizer_state_is_seen_in_the_trajectory(graded):
    g = graded("stale_opt_state")
    g.assert_statuses(failed={"test_loss_decreases"})  # the recording's checks keep theirs
    message = g.message("test_loss_decreases")
    assert "the optimizer state is not carried from step to step" in message
    assert "zero inputs, 12, clip=False, learning_rate=0.3" in message
    assert "sign is wrong" not in message and "never updated" not in message
    for gated in GATED_ON_FIRST_STEP:
        assert g.results[gated]["status"] == "passed"


@pytest.mark.slow
def test_batches_from_the_global_numpy_rng(graded):
    g = graded("numpy_shuffle")
    # test_norms_pre_clip compares the first norms of two runs, whose batches come from the
    # global RNG's state at each run: it fails where the two states differ (graded alone),
    # and its verdict is not what this fixture is about
    assert g.status("test_train_key_use") == "failed"
    message = g.message("test_train_key_use")
    assert "NumPy's and Python's global RNGs moved in between" in message
    # named where the raw key of the same bits, after the same reseeding, repeats the run
    assert "the run depends on NumPy's or Python's global RNG" in g.cause("test_train_key_use")
    assert "np.random.permutation" in message  # the fix
    # where the two digits runs differ at step 0: no cause (what differs is not measured),
    # and the fix points at the key
    if g.status("test_norms_pre_clip") == "failed":
        assert g.cause("test_norms_pre_clip") == ""
        assert "np.random" in g.message("test_norms_pre_clip")


@pytest.mark.slow
def test_a_state_that_changes_from_call_to_call_is_not_blamed_on_the_global_rngs(graded):
    # a module-level count of the calls folded into the key: the same key gives another run,
    # and so does the raw key after the same reseeding, so the global RNGs are not named
    g = graded("call_counter")
    g.assert_fails(
        "test_train_key_use",
        "NumPy's and Python's global RNGs moved in between",
        cause="the same key gave another run when called again",
        not_cause=("NumPy", "global RNG"),
    )


@pytest.mark.slow
def test_a_fixed_key_inside_is_named(graded):
    g = graded("fixed_key")
    g.assert_fails(
        "test_train_key_use",
        "different runs",
        cause="the key argument is not used: jax.random.key(0) and jax.random.key(1) give",
        only=True,
    )


@pytest.mark.slow
def test_clip_that_never_reaches_the_optimizer(graded):
    g = graded("clip_ignored")
    g.assert_statuses(failed={"test_loss_decreases"})
    message = g.message("test_loss_decreases")
    assert "the clip argument does not reach the optimizer" in message
    assert "the same loss at every step in both runs" in message


@pytest.mark.slow
def test_one_key_for_every_layer(graded):
    g = graded("same_key_layers")
    g.assert_statuses(failed={"test_train_key_use"})
    message = g.message("test_train_key_use")
    assert "JAX's key-reuse checker saw one key consumed twice" in message
    assert "jax.random.normal(k" in message  # the student's line


@pytest.mark.slow
def test_default_learning_rate_that_is_not_the_lessons(graded):
    g = graded("default_lr_changed")
    g.assert_statuses(failed={"test_loss_decreases"})
    message = g.message("test_loss_decreases")
    assert "without learning_rate and with learning_rate=1e-3" in message
    assert "the default learning_rate is not the lesson's 1e-3" in message


@pytest.mark.slow
def test_batches_one_row_short(graded):
    g = graded("batch_off_by_one")
    # batches of 3 rows at batch_size=4: a pass of 4 steps misses 4 of the 16 rows, so its
    # mean loss is not the whole set's (no cause there: the slice is named here)
    g.assert_statuses(failed={"test_loss_decreases", "test_train_passes_cover_the_set"})
    assert g.cause("test_train_passes_cover_the_set") == ""
    message = g.message("test_loss_decreases")
    assert "the raw gradient of a batch of 127 rows" in message
    # a run with batch_size=128 passed has 127 rows too: not the default's doing
    cause = g.cause("test_loss_decreases")
    assert "127 rows with batch_size=128 passed too" in cause, cause
    assert "an off-by-one in the batch slice" in cause and "default" not in cause


@pytest.mark.slow
def test_recorded_values_are_python_floats(graded):
    # the spec's "lists of floats": float32 NumPy scalars convert, and are judged by the
    # other checks as numbers; only the format check asks for their type
    g = graded("numpy_scalars")
    g.assert_statuses(failed={"test_record_format"})
    message = g.message("test_record_format")
    assert "Python floats" in message
    assert "float32" in message


@pytest.mark.slow
def test_one_wrong_line_in_the_update_costs_only_the_trajectory(graded):
    # params - updates (optax's updates already point downhill): the loss climbs. The
    # recording itself (its format, its pre-clip norms, its key use) is right and keeps its
    # points; before the gates were scoped, this lost 7 points for one line.
    g = graded("uphill")
    g.assert_statuses(failed={"test_loss_decreases"})
    for gated in GATED_ON_FIRST_STEP | {"test_first_step"}:
        assert g.results[gated]["status"] == "passed", gated
    # confirmed on zero inputs: the reference's run with each update subtracted
    cause = g.cause("test_loss_decreases")
    assert "as the reference's run does when each update is subtracted" in cause, cause


@pytest.mark.slow
def test_default_batch_size_that_is_not_the_lessons(graded):
    # 129 rows, one more than the lesson's batch_size: a default of 129 takes them all
    g = graded("default_batch_changed")
    g.assert_statuses(failed={"test_loss_decreases"})
    message = g.message("test_loss_decreases")
    assert "the raw gradient of a batch of 129 (every row) rows" in message
    # a run with batch_size=128 passed has 128 rows: the default is the difference
    cause = g.cause("test_loss_decreases")
    assert "the default batch_size is not the lesson's 128: with batch_size=128 passed" in cause
    assert "off-by-one" not in cause


@pytest.mark.slow
def test_one_shuffle_key_used_again_every_epoch(graded):
    # seen by the key-reuse run, which spans two epochs of digits, and by the batch order,
    # the same in every pass
    g = graded("shuffle_key_reused")
    g.assert_statuses(failed={"test_train_key_use", "test_train_reshuffles"})
    message = g.message("test_train_key_use")
    assert "JAX's key-reuse checker saw one key consumed twice" in message
    assert "digits, 12, clip=True" in message


@pytest.mark.slow
def test_one_permutation_for_every_pass(graded):
    # spec revision 2: "reshuffled with a fresh key each time the set is used up"; no key
    # is used twice, so only the batch order shows it
    g = graded("one_permutation")
    g.assert_fails(
        "test_train_reshuffles",
        "the same 4 norms in every one of the 6 passes",
        "jax.random.permutation(perm_key",
        cause="the rows come in the same order in every pass",
        only=True,
    )


@pytest.mark.slow
def test_weights_far_below_the_he_scale(graded):
    # one run's first norm is a statistic, and an init at another scale, another network and a
    # norm of part of the gradient read low alike: no cause, the band and the fix's pointers
    g = graded("small_init")
    g.assert_statuses(failed={"test_lesson_mlp"})
    message = g.message("test_lesson_mlp")
    assert g.cause("test_lesson_mlp") == ""
    assert "between 0.6 and 8.0" in message and "jnp.sqrt(2.0 / fan_in)" in message


@pytest.mark.slow
def test_clipping_by_value_is_not_said_to_miss_the_optimizer(graded):
    # held-out case c36: clipping by value is named; the clip does reach the optimizer
    g = graded("clip_by_value")
    assert "optax.clip" in g.cause("test_optimizer_default")
    assert g.status("test_loss_decreases") == "failed"
    loss = g.message("test_loss_decreases")
    assert "does not reach the optimizer" not in loss
    assert "does not clip as the reference chain does" in g.cause("test_loss_decreases")


@pytest.mark.slow
def test_a_make_optimizer_that_always_clips_is_named_for_clip_false(graded):
    # clip=False at max_norm 1.0: clipping at 1.0 whatever max_norm was passed gives the same
    # updates, and is not the mistake here
    g = graded("always_clips")
    assert g.results["test_optimizer_no_clip"]["status"] == "failed"
    cause = g.cause("test_optimizer_no_clip")
    assert "clipping even though clip=False" in cause, cause
    assert "whatever max_norm" not in cause, cause


@pytest.mark.slow
def test_one_colour_for_both_curves(graded):
    # both lists are lines of the saved figure, in one colour: said from the figure's lines
    g = graded("same_colour")
    g.assert_fails(
        "test_plot_two_series",
        "1 colour",
        cause="both lists are drawn in the saved figure, but its PNG holds one clearly coloured",
        not_cause=("only one of the two lists",),
        only=True,
    )


@pytest.mark.slow
def test_a_batch_drawn_anew_every_step_is_seen_in_the_pass_means(graded):
    # every step takes the first batch_size rows of a new permutation: the norms never repeat
    # and no key is used twice, but at learning_rate=0.0 a pass's mean loss is not the whole
    # set's; no cause (rows missed, moving params, another loss change the means alike)
    g = graded("batch_per_step")
    g.assert_fails(
        "test_train_passes_cover_the_set",
        "the same mean in every pass",
        "observed: pass means [",
        only=True,
    )
    assert g.cause("test_train_passes_cover_the_set") == ""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["norm_of_updates", "test_split"])
def test_norms_that_never_vary_are_not_said_to_repeat_one_order(graded, name):
    # the norms of the updates (all 0 at learning_rate=0.0), or of batches that are always
    # the 4 test rows: the norms repeat from pass to pass without varying within one, so the
    # batch order cannot be seen, and no reshuffle cause is named
    g = graded(name)
    message = g.assert_fails(
        "test_train_reshuffles",
        "norms that differ from batch to batch",
        "the same norm at all 24 steps",
        not_cause=("same order",),
    )
    assert g.cause("test_train_reshuffles") == "", message
    # each pass still has the mean of the set it trains on
    assert g.status("test_train_passes_cover_the_set") == "passed"
    if name == "norm_of_updates":  # caught by the norms themselves
        assert g.status("test_norms_exact") == "failed"
        assert g.status("test_lesson_mlp") == "failed"


@pytest.mark.slow
def test_sgd_where_adam_belongs_is_named_with_and_without_clipping(graded):
    # make_optimizer builds optax.sgd where optax.adam belongs: each optimizer check's
    # updates are SGD's (the clipped chain's for clip=True), on two params shapes
    g = graded("sgd_not_adam")
    for check_id in ("test_optimizer_default", "test_optimizer_arguments"):
        g.assert_fails(
            check_id,
            cause=("optax.sgd(learning_rate)", "-learning_rate * the clipped gradients"),
            not_cause=("plain Adam", "plain SGD", "AdamW"),
        )
    g.assert_fails(
        "test_optimizer_no_clip",
        cause="plain SGD, optax.sgd(learning_rate) (-learning_rate * the gradients)",
        not_cause=("clipped", "plain Adam", "clipping even though"),
    )
    # look-alikes: other optimizers that are not the reference's are not said to be SGD
    for name, check_id, words in (
        ("clip_after_adam", "test_optimizer_default", "plain Adam"),
        ("clip_after_adam", "test_optimizer_arguments", "the clip comes after Adam"),
        ("always_clips", "test_optimizer_no_clip", "clipping even though clip=False"),
    ):
        graded(name).assert_fails(check_id, cause=words, not_cause=("SGD", "sgd"))
