"""Hidden checks for ex1_dropout.py: inverted dropout with explicit PRNG keys.

Dropout is random, so it is judged statistically: on a million units the
fraction zeroed must be `rate` within a binomial tolerance (6 standard
deviations), the survivors must be exactly `x / (1 - rate)`, and the mean must
be preserved. `rate=0.3` tells the two conventions apart (0.5 would not): the
keep-probability reading zeroes about 70% of the units.

Key use in `forward_with_dropout` is judged twice: by JAX's key-reuse checker
with typed keys, and statistically on a probe network of identity layers,
where each output unit shows how many dropout masks it passed through (two
independent masks keep (1 - rate)^2 of the units; one key used for both layers
keeps 1 - rate), which also catches reuse of raw `PRNGKey` keys.

Every eager random draw compiles once per shape and key type (about a second
each here), so the checks share a few shapes: BIG for the statistics (and the
probe's hidden layers), SMALL for the rest, one set of network sizes whose hidden
activations have the shape SMALL (a batch of SMALL[0] rows, hidden layers of
SMALL[1] units), so forward_with_dropout's eager dropout draws the masks dropout's
own checks compiled. The judge's references are NumPy (nothing to compile).

compare_dropout returns two test accuracies and the spec fixes nothing of its training
but `rate` and `n_epochs`, so it is judged by what any correct training gives: plausible
accuracies on digits with the signature's defaults, the same result when the defaults
are passed explicitly after NumPy's and Python's global RNGs moved (the key alone decides
it), and an accuracy of 1.0 after one epoch on all-zero inputs of one label (only the last
bias learns there, so the trained network predicts that label; an untrained one, or one
evaluated with another forward pass, does not). Only the dropout run uses `rate`, so with
one key the run without dropout gives one accuracy for rate=0.5 and rate=0.0 (one epoch
each: a run that trains through dropout too moves by tens of points there). The same
training on zero inputs judged on test rows of another label gives 0.0 (the accuracy is the
test set's, not the training set's 1.0), and at rate=0.0 on 128 training rows, one batch per
epoch whatever the batching, the two runs are one training from the same params: their
accuracies on a grid of test points agree (two inits put them hundreds of points apart).
"""

import itertools
from functools import cache
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from grader.authoring import Attachments, Credit, check
from grader.checks import calls, diagnose, jit, keys, purity, values
from grader.checks.failure import CheckFailure, explained, fail
from grader.data import load_digits
from grader.plugin import Gate
from grader.sandbox import client
from grader.sandbox.client import Remote
from grader.suites._shared import EXACT, FLOAT32, Tolerance, mlp_params, once, score_cases

LESSON = "ex1_dropout"
TITLE = "Exercise 1: dropout with explicit PRNG keys"

BIG = (1000, 1000)
SMALL = (50, 40)
SIZES = (12, SMALL[1], SMALL[1], 5)  # hidden activations of a batch of SMALL[0]: SMALL
SIGMAS = 6.0
# a ratio of two float32 values of order 1 (a survivor over its input): TIGHT's rtol, with
# NumPy's default atol (it plays no part at that size)
RATIO_TOL: Tolerance = {"rtol": 1e-5, "atol": 1e-8}
RATES = (0.3, 0.1, 0.75)

Params = dict[str, dict[str, Any]]

DROP_PROBABILITY = (
    "rate is the DROP probability (as in Flax's nn.Dropout and Equinox's nn.Dropout): each unit "
    "is zeroed with probability rate and kept with probability 1 - rate. The old "
    "jax.example_libraries.stax.Dropout took the KEEP probability instead"
)


# -- inputs ---------------------------------------------------------------------
def _units(shape: tuple[int, ...] = BIG, seed: int = 0) -> jax.Array:
    """Positive, varied activations (never 0, so every zero in the output was dropped)."""
    rng = np.random.default_rng(seed)
    return jnp.asarray(rng.uniform(0.5, 1.5, shape), jnp.float32)


def _network(seed: int) -> tuple[Params, jax.Array]:
    """Parameters of SIZES and a batch of SMALL[0] inputs."""
    rng = np.random.default_rng(seed)
    params = mlp_params(SIZES, rng, w_std="he", b_std=0.3)
    return params, jnp.asarray(rng.normal(size=(SMALL[0], SIZES[0])), jnp.float32)


def _identity_probe(width: int) -> Params:
    """Three identity layers: the logits are the units that survived both dropout layers."""
    eye = jnp.asarray(np.eye(width, dtype=np.float32))
    zero = jnp.asarray(np.zeros(width, np.float32))
    return {f"layer{i}": {"w": eye, "b": zero} for i in (1, 2, 3)}


def _ref_forward(params: Params, x: jax.Array) -> np.ndarray:
    """The plain forward pass in NumPy (float64)."""
    names = sorted(params, key=lambda name: int(name[len("layer") :]))
    h = np.asarray(x, np.float64)
    for name in names:
        h = h @ np.asarray(params[name]["w"], np.float64) + np.asarray(
            params[name]["b"], np.float64
        )
        if name != names[-1]:
            h = np.maximum(h, 0.0)
    return h


def _ref_survivors(x: Any, rate: float) -> np.ndarray:
    """The units dropout keeps, scaled by 1 / (1 - rate) (float64)."""
    return np.asarray(x, np.float64) / (1.0 - rate)


def _binomial_tolerance(p: float, n: int) -> float:
    return SIGMAS * float(np.sqrt(max(p * (1.0 - p), 1e-12) / n))


def _zeroed(out: np.ndarray) -> float:
    return float(np.mean(np.asarray(out) == 0.0))


_SHARED_MASK = (
    "the mask is shared along one axis (e.g. drawn with shape x.shape[-1:] and broadcast), "
    "so whole columns or rows are dropped together"
)


def _shared_cause(out: np.ndarray) -> str:
    """_SHARED_MASK where every row (or every column) of the output has the same units
    zeroed (a 2-D output with a unit dropped and one kept), else ""."""
    dropped = np.asarray(out) == 0.0
    if dropped.ndim != 2 or dropped.all() or not dropped.any():
        return ""
    for axis in (0, 1):
        if (dropped == np.take(dropped, [0], axis=axis)).all():
            return _SHARED_MASK
    return ""


def _train_default_cause(student: Remote, x: jax.Array, seed: int, rate: float) -> str:
    """Nothing was dropped with train left out: the default of train is not True where
    dropout(key, x, rate, train=True) drops the share rate; else ""."""
    try:
        out = _dropout(student, jax.random.key(seed), x, rate, train=True)
    except (client.StudentError, CheckFailure):
        return ""
    frac = _zeroed(out)
    if abs(frac - rate) > _binomial_tolerance(rate, x.size):
        return ""
    return (
        f"with train left out nothing is dropped, and with train=True passed {frac:.3f} of "
        f"the units are zeroed at rate={rate}: the default of train is not True"
    )


# more calls (new keys, the rates in turn) where every output so far kept every unit, or
# every output dropped every unit: a dropout that never drops, or never keeps, shows that too
ONE_DRAW_TRIES = 12


def _whole(out: np.ndarray, xs: np.ndarray, rate: float) -> str:
    """The outcome of one call of dropout: "kept" where every unit of `out` is
    x / (1 - rate), "dropped" where every unit is 0, else ""."""
    if not out.any():
        return "dropped"
    if out.shape == xs.shape and np.allclose(out / xs, 1.0 / (1.0 - rate), **RATIO_TOL):
        return "kept"
    return ""


def _one_draw_cause(
    student: Remote, x: jax.Array, seed: int, seen: list[tuple[float, np.ndarray]]
) -> str:
    """Every output of dropout (`seen`, two at least where given, then new keys until both
    outcomes are seen) keeps every unit, scaled by 1 / (1 - rate), or drops every unit, and
    some calls did each: one draw decides the whole array; else ""."""
    xs = np.asarray(x)
    outcomes = [_whole(out, xs, rate) for rate, out in seen]
    if (seen and len(seen) < 2) or not all(outcomes):
        return ""
    for i in range(ONE_DRAW_TRIES):
        if len(set(outcomes)) == 2:
            break
        rate = RATES[i % len(RATES)]
        try:
            out = _dropout(student, jax.random.key(seed + 100 + i), x, rate)
        except (client.StudentError, CheckFailure):
            return ""
        outcomes.append(_whole(out, xs, rate))
        if not outcomes[-1]:
            return ""
    if len(set(outcomes)) < 2:
        return ""
    return (
        f"each call keeps every unit or drops every unit (of {len(outcomes)} calls, "
        f"{outcomes.count('kept')} kept every unit, scaled by 1 / (1 - rate), and "
        f"{outcomes.count('dropped')} zeroed every unit): one random draw is made for the "
        "whole array, where each unit needs its own (a draw without a shape)"
    )


