"""Hidden checks for 10_checkpoint.py: saving and restoring pytrees.

A round trip must give back exactly the saved values and dtypes in the structure of
`like` (a freshly initialized tree: zeros, so values that come from `like` instead of
the file show). Failures must be loud and specific: a missing file raises
FileNotFoundError, a damaged file or one that does not fit `like` raises ValueError,
and every message names the file.

Student code writes in its sandbox's scratch folder (the `scratch` fixture); the files
are listed and damaged there, by probes (`grader.checks.files`), never opened here.
"""

import importlib
import io
import math
import os
import pathlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from grader.authoring import Credit, check
from grader.checks import files, values
from grader.checks.failure import CheckFailure, fail
from grader.sandbox import client
from grader.sandbox.client import Remote
from grader.suites._shared import EXACT, mlp_params

inputs = importlib.import_module("grader.inputs.10_checkpoint")

LESSON = "10_checkpoint"
TITLE = "saving and restoring pytrees"


# -- trees ----------------------------------------------------------------------------


# The trees are built in NumPy and put on the device, optimizer states shaped by
# `jax.eval_shape` (which traces and compiles nothing): the judge runs no eager JAX op, each
# of which would compile a program per shape and dtype.


def _params(sizes: Any = (5, 4, 3), seed: int = 0) -> Any:
    return mlp_params(sizes, seed)


def _zeros(shape: Any, dtype: Any) -> Any:
    return jax.device_put(np.zeros(shape, dtype))


def _zeros_like(tree: Any) -> Any:
    return jax.tree.map(lambda a: _zeros(np.shape(a), a.dtype), tree)


def _trained_state(params: Any, steps: int = 3) -> Any:
    """An Adam-in-a-chain state after a few updates: count 3, nonzero moments (computed in
    NumPy as clip_by_global_norm(1.0) and adam keep them)."""
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))
    mu = jax.tree.map(lambda p: np.zeros(p.shape, np.float32), params)
    nu = jax.tree.map(lambda p: np.zeros(p.shape, np.float32), params)
    for k in range(steps):
        grads = jax.tree.map(lambda p, k=k: np.cos(np.asarray(p) * (k + 1)), params)
        norm = math.sqrt(sum(float(np.sum(g**2)) for g in jax.tree.leaves(grads)))
        grads = jax.tree.map(lambda g, n=norm: g / max(n, 1.0), grads)
        mu = jax.tree.map(lambda m, g: (0.9 * m + 0.1 * g).astype(np.float32), mu, grads)
        nu = jax.tree.map(lambda v, g: (0.999 * v + 0.001 * g**2).astype(np.float32), nu, grads)
    leaves = [np.int32(steps), *jax.tree.leaves(mu), *jax.tree.leaves(nu)]
    shape = jax.tree.structure(jax.eval_shape(tx.init, params))
    return tx, jax.tree.unflatten(shape, [jax.device_put(a) for a in leaves])


def _like_state(tx: Any, params: Any) -> Any:
    """tx.init's state for `params`, built without running it: zeros of its leaves' shapes."""
    return jax.tree.map(lambda a: _zeros(a.shape, a.dtype), jax.eval_shape(tx.init, params))


def _foreign_npz() -> Any:
    """The bytes of a well-formed .npz archive that save_checkpoint did not write."""
    buffer = io.BytesIO()
    np.savez(buffer, weights=np.arange(12, dtype=np.float32).reshape(3, 4), step=np.int32(7))
    return buffer.getvalue()


def _describe(tree: Any) -> Any:
    return str(jax.tree.structure(tree))


def _names_path(message: str, path: Any) -> Any:
    return os.path.basename(str(path)) in message


# -- helpers --------------------------------------------------------------------------


def _folder(student: Remote, scratch: Any) -> Any:
    """The check's own folder, created in the sandbox. A pure path: the judge has no reason
    (and no way, through it) to open what student code wrote there."""
    return pathlib.PurePosixPath(files.make_folder(student, scratch))


def _relative(message: str, folder: Any) -> Any:
    """The student's message with the check's folder left out of the paths it names."""
    for root in {str(folder), os.path.realpath(str(folder))}:
        message = message.replace(root + os.sep, "")
    return message


