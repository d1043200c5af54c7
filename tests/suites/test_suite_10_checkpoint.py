"""The 10_checkpoint suite graded against the solution, the stub, an alternative solution
and broken submissions, each in its own subprocess."""

import pytest
from lesson_grading import REPO
from parallel_grading import Gradings

from grader.catalog import read_suite
from grader.commands.assign import stub_source

LESSON = "10_checkpoint"
VARIANTS = (
    "solution",
    "alternative",
    "stub",
    "pickle_plain",
    "pickle_dicts",
    "naive_npz",
    "orbax_dir",
    "flax_msgpack",
    "orbax_unwrapped",
    "foreign_keyerror",
    "len_check",
    "sharding_like",
    "str_paths",
    "restores_as_jax",
)
# property checks of the files, gated on the params round trip
GATED = {
    "test_missing_file",
    "test_corrupt_file",
    "test_structure_mismatch",
    "test_exact_path",
    "test_overwrite_and_untouched",
    "test_numpy_round_trip",
}
MAX_SCORE = 17
HIDDEN = {"test_dtypes_survive", "test_exact_path"}


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


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_statuses()


@pytest.mark.slow
def test_a_str_only_path_gets_full_marks(graded):
    """`path + ".tmp"` works for the str paths the spec writes; no check passes a
    pathlib.Path, which the spec does not mention."""
    g = graded("str_paths")
    g.assert_statuses()
    assert all(r["fraction"] == 1.0 for r in g.results.values())


@pytest.mark.slow
def test_64_bit_numpy_leaves_restored_as_jax_arrays_lose_their_dtype(graded):
    g = graded("restores_as_jax")
    g.assert_statuses(failed={"test_numpy_round_trip"})
    message = g.message("test_numpy_round_trip")
    assert "expected: float64 (the saved dtype)" in message
    assert "observed: float32" in message
    assert "64-bit mode is off" in message and "keep NumPy leaves NumPy" in message


@pytest.mark.slow
@pytest.mark.parametrize("name", ["alternative", "orbax_dir", "flax_msgpack"])
def test_alternative_solutions_pass(graded, name):
    # orbax_dir writes a folder (Orbax's layout): the damaged-checkpoint check cuts every
    # file of it, the exact-path check accepts a folder at path; flax_msgpack: msgpack
    # bytes from flax.serialization restored into like's structure
    graded(name).assert_statuses()


@pytest.mark.slow
def test_stub_fails_every_check_as_not_implemented(graded):
    stub = graded("stub")
    stub.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in stub.results.values())


@pytest.mark.slow
def test_plain_pickle_round_trips_but_fails_quietly_or_wrongly(graded):
    g = graded("pickle_plain")
    g.assert_statuses(failed={"test_corrupt_file", "test_structure_mismatch"})
    corrupt = g.message("test_corrupt_file")
    assert "raised UnpicklingError" in corrupt and "raised EOFError" in corrupt
    assert "returned without an error" in g.message("test_structure_mismatch")


@pytest.mark.slow
def test_pickled_plain_containers_lose_namedtuples(graded):
    g = graded("pickle_dicts")
    g.assert_statuses(failed={"test_opt_state_round_trip", "test_structure_mismatch"})
    message = g.message("test_opt_state_round_trip")
    assert "namedtuples (ScaleByAdamState, EmptyState, ...) came back as plain" in message
    assert "jax.tree.unflatten(jax.tree.structure(like), leaves)" in message


@pytest.mark.slow
def test_naive_npz(graded):
    g = graded("naive_npz")
    g.assert_statuses(
        failed={
            "test_dtypes_survive",
            "test_corrupt_file",
            "test_structure_mismatch",
            "test_exact_path",
        }
    )
    assert "no name for bfloat16" in g.message("test_dtypes_survive")
    assert "np.savez adds '.npz'" in g.message("test_exact_path")
    assert "raised KeyError" in g.message("test_structure_mismatch")
    assert "random bytes: raised FileNotFoundError" in g.message("test_corrupt_file")


@pytest.mark.slow
def test_orbax_errors_escaping_are_named_for_a_folder_checkpoint(graded):
    g = graded("orbax_unwrapped")
    g.assert_statuses(failed={"test_corrupt_file"})
    message = g.message("test_corrupt_file")
    assert g.results["test_corrupt_file"]["fraction"] == pytest.approx(1 / 4)
    # Orbax's JSONDecodeError is a ValueError, but it does not say which checkpoint is bad
    assert (
        "a checkpoint folder with every file cut in half: the ValueError message does not "
        "name the file" in message
    )
    assert "an empty folder: raised FileNotFoundError" in message
    assert "a folder holding another program's .npz archive: raised FileNotFoundError" in message
    assert "IsADirectoryError" not in message and "/tmp" not in message


@pytest.mark.slow
def test_stub_properties_are_gated(graded):
    stub = graded("stub")
    for check_id in GATED:
        assert stub.results[check_id]["blocked_by"] == "test_params_round_trip", check_id


@pytest.mark.slow
def test_a_foreign_archive_whose_key_error_escapes_is_named(graded):
    # a well-formed .npz that save_checkpoint did not write: only non-zip files were wrapped
    g = graded("foreign_keyerror")
    g.assert_statuses(failed={"test_corrupt_file"})
    message = g.message("test_corrupt_file")
    assert "another program's .npz archive (not written by save_checkpoint): raised KeyError" in (
        message
    )
    assert g.results["test_corrupt_file"]["fraction"] == pytest.approx(3 / 4)


@pytest.mark.slow
def test_lengths_compared_instead_of_shapes_is_named(graded):
    g = graded("len_check")
    g.assert_statuses(failed={"test_structure_mismatch"})
    message = g.message("test_structure_mismatch")
    assert (
        "like with a scalar where the checkpoint holds a vector (layer2's b): raised TypeError"
        in (message)
    )
    assert g.results["test_structure_mismatch"]["fraction"] == pytest.approx(3 / 4)


@pytest.mark.slow
def test_a_restore_for_jax_arrays_only_fails_the_numpy_round_trip(graded):
    g = graded("sharding_like")
    g.assert_statuses(failed={"test_numpy_round_trip"})
    assert "'numpy.ndarray' object has no attribute 'sharding'" in g.message(
        "test_numpy_round_trip"
    )