DROPPED_KEPT = (
    "no unit is zeroed, and every unit is x or x / (1 - rate), the share rate of them x: "
    "the units the mask drops keep their input value (the value given for a dropped unit "
    "is x, where dropout gives 0)"
)


def _dropped_kept(out: np.ndarray, xs: np.ndarray, rate: float) -> bool:
    """Every unit of `out` is x or x / (1 - rate), both occur, and the share left at x is
    rate (the dropped units, left as they were)."""
    if out.shape != xs.shape:
        return False
    ratios = out / xs
    same = np.isclose(ratios, 1.0, **RATIO_TOL)
    if same.all() or not same.any():
        return False
    scaled = np.allclose(ratios[~same], 1.0 / (1.0 - rate), **RATIO_TOL)
    return scaled and abs(float(same.mean()) - rate) <= _binomial_tolerance(rate, out.size)


def _dropped_kept_cause(x: jax.Array, seen: list[tuple[float, np.ndarray]]) -> str:
    """DROPPED_KEPT where every output in `seen`, two at least, shows it (`_dropped_kept`);
    else ""."""
    xs = np.asarray(x)
    if len(seen) < 2 or not all(_dropped_kept(out, xs, rate) for rate, out in seen):
        return ""
    return DROPPED_KEPT


def _dropout(student: Remote, key: Any, x: jax.Array, rate: float, **kwargs: Any) -> np.ndarray:
    out = student.dropout(key, x, rate, **kwargs)
    values.assert_shape(
        out,
        tuple(x.shape),
        what=f"dropout(key, x, rate={rate})",
        fix="draw the mask with the shape of x: jax.random.bernoulli(key, p, x.shape)",
    )
    return np.asarray(out)


# -- dropout ---------------------------------------------------------------------
@check(
    "dropout keeps the shape and dtype of x",
    points=1,
    hint="Which shape should the random mask have, and does your scaling change the dtype?",
    requires=("test_dropout_rate", "test_dropout_scale"),
    nudge="Draw the mask with the full shape of x and combine it elementwise; scaling by a Python float keeps x's dtype.",
    spec="`dropout(key, x, rate, train=True)` -> inverted dropout: each unit is zeroed with probability `rate` ... and survivors are scaled by `1 / (1 - rate)`",
)
def test_dropout_shape(student: Remote) -> None:
    for shape in ((4, 10, 25), SMALL):
        x = _units(shape)
        out = student.dropout(jax.random.key(0), x, 0.3)
        values.assert_shape(
            out,
            shape,
            what=f"dropout(key, x, 0.3) for x of shape {shape}",
            fix="draw the mask with x.shape and combine it with x elementwise",
        )
        if jnp.asarray(out).dtype != x.dtype:
            raise fail(
                f"the dtype of dropout(key, x, 0.3) for a {x.dtype} x",
                expected=str(x.dtype),
                observed=str(jnp.asarray(out).dtype),
                fix="scale with a Python float (x / (1 - rate)) and keep x's dtype",
            )


@check(
    "dropout zeroes each unit with probability rate",
    points=3,
    hint="Is `rate` the probability of dropping a unit or of keeping it? What probability "
    "do you pass to jax.random.bernoulli, and what does a True in its mask mean?",
    nudge="jax.random.bernoulli(key, p, shape) is True with probability p: a unit is kept with probability 1 - rate, so that is the p of a keep-mask.",
    spec="each unit is zeroed with probability `rate` (the DROP probability, as in Flax and Equinox; not the keep probability of the old `stax.Dropout`) ... `rate` is in [0, 1) ... Checks: rate observed statistically",
)
def test_dropout_rate(student: Remote, seed: int) -> None:
    x = _units(seed=seed)
    wrong = []  # (rate, fraction zeroed, tolerance, the output) of every rate that fails
    for i, rate in enumerate(RATES):
        out = _dropout(student, jax.random.key(seed + i), x, rate)
        frac = _zeroed(out)
        tol = _binomial_tolerance(rate, x.size)
        if abs(frac - rate) > tol:
            wrong.append((rate, frac, tol, out))
    seen = [(r, out) for r, _, _, out in wrong]
    if wrong:
        rate, frac, tol, out = wrong[0]
        # read as the keep probability: named when every failing rate, two at least, shows it
        kept_reading = len(wrong) >= 2 and all(
            abs(f - (1.0 - r)) <= _binomial_tolerance(1.0 - r, x.size) for r, f, _, _ in wrong
        )
        raise fail(
            f"the fraction of units dropout(key, x, rate={rate}) zeroes ({x.size:,} units)",
            expected=f"{rate:.3f} +- {tol:.4f} (binomial, {SIGMAS:g} sigma)",
            observed=", ".join(f"{f:.4f} with rate={r}" for r, f, _, _ in wrong),
            cause=(
                f"about {frac:.0%} of units were zeroed with rate={rate}: {DROP_PROBABILITY}"
                if kept_reading
                else _one_draw_cause(student, x, seed, seen)
                or _dropped_kept_cause(x, seen)
                or (
                    _train_default_cause(student, x, seed, rate)
                    if all(f == 0.0 for _, f, _, _ in wrong)
                    else _shared_cause(out)
                )
            ),
            fix="keep = jax.random.bernoulli(key, 1.0 - rate, x.shape); then zero where keep "
            "is False",
        )
    out = _dropout(student, jax.random.key(seed), x, 0.0)
    if _zeroed(out) != 0.0:
        raise fail(
            "dropout(key, x, rate=0.0)",
            expected="no unit zeroed",
            observed=f"{int(np.sum(out == 0.0)):,} of the {out.size:,} units zeroed",
        )


@check(
    "dropout scales the survivors by 1 / (1 - rate)",
    points=2,
    hint="After dropping a fraction `rate` of the units, by what factor must the rest grow "
    "so that the layer's expected output is unchanged?",
    nudge="Every kept unit is divided by the keep probability, the same factor for all of them, and every dropped unit is exactly zero.",
    spec="survivors are scaled by `1 / (1 - rate)`",
)
def test_dropout_scale(student: Remote, seed: int) -> None:
    x = _units(seed=seed)
    xs = np.asarray(x)
    wrong = []  # (rate, the survivors' ratios, what they show) of every rate that fails
    seen = []  # ((the kept inputs, rate), the survivors, the reference's) of each failing rate
    for i, rate in enumerate(SCALE_RATES):
        out = _dropout(student, jax.random.key(seed + 10 + i), x, rate)
        kept = out != 0.0
        if not kept.any():
            raise fail(
                f"the survivors of dropout(key, x, rate={rate})",
                expected="some units kept",
                observed="every unit was zeroed",
            )
        ratios = out[kept] / xs[kept]
        if not np.allclose(ratios, 1.0 / (1.0 - rate), **RATIO_TOL):
            wrong.append((rate, ratios, _scale_kind(ratios, rate, _zeroed(out), out.size)))
            seen.append(((xs[kept], rate), out[kept], _ref_survivors(xs[kept], rate)))
    if not wrong:
        return
    rate, ratios, kind = wrong[0]
    median = float(np.median(ratios))
    # a cause is named when every rate that fails, two at least, shows the same mistake
    confirmed = len(wrong) >= 2 and all(k == kind for _, _, k in wrong)
    cause = SCALE_CAUSES.get(kind, "") if confirmed else ""
    if not cause and len(seen) >= 2 and len({len(args[0]) for args, _, _ in seen}) >= 2:
        # the general tiers on the survivors, two rates and two numbers of units kept: a
        # factor, or a mutant of _ref_survivors (1 / (1 + rate): a sign slipped)
        cause = diagnose.confirmed(seen, lambda args: (), reference=_ref_survivors)
    raise fail(
        f"the survivors of dropout(key, x, rate={rate}) divided by x",
        expected=f"{1.0 / (1.0 - rate):.4f} for every kept unit (1 / (1 - rate))",
        observed=f"{median:.4f} (median; range {ratios.min():.4f} to {ratios.max():.4f})"
        + "".join(f"; with rate={r}: {float(np.median(q)):.4f}" for r, q, _ in wrong[1:]),
        cause=cause,
        fix="return jnp.where(keep, x / (1.0 - rate), 0.0)",
    )