def _dtype(leaf: Any) -> Any:
    """A restored leaf's dtype. A leaf that came back as a handle is an array of a dtype no
    data can carry (NumPy's raw void bytes, objects): its dtype is read in the sandbox."""
    if not isinstance(leaf, client.Remote):
        return np.asarray(leaf).dtype
    try:
        return str(leaf.dtype.str)
    except (AttributeError, client.StudentError):
        return f"object ({leaf!r}, not an array)"


def _round_trip(student: Remote, path: Any, tree: Any, like: Any) -> Any:
    """Save `tree` at `path`, see what the save left in path's folder (before any restore),
    and restore. A restore that finds no file is judged on what the save wrote."""
    student.save_checkpoint(str(path), tree)
    written = files.listing(student, str(path.parent))
    try:
        return student.restore_checkpoint(str(path), like)
    except FileNotFoundError as exc:
        if not isinstance(exc, client.StudentError) or any(e.name == path.name for e in written):
            raise
        raise _not_at_path(student, path, written, (tree, like), exc) from None


def _not_at_path(
    student: Remote, path: Any, written: Any, trees: Any, exc: client.StudentError
) -> Any:
    """The failure of a save that left nothing at `path` and a restore that then found no
    file. Where the save wrote a checkpoint under another name in path's folder, that name
    is the cause only if restoring from it gives the saved tree back (the save's own output,
    read where it really is)."""
    tree, like = trees
    beside = [e.name for e in written if e.name.startswith(path.name)]
    shown = ", ".join(e.name for e in written[:8]) or "nothing"
    cause = ""
    for name in beside:
        try:
            elsewhere = student.restore_checkpoint(str(path.parent / name), like)
        except client.StudentError:  # not confirmed
            continue
        try:
            found = values.difference(
                jax.tree.map(np.asarray, elsewhere), jax.tree.map(np.asarray, tree), **EXACT
            )
        except (TypeError, ValueError):  # leaves that are no arrays: not the saved tree
            continue
        if found is None:
            cause = (
                f"save_checkpoint(path, tree) wrote the checkpoint to {name!r}, not to the path "
                f"it was given ({path.name!r}), and restore_checkpoint(path, like) looks at the "
                "path itself (restoring from that other name works)"
                + (
                    ": np.savez appends '.npz' to a path that lacks it"
                    if name == path.name + ".npz"
                    else ""
                )
            )
            break
    return CheckFailure(
        f"what save_checkpoint(path, tree) left at path ({path.name}), before any restore",
        expected=f"a checkpoint at {path.name} (a file or a folder: its layout is yours)",
        observed=f"nothing named {path.name}; the folder holds {shown} after the save; "
        f"restore_checkpoint(path, like) then raised {exc.info.type}: "
        f"{_relative(str(exc), path.parent)[:160]}",
        cause=cause,
        fix="write exactly at `path` (with np.savez, pass an open file: "
        "`with open(path, 'wb') as f: np.savez(f, ...)`), and read from the same path",
    )


def _dtype_cause(got: Any, want: Any, like: Any) -> str:
    """What a restored leaf's dtype `got` (not the saved `want`) shows, or "": raw void
    bytes where a bfloat16 was saved, `like`'s dtype, or the 64-bit dtype's JAX form."""
    try:
        got = np.dtype(got)
    except TypeError:  # an object that is not an array: its description is shown
        return ""
    if want.name == "bfloat16" and got.kind == "V":
        return "NumPy's .npz has no name for bfloat16 (it reads back as raw void bytes)"
    if got == like and like != want:
        return (
            f"the leaf came back in like's dtype ({like}), cast on the way (save_checkpoint "
            "writing every leaf as that dtype, or restore_checkpoint casting to `like`'s): "
            "`like` gives the structure and the shapes, the dtype is the one saved"
        )
    if want.itemsize == 8 and got == np.dtype(jax.dtypes.canonicalize_dtype(want)):
        return (
            f"the {want} leaf came back as {got}, the dtype a JAX array gives it while 64-bit "
            "mode is off: the leaf passed through a JAX array (`jnp.asarray`, "
            "`jax.device_put`) on the save or on the restore; keep NumPy leaves NumPy"
        )
    return ""


