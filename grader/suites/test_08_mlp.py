"""Hidden checks for 08_mlp.py: the lesson's MLP built from pure functions.

Values are compared with references written here (NumPy in float64 for the forward
pass and the loss, Optax's own Adam for the optimizer step). Random outputs (the
init, the training run) are judged by statistics and key use, never by equality.
Training runs on scikit-learn's digits (1,437 training rows, 64 inputs) for 20
epochs, twice the lesson's 10, to keep a margin above 0.95 test accuracy; the run
is shared by the checks that need it. The loop itself is observed on random data of the
digits' shapes (nothing new compiles): the batches train_step runs, Adam's step count, a
run with the signature's defaults against one with them passed after NumPy's and Python's
global RNGs moved, and JAX's key-reuse checker over two epochs.
"""

import contextlib
import functools
import importlib
import itertools
import math
import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from grader.authoring import Attachments, Credit, check
from grader.checks import calls, diagnose, jit, keys, purity, traces, values
from grader.checks.failure import CheckFailure, fail
from grader.data import load_digits
from grader.plugin import Gate
from grader.sandbox import client
from grader.sandbox.client import Remote
from grader.suites._shared import (
    EXACT,
    FLOAT32,
    HE_NORMALS,
    Tolerance,
    assert_normal,
    for_the_cache,
    init_scale_cause,
    labelled_batch,
    mlp_params,
    once,
    score_cases,
)

LESSON = "08_mlp"
TITLE = "build: the lesson's MLP"
TIMEOUT = 240

LESSON_SIZES = (784, 256, 128, 10)
SMALL_SIZES = (6, 5, 4, 10)  # three layers and ten classes, as in the lesson; small widths
N_CLASSES = 10
B = 8  # one batch size for the small checks: every function compiles once
# loss_fn's second batch: a cause of its value is named only if both sizes show it; 10 rows,
# the number of classes, so a loss divided by the batch size twice is 1/10 there too
LOSS_ROWS = 10
TRAIN_EPOCHS = 20
TARGET_ACCURACY = 0.95
DIGITS_TRAIN_SHAPE, DIGITS_TEST_ROWS = (1437, 64), 360  # load_digits(): the 80/20 split
# loss_fn on logits of order 1e4: float32's spacing there is ~1e-3, far above FLOAT32's atol
LARGE_LOSS_TOL: Tolerance = {"rtol": 1e-5, "atol": 1e-3}
# an accuracy is k / n, exact but for the rounding of one float32 division
ACCURACY_TOL: Tolerance = {"rtol": 0.0, "atol": 1e-6}
# the last epoch's mean batch loss, as multiples of the returned params' training loss
# (and an atol of 0.03 above): a wide band around the measured 0.97-1.15
HISTORY_LOSS_BAND = (0.25, 2.5)

# The probe that watches the batches train hands to train_step (grader/inputs/08_mlp.py).
_inputs = importlib.import_module("grader.inputs.08_mlp")


# -- references (written here, independently of solutions/) -------------------------------


def _layers(params: Any) -> Any:
    return [params[f"layer{i}"] for i in range(1, len(params) + 1)]


def _ref_forward(
    params: Any,
    x: Any,
    *,
    relu_hidden: bool = True,
    relu_last: bool = False,
    bias_after_relu: bool = False,
) -> Any:
    h = np.asarray(x, np.float64)
    layers = _layers(params)
    for i, layer in enumerate(layers):
        b = np.asarray(layer["b"], np.float64)
        h = h @ np.asarray(layer["w"], np.float64)
        hidden = i < len(layers) - 1
        relu = relu_hidden if hidden else relu_last
        if relu and bias_after_relu:
            h = np.maximum(h, 0.0) + b
        else:
            h = h + b
            if relu:
                h = np.maximum(h, 0.0)
    return h


def _ref_example_losses(params: Any, x: Any, y: Any) -> Any:
    """Each example's cross-entropy, -log p of its label."""
    logits = _ref_forward(params, x)
    top = logits.max(axis=-1, keepdims=True)
    log_z = top[:, 0] + np.log(np.exp(logits - top).sum(axis=-1))
    return log_z - logits[np.arange(len(y)), np.asarray(y)]


def _ref_loss(params: Any, x: Any, y: Any) -> Any:
    return float(np.mean(_ref_example_losses(params, x, y)))


@jax.jit
def _ref_loss_jax(params: Any, x: Any, y: Any) -> Any:
    """The same loss in JAX (for gradients): logsumexp minus the label's logit."""
    h = x
    layers = _layers(params)
    for i, layer in enumerate(layers):
        h = jnp.dot(h, layer["w"]) + layer["b"]
        if i < len(layers) - 1:
            h = jnp.maximum(h, 0.0)
    picked = jnp.take_along_axis(h, y[:, None], axis=-1)[:, 0]
    return jnp.mean(jax.scipy.special.logsumexp(h, axis=-1) - picked)


_ref_grad = jax.jit(jax.grad(_ref_loss_jax))


@jax.jit
def _ref_step(params: Any, opt_state: Any, x: Any, y: Any) -> Any:
    tx = optax.adam(1e-3)
    loss, grads = jax.value_and_grad(_ref_loss_jax)(params, x, y)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


# -- inputs -----------------------------------------------------------------------------


def _params(sizes: Any, seed: int = 0) -> Any:
    """Deterministic params with mixed-sign pre-activations (so ReLU matters)."""
    return mlp_params(sizes, seed, w_std=0.7, b_std=0.3)


def _shapes(tree: Any) -> Any:
    return jax.tree.map(lambda a: tuple(np.shape(a)), tree)


def _skeleton(sizes: Any) -> Any:
    return {
        f"layer{i}": {"b": (n,), "w": (m, n)}
        for i, (m, n) in enumerate(itertools.pairwise(sizes), start=1)
    }


def _opt_state(student: Remote, params: Any) -> Any:
    """The student's optimizer state if the optimizer exists, else Adam's (same structure)."""
    tx = getattr(student, "optimizer", None)
    if tx is not None and callable(getattr(tx, "init", None)):
        return tx.init(params)
    return optax.adam(1e-3).init(params)


# -- one root cause, named: a one-hot as wide as something else than the logits --------

_BROADCAST = re.compile(r"incompatible shapes[^(]*\((\d+), (\d+)\), \((\d+), (\d+)\)")


def _one_hot_cause(message: str) -> Any:
    """'your one-hot has k columns, the logits have 10' when `message` is JAX's broadcasting
    error between a (batch, 10) array (the logits, the lesson's 10 classes) and a
    (batch, k) one; "" otherwise."""
    found = _BROADCAST.search(message)
    if not found:
        return ""
    rows_a, cols_a, rows_b, cols_b = (int(g) for g in found.groups())
    if rows_a != rows_b or cols_a == cols_b or N_CLASSES not in (cols_a, cols_b):
        return ""
    other = cols_b if cols_a == N_CLASSES else cols_a
    return (
        f"your one-hot has {other} columns, the logits have {N_CLASSES}: the labels were "
        f"one-hot encoded with a width other than the number of classes (the logits' last "
        "axis), so the product with log_softmax(logits) cannot broadcast"
    )


@contextlib.contextmanager
def _loss_errors_named(what: str) -> Any:
    """Turn a one-hot width mismatch raised by the student's loss into one named failure."""
    try:
        yield
    except client.StudentError as exc:
        cause = _one_hot_cause(str(exc))
        if not cause:
            raise
        where = calls.student_line(exc)
        raise CheckFailure(
            what,
            expected=f"a scalar loss for logits of shape (batch, {N_CLASSES})",
            observed=f"it raised {exc.info.type}: {calls.first_line(exc)}"
            + (f"\n    at {where}" if where else ""),
            cause=cause,
            fix="`jax.nn.one_hot(y, logits.shape[-1])`: as many columns as there are logits",
        ) from exc


# -- shared runs --------------------------------------------------------------------------


def _digits_run(student: Remote) -> Any:
    def compute() -> Any:
        data = load_digits()
        params, history = student.train(jax.random.key(0), data, n_epochs=TRAIN_EPOCHS)
        return data, jax.block_until_ready(params), history  # type: ignore[no-untyped-call]

    return once(student, "digits", compute)


# -- the judge's compilation cache ---------------------------------------------------------


@for_the_cache
def _random_programs_cached() -> None:
    """Draw in the judge, once, what the lesson's init and train draw: `jax.random.split`
    into 1 to 4 keys, `jax.random.normal` of every weight shape the checks ask for
    (the lesson's sizes, 16 x 16, and the digits run's first layer) and the permutation of
    the digits' training rows. With a judge compilation cache (`grade`) these programs are
    in it, and a submission that draws the same way loads them instead of compiling them
    (~0.4 s each for the normals, ~0.3 s for the permutation)."""
    key = jax.random.key(0)
    shapes = {*itertools.pairwise(LESSON_SIZES), (16, 16), (DIGITS_TRAIN_SHAPE[1], 256)}
    drawn = [jax.random.split(key, n) for n in (1, 2, 3, 4)]
    drawn += [jax.random.normal(key, shape) for shape in sorted(shapes)]
    drawn.append(jax.random.permutation(key, DIGITS_TRAIN_SHAPE[0]))
    jax.block_until_ready(drawn)  # type: ignore[no-untyped-call]  # untyped in jax


# -- init_params ----------------------------------------------------------------------


@check(
    "init_params builds the lesson dict for any layer sizes",
    points=1,
    hint="How many layers do `len(sizes)` sizes make, and which of each pair is the "
    "weight matrix's first axis?",
    nudge="Pair up consecutive sizes: each pair is one layer, named 'layer1', 'layer2', ... in order, whose weight matrix has the pair's first size as rows.",
    spec="`init_params(key, sizes=(784, 256, 128, 10))` -> the lesson dict ... Params of the lesson MLP are the lesson's nested dict: `{'layer1': {'w': (in, out), 'b': (out,)}, 'layer2': ..., 'layerN': ...}`, weights stored (in, out) ... Checks: shapes and init statistics",
)
def test_init_shapes(student: Remote) -> None:
    _random_programs_cached()
    # None: the signature's default sizes, which the spec fixes at the lesson's (784, 256, 128, 10)
    for given in (LESSON_SIZES, (16, 16, 16, 16, 16), (16, 16), None):
        sizes = LESSON_SIZES if given is None else given
        call = "init_params(key)" if given is None else f"init_params(key, sizes={sizes})"
        key = jax.random.key(0)
        params = student.init_params(key) if given is None else student.init_params(key, sizes)
        shapes = _shapes(params)
        expected = _skeleton(sizes)
        values.assert_tree_structure(
            params,
            jax.tree.map(np.zeros, expected, is_leaf=lambda s: isinstance(s, tuple)),
            what=call,
            fix="one entry 'layer1' ... 'layerN' per pair of consecutive sizes, each "
            "{'w': ..., 'b': ...}",
        )
        if shapes != expected:
            transposed = jax.tree.map(
                lambda s: s[::-1], expected, is_leaf=lambda s: isinstance(s, tuple)
            )
            swapped = {k: v["w"] for k, v in shapes.items()} == {
                k: v["w"] for k, v in transposed.items()
            }
            cause, fix = (
                "",
                "layer i: `w` of shape (sizes[i-1], sizes[i]), `b` of shape (sizes[i],)",
            )
            if swapped:
                cause = (
                    "the weights are stored (out, in); the lesson stores them (in, out) and "
                    "computes `x @ w + b`"
                )
            elif given is None:
                cause = "the default sizes differ from the lesson's"
                fix = "keep the signature `def init_params(key, sizes=(784, 256, 128, 10))`"
            raise fail(
                f"the shapes of {call}",
                expected=str(expected),
                observed=str(shapes),
                cause=cause,
                fix=fix,
            )


