"""The ex5_grad_clipping suite graded against the solution, the stub, an alternative
solution and broken submissions (each in its own subprocess)."""

import base64

import pytest
from lesson_grading import FIXTURES, REPO, grade

pytestmark = pytest.mark.slow

LESSON = "ex5_grad_clipping"
_CACHE = {}
# two broken fixtures leave train_recording_grad_norms unwritten (its runs are the costly part)
TRAINING = {"test_record_format", "test_norms_pre_clip", "test_norms_exact", "test_loss_decreases"}


@pytest.fixture(scope="module")
def graded():
    def run(name):
        if name not in _CACHE:
            folder = {"solution": REPO / "solutions", "stub": REPO / "exercises"}.get(
                name, FIXTURES / LESSON / name
            )
            _CACHE[name] = grade(folder, LESSON)
        return _CACHE[name]

    return run


def _unfinished(graded_folder, check_ids):
    """Checks of the functions a partly done fixture leaves as stubs: not attempted."""
    for check_id in check_ids:
        assert graded_folder.results[check_id]["not_implemented"], check_id
    return set(check_ids)


def test_solution_passes_every_check(graded):
    graded("solution").assert_statuses()


def test_alternative_solution_passes(graded):
    graded("alternative").assert_statuses()


def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


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


def test_norms_recorded_after_clipping(graded):
    g = graded("norms_after_clipping")
    g.assert_statuses(failed={"test_norms_pre_clip"})
    message = g.message("test_norms_pre_clip")
    assert "the norm was taken AFTER clipping" in message
    assert "1.0000 with clip=True" in message


def test_plot_with_one_curve(graded):
    g = graded("one_curve")
    g.assert_statuses(failed={"test_plot_two_series", "test_plot_lines"} | _unfinished(g, TRAINING))
    assert "1 colour" in g.message("test_plot_two_series")
    assert "only one of the two lists was plotted" in g.message("test_plot_two_series")
    assert "no line with the values of with_clip" in g.message("test_plot_lines")


def test_student_plot_is_attached(graded):
    for name in ("solution", "one_curve"):
        (image,) = [r for r in graded(name).records if r["type"] == "artifact"]
        assert image["id"] == "test_plot_file"
        assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")
