"""Hidden checks for 10_checkpoint.py: saving and restoring pytrees.

A round trip must give back exactly the saved values and dtypes in the structure of
`like` (a freshly initialized tree: zeros, so values that come from `like` instead of
the file show). Failures must be loud and specific: a missing file raises
FileNotFoundError, a damaged file or one that does not fit `like` raises ValueError,
and every message names the file.
"""

import itertools
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax

from grader.checks import values
from grader.checks.failure import fail
from grader.suite import check

LESSON = "10_checkpoint"
TITLE = "saving and restoring pytrees"


# -- trees ----------------------------------------------------------------------------


def _params(sizes=(5, 4, 3), seed=0):
    rng = np.random.default_rng(seed)
    return {
        f"layer{i}": {
            "w": jnp.asarray(rng.normal(size=(m, n)), jnp.float32),
            "b": jnp.asarray(rng.normal(size=n), jnp.float32),
        }
        for i, (m, n) in enumerate(itertools.pairwise(sizes), start=1)
    }


def _zeros_like(tree):
    return jax.tree.map(jnp.zeros_like, tree)


def _trained_state(params, steps=3):
    """An Adam-in-a-chain state after a few updates: count 3, nonzero moments."""
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))
    state, update = tx.init(params), jax.jit(tx.update)
    for k in range(steps):
        grads = jax.tree.map(lambda p, k=k: jnp.cos(p * (k + 1)), params)
        _, state = update(grads, state, params)
    return tx, state


def _describe(tree):
    return str(jax.tree.structure(tree))


def _names_path(message, path):
    return os.path.basename(str(path)) in message


# -- helpers --------------------------------------------------------------------------


def _round_trip(student, path, tree, like):
    student.save_checkpoint(str(path), tree)
    return student.restore_checkpoint(str(path), like)


def _assert_exact(restored, tree, like, *, what):
    if jax.tree.structure(restored) != jax.tree.structure(like):
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
    for (keypath, got), want in zip(
        jax.tree_util.tree_flatten_with_path(restored)[0], jax.tree.leaves(tree), strict=True
    ):
        name = jax.tree_util.keystr(keypath)
        got_dtype, want_dtype = np.asarray(got).dtype, np.asarray(want).dtype
        if got_dtype != want_dtype:
            raise fail(
                f"the dtype of {what} at {name}",
                expected=f"{want_dtype} (the saved dtype)",
                observed=f"{got_dtype}",
                cause="NumPy's .npz has no name for bfloat16 (it reads back as raw void bytes)"
                if want_dtype.name == "bfloat16"
                else "the leaves were cast on the way in or out (a float() or astype)",
                fix="store each leaf's dtype name beside its bytes and view the bytes as that "
                "dtype when restoring",
            )
    values.assert_close(
        jax.tree.map(lambda a: np.asarray(a).astype(np.float64), restored),
        jax.tree.map(lambda a: np.asarray(a).astype(np.float64), tree),
        what=what,
        rtol=0,
        atol=0,
        cause="values come from `like` (zeros) rather than from the file"
        if values.difference(
            jax.tree.map(np.asarray, restored), jax.tree.map(np.asarray, like), rtol=0, atol=0
        )
        is None
        else "",
    )


def _expect_error(student, path, like, error, *, what):
    """restore_checkpoint(path, like) raises `error` with a message naming the file.
    Returns "" when it does, else the problem in words."""
    try:
        student.restore_checkpoint(str(path), like)
    except NotImplementedError:
        raise
    except Exception as exc:
        message = str(exc)
        if not isinstance(exc, error):
            return f"{what}: raised {type(exc).__name__} ({message[:160]}), not {error.__name__}"
        if not _names_path(message, path):
            return (
                f"{what}: the {error.__name__} message does not name the file ({message[:160]!r})"
            )
        return ""
    return f"{what}: restore_checkpoint returned without an error"


def _judge(credit, problems, *, checked, expected, cause, fix):
    bad = [p for p in problems if p]
    if not bad:
        return
    if len(bad) == len(problems):
        raise fail(checked, expected=expected, observed="; ".join(bad), cause=cause, fix=fix)
    credit.award(
        (len(problems) - len(bad)) / len(problems),
        fail(checked, expected=expected, observed="; ".join(bad), cause=cause, fix=fix).args[0],
    )