# The init scales a layer's std is held to (a function of fan_in and fan_out), each with what
# it says; one is named only when every layer's std fits it, three shapes of weight matrix
@check(
    "init_params draws He-initialized weights: normal * sqrt(2 / fan_in)",
    points=2,
    hint="What standard deviation should a weight feeding a ReLU layer with fan_in inputs "
    "have, and which of the two sizes is the fan-in?",
    nudge="Draw standard normal weights and scale them by the square root of 2 over the layer's input size, the first dimension of its weight matrix.",
    spec="He init (`normal * sqrt(2 / fan_in)`) ... Checks: shapes and init statistics",
)
def test_init_he_statistics(student: Remote) -> None:
    params = student.init_params(jax.random.key(3), LESSON_SIZES)
    layers = []  # (i, fan_in, fan_out, std, mean, tolerance, size)
    for i, (fan_in, fan_out) in enumerate(itertools.pairwise(LESSON_SIZES), start=1):
        w = np.asarray(params[f"layer{i}"]["w"], np.float64)
        tolerance = 0.05 if w.size >= 10_000 else 0.12
        layers.append((i, fan_in, fan_out, float(w.std()), float(w.mean()), tolerance, w.size))
    for i, fan_in, _, std, mean, tolerance, size in layers:
        target = math.sqrt(2.0 / fan_in)
        if abs(std / target - 1.0) > tolerance or abs(mean) > 5 * target / math.sqrt(size):
            raise fail(
                f"the statistics of init_params(key)['layer{i}']['w'] ({fan_in} x "
                f"{LESSON_SIZES[i]})",
                expected=f"mean 0 and standard deviation sqrt(2 / {fan_in}) = {target:.4f} "
                f"(within {tolerance:.0%})",
                observed=f"mean {mean:.4f}, standard deviation {std:.4f} "
                f"({std / target:.2f} x the He value)",
                cause=init_scale_cause(
                    LESSON_SIZES, [row[3] for row in layers], [row[5] for row in layers]
                ),
                fix="`jax.random.normal(k, (fan_in, fan_out)) * jnp.sqrt(2.0 / fan_in)`",
            )


@check(
    "init_params draws its weights from a normal distribution, not only at He's spread",
    points=1,
    hint="Past its standard deviation, what shape has the distribution your weights are drawn "
    "from: does it have a normal's tails, or is it cut off somewhere?",
    nudge="He init scales draws of the standard normal, whose tails are unbounded; a sampler "
    "with the same spread but another shape gives the right standard deviation and the wrong "
    "distribution.",
    spec="He init (`normal * sqrt(2 / fan_in)`) ... Random-valued outputs (inits, splits, noise, dropout masks, training runs) are judged statistically",
    requires=("test_init_shapes", "test_init_he_statistics"),
)
def test_init_normal(student: Remote) -> None:
    params = student.init_params(jax.random.key(4), LESSON_SIZES)
    # every layer's weights over its He std, pooled: ~235,000 draws meant to be N(0, 1)
    flat = np.concatenate(
        [
            np.asarray(params[f"layer{i}"]["w"], np.float64).ravel() / math.sqrt(2.0 / fan_in)
            for i, fan_in in enumerate(LESSON_SIZES[:-1], start=1)
        ]
    )
    assert_normal(
        flat,
        f"the distribution of init_params(key)'s {flat.size:,} weights, each divided by "
        "sqrt(2 / fan_in) of its layer",
        fix="draw every weight from the standard normal distribution, then scale it by "
        "`jnp.sqrt(2.0 / fan_in)`: the right spread alone does not make a normal",
        references=HE_NORMALS,
        name_bounded=True,
    )


@check(
    "init_params starts every bias at zero",
    points=1,
    hint="Which jnp function makes an array of the bias's shape filled with 0.0?",
    nudge="Only the weights are random: every bias starts as an array of exact zeros of the layer's output size.",
    spec="zero biases",
)
def test_init_zero_biases(student: Remote) -> None:
    params = student.init_params(jax.random.key(0), LESSON_SIZES)
    for name, layer in sorted(params.items()):
        b = np.asarray(layer["b"])
        if np.any(b != 0):
            raise fail(
                f"init_params(key)['{name}']['b']",
                expected="all zeros",
                observed=f"{np.count_nonzero(b)} of {b.size} entries nonzero "
                f"(e.g. {float(b[np.nonzero(b)][0]):.4f})",
                cause=f"the biases hold {len(np.unique(b))} different values in {b.size} "
                "entries: they were drawn at random, like the weights"
                if len(np.unique(b)) > b.size // 2
                else "",
                fix="`jnp.zeros((fan_out,))`",
            )


@check(
    "init_params gives every layer its own key",
    points=1,
    hint="If three layers each call jax.random.normal, how many keys must jax.random.split "
    "hand out, and may any of them be the key you were given?",
    requires=("test_init_shapes",),
    nudge="Split the key once into as many subkeys as there are layers and give each layer's draw its own subkey, never the key you were given.",
    spec="a separate key per layer ... a correct solution works with both `jax.random.key(s)` (typed) and `jax.random.PRNGKey(s)` (raw) keys ... Random-valued outputs (inits, splits, noise, dropout masks, training runs) are judged statistically and by key use ... no global NumPy/`random` RNG",
)
def test_init_keys(student: Remote) -> None:
    sizes = (16, 16, 16, 16)
    params = keys.assert_no_key_reuse(
        student.init_params,
        (jax.random.key(0), sizes),
        static_argnames=("sizes",),
        what="init_params(key, sizes)",
    )
    w2, w3 = (np.asarray(params[f"layer{i}"]["w"]) for i in (2, 3))
    # weights of one value (all zeros) show no key: the key use above judged that
    if np.array_equal(w2, w3) and np.ptp(w2) > 0:
        raise fail(
            "init_params(key, (16, 16, 16, 16)): the weights of layer2 and layer3",
            expected="independent draws",
            observed="identical matrices",
            cause="layer2 and layer3 drew their weights from the same key",
            fix="`keys = jax.random.split(key, n_layers)`, one key per layer",
        )
    keys.assert_deterministic(
        lambda k: student.init_params(k, sizes), lambda k: (k,), what="init_params(key, sizes)"
    )
    keys.assert_varies_with_key(
        lambda k: student.init_params(k, sizes), lambda k: (k,), what="init_params(key, sizes)"
    )
    keys.assert_accepts_raw_keys(
        lambda k: student.init_params(k, sizes), lambda k: (k,), what="init_params(key, sizes)"
    )
    keys.assert_ignores_global_rng(
        student.init_params,
        (jax.random.key(0), sizes),
        static_argnames=("sizes",),
        what="init_params(key, sizes)",
    )


# -- forward and loss ---------------------------------------------------------------------


@check(
    "forward computes x @ w + b per layer with ReLU on the hidden layers only",
    points=1,
    hint="Which layers feed another layer (and so need a ReLU), and what should the last "
    "layer return: logits or something squashed?",
    nudge="Each layer computes x @ w + b; the ReLU follows every layer except the final one, whose raw output is the logits.",
    spec="`forward(params, x)` -> logits; ReLU on hidden layers, none on the last ... used as `x @ w + b`",
)
def test_forward_values(student: Remote) -> None:
    params = _params(SMALL_SIZES)
    x, _ = labelled_batch(B, SMALL_SIZES[0], SMALL_SIZES[-1])
    out = student.forward(params, x)
    cause = ""
    if values.difference(out, _ref_forward(params, x), **FLOAT32) is not None:
        cause = _forward_cause(student, params, (x, out))
    values.assert_close(
        out,
        _ref_forward(params, x),
        what="forward(params, x)",
        **FLOAT32,
        cause=cause,
        fix="`x = jax.nn.relu(x @ w + b)` for layer1 and layer2, plain `x @ w + b` for layer3",
    )


# Mistakes in the forward pass, applied to the reference: named when the student's forward
# gives that on a batch of B rows and on one of LOSS_ROWS
_FORWARD_MISTAKES = (
    (
        {"relu_last": True},
        "a ReLU is applied to the last layer too: logits must be able to be negative",
    ),
    ({"relu_hidden": False}, "no ReLU between the layers: the network is linear"),
    (
        {"bias_after_relu": True},
        "the bias is added after the ReLU (`relu(x @ w) + b`), where each hidden layer "
        "computes `relu(x @ w + b)`",
    ),
)


def _forward_cause(student: Remote, params: Any, first: Any) -> str:
    """The mistake of _FORWARD_MISTAKES the student's forward reproduces on `first` (x, its
    output) and on a second batch of another size, else what `diagnose.confirmed` confirms on
    both batches with the reference (its general tiers: a factor, a mutant of _ref_forward),
    else ""."""
    x2, _ = labelled_batch(LOSS_ROWS, SMALL_SIZES[0], SMALL_SIZES[-1], seed=7)
    try:
        seen = [first, (x2, student.forward(params, x2))]
    except client.StudentError:
        return ""
    for flags, text in _FORWARD_MISTAKES:
        if all(
            values.difference(out, _ref_forward(params, x, **flags), **FLOAT32) is None
            for x, out in seen
        ):
            return text
    return diagnose.confirmed(
        [((params, x), out, _ref_forward(params, x)) for x, out in seen],
        lambda args: (),
        names=("params", "x"),
        reference=_ref_forward,
    )


def _forward_right(student: Remote, params: Any, x: Any) -> bool | None:
    """Whether the student's forward gives the reference's logits for `x` (None: it raised)."""
    try:
        out = student.forward(params, x)
    except client.StudentError:
        return None
    try:
        return values.difference(out, _ref_forward(params, x), **FLOAT32) is None
    except (TypeError, ValueError):
        return False


@check(
    "forward and loss_fn compile under jax.jit and are pure",
    points=1,
    hint="Do the functions use anything besides their arguments, or change them?",
    requires=("test_forward_values", "test_loss_value"),
    nudge="Use only jax.numpy operations on the arguments and touch nothing outside the function: under jit its Python body runs once, while tracing.",
    spec="Every function that is meant to be jittable is checked both eagerly and under `jax.jit` ... purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
)
def test_forward_loss_jit_pure(student: Remote) -> None:
    params = _params(SMALL_SIZES)
    x, y = labelled_batch(B, SMALL_SIZES[0], SMALL_SIZES[-1])
    jit.assert_jittable(student.forward, (params, x), what="forward(params, x)", **FLOAT32)
    jit.assert_jittable(student.loss_fn, (params, x, y), what="loss_fn(params, x, y)", **FLOAT32)
    for name in ("forward", "loss_fn"):
        args = (params, x) if name == "forward" else (params, x, y)
        what = f"{name}({', '.join(('params', 'x', 'y')[: len(args)])})"
        purity.assert_pure(getattr(student, name), args, what=what, module=student)
        purity.assert_no_trace_side_effects(getattr(student, name), args, what=what, module=student)