SCALE_RATES = (0.3, 0.75)
SCALE_CAUSES = {
    "none": "the kept units were not rescaled: that is the original (non-inverted) dropout, "
    "which shrinks the layer's output by 1 - rate during training only",
    "keep_reading": f"the survivors were scaled by 1 / rate, the keep-probability convention: "
    f"{DROP_PROBABILITY}",
    "inverse_rate": "the survivors were scaled by 1 / rate where 1 / (1 - rate) belongs: the "
    "units are dropped with probability rate, as they should, but the scale is one over the "
    "probability of KEEPING a unit, 1 - rate",
    "times_keep": "the survivors were MULTIPLIED by 1 - rate, the keep probability, where "
    "they are divided by it: x * (1 - rate) shrinks them, x / (1 - rate) scales them up",
    "dropped_kept": DROPPED_KEPT,
    "varies": "the survivors were not all scaled by the same factor",
    "observed_keep": "the survivors were scaled by one over the share of units this mask "
    "kept, not by 1 / (1 - rate): that share varies from mask to mask around 1 - rate, and "
    "the scale does not",
}


def _scale_kind(ratios: np.ndarray, rate: float, zeroed: float, size: int) -> str:
    """What the survivors' ratios to their inputs show at `rate`: no rescaling, 1 - rate (a
    product where a division belongs), 1 / rate (with the drop share read as the keep
    probability, or right), the dropped units left at x (no unit zeroed), a factor that
    varies, one over the share this mask kept, or ""."""
    median = float(np.median(ratios))
    if zeroed == 0.0 and _dropped_kept(ratios, np.ones_like(ratios), rate):
        return "dropped_kept"
    if not np.allclose(ratios, median, **RATIO_TOL):
        return "varies"
    if np.isclose(median, 1.0, **RATIO_TOL):
        return "none"
    if np.isclose(median, 1.0 - rate, **RATIO_TOL):
        return "times_keep"
    if np.isclose(median, 1.0 / rate, **RATIO_TOL):
        if abs(zeroed - (1.0 - rate)) <= _binomial_tolerance(1.0 - rate, size):
            return "keep_reading"
        if abs(zeroed - rate) <= _binomial_tolerance(rate, size):
            return "inverse_rate"
    if zeroed < 1.0 and np.isclose(median, 1.0 / (1.0 - zeroed), **RATIO_TOL):
        return "observed_keep"
    return ""


@check(
    "dropout preserves the expected value of every unit",
    points=1,
    hint="If a unit survives with probability 1 - rate, what must it be multiplied by for "
    "its mean over many masks to equal its input?",
    nudge="Inverted dropout keeps the mean: a unit kept with probability 1 - rate must be divided by 1 - rate.",
    spec="survivors are scaled by `1 / (1 - rate)` ... expectation preserved",
)
def test_dropout_expectation(student: Remote, seed: int) -> None:
    x = _units(seed=seed + 1)
    xs = np.asarray(x, np.float64)
    wrong = []  # (rate, ratio, tolerance, what it shows, the output) of every failing rate
    for i, rate in enumerate((0.3, 0.8)):
        out = np.asarray(_dropout(student, jax.random.key(seed + 20 + i), x, rate), np.float64)
        keep = 1.0 - rate
        # mean of x * mask / keep: variance of one unit is E[x^2] (1/keep - 1)
        tol = SIGMAS * np.sqrt(np.mean(xs**2) * (1.0 / keep - 1.0) / xs.size) / np.mean(xs)
        ratio = out.mean() / xs.mean()
        if abs(ratio - 1.0) <= tol:
            continue
        # the mean that a known mistake gives: (kept share) x (scale)
        kinds = [
            kind
            for kind, target in (
                ("not_scaled", keep),
                ("keep_reading", rate / keep),
                ("inverse_rate", keep / rate),
            )
            if abs(ratio - target) <= 2 * tol * max(1.0, target) and _shows(out, xs, rate, kind)
        ]
        wrong.append((rate, ratio, tol, kinds[0] if len(kinds) == 1 else "", out))
    if not wrong:
        return
    rate, ratio, tol, kind, out = wrong[0]
    seen = [(r, o) for r, _, _, _, o in wrong]
    # a cause is named when every rate that fails, two at least, shows the same mistake; a
    # mask shared along an axis is seen in the output itself
    confirmed = kind and len(wrong) >= 2 and all(k == kind for _, _, _, k, _ in wrong)
    raise fail(
        f"mean(dropout(key, x, rate={rate})) / mean(x) over {xs.size:,} units",
        expected=f"1.000 +- {tol:.4f}",
        observed=f"{ratio:.4f}" + "".join(f"; with rate={r}: {q:.4f}" for r, q, *_ in wrong[1:]),
        cause=EXPECTATION_CAUSES[kind]
        if confirmed
        else _one_draw_cause(student, x, seed, seen)
        or _dropped_kept_cause(x, seen)
        or _shared_cause(out),
        fix="inverted dropout divides the kept units by the keep probability 1 - rate",
    )


def _parts(kind: str, rate: float) -> tuple[float, float]:
    """The share of units the mistake `kind` drops and the factor it scales survivors by."""
    keep = 1.0 - rate
    return {"not_scaled": (rate, 1.0), "keep_reading": (keep, 1.0 / keep)}.get(
        kind, (rate, 1.0 / rate)
    )


def _shows(out: np.ndarray, xs: np.ndarray, rate: float, kind: str) -> bool:
    """The output itself shows the mistake `kind`: the share of units it zeroes and the one
    factor every survivor is scaled by are that mistake's (not only its mean)."""
    share, scale = _parts(kind, rate)
    kept = out != 0.0
    if abs(_zeroed(out) - share) > _binomial_tolerance(share, out.size) or not kept.any():
        return False
    return bool(np.allclose(out[kept] / xs[kept], scale, **RATIO_TOL))


EXPECTATION_CAUSES = {
    "not_scaled": "the mean shrank by 1 - rate: the survivors are not scaled up",
    "keep_reading": "the mean is rate / (1 - rate) of the input's: units are KEPT with "
    f"probability rate, and the survivors scaled by 1 / (1 - rate). {DROP_PROBABILITY}",
    "inverse_rate": "the mean is (1 - rate) / rate of the input's: units are dropped with "
    "probability rate, as they should, but the survivors are scaled by 1 / rate instead of "
    "1 / (1 - rate)",
}


@check(
    "dropout draws an independent mask for every unit",
    points=1,
    hint="Does your mask have the full shape of x, or is one row (or one column) of it "
    "reused across the batch?",
    hidden=True,
    requires=("test_dropout_rate", "test_dropout_scale"),
    nudge="The Bernoulli mask must have x's full shape so that every unit of every example gets its own draw, with no broadcasting.",
    spec="each unit is zeroed with probability `rate` ... Checks: rate observed statistically",
)
def test_dropout_independent(student: Remote, seed: int) -> None:
    x = _units(seed=seed + 2)
    dropped = np.asarray(_dropout(student, jax.random.key(seed + 30), x, 0.3)) == 0.0
    overall = float(dropped.mean())  # judged against itself: the rate has its own check
    tol = _binomial_tolerance(overall, 1000)
    for axis, what in ((1, "example (row)"), (0, "unit (column)")):
        fractions = dropped.mean(axis=axis)
        if float(np.abs(fractions - overall).max()) > tol:
            raise fail(
                f"the fraction of dropped units per {what} of dropout(key, x, 0.3), x of shape "
                "(1000, 1000)",
                expected=f"every {what} close to the overall {overall:.3f} (+- {tol:.3f})",
                observed=f"fractions from {fractions.min():.3f} to {fractions.max():.3f}",
                cause=_shared_cause(np.where(dropped, 0.0, 1.0)),
                fix="draw the mask with the full shape: jax.random.bernoulli(key, 1 - rate, x.shape)",
            )


@check(
    "dropout with train=False returns x unchanged",
    points=1,
    hint="What should dropout do at test time, when no unit may be dropped or rescaled?",
    nudge="At test time dropout is switched off: with train False return the input itself, no mask and no scaling.",
    spec="identity when `train` is False",
)
def test_dropout_eval(student: Remote) -> None:
    x = _units(SMALL)
    for rate in (0.3, 0.9):
        out = student.dropout(jax.random.key(0), x, rate, train=False)
        values.assert_close(
            out,
            x,
            what=f"dropout(key, x, rate={rate}, train=False)",
            **EXACT,
            cause=_not_identity(out, x),
            fix="start with `if not train: return x`",
        )


