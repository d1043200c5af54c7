"""Hidden checks for ex5_grad_clipping.py: clipping in an optax chain, raw gradient norms,
and the plot of both runs.

The optimizer is judged by its updates over a sequence of gradients whose norms
range from 0.01 to 10,000, against reference chains built here; a mismatch is
compared with the usual mistakes (clipping after Adam, no clipping, arguments
ignored) to name the cause.

The recorded norms are judged two ways that do not depend on the student's key
layout: (1) at step 0 both runs (clip on and off, same key) have seen nothing
but the initial parameters and the first batch, so their raw norms must agree
(on digits the lesson MLP's first raw norm is about 2.5, above `max_norm`, so a
norm taken after clipping shows as 1.0); (2) on all-zero
inputs with a single label, every hidden activation is ReLU(0) = 0, only the
last bias gets a gradient, and the whole run can be recomputed here exactly.

The training itself is judged by its trajectory on those zero inputs (12 steps at a
learning rate where a dropped optimizer state or frozen parameters part from the
reference by step 3), by the two digits runs differing once a raw norm exceeds
max_norm (a `clip` that never reaches the optimizer gives the same run twice), and by
key use: a raw `PRNGKey(0)` (the bits of `jax.random.key(0)`) after the sandbox's global
NumPy and Python RNGs were reseeded gives the same run as `key(0)` (when it does not, two
more runs tell a global RNG from a raw key that fails), another key another run, and no
key is consumed twice (JAX's key-reuse checker).

Each distinct call of `train_recording_grad_norms` compiles the student's training step
anew, so the checks share eight runs (`_shared.once`): one on zero inputs, two on 129 zero
rows (default and explicit learning rate; one row more than the default batch size), two on
digits (clip on and off), the raw-key run, the key-reuse run (two epochs of digits) and six
passes over 16 rows at learning_rate=0.0 (the batch order, and every row once per pass: each
pass's mean loss is the whole set's).

The plot is drawn in the sandbox, where a probe (grader/inputs/ex5_grad_clipping.py)
reads the PNG, decodes its pixels and, through a hook on `Figure.savefig`, records
the lines of every saved figure: the plot is judged by its pixels (two distinct
coloured curves) and by the lines it draws; its PNG bytes are attached.
"""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import jax
import jax.numpy as jnp
import matplotlib.backends.backend_agg
import matplotlib.figure
import matplotlib.image
import matplotlib.pyplot  # noqa: F401 (preloaded, see below)
import numpy as np
import optax

from grader.authoring import Attachments, check
from grader.checks import calls, diagnose, keys, values
from grader.checks.failure import CheckFailure, fail
from grader.data import load_digits
from grader.inputs.ex5_grad_clipping import MAX_FILE_BYTES as MAX_PLOT_BYTES
from grader.inputs.ex5_grad_clipping import after_moving_global_rngs, saved_plot
from grader.sandbox import client
from grader.sandbox.client import Remote, SandboxGone, StudentError
from grader.suites._shared import FLOAT32, Tolerance, mlp_params, once

# matplotlib is imported above, unused, so that the warm worker imports it once, before it
# forks a judge and its sandbox (it preloads a suite's top-level imports): for the student's
# module, the plot probe and the judge's pixel reading. Imported where it is used, each judge
# (and each sandbox) paid for it again: about a second on a quiet machine. (scikit-learn
# comes with grader.data.)

LESSON = "ex5_grad_clipping"
TITLE = "Exercise 5: gradient clipping with optax"

GRAD_NORMS = (0.01, 0.3, 5.0, 200.0, 1e4, 0.05, 50.0, 0.8, 3e3, 1.0)
ZERO_LABEL = 3
DIGITS_STEPS = 40  # both digits runs (clip on and off) serve four checks
STALE_STEPS, STALE_LR = 12, 0.3  # on zero inputs: a dropped opt_state shows by step 3
SKIP_STEPS = 5  # a second length on zero inputs: a skipped step 0 is named only if both show it
# the batch size of step 0 on zero inputs by default, and a second one (a one-step run): a loss
# summed over the batch is named only when step 0 is 128 and 32 times the expected
DEFAULT_BATCH, BATCH_PROBE = 128, 32
ODD_LABEL = 5
ODD_STEPS = 4  # the batch size (step 0, on `_one_odd_label`); the default learning rate (on zeros)
REUSE_STEPS = 12  # the key-reuse run: two epochs of digits (11 full batches of 128 each)
ODD_ROWS = 129  # one more than the default batch_size: another default shows
ODD_NAME = "129 zero rows (one of another label)"

# values far below 1 (Adam's updates, about the learning rate per value; squared norms):
# FLOAT32's rtol without its atol, which would pass an update 1% off
SMALL_VALUES_TOL: Tolerance = {"rtol": 1e-4, "atol": 1e-8}
# the raw norms on zero inputs fall toward 0 as the last bias learns: a tenth of FLOAT32's atol
NORM_TOL: Tolerance = {"rtol": 1e-4, "atol": 1e-6}
# grad_norm[0] of two runs that start alike (clip on and off), from the student's program:
# only a norm taken after clipping (at most max_norm, against a raw ~2.5) must fail
FIRST_NORMS_TOL: Tolerance = {"rtol": 1e-3, "atol": 1e-8}
# two trajectories of training (the student's runs, or one against the reference's): float32
# errors compound over the steps
RUN_TOL: Tolerance = {"rtol": 1e-3, "atol": 1e-5}
# the same program run twice (a default argument against the same value passed): no
# difference beyond a few ulps, where a learning rate or a clip changed shows at 1e-3
SAME_RUN_TOL: Tolerance = {"rtol": 1e-6, "atol": 0.0}
# first raw norms of batches of 127, 128 and 129 rows, 7e-5 apart (relative): TIGHT's rtol
# with NumPy's default atol (the norms are about 0.9)
BATCH_NORM_TOL: Tolerance = {"rtol": 1e-5, "atol": 1e-8}
# the lists the plot was given, as matplotlib keeps them (float64, or a float32 copy: 6e-8)
PLOTTED_TOL: Tolerance = {"rtol": 1e-6, "atol": 1e-8}


# -- the optimizer -------------------------------------------------------------
def _gradients(rng: np.random.Generator, like: Any) -> list[Any]:
    """Gradients of global norms GRAD_NORMS, in random directions."""
    grads = []
    for norm in GRAD_NORMS:
        g = jax.tree.map(lambda p: jnp.asarray(rng.normal(size=p.shape), jnp.float32), like)
        scale = norm / float(optax.tree.norm(g))
        grads.append(jax.tree.map(lambda leaf, s=scale: leaf * s, g))
    return grads


def _updates(opt: Any, params: Any, grads: list[Any]) -> list[Any]:
    state = opt.init(params)
    out = []
    for g in grads:
        updates, state = opt.update(g, state, params)
        params = optax.apply_updates(params, updates)
        out.append(updates)
    return out


def _ref_optimizer(clip: bool, learning_rate: float, max_norm: float) -> Any:
    adam = optax.scale_by_adam()
    steps = [optax.clip_by_global_norm(max_norm)] if clip else []
    return optax.chain(*steps, adam, optax.scale(-learning_rate))


def _traps(learning_rate: float, max_norm: float) -> dict[str, Any]:
    return {
        "plain Adam, optax.adam(learning_rate): the raw gradients reach Adam unclipped (as "
        "they do in a chain without clip_by_global_norm, or in one where it comes AFTER adam "
        "and clips Adam's updates, about learning_rate per parameter, far below "
        "max_norm)": optax.adam(learning_rate),
        "optax.chain(optax.adam(learning_rate), optax.clip_by_global_norm(max_norm)): the clip "
        "comes after Adam, so it clips the updates, not the raw gradients": optax.chain(
            optax.adam(learning_rate), optax.clip_by_global_norm(max_norm)
        ),
        "clipping with max_norm=1.0 whatever max_norm was passed": optax.chain(
            optax.clip_by_global_norm(1.0), optax.adam(learning_rate)
        ),
        "Adam with learning rate 1e-3 whatever learning_rate was passed": optax.chain(
            optax.clip_by_global_norm(max_norm), optax.adam(1e-3)
        ),
        "clipping each value to [-max_norm, max_norm] (optax.clip) instead of rescaling the "
        "whole gradient to global norm max_norm (optax.clip_by_global_norm)": optax.chain(
            optax.clip(max_norm), optax.adam(learning_rate)
        ),
        "adaptive clipping (optax.adaptive_grad_clip, a clip of each parameter relative to its "
        "own norm) instead of one clip of the whole gradient to global norm max_norm "
        "(optax.clip_by_global_norm)": optax.chain(
            optax.adaptive_grad_clip(max_norm), optax.adam(learning_rate)
        ),
        "AdamW (weight decay) instead of Adam": optax.chain(
            optax.clip_by_global_norm(max_norm), optax.adamw(learning_rate)
        ),
        "clip_by_global_norm(learning_rate) and adam(max_norm): the arguments are swapped": optax.chain(
            optax.clip_by_global_norm(learning_rate), optax.adam(max_norm)
        ),
        "clipping even though clip=False": optax.chain(
            optax.clip_by_global_norm(max_norm), optax.adam(learning_rate)
        ),
    }