@check(
    "loss_fn is the mean cross-entropy against integer labels",
    points=1,
    hint="For one example, what is -log of the softmax probability of its label, and how "
    "do you combine the batch: a sum or a mean?",
    nudge="Take log_softmax of the logits, pick each row's entry at its integer label (a one-hot product or take_along_axis), negate, and average over the batch.",
    spec="`loss_fn(params, x, y)` -> mean cross-entropy from `log_softmax` ... Labels are integer class ids unless said otherwise",
)
def test_loss_value(student: Remote) -> None:
    params = _params(SMALL_SIZES)
    seen = []  # (x, y), the student's loss, the reference's: a batch of B and one of LOSS_ROWS
    for rows in (B, LOSS_ROWS):
        x, y = labelled_batch(rows, SMALL_SIZES[0], SMALL_SIZES[-1])
        with _loss_errors_named("loss_fn(params, x, y) with 10 classes"):
            loss = student.loss_fn(params, x, y)
        values.assert_shape(
            loss,
            (),
            what="loss_fn(params, x, y)",
            cause=_PER_EXAMPLE_CAUSE if _per_example_losses(student, params, loss) else "",
            fix="average over the batch: the loss is a scalar",
        )
        seen.append(((x, y), loss, np.float64(_ref_loss(params, x, y))))
    # a mistake over the axes is named only when both batch sizes show it
    cause = diagnose.confirmed(
        seen,
        lambda args: _loss_axis_diagnostics(params, *args),
        reference=functools.partial(_ref_loss, params),
    )
    for (x, _), loss, expected in seen:
        values.assert_close(
            loss,
            expected,
            what=f"loss_fn(params, x, y) on {len(x)} examples",
            **FLOAT32,
            cause=cause,
            fix="`-jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * "
            "jax.nn.one_hot(y, n_classes), axis=-1))`",
        )


_PER_EXAMPLE_CAUSE = (
    "one loss per example, never averaged: the values are each example's -log p of its "
    "label, where the mean over the batch belongs"
)


def _per_example_losses(student: Remote, params: Any, first: Any) -> bool:
    """loss_fn returned each example's cross-entropy, one per row, on batches of B and of
    LOSS_ROWS rows (`first`: what it returned for the first): the mean left out, confirmed
    on two batch sizes."""
    if np.shape(first) != (B,):
        return False
    for rows in (B, LOSS_ROWS):
        x, y = labelled_batch(rows, SMALL_SIZES[0], SMALL_SIZES[-1])
        want = _ref_example_losses(params, x, y)
        try:
            got = first if rows == B else student.loss_fn(params, x, y)
        except client.StudentError:
            return False
        got = np.asarray(got, np.float64)
        if got.shape != (rows,) or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
            return False
    return True


def _loss_axis_diagnostics(params: Any, x: Any, y: Any) -> Any:
    """The mean cross-entropy's reductions over the wrong axes, applied to the reference:
    summed over the batch (n x the loss), averaged over the classes too (1/C of it: the mean
    of the whole (n, C) array of one-hot products), or both (n/C of it)."""
    n, c = len(y), N_CLASSES
    right = np.float64(_ref_loss(params, x, y))
    per_example = "each example's -log p of its label"
    logits = np.asarray(_ref_forward(params, x), np.float64)
    labels = np.asarray(y)

    def log_softmax(axis: int) -> Any:
        top = logits.max(axis=axis, keepdims=True)
        return logits - top - np.log(np.exp(logits - top).sum(axis=axis, keepdims=True))

    return (
        diagnose.matches(
            -float(np.mean(log_softmax(0)[np.arange(n), labels])),
            "the loss is that of log_softmax taken over axis 0, the batch: each class's "
            "logits were normalized across the examples instead of each example's across "
            "its classes (`jax.nn.log_softmax(logits, axis=-1)`, the default)",
            kind="softmax_axis",
        ),
        diagnose.matches(
            -float(np.mean(log_softmax(1)[:, labels])),
            f"the loss is the mean of log_softmax(logits)[:, y], a ({n}, {n}) array: every "
            "example's log-probability of EVERY label in the batch, where each row takes its "
            "own label (`logp[jnp.arange(len(y)), y]`, or a sum against `jax.nn.one_hot`)",
            kind="label_columns",
        ),
        diagnose.batch_scale(n, what="the batch"),
        diagnose.matches(
            right / c,
            f"the loss is 1/{c} of the mean cross-entropy: the mean was taken over the whole "
            f"(batch, {c}) array of one-hot products, so {per_example} is also divided by the "
            f"{c} classes (sum over the classes axis, then average over the batch)",
            kind="class_mean",
        ),
        diagnose.matches(
            right * n / c,
            f"the loss is {n}/{c} of the mean cross-entropy: summed over the batch and averaged "
            f"over the {c} classes, the two axes swapped (sum over the classes axis, average over "
            "the batch)",
            kind="axes_swapped",
        ),
        *_other_loss_diagnostics(logits, labels),
    )


def _other_loss_diagnostics(logits: Any, labels: Any) -> Any:
    """Other losses than the softmax cross-entropy, on the reference's logits: the
    cross-entropy of softmax(logits) taken as logits (a softmax applied twice), and the binary
    cross-entropy of sigmoid(logits) against the one-hot labels, averaged over every entry."""
    n, c = len(labels), logits.shape[-1]

    def cross_entropy(z: Any) -> float:
        top = z.max(axis=-1, keepdims=True)
        logp = z - top - np.log(np.exp(z - top).sum(axis=-1, keepdims=True))
        return -float(np.mean(logp[np.arange(n), labels]))

    probabilities = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probabilities /= probabilities.sum(axis=-1, keepdims=True)
    onehot = np.eye(c)[labels]
    sigmoid = 1.0 / (1.0 + np.exp(-logits))
    bce = -float(np.mean(onehot * np.log(sigmoid) + (1 - onehot) * np.log1p(-sigmoid)))
    return (
        diagnose.matches(
            cross_entropy(probabilities),
            "the loss is the cross-entropy of softmax(logits) taken as logits: a softmax is "
            "applied before the cross-entropy, which normalizes the logits itself "
            "(log_softmax of the raw logits)",
            kind="softmax_twice",
        ),
        diagnose.matches(
            bce,
            "the loss is the binary cross-entropy of sigmoid(logits) against the one-hot "
            "labels, averaged over every (example, class) entry: each class scored on its own, "
            "where the lesson's loss is the softmax cross-entropy over the classes",
            kind="sigmoid_bce",
        ),
    )


@check(
    "loss_fn stays finite for logits around 1e4",
    points=2,
    hint="What is exp(10000.0) in float32, and which jax.nn function computes log(softmax) "
    "without ever forming it?",
    nudge="jax.nn.log_softmax computes log-probabilities directly, subtracting the largest logit first; never take the log of a softmax.",
    spec="mean cross-entropy from `log_softmax` (stable for large logits) ... no NaN for logits of size 1e4",
)
def test_loss_stable(student: Remote) -> None:
    params = _params(SMALL_SIZES)
    params["layer3"] = {
        "w": jnp.zeros((4, N_CLASSES)),
        "b": jnp.asarray([1e4, 0.0] + [-1e4] * (N_CLASSES - 2), jnp.float32),
    }
    x, _ = labelled_batch(B, SMALL_SIZES[0], SMALL_SIZES[-1])
    y = jnp.asarray([0, 1, 2, 0, 1, 2, 0, 1], jnp.int32)  # per-row losses 0, 1e4, 2e4, ...
    expected = np.float64(np.mean([0.0, 1e4, 2e4, 0.0, 1e4, 2e4, 0.0, 1e4]))
    with _loss_errors_named("loss_fn(params, x, y) with 10 classes"):
        loss = student.loss_fn(params, x, y)
    unstable = (
        "the result is not finite for these finite logits: in float32 exp(1e4) overflows to "
        "inf and exp(-1e4) rounds to 0, whose log is -inf, so the loss exponentiates the "
        "logits without first subtracting the largest (as log(softmax(logits)) does)"
    )
    fix = "use `jax.nn.log_softmax(logits)`, which subtracts the largest logit first"
    values.assert_finite(
        loss, what="loss_fn(params, x, y) with logits [1e4, 0, -1e4, ...]", cause=unstable, fix=fix
    )
    cause = ""
    if values.difference(loss, expected, **LARGE_LOSS_TOL) is not None:
        ordinary = labelled_batch(B, SMALL_SIZES[0], SMALL_SIZES[-1])
        cause = _wrong_loss_cause(
            student,
            _params(SMALL_SIZES),
            *ordinary,
            where="a batch of ordinary logits",
            then="the loss is wrong whatever the logits' size",
        )
    values.assert_close(
        loss,
        expected,
        what="loss_fn with logits [1e4, 0, -1e4, ..., -1e4] and labels [0, 1, 2, 0, 1, 2, 0, 1]",
        **LARGE_LOSS_TOL,
        cause=cause,
        fix=fix,
    )
    grads = client.jit(client.grad(student.loss_fn))(params, x, y)
    values.assert_finite(
        grads, what="jax.grad(loss_fn) with logits [1e4, 0, -1e4, ...]", cause=unstable, fix=fix
    )


@check(
    "jax.grad(loss_fn) matches the reference gradients",
    points=1,
    hint="If the loss value is right, is the gradient flowing through every layer, or is "
    "something computed outside JAX (NumPy, a Python float)?",
    nudge="Keep the whole loss in JAX (jnp operations on the params, no NumPy or float() on the way) so jax.grad differentiates through every layer.",
    spec="gradients match the reference",
)
def test_loss_gradients(student: Remote) -> None:
    params = _params(SMALL_SIZES, seed=4)
    x, y = labelled_batch(B, SMALL_SIZES[0], SMALL_SIZES[-1], seed=5)
    with _loss_errors_named("jax.grad(loss_fn)(params, x, y) with 10 classes"):
        grads = client.jit(client.grad(student.loss_fn))(params, x, y)
    expected = jax.tree.map(np.asarray, _ref_grad(params, x, y))  # NumPy: no eager JAX op
    cause = ""
    if values.difference(grads, expected, **FLOAT32) is not None:
        cause = _gradient_scale_cause(
            student, params, ((params, x, y), grads, expected)
        ) or _wrong_loss_cause(student, params, x, y)
    values.assert_close(
        grads,
        expected,
        what="jax.grad(loss_fn)(params, x, y)",
        **FLOAT32,
        cause=cause,
    )