# -- round trips ----------------------------------------------------------------------


@check(
    "params come back exactly: values, dtypes and dict structure",
    points=3,
    hint="Which two parts does jax.tree.flatten split a pytree into, and which of them "
    "belongs in the file?",
)
def test_params_round_trip(student, tmp_path):
    params = _params()
    restored = _round_trip(student, tmp_path / "params.ckpt", params, _zeros_like(params))
    _assert_exact(restored, params, _zeros_like(params), what="restore_checkpoint(path, like)")


@check(
    "an optax opt_state comes back with its namedtuples and int32 step count",
    points=3,
    hint="An Adam state is a tuple of namedtuples: can the file rebuild those classes, or "
    "should the structure come from `like`?",
)
def test_opt_state_round_trip(student, tmp_path):
    params = _params()
    tx, state = _trained_state(params)
    tree = (params, state)
    like = (_zeros_like(params), tx.init(_zeros_like(params)))
    restored = _round_trip(student, tmp_path / "state.ckpt", tree, like)
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
    jax.jit(tx.update)(jax.tree.map(jnp.ones_like, params), restored[1], restored[0])


@check(
    "every dtype survives: bfloat16, float16, int8, uint32, bool",
    points=2,
    hidden=True,
    hint="What does NumPy's .npz do with a dtype NumPy itself does not define, such as bfloat16?",
)
def test_dtypes_survive(student, tmp_path):
    tree = {
        "bf16": jnp.asarray([1.5, -2.25, 3.0], jnp.bfloat16),
        "f16": jnp.asarray([[0.1, 2.0]], jnp.float16),
        "i8": jnp.asarray([-3, 7], jnp.int8),
        "u32": jnp.asarray(4_000_000_000, jnp.uint32),
        "mask": jnp.asarray([True, False, True]),
        "step": jnp.asarray(12, jnp.int32),
    }
    like = jax.tree.map(lambda a: jnp.zeros(a.shape, jnp.float32), tree)
    restored = _round_trip(student, tmp_path / "dtypes.ckpt", tree, like)
    _assert_exact(restored, tree, like, what="restore_checkpoint(path, like) of mixed dtypes")


# -- failures ---------------------------------------------------------------------------


@check(
    "a missing checkpoint raises FileNotFoundError naming the path",
    points=2,
    hint="What should a user see when the path has a typo: a crash deep inside a loader, or "
    "one error that says which file is missing?",
)
def test_missing_file(student, tmp_path):
    like = _zeros_like(_params())
    problems = [
        _expect_error(
            student,
            tmp_path / "no-such-step.ckpt",
            like,
            FileNotFoundError,
            what="a file that does not exist",
        ),
        _expect_error(
            student,
            tmp_path / "no-such-dir" / "step-1.ckpt",
            like,
            FileNotFoundError,
            what="a file in a folder that does not exist",
        ),
    ]
    bad = [p for p in problems if p]
    if bad:
        raise fail(
            "restore_checkpoint(path, like) for a path with no file",
            expected="FileNotFoundError whose message names the path",
            observed="; ".join(bad),
            fix="`if not os.path.exists(path): raise FileNotFoundError(f'no checkpoint at "
            "{path}')`",
        )


