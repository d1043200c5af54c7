"""The ex5_grad_clipping suite graded against the solution, the stub, an alternative
solution and broken submissions (each in its own subprocess)."""

import base64

import pytest
from lesson_grading import REPO
from parallel_grading import Gradings

from grader.catalog import read_suite
from grader.commands.assign import stub_source

LESSON = "ex5_grad_clipping"
VARIANTS = (
    "solution",
    "alternative",
    "stub",
    "clip_after_adam",
    "norms_after_clipping",
    "one_curve",
)
MAX_SCORE = 19
HIDDEN = {"test_norms_exact", "test_plot_lines"}
# two broken fixtures leave train_recording_grad_norms unwritten (its runs are the costly part)
TRAINING = {"test_record_format", "test_norms_pre_clip", "test_norms_exact", "test_loss_decreases"}


@pytest.fixture(scope="module")
def graded():
    gradings = Gradings(LESSON, VARIANTS)
    yield gradings
    gradings.close()


def test_stub_is_the_solution_with_its_bodies_removed():
    solution = (REPO / "solutions" / f"{LESSON}.py").read_text()
    assert stub_source(solution, LESSON) == (REPO / "exercises" / f"{LESSON}.py").read_text()


def test_suite_manifest():
    spec = read_suite(REPO / "grader" / "suites" / f"test_{LESSON}.py")
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
    graded("solution").assert_statuses()


@pytest.mark.slow
def test_alternative_solution_passes(graded):
    graded("alternative").assert_statuses()


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
    assert "only one of the two lists was plotted" in g.message("test_plot_two_series")
    assert "no line with the values of with_clip" in g.message("test_plot_lines")


@pytest.mark.slow
def test_student_plot_is_attached(graded):
    for name in ("solution", "one_curve"):
        (image,) = [r for r in graded(name).records if r["type"] == "artifact"]
        assert image["id"] == "test_plot_file"
        assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")