def _gradient_scale_cause(student: Remote, params: Any, first: Any) -> str:
    """The gradients are the batch size times (or 1 / it) the expected on `first`'s batch of
    B rows and on one of LOSS_ROWS rows: a loss summed over the batch (or divided by its size
    twice), confirmed on two sizes; else ""."""
    x2, y2 = labelled_batch(LOSS_ROWS, SMALL_SIZES[0], SMALL_SIZES[-1], seed=6)
    try:
        grads2 = client.jit(client.grad(student.loss_fn))(params, x2, y2)
    except client.StudentError:
        return ""
    seen = [first, ((params, x2, y2), grads2, jax.tree.map(np.asarray, _ref_grad(params, x2, y2)))]
    return diagnose.confirmed(seen, lambda args: (diagnose.batch_scale(len(args[1])),))


def _wrong_loss_cause(
    student: Remote, params: Any, x: Any, y: Any, *, where: str = "this batch", then: str = ""
) -> str:
    """What loss_fn's own value on a batch of ordinary logits shows: when it differs from the
    reference's, what depends on it cannot be right (the loss_fn value check says how it
    differs); else ""."""
    with contextlib.suppress(Exception):
        own = float(student.loss_fn(params, x, y))
        right = float(_ref_loss(params, x, y))
        if abs(own - right) > FLOAT32["rtol"] * abs(right) + FLOAT32["atol"]:
            return (
                f"loss_fn's own value on {where} is {own:.6g}, not {right:.6g}: "
                + (then or "its gradients follow the wrong loss")
                + (
                    _forward_clause(student, params, x)
                    if _forward_right(student, params, x) is False
                    else " (see the check 'loss_fn is the mean cross-entropy against integer "
                    "labels' for how the value differs)"
                )
            )
    return ""


# -- optimizer and train_step ---------------------------------------------------------------


@check(
    "optimizer is optax.adam(1e-3)",
    points=1,
    hint="Which Optax factory is the lesson's optimizer, and at what learning rate?",
    nudge="Optax builds an optimizer with a factory function; the module-level name holds the Adam transformation at the lesson's learning rate.",
    spec="`optimizer` -> module-level `optax.adam(1e-3)`.",
)
def test_optimizer_is_adam(student: Remote) -> None:
    tx = getattr(student, "optimizer", None)
    if tx is None or not (
        callable(getattr(tx, "init", None)) and callable(getattr(tx, "update", None))
    ):
        raise fail(
            "the module-level `optimizer`",
            expected="an Optax GradientTransformation: `optimizer = optax.adam(1e-3)`",
            observed="None (still the TODO)"
            if tx is None
            else f"a {type(tx).__name__} without init/update",
            fix="`optimizer = optax.adam(1e-3)` at module level",
        )
    params = _params(SMALL_SIZES)
    reference = optax.adam(1e-3)
    state, ref_state = tx.init(params), reference.init(params)
    # NumPy leaves: the judge scales them without an eager JAX op (one compile per shape)
    grads = jax.tree.map(
        np.asarray, _ref_grad(params, *labelled_batch(B, SMALL_SIZES[0], SMALL_SIZES[-1]))
    )
    update, ref_update = client.jit(tx.update), jax.jit(reference.update)  # one compile each
    steps = []  # (the gradients, the optimizer's updates, Adam's) at each step
    error = None
    for scale in (1.0, 10.0, 0.1, 3.0):
        g = jax.tree.map(lambda a, s=scale: s * a, grads)
        try:
            updates, state = update(g, state, params)
        except client.StudentError as exc:  # raised after the steps before it are judged
            error = exc
            break
        expected, ref_state = ref_update(g, ref_state, params)
        steps.append((g, updates, expected))
    for step, (_, updates, expected) in enumerate(steps):
        cause = ""
        if values.difference(updates, expected, **FLOAT32) is not None:
            cause = _optimizer_cause(steps)
        values.assert_close(
            updates,
            expected,
            what=f"optimizer.update at step {step + 1}",
            **FLOAT32,
            cause=cause,
            fix="`optimizer = optax.adam(1e-3)`",
        )
    if error is not None:
        raise error


def _optimizer_cause(steps: Any) -> str:
    """What every step of `steps` (gradients of four scales, the optimizer's updates, Adam's)
    shows together, else "": the updates are -1e-3 * grads (plain SGD), or one constant
    multiple of Adam's (Adam at another learning rate)."""
    if len(steps) < 2:
        return ""
    if all(
        values.difference(updates, jax.tree.map(lambda a: -1e-3 * np.asarray(a), g), **FLOAT32)
        is None
        for g, updates, _ in steps
    ):
        return "the updates are -1e-3 * grads at every step: plain SGD, not Adam"
    first = steps[0]
    ratio = float(
        np.asarray(first[1]["layer1"]["w"]).ravel()[0]
        / np.asarray(first[2]["layer1"]["w"]).ravel()[0]
    )
    if not np.isfinite(ratio) or abs(ratio - 1.0) <= 1e-3:
        return ""
    if all(
        values.difference(
            updates, jax.tree.map(lambda a: ratio * np.asarray(a), expected), **FLOAT32
        )
        is None
        for _, updates, expected in steps
    ):
        return (
            f"the updates are {ratio:.3g} x Adam's at 1e-3 on every parameter at each of the "
            f"{len(steps)} steps: Adam with a learning rate of {ratio * 1e-3:.3g}"
        )
    return ""


@check(
    "train_step takes one Adam step and returns (params, opt_state, loss)",
    points=1,
    hint="Which single JAX call gives both the loss and its gradients, and which loss should "
    "be returned: before or after the update?",
    nudge="jax.value_and_grad gives the batch loss and the gradients in one pass; the optimizer's update turns the gradients into updates, optax.apply_updates applies them.",
    spec="`train_step(params, opt_state, x, y)` -> `(params, opt_state, loss)`, jitted; `loss` is the batch loss before the update ... `optimizer` -> module-level `optax.adam(1e-3)`.",
)
def test_train_step_values(student: Remote) -> None:
    params = _params(SMALL_SIZES)
    opt_state = _opt_state(student, params)
    x, y = labelled_batch(B, SMALL_SIZES[0], SMALL_SIZES[-1])
    with _loss_errors_named("train_step(params, opt_state, x, y) with 10 classes"):
        out = student.train_step(params, opt_state, x, y)
    if not (isinstance(out, tuple) and len(out) == 3):
        raise fail(
            "the result of train_step(params, opt_state, x, y)",
            expected="a tuple (params, opt_state, loss)",
            observed=f"a {type(out).__name__}"
            + (f" of length {len(out)}" if isinstance(out, tuple | list) else ""),
            fix="`return params, opt_state, loss`",
        )
    new_params, new_state, loss = out
    ref_params, ref_state, ref_loss = _ref_step(params, optax.adam(1e-3).init(params), x, y)
    order = diagnose.swapped_outputs(out, (ref_params, ref_state, ref_loss))
    if order is not None:  # structure before numbers: two outputs in each other's places
        raise fail(
            "the result of train_step(params, opt_state, x, y)",
            expected="a tuple (params, opt_state, loss)",
            observed="a tuple of ("
            + ", ".join("an array" if hasattr(p, "shape") else type(p).__name__ for p in out)
            + ")",
            cause=order.text,
            fix="`return params, opt_state, loss`",
        )
    values.assert_close(
        new_params,
        ref_params,
        what="the params train_step returns",
        **FLOAT32,
        # asked only when the params differ: the diagnosis runs Adam eagerly on both sides
        cause=""
        if values.difference(new_params, ref_params, **FLOAT32) is None
        else _step_cause(student, params, new_params, ref_params, x, y),
    )
    values.assert_tree_structure(
        new_state,
        ref_state,
        what="the opt_state train_step returns",
        fix="return the state `optimizer.update` gave back",
    )
    after = _ref_loss(ref_params, x, y)
    with _loss_errors_named("loss_fn(params, x, y) with 10 classes"):
        own = student.loss_fn(params, x, y)
    cause = ""
    if abs(float(loss) - after) < 1e-5:
        cause = (
            f"the loss returned, {float(loss):.6g}, is the loss of the params after the update: "
            "it was computed on the new params, not on the params given"
        )
    elif (
        abs(float(own) - float(ref_loss)) > 1e-4 * abs(float(ref_loss))
        and abs(float(loss) - float(own)) <= 1e-4 * abs(float(own)) + 1e-6
    ):
        cause = (
            f"the loss returned is your loss_fn's value on this batch, {float(own):.6g}, and "
            f"loss_fn differs from the reference's {float(ref_loss):.6g}"
            + _forward_clause(student, params, x)
        )
    values.assert_close(
        loss,
        ref_loss,
        what="the loss train_step returns",
        **FLOAT32,
        cause=cause,
        fix="return the loss from `jax.value_and_grad(loss_fn)(params, x, y)`",
    )


def _step_cause(
    student: Remote, params: Any, new_params: Any, ref_params: Any, x: Any, y: Any
) -> Any:
    """Why train_step's new params differ, where the numbers confirm it: the update not
    applied, Adam's step on the student's own loss_fn gradients (a wrong loss_fn, not a wrong
    step: tried before the update's sign, which a negated loss also gives), the update's sign,
    the learning rate applied twice, the raw gradients applied in place of the updates, or
    the module's optimizer. Otherwise "" (the failure shows the difference)."""
    # a second batch, of LOSS_ROWS rows: a mistake in the step is named only when both show it
    x2, y2 = labelled_batch(LOSS_ROWS, SMALL_SIZES[0], SMALL_SIZES[-1])
    seen = [((params, x, y), new_params, ref_params)]
    with contextlib.suppress(Exception):  # a second call that fails names no cause
        again = student.train_step(params, _opt_state(student, params), x2, y2)[0]
        seen.append(((params, x2, y2), again, _ref_step(params, _adam_state(params), x2, y2)[0]))
    if len(seen) == 2 and all(
        values.difference(got, args[0], **EXACT) is None for args, got, _ in seen
    ):
        return (
            "the params train_step returns are the params it was given, on both batches: the "
            "update is not applied (`optax.apply_updates(params, updates)` returns the new "
            "params; its result must be kept)"
        )
    with contextlib.suppress(Exception):  # the student's loss_fn, differentiated in the sandbox
        own = client.jit(client.grad(student.loss_fn))(params, x, y)
        if values.difference(own, _ref_grad(params, x, y), **FLOAT32) is not None:
            step, _ = optax.adam(1e-3).update(own, _adam_state(params), params)
            if values.difference(new_params, optax.apply_updates(params, step), **FLOAT32) is None:
                return (
                    "train_step takes the right Adam step on the gradients of your loss_fn, "
                    "and those gradients differ from the reference's"
                    + _forward_clause(student, params, x)
                )
    found = diagnose.confirmed(
        seen,
        lambda args: (diagnose.update_sign(args[0]), _lr_twice(args[0]), _raw_gradients(*args)),
    )
    if found:
        return found
    tx: Any = getattr(student, "optimizer", None)  # None: the AttributeError below is caught
    grads = _ref_grad(params, x, y)
    try:
        mine, _ = tx.update(grads, tx.init(params), params)
    except Exception:
        return ""  # the optimizer's own check says how it fails
    theirs, _ = optax.adam(1e-3).update(grads, optax.adam(1e-3).init(params), params)
    if values.difference(mine, theirs, **FLOAT32) is not None and (
        values.difference(new_params, optax.apply_updates(params, mine), **FLOAT32) is None
    ):
        return (
            "train_step's new params are the params moved by the module's `optimizer`'s "
            "updates, and that optimizer is not optax.adam(1e-3) (see its check)"
        )
    return ""