@check(
    "a damaged checkpoint raises ValueError naming the path",
    points=2,
    hint="Which exceptions can a loader raise on a half-written or foreign file, and how do "
    "you turn all of them into one clear error?",
)
def test_corrupt_file(student, tmp_path, credit):
    params = _params()
    like = _zeros_like(params)
    good = tmp_path / "good.ckpt"
    student.save_checkpoint(str(good), params)
    written = sorted(tmp_path.glob("good.ckpt*"))  # the exact-path check judges the name
    if not written:
        raise fail(
            "save_checkpoint(path, tree)",
            expected=f"a file at {good.name}",
            observed=f"no file named {good.name}* in the folder",
            fix="write the checkpoint to `path`",
        )
    data = written[0].read_bytes()
    garbage = tmp_path / "garbage.ckpt"
    garbage.write_bytes(b"\x80\x04 this is not a checkpoint " * 8)
    truncated = tmp_path / "truncated.ckpt"
    truncated.write_bytes(data[: len(data) // 2])
    empty = tmp_path / "empty.ckpt"
    empty.write_bytes(b"")
    problems = [
        _expect_error(student, garbage, like, ValueError, what="random bytes"),
        _expect_error(student, truncated, like, ValueError, what="a checkpoint cut in half"),
        _expect_error(student, empty, like, ValueError, what="an empty file"),
    ]
    _judge(
        credit,
        problems,
        checked="restore_checkpoint(path, like) for damaged files",
        expected="ValueError whose message names the path, for each damaged file",
        cause="the loader's own exception (BadZipFile, UnpicklingError, EOFError, KeyError, "
        "...) escapes, or the message does not say which file is bad",
        fix="wrap the reading in `try: ... except Exception as exc: raise ValueError(f'{path} is "
        "not a readable checkpoint: {exc}') from exc`",
    )


@check(
    "a checkpoint that does not fit `like` raises ValueError naming the path",
    points=2,
    hint="Before unflattening, what should you compare between the saved leaves and like's "
    "leaves: their number, their shapes, the structure?",
)
def test_structure_mismatch(student, tmp_path, credit):
    params = _params((5, 4, 3))
    path = tmp_path / "small-model.ckpt"
    student.save_checkpoint(str(path), params)
    wider = _zeros_like(_params((5, 6, 3)))
    deeper = _zeros_like(_params((5, 4, 3, 2)))
    renamed = {"dense1": _zeros_like(params)["layer1"], "dense2": _zeros_like(params)["layer2"]}
    problems = [
        _expect_error(student, path, deeper, ValueError, what="like with an extra layer"),
        _expect_error(
            student,
            path,
            wider,
            ValueError,
            what="like with other shapes (hidden width 6 instead of 4)",
        ),
        _expect_error(student, path, renamed, ValueError, what="like with other layer names"),
    ]
    _judge(
        credit,
        problems,
        checked="restore_checkpoint(path, like) when the checkpoint is from another model",
        expected="ValueError whose message names the path, for each mismatch",
        cause="the leaves are poured into like's structure without checking that they fit: a "
        "checkpoint of another model restores silently (or fails with an unrelated error)",
        fix="save the tree's structure and every leaf's shape, and compare them with `like` "
        "before unflattening",
    )


# -- the file itself ------------------------------------------------------------------------


@check(
    "save_checkpoint writes exactly at the given path",
    points=1,
    hidden=True,
    hint="Does np.savez keep your file name as it is, or add something to it?",
)
def test_exact_path(student, tmp_path):
    path = tmp_path / "run" / "step_100"
    path.parent.mkdir()
    params = _params()
    student.save_checkpoint(path, params)
    created = sorted(p.name for p in path.parent.iterdir())
    if created != ["step_100"]:
        raise fail(
            "the files save_checkpoint(path, tree) creates for path=.../run/step_100",
            expected="one file, exactly at path",
            observed=f"{created}",
            cause="np.savez adds '.npz' to a file name that lacks it"
            if "step_100.npz" in created
            else "a temporary file was left behind, or the file was written elsewhere",
            fix="open the file yourself and pass the handle: `with open(path, 'wb') as f: "
            "np.savez(f, ...)`",
        )
    _assert_exact(
        student.restore_checkpoint(path, _zeros_like(params)),
        params,
        _zeros_like(params),
        what="restore_checkpoint(pathlib.Path, like)",
    )


@check(
    "saving twice to one path keeps the latest tree and leaves the tree untouched",
    points=1,
    hint="Does saving change the tree you pass in, and what happens to an older checkpoint "
    "at the same path?",
)
def test_overwrite_and_untouched(student, tmp_path):
    path = tmp_path / "latest.ckpt"
    first, second = _params(seed=1), _params(seed=2)
    kept = {k: {n: np.asarray(a).copy() for n, a in v.items()} for k, v in second.items()}
    numpy_tree = jax.tree.map(np.asarray, second)
    before = jax.tree.map(np.copy, numpy_tree)
    student.save_checkpoint(str(path), first)
    student.save_checkpoint(str(path), numpy_tree)
    values.assert_close(
        numpy_tree,
        before,
        what="the tree after save_checkpoint(path, tree)",
        rtol=0,
        atol=0,
        cause="save_checkpoint modified the tree it was given",
    )
    restored = student.restore_checkpoint(str(path), _zeros_like(first))
    _assert_exact(
        restored, kept, _zeros_like(first), what="restore_checkpoint after saving twice to one path"
    )
