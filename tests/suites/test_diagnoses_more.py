"""Verified causes end to end, for 09_optax, ex2_per_example_grads and ex3_generic_mlp (the
pattern of test_diagnoses.py): a wrong submission with one known mistake, graded through its
suite, names that mistake as the likely cause (and no other); a difference no diagnostic
explains shows the values and names no cause.

Each row: (lesson, fixture, the check that fails, words the cause must contain, words it
must not contain). The fixtures are tests/fixtures/<lesson>/<fixture>.
"""

import pytest

from grader.checks.failure import CAUSE_LABEL

CASES = {
    "ex2_divided_by_batch": (
        "ex2_per_example_grads",
        "divided_by_batch",
        "test_matches_loop",
        ("1/12 of the expected", "divided by 12 once too often"),
        ("mixes examples",),
    ),
    "ex2_divided_by_batch_32": (
        "ex2_per_example_grads",
        "divided_by_batch",
        "test_batch_of_32",
        ("1/32 of the expected",),
        (),
    ),
    "ex2_batch_last": (
        "ex2_per_example_grads",
        "batch_last",
        "test_matches_loop",
        ("right per-example gradients", "not the leading axis"),
        ("not mapped",),
    ),
    "ex2_full_batch": (
        "ex2_per_example_grads",
        "full_batch_repeated",
        "test_matches_loop",
        ("the whole batch's MEAN loss", "repeated 12 times"),
        (),
    ),
    "ex2_leaf_norms": (
        "ex2_per_example_grads",
        "sloppy_norms",
        "test_norms",
        ("sums of each leaf's own norm",),
        ("square root is missing", "weights ('w')"),
    ),
    "ex2_reversed": (
        "ex2_per_example_grads",
        "sloppy_norms",
        "test_largest_order",
        ("reverse order, smallest first",),
        ("SMALLEST norms",),
    ),
    "09_clip_after": (
        "09_optax",
        "clip_after",
        "test_clip_before_adamw",
        ("the clip runs AFTER adamw",),
        ("no clipping", "no weight decay"),
    ),
    "09_clip_after_defaults": (
        "09_optax",
        "clip_after",
        "test_defaults",
        ("the clip runs AFTER adamw",),
        (),
    ),
    "09_no_decay": (
        "09_optax",
        "adam_no_decay",
        "test_weight_decay_observed",
        ("optax.adam, which has no weight decay",),
        ("AFTER adamw",),
    ),
    "ex3_string_order": (
        "ex3_generic_mlp",
        "string_sorted",
        "test_forward_order",
        ("layer1, layer10, layer11, layer12, layer2", "'layer10' sorts before 'layer2'"),
        ("[b, w]",),
    ),
    "ex3_swapped": (
        "ex3_generic_mlp",
        "naive_leaves",
        "test_forward_pairing",
        ("used each layer's 'b' as its weight", "[b, w], not [w, b]"),
        ("'layer10' sorts",),
    ),
    # wrong labels make the norms wrong; the order follows the student's own norms, which the
    # order check confirms by calling per_example_grad_norms on the same batch
    "ex2_order_own_norms": (
        "ex2_per_example_grads",
        "wrong_labels",
        "test_largest_order",
        ("as your per_example_grad_norms computes them", "fix per_example_grad_norms first"),
        ("wrong order",),
    ),
}
UNMATCHED = {
    "09": ("09_optax", "other_b1", "test_clip_before_adamw"),
    "ex3": ("ex3_generic_mlp", "tanh_hidden", "test_forward_lesson"),
    "ex2": ("ex2_per_example_grads", "wrong_labels", "test_matches_loop"),
    "ex2_norms": ("ex2_per_example_grads", "wrong_labels", "test_norms"),
}
# graded ahead by the `graded` fixture
VARIANTS = sorted({(lesson, name) for lesson, name, *_ in (*CASES.values(), *UNMATCHED.values())})


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_confirmed_mistake_is_named(graded, case):
    lesson, name, check_id, named, not_named = CASES[case]
    graded(lesson, name).assert_fails(check_id, cause=named, not_cause=not_named)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(UNMATCHED))
def test_an_unmatched_difference_names_no_cause(graded, case):
    lesson, name, check_id = UNMATCHED[case]
    result = graded(lesson, name).results[check_id]
    assert result["status"] == "failed", result
    assert CAUSE_LABEL not in result["message"], result["message"]