def _forward_clause(student: Remote, params: Any, x: Any) -> str:
    """Where a wrong loss_fn shows: forward(params, x) already differs from the reference's
    logits, or forward is right and loss_fn alone differs (else: see both checks)."""
    right = _forward_right(student, params, x)
    if right is False:
        return (
            ": forward(params, x) already gives other logits than the reference (see the "
            "check 'forward computes x @ w + b per layer with ReLU on the hidden layers only')"
        )
    if right:
        return ": forward(params, x) is right, so loss_fn itself differs (see the loss_fn checks)"
    return " (see the forward and loss_fn checks)"


def _adam_state(params: Any) -> Any:
    return optax.adam(1e-3).init(params)


def _lr_twice(before: Any) -> Any:
    """The step from `before` is 1e-3 (the learning rate) times the expected one, or minus
    that: Adam's updates, already scaled by the learning rate, were scaled by it again."""

    def diagnostic(actual: Any, expected: Any) -> Any:
        # the step is ~1e-6, near float32's spacing of the params: each element is held to
        # 1e-3 (or -1e-3) times the expected step within 2 spacings of its param
        a, e, p = (
            np.concatenate([np.ravel(np.asarray(leaf, np.float64)) for leaf in jax.tree.leaves(t)])
            for t in (actual, expected, before)
        )
        spacing = 2 * np.spacing(np.abs(p).astype(np.float32)).astype(np.float64)
        moved, wanted = a - p, e - p
        if not (np.abs(moved) > spacing).mean() > 0.5:
            return None  # the params barely moved: no step to compare
        factor = next(
            (f for f in (1e-3, -1e-3) if np.all(np.abs(moved - f * wanted) <= spacing)), None
        )
        if factor is None:
            return None
        return diagnose.Cause(
            "lr_twice",
            f"the parameters moved by {factor:.3g} times the expected step: the learning rate "
            "was applied a second time (optax.adam(1e-3)'s updates already include it; add "
            "them as they are, `optax.apply_updates(params, updates)`)"
            + ("" if factor > 0 else ", and with the wrong sign"),
        )

    return diagnostic


def _raw_gradients(params: Any, x: Any, y: Any) -> diagnose.Diagnostic:
    """The new params are params + grads (the reference's gradients on the batch): the raw
    gradients handed to optax.apply_updates where the updates optimizer.update returns
    belong (a unit step uphill; Adam's updates are computed and dropped)."""
    grads = _ref_grad(params, x, y)
    return diagnose.matches(
        jax.tree.map(lambda p, g: np.asarray(p, np.float64) + np.asarray(g), params, grads),
        "the new params are params + grads: the raw gradients were applied, not the updates "
        "`optimizer.update` returns (`optax.apply_updates(params, updates)`)",
        "raw_grads",
    )


TRAJECTORY_STEPS = 4


@check(
    "train_step threads params and opt_state through several steps",
    points=2,
    hint="After one step, which params and which optimizer state must the next step start "
    "from, and what does train_step return for each?",
    requires=("test_train_step_values",),  # one step right first: then the threading shows
    nudge="Return the params with the updates applied and the state the optimizer's update gave back, so the next call continues from both.",
    spec="`train_step(params, opt_state, x, y)` -> `(params, opt_state, loss)`, jitted ... `optimizer` -> module-level `optax.adam(1e-3)`.",
)
def test_train_step_trajectory(student: Remote) -> None:
    params = _params(SMALL_SIZES, seed=11)
    opt_state = _opt_state(student, params)
    ref_params, ref_state = params, optax.adam(1e-3).init(params)
    for step in range(TRAJECTORY_STEPS):
        x, y = labelled_batch(B, SMALL_SIZES[0], SMALL_SIZES[-1], seed=30 + step)
        with _loss_errors_named("train_step(params, opt_state, x, y) with 10 classes"):
            out = student.train_step(params, opt_state, x, y)
        if not (isinstance(out, tuple) and len(out) == 3):
            raise fail(
                "the result of train_step(params, opt_state, x, y)",
                expected="a tuple (params, opt_state, loss)",
                observed=f"a {type(out).__name__}",
                fix="`return params, opt_state, loss`",
            )
        new_params, new_state, loss = out
        ref_params, ref_state, ref_loss = _ref_step(ref_params, ref_state, x, y)
        cause = ""
        if step > 0 and values.difference(new_state, opt_state, **EXACT) is None:
            cause = (
                "train_step returns the opt_state it was given: Adam's step count and moments "
                "never advance, so every step acts like a first step (exact for one step only)"
            )
        elif step > 0 and values.difference(new_params, params, **EXACT) is None:
            cause = "train_step returns the params it was given: the update is not applied"
        what = (
            f"step {step + 1} of {TRAJECTORY_STEPS}, each fed the params and opt_state the "
            "previous step returned"
        )
        values.assert_close(
            new_params,
            ref_params,
            what=f"the params after {what}",
            **FLOAT32,
            cause=cause,
            fix="return the new state from `optimizer.update(grads, opt_state, params)` and "
            "the params from `optax.apply_updates(params, updates)`",
        )
        values.assert_close(
            loss,
            ref_loss,
            what=f"the loss at {what}",
            **FLOAT32,
            cause=cause,
        )
        params, opt_state = new_params, new_state


@check(
    "train_step and accuracy are pure and accuracy compiles under jax.jit",
    points=1,
    hint="Does train_step or accuracy read or write anything besides their arguments, for "
    "instance a module-level counter or list, even only while jax.jit traces them?",
    nudge="Read nothing but the arguments and write nothing outside the function: under jit the Python body runs only while tracing, so a counter or a print there is not a per-call effect.",
    spec="`accuracy(params, x, y)` -> fraction of correct argmax predictions; jittable ... Every function that is meant to be jittable is checked both eagerly and under `jax.jit` ... purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
)
def test_step_accuracy_pure(student: Remote, credit: Credit, gate: Gate) -> None:
    params = _params(SMALL_SIZES, seed=12)
    x, y = labelled_batch(B, SMALL_SIZES[0], SMALL_SIZES[-1], seed=13)

    def step_case() -> None:
        gate.require("test_train_step_values")
        args = (params, _opt_state(student, params), x, y)
        what = "train_step(params, opt_state, x, y)"
        purity.assert_pure(student.train_step, args, what=what, module=student)
        purity.assert_no_trace_side_effects(student.train_step, args, what=what, module=student)

    def accuracy_case() -> None:
        gate.require("test_accuracy")
        what = "accuracy(params, x, y)"
        jit.assert_jittable(student.accuracy, (params, x, y), what=what, **ACCURACY_TOL)
        purity.assert_pure(student.accuracy, (params, x, y), what=what, module=student)
        purity.assert_no_trace_side_effects(
            student.accuracy, (params, x, y), what=what, module=student
        )

    score_cases(credit, [("train_step", step_case), ("accuracy", accuracy_case)])


def _traces_during(step: Any, args: Any) -> Any:
    """How many traces JAX reported while `step(*args)` ran, counted in the sandbox (where
    the student's code traces)."""
    before = client.probe(traces.compile_state, step)["traces"]
    step(*args)
    return int(client.probe(traces.compile_state, step)["traces"]) - int(before)


@check(
    "train_step is jitted and compiles once across many steps",
    points=2,
    hint="Where is jax.jit applied: once, to the module-level train_step, or again on every call?",
    requires=("test_train_step_values",),
    nudge="Apply jax.jit once, as a decorator on the module-level function; later calls with arrays of the same shapes reuse the compiled program.",
    spec="`train_step(params, opt_state, x, y)` -> `(params, opt_state, loss)`, jitted ... `train_step` compiles once across many steps",
)
def test_train_step_compiles_once(student: Remote) -> None:
    params = _params(SMALL_SIZES, seed=9)
    opt_state = _opt_state(student, params)
    x, y = labelled_batch(B, SMALL_SIZES[0], SMALL_SIZES[-1], seed=10)
    step = student.train_step
    if not traces.is_jitted(step):
        args = (params, opt_state, x, y)
        step(*args)
        again = _traces_during(step, args)
        if again:
            raise fail(
                "train_step compiles once across calls",
                expected="one trace and compilation, on the first call",
                observed=f"the second call with the same shapes traced {again} more time(s)",
                cause="train_step is not a jitted function, and each call with the same shapes "
                "traces again: a `jax.jit` applied inside train_step, to a function made anew on "
                "every call, so every step traces and compiles again",
                fix="decorate the module-level `def train_step` with `@jax.jit` and call it "
                "directly",
            )
    traces.assert_compiles_once(
        step,
        [(params, opt_state, x, y)],
        what="train_step(params, opt_state, x, y)",
        feed=lambda out, args: (out[0], out[1], *args[2:]),
        n_calls=6,
    )


@check(
    "accuracy is the fraction of rows whose argmax logit is the label",
    points=1,
    hint="Which axis of the logits holds the classes, and how do you turn a boolean array "
    "into a fraction?",
    nudge="Compare the argmax over the class axis of the logits with the labels and average the resulting booleans.",
    spec="`accuracy(params, x, y)` -> fraction of correct argmax predictions",
)
def test_accuracy(student: Remote) -> None:
    params = _params(SMALL_SIZES, seed=2)
    x, _ = labelled_batch(B, SMALL_SIZES[0], SMALL_SIZES[-1], seed=3)
    predicted = _ref_forward(params, x).argmax(axis=-1)
    y = np.asarray(predicted, np.int32).copy()
    y[::4] = (y[::4] + 1) % SMALL_SIZES[-1]  # exactly 2 of 8 wrong
    try:
        acc = student.accuracy(params, x, jnp.asarray(y))
    except client.StudentError as exc:
        if not _argmax_over_batch(student, params, exc):
            raise
        where = calls.student_line(exc)
        raise CheckFailure(
            f"accuracy(params, x, y) on {B} rows",
            expected="a scalar: the fraction of rows whose argmax logit is the label",
            observed=f"it raised {exc.info.type}: {calls.first_line(exc)}"
            + (f"\n    at {where}" if where else ""),
            cause=_ARGMAX_BATCH_CAUSE,
            fix="take each row's argmax over the classes (the logits' last axis), one "
            "prediction per row to compare with its label",
        ) from exc
    values.assert_shape(acc, (), what="accuracy(params, x, y)")
    if _counts_right_rows(student, params, acc):
        raise fail(
            "accuracy(params, x, y) with 6 of 8 rows right, and with 9 of 12",
            expected="0.75 and 0.75: the fraction of right rows",
            observed="6 and 9: the number of right rows",
            cause=_COUNT_CAUSE,
            fix="`jnp.mean(jnp.argmax(forward(params, x), axis=-1) == y)`",
        )
    if _error_rate(student, params, acc):
        raise fail(
            "accuracy(params, x, y) with 6 of 8 rows right, and with 8 of 12",
            expected="0.75 and 0.6667: the fraction of right rows",
            observed="0.25 and 0.3333: the fraction of wrong rows",
            cause=_ERROR_RATE_CAUSE,
            fix="compare each row's argmax with its label with `==` and take the mean",
        )
    if _floored_fraction(student, params, acc):
        raise fail(
            "accuracy(params, x, y) with 6 of 8 rows right, and with 12 of 12",
            expected="0.75 and 1.0: fractions",
            observed=f"0 and 1, whole numbers (dtype {np.asarray(acc).dtype})",
            cause=_FLOOR_CAUSE,
            fix="divide with `/` (or take `jnp.mean` of the booleans): the fraction is a float",
        )
    values.assert_close(
        acc,
        np.float64(0.75),
        what="accuracy(params, x, y) with 6 of 8 rows right",
        **ACCURACY_TOL,
        fix="`jnp.mean(jnp.argmax(forward(params, x), axis=-1) == y)`",
    )