def _bits_cause(got: Any, want: Any) -> str:
    """The restored leaf holds the saved leaf's bytes as another dtype of the same size (a
    bfloat16 read as uint16): its bytes, viewed as the saved dtype, are the saved values."""
    try:
        got_array, want_array = np.asarray(got), np.asarray(want)
        if (
            got_array.dtype == want_array.dtype
            or got_array.dtype.itemsize != want_array.dtype.itemsize
        ):
            return ""
        if got_array.shape != want_array.shape:
            return ""
        same = np.array_equal(got_array.view(want_array.dtype), want_array)
    except (TypeError, ValueError):
        return ""
    if not same:
        return ""
    return (
        f"the restored bytes are the saved {want_array.dtype} values' own bytes, read as "
        f"{got_array.dtype}: they are never viewed as the saved dtype again (raw bytes are "
        "`.view`ed as the dtype they were saved from on the restore)"
    )


def _assert_exact(restored: Any, tree: Any, like: Any, *, what: str) -> None:
    if jax.tree.structure(restored) != jax.tree.structure(like):  # type: ignore[operator]
        lost = "namedtuple" in _describe(like) and "namedtuple" not in _describe(restored)
        raise fail(
            f"the structure of {what}",
            expected=_describe(like)[:600],
            observed=_describe(restored)[:600],
            cause="the tree was rebuilt from the file, not from `like`: its namedtuples "
            "(ScaleByAdamState, EmptyState, ...) came back as plain containers"
            if lost
            else "the restored tree is not shaped like `like`",
            fix="restore with like's structure: "
            "`jax.tree.unflatten(jax.tree.structure(like), leaves)`",
        )
    for (keypath, got), want, like_leaf in zip(
        jax.tree_util.tree_flatten_with_path(restored)[0],
        jax.tree.leaves(tree),
        jax.tree.leaves(like),
        strict=True,
    ):
        name = jax.tree_util.keystr(keypath)
        got_dtype, want_dtype = _dtype(got), np.asarray(want).dtype
        if got_dtype != want_dtype:
            raise fail(
                f"the dtype of {what} at {name}",
                expected=f"{want_dtype} (the saved dtype)",
                observed=f"{got_dtype}",
                cause=_bits_cause(got, want)
                or _dtype_cause(got_dtype, want_dtype, np.asarray(like_leaf).dtype),
                fix="store each leaf's dtype name beside its bytes and view the bytes as that "
                "dtype when restoring",
            )
    values.assert_close(
        jax.tree.map(lambda a: np.asarray(a).astype(np.float64), restored),
        jax.tree.map(lambda a: np.asarray(a).astype(np.float64), tree),
        what=what,
        **EXACT,
        cause="values come from `like` (zeros) rather than from the file"
        if values.difference(
            jax.tree.map(np.asarray, restored), jax.tree.map(np.asarray, like), **EXACT
        )
        is None
        else "",
    )


def _expect_error(
    student: Remote, path: Any, like: Any, error: Any, *, what: str, folder: Any
) -> Any:
    """restore_checkpoint(path, like) raises `error` with a message naming the file.
    Returns "" when it does, else the problem in words."""
    try:
        student.restore_checkpoint(str(path), like)
    except NotImplementedError:
        raise
    except client.StudentError as exc:
        message = _relative(str(exc), folder)
        if not isinstance(exc, error):
            return f"{what}: raised {exc.info.type} ({message[:160]}), not {error.__name__}"
        if not _names_path(message, path):
            return (
                f"{what}: the {error.__name__} message does not name the file ({message[:160]!r})"
            )
        return ""
    return f"{what}: {RETURNED}"


def _judge(
    credit: Credit, problems: Any, *, checked: Any, expected: Any, cause: Any, fix: Any
) -> None:
    bad = [p for p in problems if p]
    if not bad:
        return
    if len(bad) == len(problems):
        raise fail(checked, expected=expected, observed="; ".join(bad), cause=cause, fix=fix)
    failure = CheckFailure(
        checked, expected=expected, observed="; ".join(bad), cause=cause, fix=fix
    )
    # the fix travels apart from the message, as a failure's does (the hint policy shows it)
    credit.award(
        (len(problems) - len(bad)) / len(problems),
        failure.finding.message(),
        fix=failure.finding.fix,
    )


