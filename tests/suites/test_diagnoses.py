"""Verified causes end to end: wrong submissions graded through their suites, each with
one known mistake, must name that mistake as the likely cause (and no other); a
difference no diagnostic explains must show the values and name no cause at all.

Each row: (lesson, fixture, the check that fails, words the cause must contain, words it
must not contain). The fixtures are tests/fixtures/<lesson>/<fixture>.
"""

import pytest

from grader.checks.failure import CAUSE_LABEL

CASES = {
    "ddof": (
        "01_arrays",
        "sample_std",
        "test_standardize_values",
        ("ddof=1", "sqrt(2/1)"),
        ("keepdims", "container"),
    ),
    "ddof_other_axes": (
        "01_arrays",
        "sample_std",
        "test_standardize_other_axes",
        ("ddof=1", "sqrt(4/3)"),
        ("keepdims",),
    ),
    "none": (
        "01_arrays",
        "pass_body",
        "test_set_element_values",
        ("returned None", "not written yet"),
        ("container",),
    ),
    "shift": (
        "03_jit",
        "exclusive_scan",
        "test_running_sum_values",
        ("shifted one place later", "off-by-one"),
        (),
    ),
    "transposed": (
        "04_vmap",
        "swapped_pairwise",
        "test_pairwise_values",
        ("transposed",),
        ("reshape",),
    ),
    "batch_sum": (
        "02_grad",
        "summed_mse",
        "test_mse_values",
        ("summed over the rows of x",),
        (),
    ),
    "loss_rises": (
        "ex5_grad_clipping",
        "uphill",
        "test_loss_decreases",
        ("the loss rose from", "sign is wrong"),
        ("not updated", "same few examples"),
    ),
    "update_sign": (
        "08_mlp",
        "uphill_step",
        "test_train_step_values",
        ("minus the expected step", "wrong sign"),
        ("apply_updates(params, updates)` with",),
    ),
}
UNMATCHED = ("01_arrays", "median_centred", "test_standardize_values")
# graded ahead by the `graded` fixture, the longest first
VARIANTS = sorted(
    {(lesson, name) for lesson, name, *_ in (*CASES.values(), UNMATCHED)},
    key=lambda key: (key[0] != "08_mlp", key),
)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_confirmed_mistake_is_named(graded, case):
    lesson, name, check_id, named, not_named = CASES[case]
    graded(lesson, name).assert_fails(check_id, cause=named, not_cause=not_named)


@pytest.mark.slow
def test_an_unmatched_difference_names_no_cause(graded):
    lesson, name, check_id = UNMATCHED
    result = graded(lesson, name).results[check_id]
    assert result["status"] == "failed"
    message = result["message"]
    assert CAUSE_LABEL not in message, message
    assert "values differ; first at index" in message  # the differing element, shown
    assert "the smallest input that differs is shown" in message