_ARGMAX_BATCH_CAUSE = (
    f"the argmax is taken over the batch axis (axis 0) instead of the class axis: it gives "
    f"one index per class ({SMALL_SIZES[-1]}), not one prediction per row, so comparing it "
    "with the labels cannot broadcast"
)
_SHAPES = re.compile(r"incompatible shapes for broadcasting: (\([\d, ]*\)), (\([\d, ]*\))")


def _broadcast_shapes(message: str) -> frozenset[str] | None:
    """The two shapes of JAX's broadcasting error in `message` (in either order), or None."""
    found = _SHAPES.search(message)
    return frozenset(found.groups()) if found else None


def _argmax_over_batch(student: Remote, params: Any, error: Exception) -> bool:
    """The student's accuracy raised `error` on test_accuracy's 8 rows: confirmed as an argmax
    over axis 0 when, on 8 and 12 rows, its broadcasting error is between the shapes that
    argmax(logits, axis=0) and the labels have, and on 10 rows (one per class, where that
    comparison broadcasts) it returns what the argmax over axis 0 gives."""
    for n, seed, raised in ((B, 3, error), (12, 4, None)):
        x, _ = labelled_batch(n, SMALL_SIZES[0], SMALL_SIZES[-1], seed=seed)
        logits = np.asarray(_ref_forward(params, x))
        y = np.asarray(logits.argmax(axis=-1), np.int32)
        mistake = frozenset({str(logits.argmax(axis=0).shape), str(y.shape)})
        if raised is None:
            try:
                student.accuracy(params, x, jnp.asarray(y))
            except client.StudentError as exc:
                raised = exc
            else:
                return False
        if _broadcast_shapes(str(raised)) != mistake:
            return False
    x, _ = labelled_batch(SMALL_SIZES[-1], SMALL_SIZES[0], SMALL_SIZES[-1], seed=5)
    logits = np.asarray(_ref_forward(params, x))
    y = np.asarray(logits.argmax(axis=0), np.int32)  # all right for the mistake
    right = float(np.mean(logits.argmax(axis=-1) == y))
    try:
        got = float(np.asarray(student.accuracy(params, x, jnp.asarray(y))))
    except (client.StudentError, TypeError, ValueError):
        return False
    return right < 1.0 and bool(np.isclose(got, 1.0))


_COUNT_CAUSE = (
    "the accuracy is the NUMBER of right rows (a sum of the comparison), not their fraction"
)


_ERROR_RATE_CAUSE = (
    "the accuracy is the fraction of WRONG rows (the error rate, 1 minus the accuracy): the "
    "rows counted are those whose prediction is not the label"
)


_FLOOR_CAUSE = (
    "the fraction is rounded down to a whole number: 0 for 6 of 8 rows right and 1 for 12 of "
    "12, as an integer division (`//`) gives"
)


def _floored_fraction(student: Remote, params: Any, acc: Any) -> bool:
    """accuracy returned the integer 0 for 6 right rows of 8, and returns the integer 1 on a
    second batch of 12 rows, all right: the fraction floored, confirmed on two batches."""
    seen = np.asarray(acc)
    if seen.dtype.kind not in "iu" or int(seen) != 0:
        return False
    x, _ = labelled_batch(12, SMALL_SIZES[0], SMALL_SIZES[-1], seed=4)
    y = np.asarray(_ref_forward(params, x).argmax(axis=-1), np.int32)  # every row right
    again = np.asarray(student.accuracy(params, x, jnp.asarray(y)))
    return again.shape == () and again.dtype.kind in "iu" and int(again) == 1


def _error_rate(student: Remote, params: Any, acc: Any) -> bool:
    """accuracy returned 0.25, the fraction of wrong rows of the 8 (6 right), and returns 1/3
    on a second batch of 12 rows with 8 right: the error rate, confirmed on two batch sizes
    and two fractions."""
    if not np.isclose(float(np.asarray(acc)), 0.25):
        return False
    x, _ = labelled_batch(12, SMALL_SIZES[0], SMALL_SIZES[-1], seed=4)
    y = np.asarray(_ref_forward(params, x).argmax(axis=-1), np.int32).copy()
    y[::3] = (y[::3] + 1) % SMALL_SIZES[-1]  # exactly 4 of 12 wrong
    again = student.accuracy(params, x, jnp.asarray(y))
    return np.shape(again) == () and bool(np.isclose(float(np.asarray(again)), 4 / 12))


def _counts_right_rows(student: Remote, params: Any, acc: Any) -> bool:
    """accuracy returned 6, the count of right rows of the 8, and returns 9 on a second batch
    of 12 rows with 9 right: the count, confirmed on two batch sizes."""
    if not np.isclose(float(np.asarray(acc)), 6.0):
        return False
    x, _ = labelled_batch(12, SMALL_SIZES[0], SMALL_SIZES[-1], seed=4)
    y = np.asarray(_ref_forward(params, x).argmax(axis=-1), np.int32).copy()
    y[::4] = (y[::4] + 1) % SMALL_SIZES[-1]  # exactly 3 of 12 wrong
    again = student.accuracy(params, x, jnp.asarray(y))
    return np.shape(again) == () and bool(np.isclose(float(np.asarray(again)), 9.0))


# -- train ------------------------------------------------------------------------------------


@check(
    "train reaches at least 0.95 test accuracy on digits",
    points=2,
    hint="Does every epoch reshuffle, does every batch go through train_step, and are the "
    "params and opt_state you return the updated ones?",
    nudge="Each epoch, permute the training rows with a fresh subkey, run train_step on every batch, and carry its returned params and opt_state into the next step.",
    spec="the layer sizes are `(x_train.shape[1], 256, 128, 10)` ... training on the digits data reaches at least 0.95 test accuracy (checks may train for more than the default 10 epochs to keep a margin)",
)
def test_train_accuracy(student: Remote, attach: Attachments) -> None:
    with _loss_errors_named(f"train(key, digits, n_epochs={TRAIN_EPOCHS})"):
        data, params, _ = _digits_run(student)
    _, _, x_test, y_test = data
    expected = _skeleton((DIGITS_TRAIN_SHAPE[1], 256, 128, 10))
    values.assert_tree_structure(
        params,
        jax.tree.map(np.zeros, expected, is_leaf=lambda s: isinstance(s, tuple)),
        what="the params train returns",
        fix="size the network (x_train.shape[1], 256, 128, 10)",
    )
    shapes = _shapes(params)
    if shapes != expected:
        raise fail(
            "the shapes of the params train(key, digits) returns",
            expected=f"{expected}: the layer sizes (x_train.shape[1], 256, 128, 10)",
            observed=str(shapes),
            fix="size the network `(x_train.shape[1], 256, 128, 10)`, as the lesson does",
        )
    acc = float(np.mean(_ref_forward(params, x_test).argmax(axis=-1) == y_test))
    attach.metric("test_accuracy", acc)
    if acc < TARGET_ACCURACY:
        raise fail(
            f"test accuracy of the params from train(key, digits, n_epochs={TRAIN_EPOCHS})",
            expected=f"at least {TARGET_ACCURACY} (the lesson's MLP reaches about 0.97)",
            observed=f"{acc:.4f}",
            cause=_one_step_cause(student) or _labels_cause(student),
            fix="feed train_step's new params and opt_state into the next step; check the "
            "learning rate and the init scale",
        )


def _labels_cause(student: Remote) -> str:
    """What the labels train hands to train_step show, on the observed run (`_observed_train`,
    key 0), where a batch's labels are not its rows' labels in the dataset: the labels in the
    dataset's order while the rows are shuffled, or another order; else "" (labels that match,
    rows or labels that cannot be read, no step through the module's train_step)."""
    with contextlib.suppress(Exception):
        observed = _observed_train(student, 0)
        x_train, y_train = _observed_data()[:2]
        row_of = {row.tobytes(): i for i, row in enumerate(x_train)}
        pairs = [
            (_row_indices(rows, row_of), np.asarray(labels))
            for rows, labels in zip(observed["batches"], observed["labels"], strict=True)
            if rows is not None and labels is not None
        ]
        per_epoch = DIGITS_TRAIN_SHAPE[0] // OBSERVED_BATCH
        if not pairs or any(-1 in rows or len(rows) != labels.size for rows, labels in pairs):
            return ""
        wrong = sum(int(np.sum(y_train[rows] != labels.ravel())) for rows, labels in pairs)
        if wrong == 0:
            return ""
        total = sum(len(rows) for rows, _ in pairs)
        in_order = all(
            np.array_equal(
                labels.ravel(),
                y_train[(i % per_epoch) * OBSERVED_BATCH : (i % per_epoch + 1) * OBSERVED_BATCH],
            )
            for i, (_, labels) in enumerate(pairs)
        )
        seen = (
            f"in {OBSERVED_CALL}, {wrong} of the {total} rows train_step received came with "
            "another row's label"
        )
        if in_order:
            return (
                f"{seen}: the labels come in the dataset's order while the rows are shuffled, "
                "so y is never permuted with x"
            )
        return f"{seen}: x and y are not permuted together (one permutation indexes both)"
    return ""


def _one_step_cause(student: Remote) -> str:
    """train_step's params after one step on the small net, where they differ from Adam's:
    train runs that step on every batch (the train_step check says how it differs, and what
    it confirms of why is added); else ""."""
    with contextlib.suppress(Exception):
        params = _params(SMALL_SIZES)
        x, y = labelled_batch(B, SMALL_SIZES[0], SMALL_SIZES[-1])
        got = student.train_step(params, _opt_state(student, params), x, y)[0]
        ref = _ref_step(params, _adam_state(params), x, y)[0]
        if values.difference(got, ref, **FLOAT32):
            why = ""
            with contextlib.suppress(Exception):
                why = _step_cause(student, params, got, ref, x, y)
            return (
                "one train_step already gives other params than Adam's step (see the check "
                "'train_step takes one Adam step and returns (params, opt_state, loss)'), and "
                "train runs it on every batch" + (f"; there, {why}" if why else "")
            )
    return ""