def _not_identity(out: Any, x: jax.Array) -> str:
    """What dropout's train=False output shows against x: some units zeroed (the rest x), or
    every unit x times one factor; else ""."""
    try:
        got = np.asarray(out, np.float64)
    except (TypeError, ValueError):
        return ""
    xs = np.asarray(x, np.float64)
    if got.shape != xs.shape:
        return ""
    zeroed = got == 0.0
    if zeroed.any() and np.array_equal(got[~zeroed], xs[~zeroed]):
        return f"with train=False {zeroed.mean():.1%} of the units are zeroed: a mask is applied"
    factor = float(np.median(got / xs))
    if factor != 1.0 and np.allclose(got, xs * factor, **RATIO_TOL):
        return f"with train=False every unit is {factor:.4g} times x: the output is scaled"
    return ""


@check(
    "dropout: the same key gives the same mask, different keys differ",
    points=1,
    hint="Where does your mask's randomness come from: only from the key argument?",
    requires=("test_dropout_rate", "test_dropout_scale"),
    nudge="The mask's only source of randomness is the key argument: jax.random functions of that key, never np.random or a fixed key.",
    spec="same key gives same output, different keys differ ... a correct solution works with both `jax.random.key(s)` (typed) and `jax.random.PRNGKey(s)` (raw) keys ... no global NumPy/`random` RNG",
)
def test_dropout_key_use(student: Remote) -> None:
    x = _units(SMALL)
    what = "dropout(key, x, 0.3)"
    drop = client.partial(student.dropout, client.HOLE, x, 0.3)  # drop(k) is dropout(k, x, 0.3)
    keys.assert_deterministic(drop, lambda k: (k,), what=what)
    keys.assert_ignores_global_rng(
        student.dropout, (jax.random.key(0), x, 0.3), static_argnames=("rate", "train"), what=what
    )
    keys.assert_varies_with_key(drop, lambda k: (k,), what=what)
    keys.assert_accepts_raw_keys(drop, lambda k: (k,), what=what)


@check(
    "dropout compiles under jax.jit with rate and train static",
    points=1,
    hint="rate and train are Python values: can your code branch on them with a plain `if`, "
    "and does everything else stay traceable?",
    requires=("test_dropout_rate", "test_dropout_scale", "test_dropout_eval"),
    nudge="rate and train are Python values fixed at trace time, so a plain Python if on them is fine; only x and the key are traced.",
    spec="`rate` and `train` are Python values ... Checks: ... jittable ... Every function that is meant to be jittable is checked both eagerly and under `jax.jit` (arguments documented as Python values, such as `train`, `rate`, `n_iters` or `sizes`, are static)",
)
def test_dropout_jit(student: Remote) -> None:
    x = _units(SMALL)
    for train in (True, False):
        jit.assert_jittable(
            student.dropout,
            (jax.random.key(3), x, 0.3),
            {"train": train},
            static_argnames=("rate", "train"),
            what=f"dropout(key, x, 0.3, train={train})",
        )


def _pure(student: Remote, name: str, args: Any, what: str) -> None:
    """No argument or module state changed, no global RNG drawn from, nothing only at trace
    time (rate and train, the last two arguments, static)."""
    fn = getattr(student, name)
    purity.assert_pure(fn, args, what=what, module=student)
    purity.assert_no_trace_side_effects(
        fn, args, static_argnames=("rate", "train"), what=what, module=student
    )


@check(
    "dropout and forward_with_dropout are pure and leave NumPy's global RNG alone",
    points=1,
    hint="Does every random number come from jax.random and the key, never np.random, and does "
    "anything (a global, a print) change only while jit traces?",
    hidden=True,
    nudge="Draw every random number from the key with jax.random and keep no state outside the function: nothing may change while jit traces.",
    spec="purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
)
def test_dropout_pure(student: Remote, credit: Credit, gate: Gate) -> None:
    params, x = _network(5)
    score_cases(
        credit,
        [
            (
                "dropout",
                lambda: (
                    gate.require("test_dropout_rate", "test_dropout_scale"),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    _pure(  # type: ignore[func-returns-value]
                        student,
                        "dropout",
                        (jax.random.key(4), _units(SMALL), 0.3, True),
                        "dropout(key, x, 0.3)",
                    ),
                ),
            ),
            (
                "forward_with_dropout",
                lambda: (
                    gate.require("test_forward_eval", "test_forward_masks"),  # type: ignore[func-returns-value]  # a tuple: gate, then check
                    _pure(  # type: ignore[func-returns-value]
                        student,
                        "forward_with_dropout",
                        (params, x, jax.random.key(4), 0.5, True),
                        "forward_with_dropout(params, x, key, rate=0.5)",
                    ),
                ),
            ),
        ],
    )


# -- forward_with_dropout ------------------------------------------------------
def _eval_dropout_cause(student: Remote, params: Params, x: jax.Array, out: Any) -> str:
    """The student's dropout is not the identity with train=False (test_dropout_eval's own
    inputs, both rates), and forward's eval output `out` is the plain forward pass with that
    dropout(..., rate=0.5, train=False) after each hidden ReLU; else ""."""
    units = _units(SMALL)
    names = sorted(params, key=lambda name: int(name[len("layer") :]))
    try:
        if all(
            values.difference(
                student.dropout(jax.random.key(0), units, rate, train=False), units, **EXACT
            )
            is None
            for rate in (0.3, 0.9)
        ):
            return ""
        h = x
        for name in names:
            h = h @ params[name]["w"] + params[name]["b"]
            if name != names[-1]:
                h = student.dropout(jax.random.key(0), jax.nn.relu(h), 0.5, train=False)
    except client.StudentError:
        return ""
    if values.difference(out, h, **FLOAT32) is not None:
        return ""
    return (
        "your dropout with train=False is not the identity (see the check 'dropout with "
        "train=False returns x unchanged'), and the eval output is the plain forward pass "
        "with that dropout after each hidden ReLU"
    )