def _check_optimizer(
    student: Remote,
    seed: int,
    clip: bool,
    learning_rate: float,
    max_norm: float,
    call: str,
    kwargs: dict[str, Any],
) -> None:
    rng = np.random.default_rng(seed)
    params = mlp_params((4, 4, 4), rng)  # two layers of one shape: eager optax compiles little
    grads = _gradients(rng, params)
    opt = student.make_optimizer(**kwargs)
    if not (callable(getattr(opt, "init", None)) and callable(getattr(opt, "update", None))):
        raise fail(
            f"{call} returns an optax optimizer",
            expected="an optax.GradientTransformation (with .init and .update)",
            observed=repr(opt)[:200],
            fix="return the optax object itself, e.g. optax.chain(...)",
        )
    got = _updates(opt, params, grads)
    want = _updates(_ref_optimizer(clip, learning_rate, max_norm), params, grads)
    for step, (g, w) in enumerate(zip(got, want, strict=True)):
        found = values.difference(g, w, **SMALL_VALUES_TOL)
        if found is None:
            continue
        norms = ", ".join(f"{n:g}" for n in GRAD_NORMS)
        raise fail(
            f"the updates of {call} over {len(GRAD_NORMS)} steps with gradient norms {norms}",
            expected=f"step {step} (gradient norm {GRAD_NORMS[step]:g}): {found.expected}",
            observed=found.observed,
            cause=_trap_cause(opt, got, params, grads, seed, clip, learning_rate, max_norm),
            fix=(
                "optax.chain(optax.clip_by_global_norm(max_norm), optax.adam(learning_rate)): "
                "the chain applies its links left to right, so the raw gradients are clipped "
                "first"
                if clip
                else "return optax.adam(learning_rate) when clip is False"
            ),
        )


def _same_updates(a: list[Any], b: list[Any]) -> bool:
    return all(
        values.difference(x, y, **SMALL_VALUES_TOL) is None for x, y in zip(a, b, strict=True)
    )


def _trap_cause(
    opt: Any,
    got: list[Any],
    params: Any,
    grads: list[Any],
    seed: int,
    clip: bool,
    learning_rate: float,
    max_norm: float,
) -> str:
    """The trap (a usual mistake, applied to the reference chain) whose updates are the
    student's on `params` over GRAD_NORMS, and again on params of other shapes (three leaves
    of other sizes) with gradients of the same norms in other directions; else ""."""
    traps = _traps(learning_rate, max_norm)
    if not clip:
        traps["plain Adam with learning rate 1e-3 whatever learning_rate was passed"] = optax.adam(
            1e-3
        )
        traps[
            "plain SGD, optax.sgd(learning_rate) (-learning_rate * the gradients): the optimizer "
            "is SGD, where Adam belongs"
        ] = optax.sgd(learning_rate)
    else:
        traps[
            "optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(learning_rate)) "
            "(-learning_rate * the clipped gradients): the optimizer after the clip is SGD, "
            "where Adam belongs"
        ] = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(learning_rate))
    rng = np.random.default_rng(seed + 1000)
    other = mlp_params((3, 6, 2), rng)
    other_grads = _gradients(rng, other)
    for name, trap in traps.items():
        if name.startswith("clipping even") and clip:
            continue
        if name.startswith("clipping with max_norm=1.0") and not clip:
            continue  # with clip=False the chain that clips is the mistake, whatever max_norm
        if not _same_updates(got, _updates(trap, params, grads)):
            continue
        try:
            again = _updates(opt, other, other_grads)
        except SandboxGone:
            raise
        except Exception:  # an optimizer that fails on other shapes confirms nothing
            return ""
        if _same_updates(again, _updates(trap, other, other_grads)):
            return f"your updates equal those of {name}"
        return ""
    return ""


def _same_runs_cause(student: Remote) -> str:
    """Why the clip=True and clip=False digits runs agree, where the student's make_optimizer
    shows it (on _check_optimizer's gradients of very different norms), or "": both of its
    optimizers give the same updates, or they differ and the clipping one is the reference
    chain (then the clip argument does not reach the optimizer), or the clipping one is not."""
    rng = np.random.default_rng(0)
    params = mlp_params((4, 4, 4), rng)
    grads = _gradients(rng, params)
    try:
        clipped, plain = (
            _updates(student.make_optimizer(clip=clip), params, grads) for clip in (True, False)
        )
    except SandboxGone:
        raise
    except Exception:  # make_optimizer's own checks show its error
        return ""

    if _same_updates(clipped, plain):
        return "make_optimizer(clip=True) and make_optimizer(clip=False) give the same updates"
    if _same_updates(clipped, _updates(_ref_optimizer(True, 1e-3, 1.0), params, grads)):
        return (
            "the clip argument does not reach the optimizer: make_optimizer(clip=True) clips as "
            "the reference chain does and make_optimizer(clip=False) does not, yet the two runs "
            "train alike"
        )
    # the student's clipping differs from the reference's: whether it bites on these
    # gradients or never reaches the training, the runs cannot tell
    return (
        "make_optimizer(clip=True) does not clip as the reference chain does (see the check "
        "'make_optimizer() clips the raw gradients, then applies Adam')"
    )


@check(
    "make_optimizer() clips the raw gradients, then applies Adam",
    points=3,
    hint="In optax.chain(a, b), which transformation sees the raw gradients? Which one "
    "should: the clipping or Adam?",
    nudge="optax.chain applies its links left to right: the link that must see the raw gradients comes first, Adam after it.",
    spec="`make_optimizer(clip=True, learning_rate=1e-3, max_norm=1.0)` -> `optax.chain(optax.clip_by_global_norm(max_norm), optax.adam(learning_rate))` when `clip` ... Checks: optimizer updates equal the reference chain on gradients of very different norms (clip before adam, not after)",
)
def test_optimizer_default(student: Remote, seed: int) -> None:
    _check_optimizer(student, seed, True, 1e-3, 1.0, "make_optimizer()", {})


@check(
    "make_optimizer uses its learning_rate and max_norm",
    points=2,
    hint="Are learning_rate and max_norm passed on to optax, or are the lesson's 1e-3 and "
    "1.0 written into the chain?",
    nudge="Pass the function's own max_norm to the clipping link and its own learning_rate to Adam, instead of the default numbers.",
    spec="`optax.chain(optax.clip_by_global_norm(max_norm), optax.adam(learning_rate))` when `clip` ... optimizer updates equal the reference chain on gradients of very different norms",
)
def test_optimizer_arguments(student: Remote, seed: int) -> None:
    _check_optimizer(
        student,
        seed + 1,
        True,
        0.5,
        0.3,
        "make_optimizer(clip=True, learning_rate=0.5, max_norm=0.3)",
        {"clip": True, "learning_rate": 0.5, "max_norm": 0.3},
    )


@check(
    "make_optimizer(clip=False) is plain Adam",
    points=2,
    hint="What should the optimizer be when clip is False?",
    nudge="Without clipping the optimizer is Adam alone, at the learning_rate passed in.",
    spec="plain `optax.adam(learning_rate)` otherwise",
)
def test_optimizer_no_clip(student: Remote, seed: int) -> None:
    _check_optimizer(
        student,
        seed + 2,
        False,
        0.01,
        1.0,
        "make_optimizer(clip=False, learning_rate=0.01)",
        {"clip": False, "learning_rate": 0.01},
    )


# -- the recorded norms --------------------------------------------------------
@cache
def _digits() -> tuple[Any, ...]:
    return load_digits()


def _zero_data() -> tuple[Any, ...]:
    """All-zero inputs with one label: only the last bias learns, so the run is known.
    ODD_ROWS rows, the shape of `_one_odd_label`: the student's permutation and batch slicing
    compile for one shape only (every batch of identical rows has the same gradient)."""
    x = np.zeros((ODD_ROWS, 64), np.float32)
    y = np.full(ODD_ROWS, ZERO_LABEL, np.int32)
    return x, y, x[:30], y[:30]