# -- round trips ----------------------------------------------------------------------


@check(
    "params come back exactly: values, dtypes and dict structure",
    points=3,
    hint="Which two parts does jax.tree.flatten split a pytree into, and which of them "
    "belongs in the file?",
    spec="a round trip that restores the saved values and dtypes into the structure of `like` ... exact round trip",
    nudge="jax.tree.flatten splits a pytree into its leaves (the arrays, which go in the file) and its structure (which `like` already has), and jax.tree.unflatten puts them back together.",
)
def test_params_round_trip(student: Remote, scratch: str) -> None:
    params = _params()
    folder = _folder(student, scratch)
    restored = _round_trip(student, folder / "params.ckpt", params, _zeros_like(params))
    _assert_exact(restored, params, _zeros_like(params), what="restore_checkpoint(path, like)")


@check(
    "an optax opt_state comes back with its namedtuples and int32 step count",
    points=3,
    hint="An Adam state is a tuple of namedtuples: can the file rebuild those classes, or "
    "should the structure come from `like`?",
    spec="a round trip that restores the saved values and dtypes into the structure of `like` (params and an optax `opt_state`, namedtuples included)",
    nudge="An optax state is a pytree of namedtuples: save only its leaves and rebuild it with like's structure, so the namedtuple classes come from `like`, not from the file.",
)
def test_opt_state_round_trip(student: Remote, scratch: str) -> None:
    params = _params()
    tx, state = _trained_state(params)
    tree = (params, state)
    like = (_zeros_like(params), _like_state(tx, params))
    client.probe(inputs.import_optax, student)  # so the states arrive there as optax's own
    restored = _round_trip(student, _folder(student, scratch) / "state.ckpt", tree, like)
    _assert_exact(
        restored, tree, like, what="restore_checkpoint(path, like) of (params, opt_state)"
    )
    adam = restored[1][1][0]
    if type(adam).__name__ != "ScaleByAdamState":
        raise fail(
            "the restored Adam state",
            expected="an optax ScaleByAdamState (so optimizer.update accepts it)",
            observed=f"a {type(adam).__name__}",
            fix="restore with like's structure",
        )
    # optimizer.update accepts the restored state (traced, not compiled: only its structure,
    # shapes and dtypes decide)
    jax.eval_shape(tx.update, params, restored[1], restored[0])


@check(
    "every dtype survives: bfloat16, float16, int8, uint32, bool",
    points=2,
    hidden=True,
    hint="What does NumPy's .npz do with a dtype NumPy itself does not define, such as bfloat16?",
    spec="restores the saved values and dtypes",
    nudge="A leaf's dtype travels with it only if the format records it: NumPy's formats know float16, int8 or bool but not JAX's bfloat16, so store each dtype's name and the raw bytes, or use a format that knows it.",
)
def test_dtypes_survive(student: Remote, scratch: str) -> None:
    tree = {
        "bf16": ([1.5, -2.25, 3.0], jnp.bfloat16),
        "f16": ([[0.1, 2.0]], np.float16),
        "i8": ([-3, 7], np.int8),
        "u32": (4_000_000_000, np.uint32),
        "mask": ([True, False, True], np.bool_),
        "step": (12, np.int32),
    }
    tree = {name: jax.device_put(np.asarray(v, dtype)) for name, (v, dtype) in tree.items()}
    like = jax.tree.map(lambda a: _zeros(a.shape, np.float32), tree)
    restored = _round_trip(student, _folder(student, scratch) / "dtypes.ckpt", tree, like)
    _assert_exact(restored, tree, like, what="restore_checkpoint(path, like) of mixed dtypes")


# -- failures ---------------------------------------------------------------------------