def _train_not_passed(student: Remote, params: Params, x: jax.Array, out: Any) -> str:
    """forward_with_dropout(..., train=False) gives what train=True gives with the same key,
    on the batch and on its first half, with two keys: dropout stays on whatever train says
    (train is not passed down to dropout), said only where the student's own
    dropout(key, x, 0.5, train=False) is the identity (else that dropout is pointed at); else
    ""."""
    half = x[: max(2, len(x) // 2)]
    for batch, key, seen in ((x, 0, out), (half, 1, None)):
        try:
            if seen is None:
                seen = student.forward_with_dropout(
                    params, batch, jax.random.key(key), rate=0.5, train=False
                )
            trained = student.forward_with_dropout(
                params, batch, jax.random.key(key), rate=0.5, train=True
            )
        except client.StudentError:
            return ""
        if values.difference(seen, _ref_forward(params, batch), **FLOAT32) is None:
            return ""
        if values.difference(seen, trained, **EXACT) is not None:
            return ""
    units = _units(SMALL)
    try:
        own = student.dropout(jax.random.key(0), units, 0.5, train=False)
    except client.StudentError:
        return ""
    if values.difference(own, units, **EXACT) is not None:
        # the student's own dropout drops with train=False: whether train reaches it is not seen
        return (
            "with train=False the output is the train=True output of the same key: your "
            "dropout with train=False is not the identity (see the check 'dropout with "
            "train=False returns x unchanged')"
        )
    return (
        "with train=False the output is the train=True output of the same key: dropout "
        "still drops units in the eval pass, so train does not reach the dropout calls "
        "(each one runs with its default train=True)"
    )


@check(
    "forward_with_dropout with train=False is the plain forward pass",
    points=1,
    hint="Without dropout, what is left of the lesson's forward pass: x @ w + b and ReLU, "
    "layer by layer, with no ReLU on the logits?",
    nudge="With train False every dropout call is the identity, so what is left is the lesson's forward pass: x @ w + b per layer, ReLU on the hidden ones.",
    spec="`forward_with_dropout(params, x, key, rate=0.5, train=True)` -> the lesson MLP with dropout after each hidden ReLU ... `train=False` is the plain forward pass",
)
def test_forward_eval(student: Remote, seed: int) -> None:
    params, x = _network(seed)
    out = student.forward_with_dropout(params, x, jax.random.key(0), rate=0.5, train=False)
    expected = _ref_forward(params, x)
    cause = ""
    if values.difference(out, expected, **FLOAT32) is not None:
        cause = _eval_dropout_cause(student, params, x, out) or _train_not_passed(
            student, params, x, out
        )
    values.assert_close(
        out,
        expected,
        what="forward_with_dropout(params, x, key, rate=0.5, train=False)",
        **FLOAT32,
        cause=cause,
        fix="with train=False every dropout call is the identity, so the result "
        "is the lesson's forward(params, x)",
    )


@check(
    "forward_with_dropout gives every dropout layer its own key",
    points=2,
    hint="How many random masks does one forward pass draw, and how many keys do you get "
    "from jax.random.split(key, n)?",
    requires=("test_forward_eval",),
    nudge="Split the key into one subkey per dropout layer with jax.random.split and hand each layer its own subkey.",
    spec="the key is split so that every dropout layer gets its own key ... no key reused across layers",
)
def test_forward_key_reuse(student: Remote, seed: int) -> None:
    params, x = _network(seed + 1)
    keys.assert_no_key_reuse(
        student.forward_with_dropout,
        (params, x, jax.random.key(1)),
        kwargs={"rate": 0.5, "train": True},
        static_argnames=("rate", "train"),
        what="forward_with_dropout(params, x, key, rate=0.5)",
    )


@check(
    "forward_with_dropout drops units after each hidden ReLU, independently",
    points=1,
    hint="With one key per layer, a unit that survives layer 1 must still face an "
    "independent draw in layer 2: are your two masks really different draws?",
    nudge="Apply dropout with forward_with_dropout's own rate and train right after each hidden ReLU, each layer with its own subkey, so the masks are independent draws.",
    spec="`forward_with_dropout(params, x, key, rate=0.5, train=True)` -> the lesson MLP with dropout after each hidden ReLU; the key is split so that every dropout layer gets its own key",
)
def test_forward_masks(student: Remote) -> None:
    params = _identity_probe(BIG[1])
    x = jnp.asarray(np.ones(BIG, np.float32))
    found = []  # (kind, the failure's parts) of every rate whose output is wrong
    outs = []  # (rate, the output) of every rate whose output is wrong
    for rate in MASK_RATES:
        out = np.asarray(
            student.forward_with_dropout(params, x, jax.random.key(7), rate=rate, train=True)
        )
        values.assert_shape(
            out, BIG, what="forward_with_dropout on a probe of three identity layers"
        )
        wrong = _two_masks_failure(out, rate)
        if wrong is not None:
            found.append(wrong)
            outs.append((rate, out))
    if found:
        kind, parts = found[0]
        # a cause is named when every rate that fails, two at least, shows the same mistake
        if not (kind and len(found) >= 2 and all(k == kind for k, _ in found)):
            whole = _probe_whole_cause(student, outs)
            parts = {
                **parts,
                "cause": whole,
                "fix": ONE_DRAW_FIX
                if whole
                else "after each hidden ReLU: x = dropout(subkey_i, x, rate, train)",
            }
        elif kind == "three_layers" and _logits_dropped(student, params, x):
            parts = {**parts, "cause": parts["cause"] + THREE_ON_LOGITS}
        raise fail(
            parts["checked"],
            expected=parts["expected"],
            observed=parts["observed"],
            cause=parts["cause"],
            fix=parts["fix"],
        )
    # the signature's defaults, rate=0.5 and train=True: judged by the share of units
    # dropped (as above), so a key that draws other masks on a new trace is not blamed here
    out = np.asarray(student.forward_with_dropout(params, x, jax.random.key(7)))
    zeroed, want = _zeroed(out), 1.0 - 0.5**2
    if abs(zeroed - want) > _binomial_tolerance(want, out.size):
        raise fail(
            "forward_with_dropout(params, ones, key) on the probe of three identity layers, "
            "rate and train left at their defaults",
            expected=f"{want:.2f} of the units zeroed, as with rate=0.5, train=True",
            observed=f"{zeroed:.3f} zeroed",
            cause="the defaults of rate or train differ from the lesson's"
            + (
                ": nothing is dropped, as with train=False"
                if zeroed == 0.0 and np.isfinite(out).all()
                else ""
            ),
            fix="keep the signature `def forward_with_dropout(params, x, key, rate=0.5, "
            "train=True)`",
        )


ONE_DRAW_FIX = (
    "draw each mask with the shape of its input: jax.random.bernoulli(key, 1.0 - rate, x.shape)"
)


def _probe_whole_cause(student: Remote, outs: list[tuple[float, np.ndarray]]) -> str:
    """Every failing output of the probe (`outs`, two at least) is all 0 or all
    1 / (1 - rate)^2 (each hidden layer kept whole or zeroed whole), and the student's own
    dropout keeps or drops every unit of a call (`_one_draw_cause`); else ""."""
    if len(outs) < 2 or any(
        out.any() and not np.allclose(out, 1.0 / (1.0 - rate) ** 2, **RATIO_TOL)
        for rate, out in outs
    ):
        return ""
    if not _one_draw_cause(student, _units(SMALL), 0, []):
        return ""
    return (
        "your dropout keeps every unit or drops every unit in each call (see the check "
        "'dropout zeroes each unit with probability rate'): on the probe each hidden layer "
        "is kept whole or zeroed whole, so at each rate the output is all 0 or all "
        "1 / (1 - rate)^2"
    )


THREE_ON_LOGITS = (
    ": with a last bias of 10 the output still has zeros, so dropout is applied after the "
    "last layer (on the logits) as well"
)


def _logits_dropped(student: Remote, params: Params, x: jax.Array) -> bool:
    """The probe with a last bias of 10 (every logit at least 10 before any dropout on the
    logits) still gives exact zeros at rate=0.5, the share a mask on the logits drops."""
    shifted = {**params, "layer3": {**params["layer3"], "b": params["layer3"]["b"] + 10.0}}
    try:
        out = np.asarray(student.forward_with_dropout(shifted, x, jax.random.key(7), rate=0.5))
    except client.StudentError:
        return False
    return abs(_zeroed(out) - 0.5) <= _binomial_tolerance(0.5, out.size)


# 0.5 is the default; 0.2 and 0.7 show a rate that is not passed on (or read as keep) twice
MASK_RATES = (0.5, 0.2, 0.7)


def _two_masks_failure(out: np.ndarray, rate: float) -> tuple[str, dict[str, str]] | None:
    """None if `out` shows two independent dropout layers of `rate`; else the kind of mistake
    it shows ("" for none known) and the failure's parts (checked, expected, observed, cause,
    fix)."""
    keep = 1.0 - rate
    zeroed = _zeroed(out)
    want = 1.0 - keep**2

    def near(p: Any) -> Any:
        return abs(zeroed - p) <= _binomial_tolerance(p, out.size)

    if near(want):
        return None
    survivors = out[out != 0.0]
    checked = (
        f"forward_with_dropout(params, ones, key, rate={rate}) on a probe "
        "of three identity layers (each output unit is its input after both dropout layers)"
    )
    expected = (
        f"{want:.2f} of the units zeroed: two independent masks each keep 1 - rate, so "
        f"1 - (1 - rate)^2 = {want:.2f} are dropped by one layer or the other"
    )
    observed = f"{zeroed:.3f} zeroed (survivors: {np.unique(np.round(survivors, 4))[:4].tolist()})"
    one_layer = survivors.size > 0 and np.allclose(survivors, 1.0 / keep, **RATIO_TOL)
    fix = "after each hidden ReLU: x = dropout(subkey_i, x, rate, train)"
    kind = ""
    if near(rate) and one_layer:
        kind = "one_layer"
        cause = (
            "the output shows one dropout mask: the share rate of the units dropped and "
            "every survivor scaled once by 1 / (1 - rate), where the two hidden layers "
            "each drop with a mask of their own"
        )
        fix = "apply dropout after every hidden ReLU (not on the logits)"
    elif (
        near(1.0 - keep**3)
        and survivors.size
        and np.allclose(survivors, 1.0 / keep**3, rtol=1e-4, atol=1e-6)
    ):
        kind = "three_layers"
        cause = (
            "three dropout masks: the survivors were scaled three times by 1 / (1 - rate) and "
            "1 - (1 - rate)^3 of the units were dropped, one dropout more than the two after "
            "the hidden ReLUs"
        )
        fix = "apply dropout only after the hidden ReLUs, not to the input or the logits"
    elif near(rate) and survivors.size and np.allclose(survivors, 1.0 / keep**2, **RATIO_TOL):
        kind = "same_mask"
        cause = (
            "both hidden layers drew the SAME mask: the share rate of the units dropped, every "
            "survivor scaled twice by 1 / (1 - rate), so every unit dropped by layer 1 was "
            "dropped again by layer 2. The same key (or the same subkey) was used for both "
            "dropout layers"
        )
        fix = (
            "split the key once per dropout layer: `k1, k2 = jax.random.split(key)`, and "
            "pass k1 to the first dropout, k2 to the second"
        )
    elif rate != 0.5 and near(0.75) and survivors.size and np.allclose(survivors, 4.0, **RATIO_TOL):
        kind = "fixed_rate"
        cause = (
            f"every layer dropped half of the units with rate={rate}, as with rate=0.5: the "
            "rate argument is not passed on to dropout"
        )
        fix = "pass forward_with_dropout's own `rate` (and `train`) to every dropout call"
    elif near(1.0 - rate**2):
        kind = "keep_reading"
        cause = (
            f"each layer dropped {keep:.0%} of the units with rate={rate}: the rate is read as "
            "the KEEP probability somewhere (in dropout, or 1 - rate passed to it). "
            + DROP_PROBABILITY
        )
        fix = "pass `rate` itself to dropout, and drop each unit with probability rate there"
    else:
        cause = ""
    parts = {"checked": checked, "expected": expected, "observed": observed}
    return kind, {**parts, "cause": cause, "fix": fix}


@check(
    "forward_with_dropout leaves the logits undropped",
    points=1,
    hint="Where does the lesson put dropout: after the hidden ReLUs, or also on the output?",
    hidden=True,
    requires=("test_forward_eval",),
    nudge="Dropout belongs after the hidden ReLUs only; the last layer's x @ w + b is returned as is.",
    spec="the lesson MLP with dropout after each hidden ReLU",
)
def test_forward_logits(student: Remote, seed: int) -> None:
    params, x = _network(seed + 2)  # non-zero output biases: a logit is never exactly 0
    out = np.asarray(student.forward_with_dropout(params, x, jax.random.key(2), rate=0.5))
    if _zeroed(out) > 0.01:
        raise fail(
            "forward_with_dropout(params, x, key, rate=0.5): exact zeros among the logits",
            expected="none (the last layer adds a non-zero bias after the last dropout)",
            observed=f"{_zeroed(out):.1%} of the logits are exactly 0",
            cause=(
                "about half of the logits are exactly 0 with rate=0.5, as a dropout mask on "
                "them gives: dropout was applied to the logits as well"
                if abs(_zeroed(out) - 0.5) <= _binomial_tolerance(0.5, out.size)
                else ""
            ),
            fix="apply dropout only after the hidden ReLUs, not after the last layer",
        )


@check(
    "forward_with_dropout: deterministic per key, varies with the key, raw keys work",
    points=1,
    hint="Does every mask in your forward pass come from the key argument?",
    requires=("test_forward_eval",),
    nudge="Every mask must come from a subkey of the key argument, split with jax.random, never np.random or a fixed key.",
    spec="same key gives same output, different keys differ ... a correct solution works with both `jax.random.key(s)` (typed) and `jax.random.PRNGKey(s)` (raw) keys ... no global NumPy/`random` RNG",
)
def test_forward_key_use(student: Remote, seed: int) -> None:
    params, x = _network(seed + 3)
    what = "forward_with_dropout(params, x, key, rate=0.5)"
    # run(k) is forward_with_dropout(params, x, k, rate=0.5, train=True)
    run = client.partial(student.forward_with_dropout, params, x, rate=0.5, train=True)
    keys.assert_deterministic(run, lambda k: (k,), what=what)
    keys.assert_ignores_global_rng(
        student.forward_with_dropout,
        (params, x, jax.random.key(0)),
        kwargs={"rate": 0.5, "train": True},
        static_argnames=("rate", "train"),
        what=what,
    )
    try:
        keys.assert_varies_with_key(run, lambda k: (k,), what=what)
    except CheckFailure as failure:
        if type(failure) is not CheckFailure:  # a refused observation says nothing of the code
            raise
        cause = _forward_one_draw_cause(student, params, x, seed)
        with explained(cause, ONE_DRAW_FIX if cause else ""):
            raise
    keys.assert_accepts_raw_keys(run, lambda k: (k,), what=what)


def _forward_one_draw_cause(student: Remote, params: Params, x: jax.Array, seed: int) -> str:
    """The student's own dropout keeps or drops every unit of a call with one draw
    (`_one_draw_cause`), and forward_with_dropout(params, x, key(0), rate=0.5) is the plain
    forward pass with each hidden layer's output kept whole (times 2) or zeroed whole; else
    ""."""
    if not _one_draw_cause(student, _units(SMALL), seed, []):
        return ""
    try:
        out = student.forward_with_dropout(params, x, jax.random.key(0), rate=0.5, train=True)
    except client.StudentError:
        return ""
    names = sorted(params, key=lambda name: int(name[len("layer") :]))
    for scales in itertools.product((0.0, 2.0), repeat=len(names) - 1):
        h = np.asarray(x, np.float64)
        for name, scale in zip(names, (*scales, None), strict=True):
            h = h @ np.asarray(params[name]["w"], np.float64) + np.asarray(
                params[name]["b"], np.float64
            )
            if scale is not None:
                h = np.maximum(h, 0.0) * scale
        if values.difference(out, h, **FLOAT32) is None:
            return (
                "your dropout keeps every unit or drops every unit in each call (see the "
                "check 'dropout zeroes each unit with probability rate'), and this output "
                "is the forward pass with each hidden layer kept whole (scaled) or zeroed "
                "whole: one draw per layer gives a few keys only a few outputs, and "
                "jax.random.key(0) and jax.random.key(1) give the same one"
            )
    return ""


@check(
    "forward_with_dropout compiles under jax.jit",
    points=1,
    hint="Are rate and train used only as Python values, and is the key split with "
    "jax.random (not with Python on the key's contents)?",
    requires=("test_forward_eval",),
    nudge="Branch on rate and train with plain Python (they are static) and split the key with jax.random so that everything else traces.",
    spec="Checks: ... jittable ... Every function that is meant to be jittable is checked both eagerly and under `jax.jit` (arguments documented as Python values, such as `train`, `rate`, `n_iters` or `sizes`, are static)",
)
def test_forward_jit(student: Remote, seed: int) -> None:
    params, x = _network(seed + 4)
    for train in (True, False):
        jit.assert_jittable(
            student.forward_with_dropout,
            (params, x, jax.random.key(5)),
            {"rate": 0.5, "train": train},
            static_argnames=("rate", "train"),
            what=f"forward_with_dropout(params, x, key, rate=0.5, train={train})",
            **FLOAT32,
        )


# -- compare_dropout -------------------------------------------------------------
@cache
def _digits() -> tuple[Any, ...]:
    return load_digits()


COMPARE_CALL = "compare_dropout(key, digits)"
COMPARE_KEYS = ("with_dropout", "without_dropout")


def _default_compare(student: Remote) -> Any:
    """compare_dropout(jax.random.key(0), digits) with the signature's defaults, once."""
    return once(student, "compare", lambda: student.compare_dropout(jax.random.key(0), _digits()))


def _accuracies(result: Any, call: str) -> dict[str, float]:
    """The two test accuracies of a compare_dropout result, checked to be floats in [0, 1]."""
    if not isinstance(result, dict) or set(result) != set(COMPARE_KEYS):
        raise fail(
            f"the result of {call}",
            expected="a dict with keys 'with_dropout' and 'without_dropout'",
            observed=repr(result)[:200],
            fix="return {'with_dropout': acc_with, 'without_dropout': acc_without}",
        )
    for name in COMPARE_KEYS:
        value = result[name]
        if not isinstance(value, float):
            raise fail(
                f"{call}['{name}']",
                expected="a Python float test accuracy",
                observed=f"a {type(value).__name__}: {repr(value)[:120]}",
                fix="convert with float(accuracy(params, x_test, y_test))",
            )
        if not 0.0 <= value <= 1.0:
            raise fail(
                f"{call}['{name}']",
                expected="an accuracy in [0, 1] (a fraction, not a percentage or a loss)",
                observed=f"{value}",
            )
    return {name: float(result[name]) for name in COMPARE_KEYS}


@check(
    "compare_dropout returns two plausible test accuracies on digits",
    points=1,
    hint="Does each run train from fresh parameters for n_epochs, is the test accuracy "
    "measured with train=False, and is each value a plain number between 0 and 1?",
    nudge="Train one network with dropout and one without, then evaluate both on the test "
    "set with dropout switched off, and return each accuracy as a Python float.",
    spec="`compare_dropout(key, data, rate=0.5, n_epochs=10)` -> `{'with_dropout': test_acc, "
    "'without_dropout': test_acc}` (Python floats; the same data format as 08's `train`; "
    "dropout need not win on digits). Both runs train as 08's `train` does ... With the "
    "defaults on the digits data the run without dropout reaches at least 0.90 and the run "
    "with dropout at least 0.85.",
)
def test_compare(student: Remote, attach: Attachments) -> None:
    accuracies = _accuracies(_default_compare(student), COMPARE_CALL)
    for name, acc in accuracies.items():
        attach.metric(f"test accuracy {name.replace('_', ' ')}", acc)
    floors = {"without_dropout": 0.90, "with_dropout": 0.85}
    for name, acc in accuracies.items():
        if acc < floors[name]:
            raise fail(
                f"{COMPARE_CALL}['{name}'] (rate=0.5, n_epochs=10 by default)",
                expected=f"at least {floors[name]:.2f} (the lesson MLP with Adam 1e-3 reaches "
                "~0.96 without dropout on digits, ~0.94 with rate 0.5)",
                observed=f"{acc:.4f}",
                fix="train each run as 08's train does (Adam 1e-3, batches of 128 reshuffled "
                "each epoch, n_epochs epochs) and take its accuracy on x_test with the plain "
                "forward pass",
            )


GLOBAL_RNG_SEEDS = (7919, 104729)
"""Offsets of the grading seed NumPy's and Python's global RNGs are seeded with before the
explicit call (`test_compare_defaults_and_key`): one seed, then another when the first
gives the default call's accuracies."""


@check(
    "compare_dropout's defaults are rate=0.5 and n_epochs=10, and its key alone decides it",
    points=1,
    hint="Does compare_dropout(key, data) give exactly what compare_dropout(key, data, "
    "rate=0.5, n_epochs=10) gives, and does anything besides the key (np.random, random) "
    "choose the initialisation, the batches or the masks?",
    nudge="The comparison is a pure function of its key and data: every random draw comes "
    "from splitting the key you are given, and the signature's defaults are the lesson's.",
    spec="`compare_dropout(key, data, rate=0.5, n_epochs=10)` ... same signatures ... "
    "purity is checked (same inputs, same outputs; no mutation of arguments or module "
    "state; no global NumPy/`random` RNG",
    requires=("test_compare",),
)
def test_compare_defaults_and_key(student: Remote, seed: int) -> None:
    key, data = jax.random.key(0), _digits()
    default = _default_compare(student)
    explicit = "compare_dropout(key, digits, rate=0.5, n_epochs=10)"
    kwargs = {"rate": 0.5, "n_epochs": 10}

    def after_moving(rng_seed: int) -> Any:
        """The explicit call with NumPy's and Python's global RNGs seeded `rng_seed` first."""
        found = client.probe(
            keys.observe_global_rng, client.handle(student.compare_dropout), (key, data),
            kwargs, (), (rng_seed,), False,
        )["eagerly"][0]  # fmt: skip
        return calls.observed(
            found,
            checked=f"{explicit} after NumPy's global RNG moved",
            attempted=explicit,
            expected="the function runs",
        )

    # accuracies are counts of test rows: two runs whose batches a global RNG shuffled can
    # reach the same count by chance, so a second seed must agree as well
    for rng_seed in GLOBAL_RNG_SEEDS:
        moved = after_moving(seed + rng_seed)
        if moved != default:
            break
    else:
        return
    again = student.compare_dropout(key, data, **kwargs)  # global RNGs untouched
    if again == moved:
        raise fail(
            f"{COMPARE_CALL} against {explicit}, the same key",
            expected=f"the same accuracies: {moved}",
            observed=f"{default} without rate and n_epochs",
            cause="the defaults of rate or n_epochs differ from the lesson's",
            fix="keep the signature `def compare_dropout(key, data, rate=0.5, n_epochs=10)`",
        )
    # the global RNGs seeded as for `moved` once more: the same accuracies confirm they decide it
    reseeded = after_moving(seed + rng_seed)
    raise fail(
        f"{explicit} twice with jax.random.key(0), NumPy's and Python's global RNGs moved in "
        "between",
        expected=f"the same accuracies: {again}",
        observed=f"{moved}",
        cause="the result depends on NumPy's or Python's global RNG, which no JAX key "
        "controls: with both seeded alike twice the accuracies are the same, and once they "
        "moved they differ"
        if reseeded == moved
        else "the result depends on something besides the key and the arguments: two calls "
        "with the same ones differ once NumPy's and Python's global RNGs moved",
        fix="split the key you are given and draw every random number with jax.random",
    )


ZERO_LABEL = 3


@cache
def _constant_data() -> tuple[Any, ...]:
    """Digits' shapes, every input 0 and every label ZERO_LABEL: the hidden ReLUs output 0
    (dropout or not), so a network learns the label through its last bias alone, in a few
    steps of any optimizer, and predicts it for every test row; an untrained one (zero
    biases: equal logits) predicts class 0."""
    x_train, _, x_test, _ = _digits()
    return (
        np.zeros(np.shape(x_train), np.float32),
        np.full(len(x_train), ZERO_LABEL, np.int32),
        np.zeros(np.shape(x_test), np.float32),
        np.full(len(x_test), ZERO_LABEL, np.int32),
    )


@check(
    "compare_dropout reports the test accuracy of the networks it trained",
    points=1,
    hint="Does each run train for n_epochs (even n_epochs=1), and is the accuracy taken "
    "with the same network, weights and biases as trained, on the test set?",
    nudge="After the training loop, evaluate the very parameters it produced with the "
    "plain forward pass (no dropout) on x_test and compare the argmax with y_test.",
    spec="`compare_dropout(key, data, rate=0.5, n_epochs=10)` -> `{'with_dropout': test_acc, "
    "'without_dropout': test_acc}` (Python floats; the same data format as 08's `train` ... "
    "each accuracy is the trained params' test accuracy under the plain forward pass",
    requires=("test_compare",),
)
def test_compare_trained(student: Remote) -> None:
    call = f"compare_dropout(key, data, n_epochs=1) on all-zero inputs, every label {ZERO_LABEL}"
    result = student.compare_dropout(jax.random.key(1), _constant_data(), n_epochs=1)
    accuracies = _accuracies(result, call)
    for name, acc in accuracies.items():
        if acc < 0.999:
            raise fail(
                f"{call}: ['{name}']",
                expected=f"1.0: with zero inputs only the last bias learns, one epoch of "
                f"training makes label {ZERO_LABEL}'s logit the largest, and every test row "
                f"has that label",
                observed=f"{acc:.4f}",
                cause=f"the network whose accuracy is reported does not predict label "
                f"{ZERO_LABEL}, the label of every training row, after an epoch on inputs "
                "that are all 0",
                fix="train n_epochs epochs, then float(jnp.mean(jnp.argmax(forward(params, "
                "x_test), -1) == y_test)) with the trained params",
            )


# rate=0.5 is the default; rate=0.0 is a rate the spec allows, and after one epoch a network
# trained with dropout 0.5 is far from one trained without (about 0.5 against 0.75 to 0.8
# test accuracy), so a run without dropout that goes through dropout too moves by 0.2 or more
FREE_RATES = (0.5, 0.0)
# the spec makes the two accuracies equal; a margin of 7 of digits' 360 test rows spares a
# program that compiles both runs into one (a rate-static jit) from relying on XLA rounding
# its no-dropout half alike in the two programs (it did in the lockstep fixture)
FREE_TOL = 0.02


@check(
    "compare_dropout's run without dropout does not depend on rate",
    points=1,
    hint="Which of the two runs does rate belong to? With the same key, does your run "
    "without dropout give the same accuracy whatever rate is?",
    nudge="Only the dropout run goes through forward_with_dropout(..., rate=rate, train=True); "
    "the other trains as 08's train does, so nothing in it changes when rate does.",
    spec="Both runs train as 08's `train` does (Adam 1e-3, batches of 128 reshuffled each "
    "epoch with a fresh key) from the same initial params, the dropout run through "
    "`forward_with_dropout(..., rate=rate, train=True)`",
    requires=("test_compare",),
)
def test_compare_without_ignores_rate(student: Remote) -> None:
    key, data = jax.random.key(2), _digits()
    call = "compare_dropout(key, digits, rate={rate}, n_epochs=1)"

    def run(rate: float) -> dict[str, float]:
        fmt = call.format(rate=rate)
        return _accuracies(student.compare_dropout(key, data, rate=rate, n_epochs=1), fmt)

    runs = {rate: run(rate) for rate in FREE_RATES}
    first, second = (runs[rate]["without_dropout"] for rate in FREE_RATES)
    if abs(first - second) <= FREE_TOL:
        return
    again = run(FREE_RATES[0])
    if again != runs[FREE_RATES[0]]:
        raise fail(
            f"{call.format(rate=FREE_RATES[0])} twice, the same key",
            expected=f"the same accuracies: {runs[FREE_RATES[0]]}",
            observed=f"{again}",
            fix="split the key you are given and draw every random number with jax.random",
        )
    observed = "; ".join(
        f"{runs[rate]['without_dropout']:.4f} with rate={rate} ('with_dropout' "
        f"{runs[rate]['with_dropout']:.4f})"
        for rate in FREE_RATES
    )
    swapped = _swapped(runs)
    raise fail(
        f"{call.format(rate='r')}['without_dropout'] for rate={FREE_RATES[0]} and "
        f"rate={FREE_RATES[1]}, the same key",
        expected=f"the same accuracy for both rates (within {FREE_TOL}): the run without "
        "dropout starts from the same params and sees the same batches whatever rate is",
        observed=observed,
        cause=(
            "'with_dropout' is the same at both rates and equals both results at rate=0.0 "
            "(where dropout is the identity), while 'without_dropout' moves with rate: the "
            "two results are filed under each other's names"
            if swapped
            else "the accuracy of the run without dropout changes with rate: rate reaches "
            "that run, passed to it or through params or an optimizer state that the dropout "
            "run trained and the run without dropout goes on from"
        ),
        fix=(
            "return {'with_dropout': the accuracy of the run trained with dropout, "
            "'without_dropout': the accuracy of the plain run}"
            if swapped
            else "train the run without dropout with the plain forward pass (or "
            "forward_with_dropout(..., train=False)), pass rate only to the dropout run, and "
            "start each run from the initial params with an optimizer state of its own"
        ),
    )


def _swapped(runs: dict[float, dict[str, float]]) -> bool:
    """'with_dropout' is one accuracy at both FREE_RATES, and at rate=0.0 (dropout the
    identity, both runs one training from the same params) the two results agree: the run
    that moves with rate is the one filed under 'without_dropout'."""
    high, zero = (runs[rate] for rate in FREE_RATES)
    return (
        abs(high["with_dropout"] - zero["with_dropout"]) <= FREE_TOL
        and abs(zero["with_dropout"] - zero["without_dropout"]) <= FREE_TOL
    )


OTHER_LABEL = 7


@cache
def _constant_data_other_test_labels() -> tuple[Any, ...]:
    """_constant_data's training rows (all-zero inputs, every label ZERO_LABEL) with test rows
    that are the same all-zero inputs labelled OTHER_LABEL: the network trained there predicts
    ZERO_LABEL for every row, so its test accuracy is 0.0 and its training accuracy 1.0."""
    x_train, y_train, x_test, _ = _constant_data()
    return x_train, y_train, x_test, np.full(len(x_test), OTHER_LABEL, np.int32)


@check(
    "compare_dropout measures its accuracies on the test set",
    points=1,
    hint="Which two arrays of data are the test set, and which rows does your accuracy read?",
    nudge="data is (x_train, y_train, x_test, y_test): train on the first two, and take each "
    "run's accuracy on the last two.",
    spec="`compare_dropout(key, data, rate=0.5, n_epochs=10)` -> `{'with_dropout': test_acc, "
    "'without_dropout': test_acc}` (Python floats; the same data format as 08's `train` ... "
    "each accuracy is the trained params' test accuracy under the plain forward pass",
    requires=("test_compare_trained",),
)
def test_compare_test_set(student: Remote) -> None:
    # the training of test_compare_trained (same key, same training rows: the same params,
    # which predict ZERO_LABEL for an all-zero input) judged on test labels it never saw
    call = (
        f"compare_dropout(key, data, n_epochs=1) on all-zero inputs, every training label "
        f"{ZERO_LABEL} and every test label {OTHER_LABEL}"
    )
    result = student.compare_dropout(
        jax.random.key(1), _constant_data_other_test_labels(), n_epochs=1
    )
    accuracies = _accuracies(result, call)
    for name, acc in accuracies.items():
        if acc > 0.001:
            raise fail(
                f"{call}: ['{name}']",
                expected=f"0.0: the same training as with test label {ZERO_LABEL} (where "
                f"the accuracy is 1.0) predicts label {ZERO_LABEL} for every row, and no "
                f"test row has that label (its accuracy on the training rows is 1.0)",
                observed=f"{acc:.4f}",
                fix="take each accuracy on data's test arrays: accuracy(params, x_test, "
                "y_test), with x_test, y_test = data[2], data[3]",
            )


SAME_START_INPUTS = 64
SAME_START_GRID = 100
# test points that differ only by float rounding can flip near a decision boundary: params
# perturbed by 1e-4 relative (a thousand times float32's rounding) flipped at most 6 of
# 40,000 such points (1.5 of these 10,000); two independent inits put the accuracies 0.0005
# or less apart in 23 of 4,950 pairs (0.5%), half of the pairs 600 points or more apart
SAME_START_TOL = 5 / SAME_START_GRID**2


@cache
def _one_batch_data() -> tuple[Any, ...]:
    """128 training rows (one batch per epoch, whatever the batching) and a test set of
    SAME_START_GRID^2 points on a grid in a plane through the origin, labelled by their
    distance from it (labels 0 to 9 on rings whose shares double from one label to the next):
    the test accuracy of a barely trained network reads the share of the plane it gives each
    class, which two random initialisations set apart."""
    rng = np.random.default_rng(43)
    plane = np.linalg.qr(rng.normal(size=(SAME_START_INPUTS, 2)))[0].T
    axis = np.linspace(-1.0, 1.0, SAME_START_GRID)
    s, t = (a.ravel() for a in np.meshgrid(axis, axis))
    x_test = 3.0 * (s[:, None] * plane[0] + t[:, None] * plane[1])
    order = np.argsort(np.hypot(s, t), kind="stable")
    shares = 2.0 ** np.arange(10)
    edges = np.round(np.cumsum(shares / shares.sum()) * len(s)).astype(int)
    y_test = np.empty(len(s), np.int32)
    y_test[order] = np.minimum(np.searchsorted(edges, np.arange(len(s)), side="right"), 9)
    x_train = 0.4 * rng.normal(size=(128, SAME_START_INPUTS))
    y_train = rng.integers(0, 10, 128).astype(np.int32)
    return x_train.astype(np.float32), y_train, x_test.astype(np.float32), y_test


@check(
    "compare_dropout starts both runs from the same initial params",
    points=1,
    hint="Where are the initial params made: once for both runs, or once per run?",
    nudge="Initialise once and start both runs from those params: at rate=0.0 the two runs "
    "then train alike.",
    spec="Both runs train as 08's `train` does (Adam 1e-3, batches of 128 reshuffled each "
    "epoch with a fresh key) from the same initial params, the dropout run through "
    "`forward_with_dropout(..., rate=rate, train=True)` ... `rate` is in [0, 1)",
    requires=("test_compare",),
)
def test_compare_same_start(student: Remote) -> None:
    call = (
        "compare_dropout(key, data, rate=0.0, n_epochs=1) on 128 training rows (one batch "
        f"per epoch) and {SAME_START_GRID**2:,} test points"
    )
    result = student.compare_dropout(jax.random.key(4), _one_batch_data(), rate=0.0, n_epochs=1)
    acc = _accuracies(result, call)
    apart = abs(acc["with_dropout"] - acc["without_dropout"])
    if apart > SAME_START_TOL:
        raise fail(
            f"{call}: 'with_dropout' against 'without_dropout'",
            expected=f"the same accuracy (within {SAME_START_TOL:.4f}): at rate=0.0 dropout "
            "keeps every unit, and one batch holds every training row, so both runs take the "
            "same Adam step from the same initial params",
            observed=f"{acc['with_dropout']:.4f} with dropout, {acc['without_dropout']:.4f} "
            f"without ({round(apart * SAME_START_GRID**2)} test points apart)",
            fix="make the initial params once, before the two runs, and train each run from them",
        )