@check(
    "train's history has one dict per epoch with loss, train_acc and test_acc",
    points=1,
    hint="What does each entry of the history need to record, at which point of the epoch, "
    "and as what Python type?",
    nudge="After each epoch append one dict: the mean of that epoch's batch losses and the accuracies of the current params on the training and test rows, each converted with float().",
    spec="`history` is a list of per-epoch dicts with exactly the keys `loss`, `train_acc`, `test_acc`, each a Python float",
)
def test_train_history(student: Remote) -> None:
    data, params, history = _digits_run(student)
    if not isinstance(history, list) or len(history) != TRAIN_EPOCHS:
        raise fail(
            f"the history of train(key, data, n_epochs={TRAIN_EPOCHS})",
            expected=f"a list of {TRAIN_EPOCHS} dicts, one per epoch",
            observed=f"a {type(history).__name__}"
            + (f" of length {len(history)}" if hasattr(history, "__len__") else ""),
        )
    for epoch, row in enumerate(history, start=1):
        if not isinstance(row, dict) or set(row) != {"loss", "train_acc", "test_acc"}:
            raise fail(
                f"history[{epoch - 1}]",
                expected="a dict with exactly the keys 'loss', 'train_acc', 'test_acc'",
                observed=repr(row)[:200],
            )
        bad = {k: type(v).__name__ for k, v in row.items() if not isinstance(v, float)}
        if bad:
            raise fail(
                f"history[{epoch - 1}] values",
                expected="Python floats",
                observed=f"{bad}",
                fix="convert with `float(...)` so the history holds numbers, not device arrays",
            )
    x_train, y_train, x_test, y_test = data
    hits_train = _ref_forward(params, x_train).argmax(axis=-1) == y_train
    hits_test = _ref_forward(params, x_test).argmax(axis=-1) == y_test
    right_train, right_test = int(np.sum(hits_train)), int(np.sum(hits_test))
    counted = history[-1]["train_acc"], history[-1]["test_acc"]
    if abs(counted[0] - right_train) <= 1.5 and abs(counted[1] - right_test) <= 1.5:
        raise fail(  # the count, confirmed on the training and the test rows (two sizes)
            "history[-1]['train_acc'] and history[-1]['test_acc']",
            expected=f"fractions: {right_train / len(y_train):.4f} and "
            f"{right_test / len(y_test):.4f}",
            observed=f"{counted[0]:.1f} and {counted[1]:.1f}: the right rows of "
            f"{len(y_train)} and of {len(y_test)}",
            cause=_COUNT_CAUSE,
            fix="`jnp.mean(jnp.argmax(forward(params, x), axis=-1) == y)`",
        )
    seen = float(np.mean(hits_train[:5000]))
    final = float(np.mean(hits_test))
    near_train, near_test = 1.5 / min(len(y_train), 5000), 1.5 / len(y_test)
    if abs(history[-1]["train_acc"] - seen) > near_train:
        got = history[-1]["train_acc"]
        raise fail(
            "history[-1]['train_acc']",
            expected=f"the accuracy of the returned params on the training rows: {seen:.4f}",
            observed=f"{got:.4f}",
            cause=(
                f"history[-1]['train_acc'] is the returned params' accuracy on the test rows "
                f"({final:.4f}): the training accuracy was measured on the test set"
            )
            if abs(got - final) <= near_test and abs(seen - final) > 2 * near_test
            else _own_accuracy_cause(student, params, x_train, y_train, got, "training"),
        )
    last = history[-1]["test_acc"]
    if abs(last - final) > near_test:
        raise fail(
            "history[-1]['test_acc']",
            expected=f"the test accuracy of the returned params: {final:.4f}",
            observed=f"{last:.4f}",
            cause=(
                f"history[-1]['test_acc'] is the returned params' accuracy on the training "
                f"rows ({seen:.4f}): the test accuracy was measured on the training set"
            )
            if abs(last - seen) <= near_test and abs(seen - final) > 2 * near_test
            else _own_accuracy_cause(student, params, x_test, y_test, last, "test"),
        )
    # the last epoch's mean batch loss against the student's own loss_fn of the params it
    # ends with, over batches of train's default 128 rows (a loss_fn that is wrong, a sum over
    # the batch, say, is its own checks' failure, not this one's). Measured 0.97-1.15 x
    # (0.028-0.030) on digits after 20 epochs, seeds 0-2; a sum over batches (n_batches x), a
    # division by the examples (/ 128), a total that does not start at 0 (+0.09) fall out
    batches = [slice(i, i + 128) for i in range(0, len(x_train) - 127, 128)]
    end = float(
        np.mean([np.asarray(student.loss_fn(params, x_train[b], y_train[b])) for b in batches])
    )
    if not np.isfinite(end):  # a run that diverged: a band around NaN holds nothing
        raise fail(
            "the loss_fn of the params train returns, over batches of the training rows",
            expected="a finite loss, which history[-1]['loss'] (the last epoch's mean batch "
            "loss) is compared with",
            observed=f"{end}, and history[-1]['loss'] is {history[-1]['loss']:.4f}",
            cause=_one_step_cause(student),
            fix="the history's loss is judged once the run ends with finite params: see the "
            "train_step and train checks",
        )
    low, high = HISTORY_LOSS_BAND[0] * end, HISTORY_LOSS_BAND[1] * end + 0.03
    if not low <= history[-1]["loss"] <= high:
        raise fail(
            "history[-1]['loss']",
            expected=f"about the mean loss_fn of the returned params over batches of the "
            f"training rows, {end:.4f} (the mean batch loss of the last epoch: between "
            f"{low:.4f} and {high:.4f})",
            observed=f"{history[-1]['loss']:.4f} ({history[-1]['loss'] / end:.3g} x that mean)"
            if end > 0
            else f"{history[-1]['loss']:.4f}",
            fix="record the mean of the epoch's batch losses: a total started at 0 each epoch, "
            "plus every train_step's loss, divided by the number of batches",
        )
    if not history[-1]["loss"] < history[0]["loss"]:
        raise fail(
            "the loss in train's history",
            expected="the last epoch's mean loss below the first's",
            observed=f"{history[0]['loss']:.4f} -> {history[-1]['loss']:.4f}",
        )


def _own_accuracy_cause(
    student: Remote, params: Any, x: Any, y: Any, recorded: float, rows: str
) -> str:
    """The history's accuracy is what the student's own accuracy gives for the returned params
    on these rows, and that differs from the reference's: say which of its functions differs
    (forward's logits, or accuracy on right logits); else ""."""
    try:
        own = float(np.asarray(student.accuracy(params, x, y)))
    except (client.StudentError, TypeError, ValueError):
        return ""
    if abs(own - recorded) > 1.5 / len(y):
        return ""
    right = _forward_right(student, params, x)
    if right is None:
        return ""
    where = (
        "forward(params, x) gives other logits than the reference (see the check 'forward "
        "computes x @ w + b per layer with ReLU on the hidden layers only')"
        if not right
        else "forward is right there, so accuracy itself differs (see the check 'accuracy is "
        "the fraction of rows whose argmax logit is the label')"
    )
    return (
        f"the history records what your accuracy(params, x, y) gives for the returned params "
        f"on the {rows} rows ({own:.4f}), and that differs from the reference's: {where}"
    )


def _row_indices(rows: Any, row_of: Any) -> Any:
    """The dataset index of each row of a batch (-1 for a row that is not in the dataset)."""
    rows = np.asarray(rows, np.float32)
    if rows.ndim != 2:
        return [-1]
    return [row_of.get(r.tobytes(), -1) for r in rows]


# The observed runs' shapes are the digits run's (1,437 training rows of 64, 360 test rows),
# so the student's init, shuffle and accuracy are already compiled; 3 full batches of 479
# an epoch (a batch size other than the default: one that is ignored shows).
OBSERVED_BATCH, OBSERVED_EPOCHS = 479, 3
OBSERVED_CALL = (
    f"train(key, data of {DIGITS_TRAIN_SHAPE[0]} rows, n_epochs={OBSERVED_EPOCHS}, "
    f"batch_size={OBSERVED_BATCH})"
)


@functools.cache
def _observed_data() -> Any:
    (n, dim), n_test = DIGITS_TRAIN_SHAPE, DIGITS_TEST_ROWS
    rng = np.random.default_rng(21)
    x_train = rng.uniform(size=(n, dim)).astype(np.float32)
    y_train = rng.integers(0, 10, size=n).astype(np.int32)
    return x_train, y_train, x_train[:n_test], y_train[:n_test]


def _observed_train(student: Remote, seed: Any) -> Any:
    """One train(...) on `_observed_data` in which the module's train_step reports the x
    of every step it runs (eagerly, or inside lax.fori_loop / lax.scan) and the optimizer
    state's step count it was given; shared by the checks that read it."""

    def compute() -> Any:
        return client.probe(
            _inputs.train_step_batches,
            student,
            jax.random.key(seed),
            _observed_data(),
            OBSERVED_EPOCHS,
            OBSERVED_BATCH,
        )

    observed = once(student, ("observed train", seed), compute)
    if isinstance(observed["error"], client.StudentError):
        raise observed["error"]
    return observed