@check(
    "a missing checkpoint raises FileNotFoundError naming the path",
    points=2,
    hint="What should a user see when the path has a typo: a crash deep inside a loader, or "
    "one error that says which file is missing?",
    requires=("test_params_round_trip",),
    spec="a missing checkpoint raises `FileNotFoundError` ... with a message naming the path",
    nudge="Check that the path exists before loading, and raise FileNotFoundError with the path in its message.",
)
def test_missing_file(student: Remote, scratch: str) -> None:
    like = _zeros_like(_params())
    folder = _folder(student, scratch)
    problems = [
        _expect_error(
            student,
            folder / "no-such-step.ckpt",
            like,
            FileNotFoundError,
            what="a file that does not exist",
            folder=folder,
        ),
        _expect_error(
            student,
            folder / "no-such-dir" / "step-1.ckpt",
            like,
            FileNotFoundError,
            what="a file in a folder that does not exist",
            folder=folder,
        ),
    ]
    bad = [p for p in problems if p]
    if bad:
        raise fail(
            "restore_checkpoint(path, like) for a path with no file",
            expected="FileNotFoundError whose message names the path",
            observed="; ".join(bad),
            cause=_rewrapped_cause(bad, len(problems)),
            fix="`if not os.path.exists(path): raise FileNotFoundError(f'no checkpoint at "
            "{path}')`",
        )


_MISSING_WORDS = ("FileNotFoundError", "No such file or directory", "Errno 2")


def _rewrapped_cause(bad: Any, cases: int) -> str:
    """The cause when every missing-file case raised another error whose own message carries
    the FileNotFoundError of opening the file: a broad `except` caught it and raised its own
    error; else ""."""
    # each problem reads "<case>: raised <type> (<its message>), not FileNotFoundError"
    raised = [p.split(": raised ", 1)[1].rsplit(", not ", 1)[0] for p in bad if ": raised " in p]
    rewrapped = [m for m in raised if any(word in m for word in _MISSING_WORDS)]
    if len(bad) < cases or len(rewrapped) < len(bad):
        return ""
    return (
        "the FileNotFoundError of opening the missing file was caught (a broad `except` "
        "around the loading) and raised again as another error, whose message still names "
        "it: check that the file exists before the `try`, or let FileNotFoundError through"
    )


@check(
    "a damaged checkpoint raises ValueError naming the path",
    points=2,
    hint="Which exceptions can a loader raise on a half-written or foreign file, and how do "
    "you turn all of them into one clear error?",
    requires=("test_params_round_trip",),
    spec="a corrupt one ... raises `ValueError`, each with a message naming the path",
    nudge="Every loader fails in its own way on bad bytes (BadZipFile, UnpicklingError, EOFError, KeyError...): catch them around the whole read and raise one ValueError that names the path.",
)
def test_corrupt_file(student: Remote, scratch: str, credit: Credit) -> None:
    params = _params()
    like = _zeros_like(params)
    folder = _folder(student, scratch)
    good = folder / "good.ckpt"
    student.save_checkpoint(str(good), params)
    listed = files.listing(student, folder)
    # A checkpoint is a file (npz, msgpack, pickle) or a folder (orbax): either layout.
    written = [e for e in listed if e.name.startswith(good.name) and e.kind in ("file", "dir")]
    if not written:  # the exact-path check judges the name
        raise fail(
            "save_checkpoint(path, tree)",
            expected=f"a file or a folder at {good.name}",
            observed=f"nothing named {good.name}* in the folder"
            + (f" (it holds {[e.name for e in listed][:10]})" if listed else ""),
            fix="write the checkpoint to `path`",
        )
    saved = next((e for e in written if e.name == good.name), written[0])
    # The layout is the student's: a file or folder at path, or at path plus a suffix of its
    # own (np.savez's '.npz'). Each damaged checkpoint is put where that layout reads it.
    suffix = saved.name[len(good.name) :]

    def at(name: str) -> Any:
        return folder / (name + suffix)

    garbage = folder / "garbage.ckpt"
    files.write(student, at(garbage.name), b"\x80\x04 this is not a checkpoint " * 8)
    truncated = folder / "truncated.ckpt"
    # every file of the checkpoint cut in half, as a crash mid-save leaves it
    client.probe(
        inputs.damaged_copy, student, str(folder / saved.name), str(at(truncated.name)), 0.5
    )
    empty = folder / "empty.ckpt"
    if saved.kind == "dir":
        files.make_folder(student, at(empty.name))
    else:
        files.write(student, at(empty.name), b"")
    cut = (
        "a checkpoint folder with every file cut in half"
        if saved.kind == "dir"
        else ("a checkpoint cut in half")
    )
    # well formed, but not written by save_checkpoint: another program's .npz archive (in a
    # folder of its own for a folder layout)
    foreign = folder / "foreign.ckpt"
    if saved.kind == "dir":
        files.make_folder(student, at(foreign.name))
        files.write(student, at(foreign.name) / "arrays.npz", _foreign_npz())
    else:
        files.write(student, at(foreign.name), _foreign_npz())
    problems = [
        _expect_error(
            student, garbage, like, ValueError, what="a file of random bytes", folder=folder
        ),
        _expect_error(student, truncated, like, ValueError, what=cut, folder=folder),
        _expect_error(
            student,
            empty,
            like,
            ValueError,
            what="an empty folder" if saved.kind == "dir" else "an empty file",
            folder=folder,
        ),
        _expect_error(
            student,
            foreign,
            like,
            ValueError,
            what="a folder holding another program's .npz archive"
            if saved.kind == "dir"
            else "another program's .npz archive (not written by save_checkpoint)",
            folder=folder,
        ),
    ]
    _judge(
        credit,
        problems,
        checked="restore_checkpoint(path, like) for damaged or foreign files",
        expected="ValueError whose message names the path, for each damaged or foreign file",
        cause="",  # the observed line says, case by case, what was raised and what it said
        fix="wrap the reading in `try: ... except Exception as exc: raise ValueError(f'{path} is "
        "not a readable checkpoint: {exc}') from exc`",
    )