@cache
def _ref_zero_run(
    n_steps: int, learning_rate: float, clip: bool, stale: str = ""
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The loss and the raw gradient norm of every step on `_zero_data`: with x = 0 every
    hidden pre-activation is 0 (zero biases), ReLU(0) = 0 with derivative 0, so the logits
    are the last bias b3 and its gradient, softmax(b3) - onehot, is the whole gradient.
    `stale="opt_state"` keeps the initial optimizer state at every step (the new one is
    dropped), `stale="params"` keeps the initial parameters, `stale="ascent"` subtracts each
    update (params - updates, where optax's updates already point downhill): the runs of
    those mistakes."""
    b3 = jnp.zeros(10)
    opt = _ref_optimizer(clip, learning_rate, 1.0)
    state = opt.init(b3)
    first_state, first_b3 = state, b3
    losses, norms = [], []

    def loss(b: jax.Array) -> jax.Array:
        return -jax.nn.log_softmax(b)[ZERO_LABEL]

    for _ in range(n_steps):
        value, grad = jax.value_and_grad(loss)(b3)
        losses.append(float(value))
        norms.append(float(jnp.sqrt(jnp.sum(grad**2))))
        updates, state = opt.update(grad, state, b3)
        b3 = b3 - updates if stale == "ascent" else optax.apply_updates(b3, updates)
        if stale == "opt_state":
            state = first_state
        elif stale == "params":
            b3 = first_b3
    return tuple(losses), tuple(norms)


def _train(
    student: Remote,
    name: str,
    data: Callable[[], tuple[Any, ...]],
    n_steps: int,
    clip: bool,
    key_seed: int | str = 0,
    **kwargs: Any,
) -> dict[str, Any]:
    """train_recording_grad_norms, each distinct run once per student module (`once`: each
    run compiles the student's step anew); the key is jax.random.key(key_seed), or
    jax.random.PRNGKey(0) (raw) for key_seed="raw"."""
    tag = ("train", name, n_steps, clip, key_seed, tuple(sorted(kwargs.items())))
    # an int here: "raw" is the only str (mypy does not narrow on ==)
    key = jax.random.PRNGKey(0) if key_seed == "raw" else jax.random.key(key_seed)  # type: ignore[arg-type]
    found: dict[str, Any] = once(
        student,
        tag,
        lambda: student.train_recording_grad_norms(key, data(), n_steps, clip, **kwargs),
    )
    shown = {0: "key", "raw": "jax.random.PRNGKey(0)"}.get(key_seed, f"jax.random.key({key_seed})")
    call = (
        f"train_recording_grad_norms({shown}, {name}, n_steps={n_steps}, clip={clip}"
        + "".join(f", {k}={v}" for k, v in kwargs.items())
        + ")"
    )
    _check_record(found, n_steps, call)
    return found


def _check_record(record: Any, n_steps: int, call: str) -> None:
    if not isinstance(record, dict) or not {"loss", "grad_norm"} <= set(record):
        raise fail(
            f"the result of {call}",
            expected="a dict with keys 'loss' and 'grad_norm'",
            observed=repr(record)[:200],
            fix="return {'loss': losses, 'grad_norm': norms}",
        )
    for name in ("loss", "grad_norm"):
        series = record[name]
        if not isinstance(series, list | tuple):
            raise fail(
                f"{call}['{name}']",
                expected="a list of floats, one per step",
                observed=f"a {type(series).__name__}",
                fix="collect one float per step in a Python list",
            )
        if len(series) != n_steps:
            raise fail(
                f"the length of {call}['{name}']",
                expected=f"{n_steps} (one per step)",
                observed=str(len(series)),
                fix="append one value in every training step",
            )
        try:
            numbers = [float(v) for v in series]
        except (TypeError, ValueError):
            raise CheckFailure(
                f"the entries of {call}['{name}']",
                expected="numbers (floats)",
                observed=repr(series[:3])[:200],
                fix="convert each recorded value with float(...)",
            ) from None
        if not np.all(np.isfinite(numbers)):
            # no cause: a NaN comes from many places (the loss's formula, the update, the
            # data); where it first shows is what the student can look at
            bad = ~np.isfinite(numbers)
            raise fail(
                f"{call}['{name}'] is finite",
                expected="no NaN or inf",
                observed=f"{int(np.sum(bad))} of {n_steps} entries are NaN/inf, the first at "
                f"step {int(np.argmax(bad))} ({numbers[int(np.argmax(bad))]})",
                fix="print the loss and the gradient norm of the first steps: find the first "
                "step whose value is not finite, and what in it produced the NaN or inf",
            )


@check(
    "train_recording_grad_norms records one loss and one norm per step, as Python floats",
    points=1,
    hint="How many entries does each list get if you append once per training step, and "
    "what type is each entry?",
    requires=("test_first_step",),
    nudge="Append one number per step to each list and convert each with float(), so the lists hold Python floats rather than arrays.",
    spec="`{'loss': [...], 'grad_norm': [...]}` (lists of floats), one entry per step ... lists have one entry per step",
)
def test_record_format(student: Remote) -> None:
    call = f"train_recording_grad_norms(key, digits, n_steps={DIGITS_STEPS}, clip=True)"
    record = _train(student, "digits", _digits, DIGITS_STEPS, True)
    for name in ("loss", "grad_norm"):
        # the spec's "lists of floats": NumPy or JAX scalars convert, but are not floats
        bad = sorted({type(v).__name__ for v in record[name] if not isinstance(v, float)})
        if bad:
            raise fail(
                f"the entries of {call}['{name}']",
                expected="Python floats",
                observed=f"entries of type {', '.join(bad)}",
                fix="convert each recorded value with `float(...)`, so the lists hold numbers, "
                "not device arrays or NumPy scalars",
            )


@check(
    "the recorded norms are taken before clipping",
    points=3,
    hint="Which gradient does clipping change: the one jax.grad returns, or the one you "
    "record? Record the norm of the gradient before the optimizer sees it.",
    requires=("test_first_step",),
    nudge="Take the norm of the gradient jax.value_and_grad returned, before it is handed to the optimizer whose chain clips it.",
    spec="`grad_norm` the global norm of the raw gradient before clipping ... norms are pre-clip",
)
def test_norms_pre_clip(student: Remote, attach: Attachments) -> None:
    with_clip = _train(student, "digits", _digits, DIGITS_STEPS, True)
    without = _train(student, "digits", _digits, DIGITS_STEPS, False)
    first_clip, first_raw = float(with_clip["grad_norm"][0]), float(without["grad_norm"][0])
    attach.metric("raw gradient norm at step 0 (digits)", first_raw)
    if np.isclose(first_clip, first_raw, **FIRST_NORMS_TOL):
        return  # (a raw norm below max_norm cannot show the difference: not held against it)
    clipped = np.asarray([float(v) for v in with_clip["grad_norm"]], np.float64)
    # the raw norm of step 0 clipped to max_norm=1.0 is 1.0 itself: the clip run's first norm
    # is that value, and none of its norms exceeds it
    after_clip = first_raw > 1.0 + 1e-3 and bool(
        np.isclose(first_clip, 1.0, rtol=1e-4, atol=0.0) and np.all(clipped <= 1.0 + 1e-4)
    )
    raise fail(
        "grad_norm[0] of two runs on digits with the same key (clip=True and clip=False)",
        expected=f"the same raw norm in both runs (step 0 has seen no clipping yet): {first_raw:.4f}",
        observed=f"{first_clip:.4f} with clip=True, {first_raw:.4f} with clip=False",
        cause=(
            "the norm was taken AFTER clipping: with clip=True the first recorded norm is "
            f"max_norm=1.0 itself, and none of the {len(clipped)} exceeds it, although the "
            f"raw gradient's norm was {first_raw:.2f}, so the plot can never show what "
            "clipping did"
        )
        if after_clip
        else "",
        fix="loss, grads = jax.value_and_grad(loss_fn)(params, x, y); record "
        "optax.tree.norm(grads); only then call optimizer.update(grads, ...)"
        if after_clip
        else "step 0 of both runs should see the same initial parameters and first batch: "
        "derive the initialisation and the batch order from the key alone, the same way "
        "whatever clip is (no np.random or random), and record the norm before the update",
    )


@check(
    "the recorded norms equal optax.tree.norm of the raw gradient",
    points=2,
    hint="Is what you record the global L2 norm over all leaves of the gradient: not its "
    "square, not one layer's, not the norm of the updates?",
    hidden=True,
    nudge="The global norm is the square root of the sum of squares over every leaf of the gradient tree, which optax.tree.norm computes.",
    spec="`grad_norm` the global norm of the raw gradient before clipping ... match `optax.tree.norm` of the raw gradients",
)
def test_norms_exact(student: Remote) -> None:
    n_steps, lr = STALE_STEPS, STALE_LR  # test_loss_decreases's run on zero inputs
    record = _train(student, "zero inputs", _zero_data, n_steps, False, learning_rate=lr)
    losses = [float(v) for v in record["loss"]]
    norms = [float(v) for v in record["grad_norm"]]
    ref_losses, ref_norms = _ref_zero_run(n_steps, lr, clip=False)
    checked = (
        "train_recording_grad_norms on all-zero inputs with one label (only the last "
        "bias learns, so every step is known)"
    )
    if np.allclose(losses, ref_losses, **FLOAT32):
        if np.allclose(norms, ref_norms, **NORM_TOL):
            return
        # the raw norms fall from 0.95 toward 0 over the steps: a square fits them all only
        # where the squared norm was recorded, one factor only where every value was scaled
        ratio = np.asarray(norms) / np.asarray(ref_norms)
        factor = float(np.median(ratio))
        cause = (
            "the recorded values are the SQUARED norm: take the square root (optax.tree.norm does)"
            if np.allclose(norms, np.square(ref_norms), **SMALL_VALUES_TOL)
            else f"every recorded value is {factor:.3g} x the raw gradient's norm, on all "
            f"{n_steps} steps"
            if np.allclose(ratio, factor, rtol=1e-3, atol=0.0)
            else ""
        )
        raise fail(
            checked,
            expected=f"grad_norm {np.round(ref_norms, 5).tolist()}",
            observed=f"grad_norm {np.round(norms, 5).tolist()}",
            cause=cause,
            fix="record optax.tree.norm(grads) of the gradient jax.grad returned",
        )
    default_losses, _ = _ref_zero_run(n_steps, 1e-3, clip=False)
    if np.allclose(losses, default_losses, **FLOAT32):
        raise fail(
            checked,
            expected=f"loss {np.round(ref_losses, 4).tolist()} with learning_rate={lr}",
            observed=f"loss {np.round(losses, 4).tolist()}, the run of learning_rate=1e-3",
            cause="the learning_rate argument does not reach the optimizer: the run with "
            f"learning_rate={lr} is the run of learning_rate=1e-3",
            fix="pass learning_rate on: make_optimizer(clip, learning_rate)",
        )
    # The run left the known path (e.g. a ReLU whose derivative at 0 is not 0): only step 0,
    # where the last bias's gradient alone has norm sqrt(0.9), can be judged.
    if norms[0] < ref_norms[0] * (1 - 1e-4):
        seen = np.stack([losses, norms], 1), np.stack([ref_losses, ref_norms], 1)
        raise fail(
            checked,
            expected=f"grad_norm[0] >= {ref_norms[0]:.5f} (the last bias's "
            "gradient alone has this norm)",
            observed=f"grad_norm[0] = {norms[0]:.5f}",
            # a step 0 that never ran records 0.0 too: that cause, confirmed, is named; else
            # none (a norm of part of the gradient, or of another loss's, reads low alike)
            cause=_step0_cause(student, (np.zeros(n_steps),), *seen),
            fix="record optax.tree.norm(grads) of the gradient jax.grad returned, over every "
            "leaf, before the optimizer sees it",
        )


def _one_odd_label() -> tuple[Any, ...]:
    """129 all-zero rows, all of label ZERO_LABEL but one: the first batch of 128 is every row
    but one (the odd row, or another), so its first raw gradient (the last bias's) is one of
    two known numbers, and a batch of all 129 rows (another batch size) a third."""
    x = np.zeros((ODD_ROWS, 64), np.float32)
    y = np.full(ODD_ROWS, ZERO_LABEL, np.int32)
    y[0] = ODD_LABEL
    return x, y, x[:30], y[:30]


def _first_norm(n_main: int, n_odd: int) -> float:
    """The norm of softmax(0) - mean one-hot of a batch of n_main ZERO_LABEL and n_odd
    ODD_LABEL rows."""
    mean = np.zeros(10)
    mean[ZERO_LABEL], mean[ODD_LABEL] = n_main, n_odd
    return float(np.linalg.norm(0.1 - mean / (n_main + n_odd)))


def _batch_rows(norm: float) -> str:
    """How many rows the first batch of `_one_odd_label` holds, from its raw norm: "128",
    "127", "129 (every row)", or "" for none of these."""
    for rows, n_main, n_odd in (
        ("128", 127, 1),
        ("128", 128, 0),
        ("127", 126, 1),
        ("129 (every row)", 128, 1),
    ):
        if np.isclose(norm, _first_norm(n_main, n_odd), **BATCH_NORM_TOL):  # 7e-5 apart
            return rows
    return ""


def _check_batch_size(student: Remote, record: dict[str, Any]) -> None:
    """Each step trains on batch_size=128 rows: on `_one_odd_label` (129 rows) the first raw
    norm of a batch of 127 or 129 rows is another known number. Where it is, a run with
    batch_size=128 passed tells a default that is not the lesson's (that run has 128 rows)
    from a batch that is not batch_size rows long (it has as many as the default run)."""
    norm = float(record["grad_norm"][0])
    rows = _batch_rows(norm)
    if rows in ("128", ""):
        return
    try:
        explicit = _batch_rows(
            float(
                _train(student, ODD_NAME, _one_odd_label, ODD_STEPS, False, batch_size=128)[
                    "grad_norm"
                ][0]
            )
        )
    except (AssertionError, client.StudentError, TypeError, ValueError):  # a failed run
        explicit = ""  # (a CheckFailure is an AssertionError): nothing to tell them apart
    if explicit == "128":
        cause = (
            "the default batch_size is not the lesson's 128: with batch_size=128 passed, the "
            "first batch is 128 rows"
        )
    elif explicit == rows:
        cause = (
            f"the first batch is {rows} rows with batch_size=128 passed too: a batch is not "
            "batch_size rows long"
            + (" (one row short: an off-by-one in the batch slice)" if rows == "127" else "")
        )
    else:
        cause = ""
    raise fail(
        f"grad_norm[0] of train_recording_grad_norms(key, {ODD_NAME}, {ODD_STEPS}, "
        "clip=False): with the default batch_size=128 the first batch is 128 of the "
        f"{ODD_ROWS} rows",
        expected=f"{_first_norm(127, 1):.6f} or {_first_norm(128, 0):.6f} (the raw "
        "gradient of 128 rows, with or without the odd one)",
        observed=f"{norm:.6f}, the raw gradient of a batch of {rows} rows",
        cause=cause,
        fix="keep the signature's batch_size=128; idx = perm[j * batch_size : (j + 1) "
        "* batch_size] for batch j of the epoch",
    )


def _close(a: Sequence[float], b: Sequence[float]) -> bool:
    return bool(np.allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), **RUN_TOL))


@check(
    "train_recording_grad_norms records the first step's loss and raw gradient norm",
    points=1,
    hint="At step 0 nothing has been updated yet: is the loss you record the loss of this "
    "batch under the initial parameters, and the norm the global L2 norm of its gradient?",
    nudge="At every step compute the loss and the gradient of the current batch under the current params with jax.value_and_grad, and record both before updating.",
    spec="one entry per step, `grad_norm` the global norm of the raw gradient before clipping ... match `optax.tree.norm` of the raw gradients",
)
def test_first_step(student: Remote) -> None:
    # The gate of the recording's properties (format, pre-clip norms, key use): step 0 on zero
    # inputs is known whatever the update does (the loss log(10), the norm of
    # softmax(0) - onehot), so one wrong line in the update closes only the checks of the
    # trajectory (test_loss_decreases), not these.
    record = _train(student, "zero inputs", _zero_data, STALE_STEPS, False, learning_rate=STALE_LR)
    ref_losses, ref_norms = _ref_zero_run(STALE_STEPS, STALE_LR, clip=False)
    losses, norms = list(record["loss"]), list(record["grad_norm"])
    if len(losses) != STALE_STEPS or len(norms) != STALE_STEPS:
        raise fail(
            f"the lists of train_recording_grad_norms(key, zero inputs, {STALE_STEPS}, ...)",
            expected=f"{STALE_STEPS} losses and {STALE_STEPS} norms, one per step",
            observed=f"{len(losses)} losses and {len(norms)} norms",
            fix="append one loss and one norm inside the loop over steps",
        )
    first = (float(losses[0]), float(norms[0]))
    if np.allclose(first, (ref_losses[0], ref_norms[0]), **RUN_TOL):
        return
    ref = np.stack([ref_losses, ref_norms], axis=1)
    raise fail(
        "the first recorded loss and gradient norm, on all-zero inputs with one label "
        "(step 0: the logits are the zero last bias, whatever the weights)",
        expected=f"loss {ref_losses[0]:.5f}, grad_norm {ref_norms[0]:.5f}",
        observed=f"loss {first[0]:.5f}, grad_norm {first[1]:.5f}",
        cause=_step0_cause(student, (np.zeros(STALE_STEPS),), np.stack([losses, norms], 1), ref)
        or _batch_sum_cause(student, first),
        fix="record loss and optax.tree.norm(grads) from "
        "jax.value_and_grad(loss_fn)(params, x, y) before the update",
    )


LATE_LOSS = (
    "each recorded loss is the loss AFTER that step's update (the next step's loss, on the "
    "same batch): the loss is computed again with the updated parameters, where the loss "
    "jax.value_and_grad returned, under the parameters the gradient was taken at, belongs"
)


def _zero_run_causes(args: Any) -> tuple[diagnose.Diagnostic, ...]:
    """The mistakes a zero-input run of len(args[0]) steps is held to: step 0 never run, and
    each loss recorded after its step's update (the reference's run one loss earlier, its
    norms in place)."""
    n_steps = len(args[0])
    losses, norms = _ref_zero_run(n_steps + 1, STALE_LR, clip=False)
    late = np.stack([losses[1:], norms[:-1]], 1)
    return (
        diagnose.skipped_first_step,
        diagnose.matches(late, LATE_LOSS, "loss_after_update"),
    )


def _step0_cause(student: Remote, args: Any, record: Any, reference: Any) -> str:
    """The cause "step 0 was not run" or "the loss is recorded after the update", when the
    zero-input run of STALE_STEPS steps shows it and a run of SKIP_STEPS steps, trained for
    that purpose, shows it too (two lengths: one run's first entry of 0.0 could have another
    cause); else ""."""
    if diagnose.find(record, reference, *_zero_run_causes(args)) is None:
        return ""
    try:
        other = _train(
            student, "zero inputs", _zero_data, SKIP_STEPS, False, learning_rate=STALE_LR
        )
        rows = np.stack(
            [np.asarray(other["loss"], float), np.asarray(other["grad_norm"], float)], 1
        )
    except (AssertionError, client.StudentError, TypeError, ValueError):  # a failed second run
        return ""  # (a CheckFailure is an AssertionError): nothing to confirm on
    again = np.stack(_ref_zero_run(SKIP_STEPS, STALE_LR, clip=False), axis=1)
    return diagnose.confirmed(
        [(args, record, reference), ((np.zeros(SKIP_STEPS),), rows, again)],
        _zero_run_causes,
    )


SUMMED_LOSS = (
    "the first loss and gradient norm are {b} times the expected, {b} being the batch size "
    "(and {other} times on a run with batch_size={other}): the loss is summed over the batch "
    "instead of averaged"
)


def _batch_causes(args: Any) -> tuple[diagnose.Diagnostic, ...]:
    """Step 0 on zero inputs with a batch of len(args[0]) rows, its loss summed over them:
    every row has the same loss and gradient, so the loss and the norm are the batch size
    times the reference's."""
    b = len(args[0])
    losses, norms = _ref_zero_run(1, STALE_LR, clip=False)
    summed = np.array([losses[0] * b, norms[0] * b])
    return (diagnose.matches(summed, SUMMED_LOSS.format(b=b, other=BATCH_PROBE), "batch_sum"),)


def _batch_sum_cause(student: Remote, first: tuple[float, float]) -> str:
    """The cause "the loss is summed over the batch" when step 0's loss and norm are
    DEFAULT_BATCH times the reference's and, on a one-step run with batch_size=BATCH_PROBE
    (made only then), BATCH_PROBE times: a factor that does not follow the batch size (a
    stray 128, or a sum that ignores batch_size) names nothing."""
    losses, norms = _ref_zero_run(1, STALE_LR, clip=False)
    expected = np.array([losses[0], norms[0]])
    found = np.asarray(first, np.float64)
    if not diagnose.matches(expected * DEFAULT_BATCH, "", "batch_sum")(found, expected):
        return ""
    try:
        other = _train(
            student,
            "zero inputs",
            _zero_data,
            1,
            False,
            batch_size=BATCH_PROBE,
            learning_rate=STALE_LR,
        )
        row = np.array([float(other["loss"][0]), float(other["grad_norm"][0])])
    except (AssertionError, client.StudentError, TypeError, ValueError):  # a failed second run
        return ""  # (a CheckFailure is an AssertionError): nothing to confirm on
    text = diagnose.confirmed(
        [((np.zeros(DEFAULT_BATCH),), found, expected), ((np.zeros(BATCH_PROBE),), row, expected)],
        _batch_causes,
    )
    # the built-in factor answers too (a constant 128 on both): only the summed batch is said
    return text if text == SUMMED_LOSS.format(b=DEFAULT_BATCH, other=BATCH_PROBE) else ""


@check(
    "training on digits lowers the loss, with and without clipping",
    points=2,
    hint="Are the parameters and the optimizer state carried from one step to the next, "
    "does each step use a new batch, and does `clip` reach the optimizer?",
    nudge="Each step feeds the params and optimizer state the previous update returned into the next, on a new batch of batch_size rows, with the optimizer make_optimizer(clip, learning_rate) builds.",
    spec="`train_recording_grad_norms(key, data, n_steps, clip, batch_size=128, learning_rate=1e-3)` -> `{'loss': [...], 'grad_norm': [...]}` (lists of floats), one entry per step ... `data` as in 08's `train`, the lesson MLP sized from it",
)
def test_loss_decreases(student: Remote, attach: Attachments) -> None:
    # a run on zero inputs is known exactly (see _ref_zero_run): a state that is not carried
    # from step to step shows in its trajectory, even where the loss still falls
    record = _train(student, "zero inputs", _zero_data, STALE_STEPS, False, learning_rate=STALE_LR)
    losses = [float(v) for v in record["loss"]]
    reference, _ = _ref_zero_run(STALE_STEPS, STALE_LR, clip=False)
    if not _close(losses, reference):
        keep = (
            "params, opt_state = ... each step: keep BOTH values the update returns and pass "
            "them to the next step"
        )
        for stale, cause, fix in (
            (
                "opt_state",
                "the optimizer state is not carried from step to step: every update "
                "starts again from the state optimizer.init gave (Adam's moments and step count "
                "are lost), so each step is Adam's first step",
                keep,
            ),
            (
                "params",
                "every step's loss is the initial parameters' loss (on zero inputs it depends "
                "on the last bias alone): the parameters the steps use are never updated",
                keep,
            ),
            (
                "ascent",
                f"the loss rose from {losses[0]:.4g} to {losses[-1]:.4g}, as the reference's "
                "run does when each update is subtracted (params - updates): the update climbs "
                "the loss, so its sign is wrong",
                "params = optax.apply_updates(params, updates): optax's updates already point "
                "downhill, so they are added",
            ),
        ):
            if _close(losses, _ref_zero_run(STALE_STEPS, STALE_LR, clip=False, stale=stale)[0]):
                raise fail(
                    f"the loss of train_recording_grad_norms(key, zero inputs, {STALE_STEPS}, "
                    f"clip=False, learning_rate={STALE_LR}) step by step (only the last bias "
                    "learns, so every step is known)",
                    expected=f"loss {np.round(reference, 4).tolist()}",
                    observed=f"loss {np.round(losses, 4).tolist()}",
                    cause=cause,
                    fix=fix,
                )
    # the digits runs below use the defaults: learning_rate's must be the lesson's 1e-3. Judged
    # on identical rows, where the order of the batches cannot change the run (a shuffle the
    # key does not reproduce is test_train_key_use's to name, not a learning rate's)
    default = _train(student, "zero inputs", _zero_data, ODD_STEPS, False)
    explicit = _train(student, "zero inputs", _zero_data, ODD_STEPS, False, learning_rate=1e-3)
    if not np.allclose(
        np.asarray(default["loss"], np.float64),
        np.asarray(explicit["loss"], np.float64),
        **SAME_RUN_TOL,
    ):
        raise fail(
            f"train_recording_grad_norms(key, zero inputs, {ODD_STEPS}, clip=False) without "
            "learning_rate and with learning_rate=1e-3",
            expected=f"the same run: loss {np.round(explicit['loss'], 6).tolist()}",
            observed=f"loss {np.round(default['loss'], 6).tolist()} without learning_rate",
            cause="the default learning_rate is not the lesson's 1e-3",
            fix="keep the signature: train_recording_grad_norms(key, data, n_steps, clip, "
            "batch_size=128, learning_rate=1e-3)",
        )
    # the default batch size: the first raw norm of a run with the defaults
    _check_batch_size(student, _train(student, ODD_NAME, _one_odd_label, ODD_STEPS, False))
    runs = {}
    for clip in (True, False):
        runs[clip] = _train(student, "digits", _digits, DIGITS_STEPS, clip)
        curve = np.asarray(runs[clip]["loss"], np.float64)
        first, last = curve[:10].mean(), curve[-10:].mean()
        attach.metric(f"mean loss, last 10 of 40 steps, clip={clip}", float(last))
        if not last < 0.75 * first:
            raise fail(
                f"the loss of train_recording_grad_norms(key, digits, 40, clip={clip})",
                expected="the mean of the last 10 steps below 0.75 x the mean of the first 10 "
                "(Adam 1e-3 on digits gets from ~2.3 to ~0.5 in 40 steps)",
                observed=f"first 10: {first:.3f}, last 10: {last:.3f}",
                # a loss that rises here has no cause of its own: the update's sign, a
                # dropped state or frozen parameters show on zero inputs above
                cause="",
                fix="keep the params and opt_state each step returns and feed them to the "
                "next; draw a new batch every step",
            )
    # Clipping changes the run once a raw norm exceeds max_norm=1.0 (Adam is nearly blind to
    # one constant scale, not to a scale that changes from step to step): measured, the two
    # digits runs' losses part by 1e-3 at step 3 and by 10% at step 40.
    raw = np.asarray(runs[False]["grad_norm"], np.float64)
    with_clip, without = (np.asarray(runs[c]["loss"], np.float64) for c in (True, False))
    if int(np.sum(raw > 1.05)) >= 3 and np.allclose(with_clip, without, **SAME_RUN_TOL):
        raise fail(
            f"the runs train_recording_grad_norms(key, digits, {DIGITS_STEPS}, clip=True) and "
            "(..., clip=False) with the same key",
            expected=f"different losses: the raw gradient norm exceeded max_norm=1.0 at "
            f"{int(np.sum(raw > 1.05))} of {DIGITS_STEPS} steps, so clipping changes the updates",
            observed="the same loss at every step in both runs",
            cause=_same_runs_cause(student),
            fix="optimizer = make_optimizer(clip=clip, learning_rate=learning_rate)",
        )


# grad_norm[0] on digits (a batch of 128 rows) of the lesson MLP, He-initialised with sizes
# (64, 256, 128, 10): measured 1.37 to 3.26 (median 2.13) over 40 keys; weights 5 to 11 times
# too small (normal * 2 / fan_in) give 0.06 to 0.13. A wide band: a statistic of one run.
FIRST_NORM_BAND = (0.6, 8.0)


@check(
    "train_recording_grad_norms trains the lesson MLP: its first raw norm is a He init's",
    points=1,
    hint="Which network does the function train: the lesson MLP, sized "
    "(x_train.shape[1], 256, 128, 10) and He-initialised (normal * sqrt(2 / fan_in)), or "
    "one whose weights start at another scale?",
    nudge="The first step's gradient reflects the initial weights' scale: build the network "
    "exactly as the lesson's init_params does, one key per layer.",
    spec="`data` as in 08's `train`, the lesson MLP sized from it ... Random-valued outputs "
    "(inits, splits, noise, dropout masks, training runs) are judged statistically",
    requires=("test_first_step",),
)
def test_lesson_mlp(student: Remote) -> None:
    run = _train(student, "digits", _digits, DIGITS_STEPS, False)
    first = float(run["grad_norm"][0])
    low, high = FIRST_NORM_BAND
    if low <= first <= high:
        return
    raise fail(
        f"grad_norm[0] of train_recording_grad_norms(key, digits, {DIGITS_STEPS}, clip=False)",
        expected=f"between {low} and {high}: the lesson MLP, He-initialised, starts with raw "
        "gradient norms of 1.4 to 3.3 on digits (measured over 40 keys)",
        observed=f"{first:.4f}",
        # no cause: one run's first norm is a statistic, and an init at another scale, another
        # network and a norm of part of the gradient all read outside the band
        fix="compare with the lesson's init_params: sizes (x_train.shape[1], 256, 128, 10), "
        "w = jax.random.normal(k, (fan_in, fan_out)) * jnp.sqrt(2.0 / fan_in), biases zero; "
        "and record optax.tree.norm(grads) over every leaf",
    )


@check(
    "train_recording_grad_norms depends on its key and nothing else",
    points=1,
    hint="Is every random choice (initialisation, batch order) drawn with jax.random from the "
    "key you are given, each layer and each shuffle with its own key: no fixed key, no "
    "np.random or random, and does a raw jax.random.PRNGKey work too?",
    requires=("test_first_step",),
    nudge="Split the key you are given for the initialisation and for every shuffle, draw only with jax.random, and never use one key twice.",
    spec="reshuffled with a fresh key each time the set is used up ... Keys are JAX PRNG keys; a correct solution works with both `jax.random.key(s)` (typed) and `jax.random.PRNGKey(s)` (raw) keys ... Random-valued outputs (inits, splits, noise, dropout masks, training runs) are judged statistically and by key use ... same inputs, same outputs ... no global NumPy/`random` RNG",
)
def test_train_key_use(student: Remote, seed: int) -> None:
    call = f"train_recording_grad_norms(key, digits, {DIGITS_STEPS}, clip=True)"
    first = _train(student, "digits", _digits, DIGITS_STEPS, True)
    # One run does two jobs: a raw jax.random.PRNGKey(0) holds the bits of jax.random.key(0),
    # so a run with it, after the sandbox's global NumPy and Python RNGs were reseeded, repeats
    # `first` step by step. Only a run that does not pays for the two runs that tell the
    # causes apart (a global RNG, a raw key that fails); a raw key that runs, only
    # differently from its typed twin, is not held against it (the spec does not ask that).
    raw_again = client.probe(
        after_moving_global_rngs,
        student.train_recording_grad_norms,
        (jax.random.PRNGKey(0), _digits(), DIGITS_STEPS, True),
        seed + 7919,
    )
    if not _same_run(raw_again, first, DIGITS_STEPS):
        _check_global_rngs(student, seed, first, call, raw_again)
        _check_raw_key(student)
    # the key-reuse checker's run (typed keys only) is also the run of another key; its
    # REUSE_STEPS span two epochs of digits, so a shuffle key used again shows too
    other = keys.assert_no_key_reuse(
        student.train_recording_grad_norms,
        (jax.random.key(1), _digits(), REUSE_STEPS, True),
        jit=False,
        what=f"train_recording_grad_norms(key, digits, {REUSE_STEPS}, clip=True)",
    )
    _check_record(
        other,
        REUSE_STEPS,
        f"train_recording_grad_norms(jax.random.key(1), digits, {REUSE_STEPS}, clip=True)",
    )
    if _close(other["loss"][:3], first["loss"][:3]) and _close(
        other["grad_norm"][:3], first["grad_norm"][:3]
    ):
        raise fail(
            "train_recording_grad_norms(key, digits, n_steps, clip=True) with jax.random.key(0) "
            "and with jax.random.key(1): their first 3 steps",
            expected="different runs (another initialisation and batch order)",
            observed="the same loss and norms at every step",
            cause="the key argument is not used: jax.random.key(0) and jax.random.key(1) give "
            "the same initialisation and batches",
            fix="derive the initialisation and shuffling keys from the key argument",
        )


# The batches of each pass over the training set, seen at learning_rate=0.0, where the params
# stay at their init: 16 distinct rows (a fixed normal draw, uneven labels) in batches of 4, so
# 4 steps use the set up and 6 passes take 24 steps. Each step's raw norm then depends only on
# which rows its batch holds: norms that differ within a pass and repeat in every pass are one
# order kept (a new permutation repeats a pass's 4 batches by chance only rarely, and never 5
# times running). Each step's loss is its batch's mean loss, so the mean of a pass's 4 losses
# is the mean over the 16 rows, the same in every pass, wherever each pass holds every row
# once (16 is a multiple of 4: no remainder to drop or carry, whatever the convention).
PASS_LABELS = (3, 3, 3, 3, 3, 3, 3, 3, 5, 5, 5, 5, 7, 7, 1, 9)
PASS_BATCH, PASSES = 4, 6
PASS_NAME = "16 rows of uneven labels"
# two passes of the same batches in the same order: the same program on the same rows (a
# few ulps where the rows of a batch come in another order); two other batches of these rows
# differ by a tenth
PASS_NORM_TOL: Tolerance = {"rtol": 1e-5, "atol": 0.0}
# norms that do not vary from step to step: 24 batches of 4 distinct rows have no such norms
CONSTANT_NORM_TOL: Tolerance = {"rtol": 1e-4, "atol": 1e-8}
# the mean loss of a pass: measured 6e-8 apart (relative) between the passes of the solution,
# the habits and the alternative corpus (the same 16 losses summed in other batches); 0.1 to
# 0.3 apart where every step draws its batch anew
PASS_MEAN_TOL: Tolerance = {"rtol": 1e-5, "atol": 1e-6}


def _pass_data() -> tuple[Any, ...]:
    y = np.asarray(PASS_LABELS, np.int32)
    x = np.random.default_rng(0).normal(size=(len(y), 64)).astype(np.float32)
    return x, y, x[:4], y[:4]


def _pass_run(student: Remote) -> dict[str, Any]:
    """The run of PASSES passes over `_pass_data` at learning_rate=0.0 (shared by two checks)."""
    return _train(
        student,
        PASS_NAME,
        _pass_data,
        PASSES * len(PASS_LABELS) // PASS_BATCH,
        False,
        batch_size=PASS_BATCH,
        learning_rate=0.0,
    )


def _pass_call(n_steps: int) -> str:
    return (
        f"train_recording_grad_norms(key, {PASS_NAME}, {n_steps}, clip=False, "
        f"batch_size={PASS_BATCH}, learning_rate=0.0)"
    )


@check(
    "train_recording_grad_norms reshuffles the training set each time it is used up",
    points=1,
    hidden=True,
    hint="When the steps have used every row once, which order do the next batches come in: "
    "the same permutation again, or a new one drawn with a new key?",
    requires=("test_first_step",),
    nudge="Each time the batches have gone through the whole training set, split the key anew "
    "and draw a new permutation of the rows from the new subkey.",
    spec="`train_recording_grad_norms` draws its batches from the training set, reshuffled "
    "with a fresh key each time the set is used up.",
)
def test_train_reshuffles(student: Remote) -> None:
    per_pass = len(PASS_LABELS) // PASS_BATCH
    n_steps = per_pass * PASSES
    record = _pass_run(student)
    norms = np.asarray([float(v) for v in record["grad_norm"]], np.float64)
    passes = norms.reshape(PASSES, per_pass)
    checked = (
        f"the raw gradient norms of {_pass_call(n_steps)}, {per_pass} steps a pass over the "
        "set (with learning_rate=0.0 the parameters stay at their init, so each norm depends "
        "only on which rows its batch holds)"
    )
    if np.allclose(norms, norms[0], **CONSTANT_NORM_TOL):
        # the order cannot be seen: no cause (a norm of something else than the raw gradient
        # of a batch of training rows, or batches that are all the same rows, read alike)
        raise fail(
            checked,
            expected=f"norms that differ from batch to batch: the {len(PASS_LABELS)} training "
            f"rows all differ, so batches of {PASS_BATCH} of them have gradients of different "
            "norms, and another order of the batches in some pass",
            observed=f"the same norm at all {n_steps} steps: {norms[0]:.6g}",
            fix="print the indices of the rows each of the first steps trains on and the norm "
            "it records: a batch of training rows (data[0], data[1]), and the norm of the raw "
            "gradient jax.value_and_grad returns for it",
        )
    if not all(np.allclose(later, passes[0], **PASS_NORM_TOL) for later in passes[1:]):
        return
    # norms that vary within a pass and repeat in every pass: the same batches, in one order
    raise fail(
        checked,
        expected="another order of the rows in some pass: the set is reshuffled with a fresh "
        "key each time it is used up",
        observed=f"the same {per_pass} norms in every one of the {PASSES} passes: "
        f"{[round(float(v), 5) for v in passes[0]]}",
        cause="the rows come in the same order in every pass: one order serves every pass, "
        "where a new permutation belongs each time the set is used up",
        fix="when a pass ends, `key, perm_key = jax.random.split(key)` and `perm = "
        "jax.random.permutation(perm_key, len(x_train))`",
    )


@check(
    "train_recording_grad_norms uses every training row once in each pass over the set",
    points=1,
    hidden=True,
    hint="Over the steps of one pass over the training set (n_train / batch_size of them), "
    "does every row land in exactly one batch, or is each step's batch drawn on its own?",
    requires=("test_first_step",),
    nudge="Draw one permutation of the rows each time the set is used up and cut it into "
    "consecutive batches of batch_size rows: each row is then used once per pass.",
    spec="`train_recording_grad_norms` draws its batches from the training set, reshuffled "
    "with a fresh key each time the set is used up.",
)
def test_train_passes_cover_the_set(student: Remote) -> None:
    per_pass = len(PASS_LABELS) // PASS_BATCH
    n_steps = per_pass * PASSES
    record = _pass_run(student)
    losses = np.asarray([float(v) for v in record["loss"]], np.float64)
    means = losses.reshape(PASSES, per_pass).mean(axis=1)
    if np.allclose(means, means[0], **PASS_MEAN_TOL):
        return
    # no cause: batches that miss rows, parameters that move at learning_rate=0.0 and losses
    # of something else than the batch all change the means alike
    raise fail(
        f"the mean of the recorded losses over each pass of {_pass_call(n_steps)}: "
        f"{PASSES} passes of {per_pass} steps",
        expected=f"the same mean in every pass: with learning_rate=0.0 the parameters never "
        f"change, and the {per_pass} batches of a pass hold each of the "
        f"{len(PASS_LABELS)} training rows once, so every pass's mean is the mean loss of the "
        "whole training set",
        observed=f"pass means {np.round(means, 6).tolist()}",
        fix="draw a new permutation only when the set is used up, and take the pass's batch j "
        "as `perm[j * batch_size : (j + 1) * batch_size]`",
    )


def _same_run(record: Any, first: dict[str, Any], n_steps: int) -> bool:
    """`record` is a well-formed run of `n_steps` that repeats `first` step by step."""
    if not isinstance(record, dict) or not {"loss", "grad_norm"} <= set(record):
        return False
    try:
        series = {name: [float(v) for v in record[name]] for name in ("loss", "grad_norm")}
    except (TypeError, ValueError):
        return False
    return all(
        len(series[name]) == n_steps and _close(series[name], first[name])
        for name in ("loss", "grad_norm")
    )


def _check_global_rngs(
    student: Remote, seed: int, first: dict[str, Any], call: str, raw_again: Any
) -> None:
    """The same typed key, called again after the global NumPy and Python RNGs moved. The
    global RNGs are named only where `raw_again`, the run of the raw key of the same bits after
    the same reseeding, repeats this run: then the reseeded RNGs decide it, not another state
    that changes from call to call."""
    again = client.probe(
        after_moving_global_rngs,
        student.train_recording_grad_norms,
        (jax.random.key(0), _digits(), DIGITS_STEPS, True),
        seed + 7919,
    )
    again = calls.observed(
        again,
        checked=f"{call} called again with the same key",
        attempted=call,
        expected="the function runs",
    )
    _check_record(again, DIGITS_STEPS, call)
    if not (
        _close(again["loss"], first["loss"]) and _close(again["grad_norm"], first["grad_norm"])
    ):
        raise fail(
            f"{call} twice with jax.random.key(0), NumPy's and Python's global RNGs moved "
            "in between",
            expected=f"the same run: loss {np.round(first['loss'][:4], 4).tolist()} ...",
            observed=f"loss {np.round(again['loss'][:4], 4).tolist()} ...",
            cause="the run depends on NumPy's or Python's global RNG, which no JAX key "
            "controls: after the same reseeding, jax.random.PRNGKey(0) (the same key bits) "
            "repeats this second run"
            if _same_run(raw_again, again, DIGITS_STEPS)
            else "the run depends on something besides the key: the same key gave another run "
            "when called again",
            fix="split the key you are given and draw with jax.random (jax.random.permutation "
            "for the batch order, not np.random.permutation, np.random.shuffle or "
            "random.shuffle)",
        )


def _check_raw_key(student: Remote) -> None:
    try:
        _train(student, "digits", _digits, 3, True, key_seed="raw")
    except StudentError as exc:
        if isinstance(exc, calls.PASS_THROUGH):
            raise
        raise CheckFailure(
            "train_recording_grad_norms(jax.random.PRNGKey(0), digits, 3, clip=True) with a raw key",
            expected="the function works with raw uint32[2] keys as well as typed keys",
            observed=f"it raised {exc.info.type}: {calls.first_line(exc)}",
            cause="the function runs with a typed key (jax.random.key(0)) and raises with the "
            "raw key of the same bits (jax.random.PRNGKey(0)): it handles one key style only",
            fix="use only jax.random functions on keys (split, fold_in, permutation, normal), "
            "not `jax.random.key_data`, `key[0]` or a check on the key's dtype",
        ) from exc


# -- the plot ------------------------------------------------------------------
def _series() -> tuple[list[float], list[float]]:
    steps = np.arange(60)
    without = 2.0 + 30.0 * np.abs(np.sin(steps / 3.0)) * np.exp(-steps / 40.0)
    with_clip = 1.5 + 0.8 * np.exp(-steps / 20.0)
    return [float(v) for v in with_clip], [float(v) for v in without]


def _plot(student: Remote, scratch: str) -> tuple[str, dict[str, Any]]:
    """plot_grad_norms once per module, run in its sandbox: (path asked for, what the probe
    saw: the path returned, the file's bytes and pixels, the lines of the saved figures)."""

    def draw() -> tuple[str, dict[str, Any]]:
        path = os.path.join(scratch, "grad_norms.png")
        with_clip, without = _series()
        seen = client.probe(saved_plot, student.plot_grad_norms, with_clip, without, path)
        if isinstance(seen, StudentError):
            raise seen
        return path, seen

    found: tuple[str, dict[str, Any]] = once(student, "plot", draw)
    return found


def _image(seen: dict[str, Any]) -> np.ndarray:
    img = seen["pixels"]
    if not isinstance(img, np.ndarray) or img.ndim not in (2, 3):
        raise fail(
            "the PNG plot_grad_norms writes",
            expected="a readable PNG",
            observed=f"matplotlib could not read it: {seen['unreadable']}",
        )
    return img if img.ndim == 3 else img[..., None].repeat(3, axis=-1)


def _file(seen: dict[str, Any]) -> bytes:
    data = seen["data"]
    if not isinstance(data, bytes):
        raise TypeError("the sandbox sent a malformed plot observation")
    if seen["size"] > MAX_PLOT_BYTES:
        raise fail(
            "the file plot_grad_norms writes",
            expected="a PNG plot of a few hundred KB",
            observed=f"a file of {seen['size']} bytes",
            fix="save at a moderate size and resolution, e.g. figsize=(7, 4), dpi=100",
        )
    return data


def _colour_clusters(img: np.ndarray) -> list[tuple[float, int]]:
    """(hue in degrees, pixel count) of every group of clearly coloured pixels."""
    import matplotlib.colors

    rgb = img[..., :3].astype(np.float64)
    if rgb.max() > 1.0:
        rgb = rgb / 255.0
    hsv = matplotlib.colors.rgb_to_hsv(rgb)
    coloured = (hsv[..., 1] > 0.35) & (hsv[..., 2] > 0.25)
    if img.shape[-1] == 4:
        coloured &= img[..., 3] > 0.5
    counts, _ = np.histogram(hsv[..., 0][coloured], bins=36, range=(0.0, 1.0))
    floor = max(40, int(0.0002 * coloured.size))
    busy = counts >= floor
    clusters: list[tuple[float, int]] = []
    start = next((i for i in range(36) if not busy[i]), None)
    if start is None:
        return [(0.0, int(counts.sum()))]
    run: list[int] = []
    for k in range(1, 37):
        i = (start + k) % 36
        if busy[i]:
            run.append(i)
        elif run:
            clusters.append((float(run[0] * 10 + 5), int(counts[run].sum())))
            run = []
    return clusters


def _attach_plot(attach: Attachments, data: bytes) -> None:
    if data.startswith(Attachments.PNG_MAGIC) and len(data) <= Attachments.MAX_IMAGE_BYTES:
        attach.image("your gradient-norm plot (test data: a smooth and a spiky curve)", data)


def _format_cause(data: bytes) -> str:
    """The format the file's first bytes name, where it is one savefig writes; else ""."""
    name = Attachments.format_of(data)
    if not name or name == "PNG":
        return ""
    return (
        f"the file is a {name} (its first bytes are {name}'s signature), not a PNG: savefig "
        "writes the format= it is given, else the one the file name's extension names"
    )


@check(
    "plot_grad_norms writes a PNG at path and returns path",
    points=1,
    hint="Does your function save the figure to the path it was given, as a PNG, and "
    "return that same path?",
    nudge="Save the figure to the path argument in PNG format and return that same path.",
    spec="`plot_grad_norms(with_clip, without_clip, path)` -> writes a PNG with both curves ... and returns `path` ... the PNG exists, is a valid image",
)
def test_plot_file(student: Remote, attach: Attachments, scratch: str) -> None:
    path, seen = _plot(student, scratch)
    data = _file(seen)
    if not data:
        raise fail(
            "the file plot_grad_norms(with_clip, without_clip, path) writes",
            expected=f"a PNG file at {os.path.basename(path)}",
            observed="no file at path",
            fix="fig.savefig(path) (or plt.savefig(path)) with the path argument",
        )
    if not data.startswith(Attachments.PNG_MAGIC):
        raise fail(
            "the file plot_grad_norms writes",
            expected="a PNG image",
            observed=f"a file starting with {data[:8]!r}",
            cause=_format_cause(data),
            fix="save with format='png' (or a path ending in .png)",
        )
    img = _image(seen)
    _attach_plot(attach, data)
    if img.shape[0] < 100 or img.shape[1] < 100:
        raise fail(
            "the size of the plot",
            expected="at least 100 x 100 pixels",
            observed=f"{img.shape[1]} x {img.shape[0]}",
        )
    if seen["returned"] != path:
        raise fail(
            "the return value of plot_grad_norms(with_clip, without_clip, path)",
            expected=repr(path),
            observed=str(seen["returned_repr"]),
            fix="return path",
        )


@check(
    "the plot shows two curves in two colours",
    points=2,
    hint="Does your figure draw both lists, on the same axes, each in its own colour?",
    requires=("test_plot_file",),
    nudge="Draw both lists on the same axes of one figure, each as its own line (matplotlib gives each a colour), then save that figure.",
    spec="writes a PNG with both curves ... shows two series",
)
def test_plot_two_series(student: Remote, scratch: str) -> None:
    _, seen = _plot(student, scratch)
    if not _file(seen).startswith(Attachments.PNG_MAGIC):
        raise fail("the plot's pixels", expected="a PNG file at path", observed="no PNG written")
    clusters = _colour_clusters(_image(seen))
    if len(clusters) >= 2:
        return
    raise fail(
        "the coloured curves in the PNG plot_grad_norms wrote (a smooth and a spiky test series)",
        expected="two curves in two distinct colours",
        observed=(
            f"{len(clusters)} colour"
            + ("" if len(clusters) == 1 else "s")
            + (f" (hue {clusters[0][0]:.0f} degrees, {clusters[0][1]} pixels)" if clusters else "")
        ),
        cause=_drawn_lists_cause(seen),
        fix="ax.plot(without_clip, label='without clipping'); ax.plot(with_clip, label='with "
        "clipping'); then save that one figure",
    )


def _drawn_lists(seen: dict[str, Any]) -> set[str]:
    """Which of the two test series ("with_clip", "without_clip") a line of a saved figure
    draws (its y values)."""
    found = set()
    for fig in seen["figures"]:
        for ax in fig:
            for line in ax["lines"]:
                y = np.asarray(line, np.float64)
                for name, series in zip(("with_clip", "without_clip"), _series(), strict=True):
                    if y.shape == (len(series),) and np.allclose(y, series, **PLOTTED_TOL):
                        found.add(name)
    return found


def _drawn_lists_cause(seen: dict[str, Any]) -> str:
    """What the saved figures' lines show about a PNG of fewer than two colours: one list
    drawn, or both (then the PNG's pixels hold one clear colour for the two); else ""."""
    drawn = _drawn_lists(seen)
    if len(drawn) == 2:
        return (
            "both lists are drawn in the saved figure, but its PNG holds one clearly coloured "
            "curve: the two lines do not have two distinct colours"
        )
    if len(drawn) == 1:
        (name,) = drawn
        return f"only one of the two lists, {name}, is drawn in the saved figure"
    return ""


@check(
    "the plot draws both norm lists on labelled axes, with a legend",
    points=1,
    hint="Are both lists drawn as lines with the step on the x axis, do both axes say "
    "what they show, and can a reader tell which curve is which?",
    hidden=True,
    requires=("test_plot_file",),
    nudge="Plot each norm list against its step index on one axes with a label of its own, set both axis labels and draw the legend before saving.",
    spec="writes a PNG with both curves (the two `grad_norm` lists; step on x, gradient norm on y, axes labelled, a legend naming each curve)",
)
def test_plot_lines(student: Remote, scratch: str) -> None:
    _, seen = _plot(student, scratch)
    figures = seen["figures"]
    if not figures:
        raise fail(
            "the matplotlib figure plot_grad_norms saved",
            expected="a figure saved with Figure.savefig or plt.savefig",
            observed="no matplotlib figure was saved",
            fix="draw with matplotlib and save with fig.savefig(path)",
        )
    with_clip, without = _series()
    axes = [ax for fig in figures for ax in fig]
    found: dict[str, int] = {}
    for i, ax in enumerate(axes):
        for line in ax["lines"]:
            y = np.asarray(line, np.float64)
            for name, series in (("with_clip", with_clip), ("without_clip", without)):
                if y.shape == (len(series),) and np.allclose(y, series, **PLOTTED_TOL):
                    found.setdefault(name, i)
    missing = [name for name in ("with_clip", "without_clip") if name not in found]
    if missing:
        raise fail(
            "the lines of the saved figure",
            expected="one line per list, y = the norms",
            observed=f"no line with the values of {', '.join(missing)}",
            fix="ax.plot(steps, norms) for each of the two lists",
        )
    for i in sorted(set(found.values())):
        xlabel, ylabel = str(axes[i]["xlabel"]), str(axes[i]["ylabel"])
        if not xlabel.strip() or not ylabel.strip():
            raise fail(
                "the axis labels of the plot",
                expected="an x label (the step) and a y label (the gradient norm)",
                observed=f"x label {xlabel!r}, y label {ylabel!r}",
                fix="ax.set_xlabel('step'); ax.set_ylabel('gradient norm')",
            )
    # the legend: on the axes of each curve (its own or its figure's), two names in all
    named = {i: {t.strip() for t in axes[i].get("legend", []) if t.strip()} for i in found.values()}
    names = set().union(*named.values())
    if len(names) < 2 or not all(named.values()):
        raise fail(
            "the legend of the plot",
            expected="a legend naming each of the two curves (two distinct entries)",
            observed="no legend"
            if not names
            else f"legend entries {sorted(names)!r}: not one name for each curve",
            fix="ax.plot(with_clip, label='with clipping'); ax.plot(without_clip, label='without "
            "clipping'); ax.legend()",
        )