@check(
    "train reshuffles the data every epoch with a fresh key",
    points=1,
    hidden=True,
    hint="If you split the key once before the loop, which permutation does every epoch see?",
    requires=("test_train_accuracy",),
    nudge="Inside the epoch loop, split the key anew and draw the epoch's permutation of the row indices from the new subkey.",
    spec="reshuffles each epoch with a fresh key",
)
def test_train_reshuffles(student: Remote) -> None:
    (n, _), batch, epochs = DIGITS_TRAIN_SHAPE, OBSERVED_BATCH, OBSERVED_EPOCHS
    per_epoch = n // batch
    x_train = _observed_data()[0]
    row_of = {row.tobytes(): i for i, row in enumerate(x_train)}
    call = OBSERVED_CALL
    orders: list[Any] = []
    finals: list[Any] = []
    groups: list[set[frozenset[int]]] = []  # each epoch's batches as sets of rows
    for seed in (0, 1):
        observed = _observed_train(student, seed)
        finals.append(observed["params"])
        seen = [_row_indices(rows, row_of) for rows in observed["batches"] if rows is not None]
        if not seen:
            continue  # train runs no step through the module's train_step: judged below
        if not groups:  # each epoch's batches as sets of rows (the first key's run)
            groups = [
                {frozenset(b) for b in seen[e * per_epoch : (e + 1) * per_epoch]}
                for e in range(len(seen) // per_epoch)
            ]
        if len(seen) != epochs * per_epoch:
            raise fail(
                f"the batches {call} trains on",
                expected=f"{epochs * per_epoch} optimizer steps on full batches ({per_epoch} per "
                "epoch), each run by the module's train_step",
                observed=f"{len(seen)} steps",
                fix="loop over `len(x_train) // batch_size` batches per epoch, one train_step "
                "each (a Python loop or lax.fori_loop / lax.scan)",
            )
        orders.append(
            [
                list(itertools.chain.from_iterable(seen[e * per_epoch : (e + 1) * per_epoch]))
                for e in range(epochs)
            ]
        )
    if len(orders) < 2:
        # The batch order cannot be seen: judge what training produces for two keys.
        if all(f is not None for f in finals) and (
            values.difference(finals[0], finals[1], **EXACT) is None
        ):
            raise fail(
                f"the params {call} returns for keys 0 and 1",
                expected="different params (another init and other permutations)",
                observed="identical params",
                cause="the run does not depend on train's key: keys 0 and 1 give the same params",
                fix="derive the init key and every epoch's shuffle key from `key`",
            )
        return
    first = orders[0]
    for e, order in enumerate(first):
        if sorted(order) != list(range(n)):
            raise fail(
                f"the rows train feeds in epoch {e + 1}",
                expected=f"each of the {n} rows exactly once per epoch (a permutation)",
                observed=f"{len(set(order) - {-1})} distinct rows of x_train"
                + (
                    f", and {order.count(-1)} rows that are not rows of x_train"
                    if -1 in order
                    else ""
                ),
                fix="`perm = jax.random.permutation(subkey, len(x_train))`, then slice `x[perm]`",
            )
    if first[0] == list(range(n)):
        raise fail(
            "the order of the rows in epoch 1",
            expected="a shuffled order",
            observed="the dataset order",
            fix="permute with `jax.random.permutation`",
        )
    repeated = all(order == first[0] for order in first[1:])  # one permutation, every epoch
    if not repeated and per_epoch > 1 and all(group == groups[0] for group in groups[1:]):
        raise fail(
            "the batches of rows across epochs",
            expected="a new permutation of the rows every epoch: new batches",
            observed=f"every epoch's {per_epoch} batches hold the same rows as epoch 1's (only "
            "the order of the batches may change)",
            cause="each batch always holds the same rows: what is shuffled is the order of the "
            "batches (or of the rows within a batch), not the rows across the training set",
            fix="permute the row indices each epoch "
            "(`jax.random.permutation(subkey, len(x_train))`), then cut the batches from them",
        )
    if any(first[e] == first[0] for e in range(1, epochs)):
        raise fail(
            "the row order across epochs",
            expected="a new permutation every epoch",
            observed="the same permutation in two epochs",
            fix="`key, subkey = jax.random.split(key)` at the start of every epoch",
        )
    if orders[0] == orders[1]:
        raise fail(
            "the row order for keys 0 and 1",
            expected="different orders",
            observed="identical",
            cause="the batch order does not depend on train's key: keys 0 and 1 give the same "
            "order",
        )


@check(
    "train carries one optimizer state through every step of every epoch",
    points=1,
    hint="After each train_step, and at the start of each epoch, which opt_state does the "
    "next step start from: the one train_step returned, or an older or a new one?",
    requires=("test_train_accuracy",),
    nudge="The optimizer state holds Adam's moments and step count: create it once before the epochs, and the state train_step returns is the one the next step must receive, within an epoch and across epochs.",
    spec="`train_step(params, opt_state, x, y)` -> `(params, opt_state, loss)` ... one "
    "optimizer state is carried through every step of every epoch",
)
def test_train_carries_opt_state(student: Remote) -> None:
    per_epoch = DIGITS_TRAIN_SHAPE[0] // OBSERVED_BATCH
    counts = _observed_train(student, 0)["counts"]
    if not counts or any(c is None for c in counts):
        return  # no step ran through the module's train_step with a step count: nothing seen
    # within an epoch every step starts where the previous one left Adam's count (the
    # epoch's own mistake named first), then across the epochs
    for e in range(len(counts) // per_epoch):
        epoch = counts[e * per_epoch : (e + 1) * per_epoch]
        if all(b == a + 1 for a, b in itertools.pairwise(epoch)):
            continue
        stuck = len(set(epoch)) == 1
        advances = _step_advances_count(student) if stuck else None
        raise fail(
            f"Adam's step count (opt_state's `count`) at each train_step of {OBSERVED_CALL}, "
            f"epoch {e + 1}",
            expected=f"{list(range(epoch[0], epoch[0] + len(epoch)))}: one more at every step",
            observed=f"{epoch}",
            cause="every step starts from the same optimizer state although train_step "
            "returns one whose count has advanced: the opt_state train_step returns is dropped "
            "(`params, _, loss = train_step(...)`), so Adam's moments and step count never "
            "advance and every update is a first step"
            if advances
            else "train_step returns an opt_state whose step count has not advanced (see the "
            "check 'train_step threads params and opt_state through several steps'), so every "
            "step starts from the first step's state"
            if advances is False
            else "",
            fix="return the state `optimizer.update(grads, opt_state, params)` gives back from "
            "train_step"
            if advances is False
            else "`params, opt_state, loss = train_step(params, opt_state, x, y)`: keep the new "
            "opt_state for the next step",
        )
    if all(b == a + 1 for a, b in itertools.pairwise(counts)):
        return
    starts = counts[::per_epoch]
    raise fail(
        f"Adam's step count (opt_state's `count`) at the first train_step of each epoch of "
        f"{OBSERVED_CALL}",
        expected=f"{[counts[0] + e * per_epoch for e in range(len(starts))]}: one optimizer "
        f"state through all {len(counts)} steps, {per_epoch} an epoch",
        observed=f"{starts}",
        cause=f"a new optimizer state every epoch: each epoch's first step starts at count "
        f"{starts[0]} (as from `opt_state = optimizer.init(params)` inside the epoch loop), so "
        "Adam's moments and step count start over, and its bias correction makes each "
        "epoch's first updates full-size again"
        if len(set(starts)) == 1
        else "",
        fix="call `optimizer.init(params)` once, before the epoch loop, and carry the opt_state "
        "train_step returns into the next epoch",
    )


def _count_leaves(opt_state: Any) -> list[int]:
    """The scalar leaves of `opt_state` named `count` (Adam's ScaleByAdamState.count)."""
    flat = jax.tree_util.tree_flatten_with_path(opt_state)[0]
    return [
        int(np.asarray(leaf))
        for path, leaf in flat
        if path and getattr(path[-1], "name", None) == "count" and np.ndim(leaf) == 0
    ]


def _step_advances_count(student: Remote) -> bool | None:
    """Whether one train_step returns an optimizer state whose step count is one more than
    the state it was given (None: no count to read, or the step failed)."""
    try:
        params = _params(SMALL_SIZES)
        state = _opt_state(student, params)
        x, y = labelled_batch(B, SMALL_SIZES[0], SMALL_SIZES[-1])
        given, returned = (
            _count_leaves(state),
            _count_leaves(student.train_step(params, state, x, y)[1]),
        )
    except Exception:
        return None
    if not given or len(given) != len(returned):
        return None
    return all(b == a + 1 for a, b in zip(given, returned, strict=True))


# The signature's defaults and the key: one run with the defaults on `_observed_data` (the
# digits run's shapes, so nothing new compiles: 10 epochs of 11 steps, ~0.2 s), one with
# n_epochs=10, batch_size=128 passed after NumPy's and Python's global RNGs were moved.
DEFAULT_EPOCHS, DEFAULT_BATCH = 10, 128


def _same(a: Any, b: Any) -> Any:
    return values.difference(a, b, **EXACT) is None


@check(
    "train's defaults are n_epochs=10 and batch_size=128, and its key alone decides the run",
    points=1,
    hint="Does train(key, data) without n_epochs and batch_size train exactly as with "
    "n_epochs=10, batch_size=128, and does anything besides the key (np.random, random) "
    "choose the initialisation or the batches?",
    nudge="A training run is a pure function of its key and data: every random draw comes "
    "from splitting the key you are given, and the signature's defaults are the lesson's.",
    spec="`train(key, data, n_epochs=10, batch_size=128)` -> `(params, history)` ... "
    "same signatures ... purity is checked (same inputs, same outputs; no mutation of "
    "arguments or module state; no global NumPy/`random` RNG",
    requires=("test_train_accuracy",),
)
def test_train_defaults_and_key(student: Remote, seed: int) -> None:
    data, key = _observed_data(), jax.random.key(0)
    call = f"train(key, data of {DIGITS_TRAIN_SHAPE[0]} rows)"
    explicit_call = f"train(key, data, n_epochs={DEFAULT_EPOCHS}, batch_size={DEFAULT_BATCH})"
    default = once(student, "default run", lambda: student.train(key, data))
    kwargs = {"n_epochs": DEFAULT_EPOCHS, "batch_size": DEFAULT_BATCH}
    moved = client.probe(
        keys.observe_global_rng, client.handle(student.train), (key, data), kwargs, (),
        (seed + 7919,), False,
    )["eagerly"][0]  # fmt: skip
    moved = calls.observed(
        moved,
        checked=f"{explicit_call} after NumPy's global RNG moved",
        attempted=explicit_call,
        expected="the function runs",
    )
    if _same(moved, default):
        return
    # Two causes: other defaults, or a global RNG. A third run, RNGs untouched, tells them apart.
    again = student.train(key, data, **kwargs)
    history = default[1] if isinstance(default, tuple | list) and len(default) == 2 else None
    if _same(again, moved):
        epochs = len(history) if isinstance(history, list) else None
        raise fail(
            f"{call} against {explicit_call}, the same key",
            expected="the same params and history: the defaults are n_epochs=10, batch_size=128",
            observed="a different run without them"
            + (
                f" ({epochs} epochs in the history)" if epochs not in (None, DEFAULT_EPOCHS) else ""
            ),
            cause="the defaults of n_epochs or batch_size differ from the lesson's",
            fix="keep the signature `def train(key, data, n_epochs=10, batch_size=128)`",
        )
    raise fail(
        f"{explicit_call} twice with jax.random.key(0), NumPy's and Python's global RNGs "
        "moved in between",
        expected="the same params and history",
        observed="a different run",
        cause="the run is not decided by its key alone: the same key and arguments gave "
        "another run once NumPy's and Python's global RNGs had moved",
        fix="split the key you are given and draw with jax.random (jax.random.permutation for "
        "the batch order)",
    )


@check(
    "train gives the init and every epoch's shuffle a key of their own",
    points=1,
    hint="After `key, subkey = jax.random.split(key)`, which of the two may you split or draw "
    "from again, and is the key you were given ever used twice?",
    nudge="A JAX key is consumed by one random call (a split counts): carry the new key "
    "forward and draw only from fresh subkeys, for the init and for each epoch's shuffle.",
    spec="reshuffles each epoch with a fresh key ... Random-valued outputs (inits, splits, "
    "noise, dropout masks, training runs) are judged statistically and by key use",
    requires=("test_train_accuracy",),
)
def test_train_key_reuse(student: Remote) -> None:
    keys.assert_no_key_reuse(
        student.train,
        (jax.random.key(0), _observed_data()),
        kwargs={"n_epochs": 2, "batch_size": OBSERVED_BATCH},
        jit=False,
        what=f"train(key, data, n_epochs=2, batch_size={OBSERVED_BATCH})",
    )