RETURNED = "restore_checkpoint returned without an error"
SIZES_NOT_SHAPES = (
    "each leaf is checked by its number of values, not by its shape: the leaves of another "
    "model's sizes are refused, but a leaf with as many values in another shape (a transposed "
    "weight) restores silently"
)
STRUCTURE_NOT_SHAPES = (
    "the structure is compared with like's (an extra layer, other names are refused) but not "
    "each leaf's shape: a checkpoint of other leaf shapes restores silently"
)
POURED = (
    "restore_checkpoint returned for every one of the four mismatches: the leaves are poured "
    "into like's structure without checking that they fit, so a checkpoint of another model "
    "restores silently"
)


def _mismatch_cause(deeper: str, renamed: str, wider: str, transposed: str) -> str:
    """What the four cases show together: only the transposed leaf restored (a size
    compared), both leaf-shape cases restored while the structure cases were refused (the
    structure compared, the shapes not), all four restored (nothing compared), else ""
    (an error of another type, or a message without the path: the observed line says)."""
    structure_refused = deeper == "" and renamed == ""
    if structure_refused and wider == "" and transposed.endswith(RETURNED):
        return SIZES_NOT_SHAPES
    if structure_refused and wider.endswith(RETURNED) and transposed.endswith(RETURNED):
        return STRUCTURE_NOT_SHAPES
    if all(p.endswith(RETURNED) for p in (deeper, renamed, wider, transposed)):
        return POURED
    return ""


