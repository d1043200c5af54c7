"""The 10_checkpoint suite graded against the solution, the stub, an alternative solution
and broken submissions, each in its own subprocess."""

import pytest
from harness import lesson_files

from grader.catalog import read_suite

LESSON = "10_checkpoint"
# property checks of the files, gated on the params round trip
GATED = {
    "test_missing_file",
    "test_corrupt_file",
    "test_structure_mismatch",
    "test_exact_path",
    "test_overwrite_and_untouched",
}
MAX_SCORE = 16
HIDDEN = {"test_dtypes_survive", "test_exact_path"}


def test_suite_manifest():
    spec = read_suite(lesson_files(LESSON).suite)
    assert spec.max_score == MAX_SCORE
    assert {c.id for c in spec.checks if c.visibility == "hidden"} == HIDDEN


@pytest.mark.slow
def test_solution_passes_every_check(graded):
    graded("solution").assert_full_marks()


@pytest.mark.slow
def test_a_str_only_path_gets_full_marks(graded):
    """`path + ".tmp"` works for the str paths the spec writes; no check passes a
    pathlib.Path, which the spec does not mention."""
    g = graded("str_paths")
    g.assert_full_marks()


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["alternative", "orbax_dir", "flax_msgpack", "restores_as_jax", "sharding_like", "len_check"],
)
def test_alternative_solutions_pass(graded, name):
    # orbax_dir writes a folder (Orbax's layout): the damaged-checkpoint check cuts every
    # file of it; flax_msgpack: msgpack bytes from flax.serialization restored into like's
    # structure. Outside the spec, so not checked: NumPy float64/int64 leaves (JAX arrays
    # cannot hold them with 64-bit mode off; restores_as_jax, sharding_like). len_check
    # compares each leaf's length: a hidden layer of another width changes a bias's length,
    # so it raises the ValueError the spec's leaf shapes ask for (its 0-d leaf is not asked)
    graded(name).assert_full_marks()


@pytest.mark.slow
def test_a_restore_that_checks_the_structure_but_not_the_leaf_shapes(graded):
    # revision 2 of the spec: "one whose structure or leaf shapes do not match `like` raises
    # `ValueError`"; the structure's two cases still pay
    g = graded("structure_only")
    g.assert_statuses(failed={"test_structure_mismatch"})
    message = g.assert_fails(
        "test_structure_mismatch", "like of the same structure with other leaf shapes"
    )
    assert "returned without an error" in message
    assert "like with an extra layer" not in message
    assert g.results["test_structure_mismatch"]["fraction"] == pytest.approx(2 / 4)
    cause = g.cause("test_structure_mismatch")
    assert "compared with like's" in cause and "not each leaf's shape" in cause, cause
    assert "number of values" not in cause, cause


@pytest.mark.slow
def test_a_restore_that_compares_leaf_sizes_not_shapes(graded):
    # a transposed weight has the saved number of values in another shape: only the shape
    # comparison the spec asks for ("leaf shapes do not match `like`") catches it
    g = graded("size_check")
    g.assert_statuses(failed={"test_structure_mismatch"})
    message = g.assert_fails("test_structure_mismatch", "like whose layer1 weight is transposed")
    assert "returned without an error" in message
    assert "other leaf shapes (a hidden layer of 6" not in message
    assert g.results["test_structure_mismatch"]["fraction"] == pytest.approx(3 / 4)
    cause = g.cause("test_structure_mismatch")
    assert "by its number of values, not by its shape" in cause, cause
    assert "poured" not in cause, cause


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
    # nothing is compared at all: neither of the narrower causes is named
    cause = g.cause("test_structure_mismatch")
    assert "poured into like's structure without checking" in cause, cause


@pytest.mark.slow
def test_pickled_plain_containers_lose_namedtuples(graded):
    g = graded("pickle_dicts")
    g.assert_statuses(failed={"test_opt_state_round_trip", "test_structure_mismatch"})
    message = g.message("test_opt_state_round_trip")
    assert "namedtuples (ScaleByAdamState, EmptyState, ...) came back as plain" in message
    assert "jax.tree.unflatten(jax.tree.structure(like), leaves)" in message


@pytest.mark.slow
def test_naive_npz(graded):
    # np.savez adds '.npz' and the restore reads path + '.npz': a layout of its own, judged
    # by its round trips (the damaged files are put at path + '.npz' for it)
    g = graded("naive_npz")
    g.assert_statuses(
        failed={"test_dtypes_survive", "test_corrupt_file", "test_structure_mismatch"}
    )
    assert "no name for bfloat16" in g.message("test_dtypes_survive")
    assert "raised KeyError" in g.message("test_structure_mismatch")
    corrupt = g.message("test_corrupt_file")
    assert "a file of random bytes: the ValueError message does not name the file" in corrupt
    assert "a checkpoint cut in half: raised BadZipFile" in corrupt
    assert "FileNotFoundError" not in corrupt  # the damaged files are where it reads them


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
def test_a_cast_to_likes_dtype_is_not_blamed_on_npz(graded):
    # held-out case c26: a cast to like's dtype is named, not the .npz format's lost bfloat16
    g = graded("dtype_from_like")
    assert g.status("test_dtypes_survive") == "failed"
    assert "no name for bfloat16" not in g.message("test_dtypes_survive")
    assert "void" not in g.message("test_dtypes_survive")
    assert "came back in like's dtype (float32), cast on the way" in g.cause("test_dtypes_survive")


@pytest.mark.slow
def test_a_caught_file_not_found_error_is_named_only_when_the_message_shows_it(graded):
    caught = graded("missing_as_oserror")
    assert caught.results["test_missing_file"]["status"] == "failed"
    assert "was caught" in caught.cause("test_missing_file"), caught.message("test_missing_file")
    plain = graded("missing_plain_valueerror")
    assert plain.results["test_missing_file"]["status"] == "failed"
    assert "was caught" not in plain.message("test_missing_file")


@pytest.mark.slow
def test_a_restore_that_refuses_mismatches_with_another_error_names_no_cause(graded):
    # every mismatch refused, with TypeError: the comparison is there, the error type is not
    g = graded("mismatch_typeerror")
    g.assert_statuses(failed={"test_structure_mismatch"})
    message = g.message("test_structure_mismatch")
    assert "raised TypeError" in message and "returned without an error" not in message
    assert g.cause("test_structure_mismatch") == "", message