@check(
    "a checkpoint that does not fit `like` raises ValueError naming the path",
    points=2,
    hint="Before unflattening, what should you compare between the saved tree and like: "
    "the number of leaves, the containers, the dict keys, each leaf's shape?",
    requires=("test_params_round_trip",),
    spec="one whose structure or leaf shapes do not match `like` raises `ValueError`, each with a message naming the path",
    nudge="Save a description of the tree's structure with the leaves, and compare it with jax.tree.structure(like), and each saved leaf's shape with like's, before unflattening.",
)
def test_structure_mismatch(student: Remote, scratch: str, credit: Credit) -> None:
    params = _params((5, 4, 3))
    folder = _folder(student, scratch)
    path = folder / "small-model.ckpt"
    student.save_checkpoint(str(path), params)
    deeper = _zeros_like(_params((5, 4, 3, 2)))
    renamed = {"dense1": _zeros_like(params)["layer1"], "dense2": _zeros_like(params)["layer2"]}
    wider = _zeros_like(_params((5, 6, 3)))  # the same structure, other leaf shapes
    # the same structure and leaf sizes, layer1's weight transposed: (4, 5) where (5, 4) was saved
    transposed = _zeros_like(params)
    transposed["layer1"]["w"] = _zeros(params["layer1"]["w"].shape[::-1], np.float32)
    problems = [
        _expect_error(
            student, path, deeper, ValueError, what="like with an extra layer", folder=folder
        ),
        _expect_error(
            student, path, renamed, ValueError, what="like with other layer names", folder=folder
        ),
        _expect_error(
            student,
            path,
            wider,
            ValueError,
            what="like of the same structure with other leaf shapes (a hidden layer of 6, not 4)",
            folder=folder,
        ),
        _expect_error(
            student,
            path,
            transposed,
            ValueError,
            what="like whose layer1 weight is transposed (shape (4, 5), saved (5, 4): the same "
            "number of values, another shape)",
            folder=folder,
        ),
    ]
    _judge(
        credit,
        problems,
        checked="restore_checkpoint(path, like) when the checkpoint is from another model",
        expected="ValueError whose message names the path, for each mismatch",
        cause=_mismatch_cause(*problems),
        fix="save the tree's structure (`str(jax.tree.structure(tree))`, or its key paths) and "
        "compare it with like's before unflattening, and each saved leaf's shape with like's",
    )


# -- the file itself ------------------------------------------------------------------------


@check(
    "a checkpoint at a path without an extension, in a subfolder, round-trips",
    points=1,
    hidden=True,
    hint="Does the file your save writes have the name your restore looks for, whatever the "
    "path's extension (or none)?",
    requires=("test_params_round_trip",),
    spec="a round trip that restores the saved values and dtypes into the structure of `like` ... exact round trip",
    nudge="Save and restore must agree on where the checkpoint lives for any path string, with or without an extension: np.savez adds '.npz' to a name that lacks one unless given an open file.",
)
def test_exact_path(student: Remote, scratch: str) -> None:
    # The layout is the student's (a file, a folder, a suffix of its own): only the round trip
    # through the same path string is judged. A str path: the spec does not say that `path`
    # may be a pathlib.Path.
    path = _folder(student, scratch) / "run" / "step_100"
    files.make_folder(student, path.parent)
    params = _params()
    _assert_exact(
        _round_trip(student, path, params, _zeros_like(params)),
        params,
        _zeros_like(params),
        what="restore_checkpoint(path, like) of a path without an extension",
    )


@check(
    "saving twice to one path keeps the latest tree and leaves the tree untouched",
    points=1,
    hint="Does saving change the tree you pass in, and what happens to an older checkpoint "
    "at the same path?",
    requires=("test_params_round_trip",),
    spec="a round trip that restores the saved values ... no mutation of arguments",
    nudge="Saving reads the tree and writes a file: the tree itself stays as it was, and a second save to the same path replaces the first.",
)
def test_overwrite_and_untouched(student: Remote, scratch: str) -> None:
    path = _folder(student, scratch) / "latest.ckpt"
    first, second = _params(seed=1), _params(seed=2)
    kept = {k: {n: np.asarray(a).copy() for n, a in v.items()} for k, v in second.items()}
    numpy_tree = jax.tree.map(np.asarray, second)
    before = jax.tree.map(np.copy, numpy_tree)
    student.save_checkpoint(str(path), first)
    # the tree as the sandbox holds it after the call: did saving change it?
    after = client.probe(inputs.tree_after_save, student.save_checkpoint, str(path), numpy_tree)
    values.assert_close(
        after,
        before,
        what="the tree after save_checkpoint(path, tree)",
        **EXACT,
        cause="save_checkpoint modified the tree it was given",
    )
    restored = student.restore_checkpoint(str(path), _zeros_like(first))
    _assert_exact(
        restored, kept, _zeros_like(first), what="restore_checkpoint after saving twice to one path"
    )
