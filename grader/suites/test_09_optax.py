"""Hidden checks for 09_optax.py: a schedule and a chained optimizer.

The schedule is compared with its formula evaluated here in float64. The optimizer's
updates are compared, step by step, with a reference chain assembled here from
Optax's lower-level parts (clip, scale_by_adam, add_decayed_weights,
scale_by_learning_rate), over gradients whose global norms range from 1e-3 to 200.

Each check is built so that one kind of mistake shows and the others cannot:
params of zero hide weight decay, gradient norms below max_norm hide the clip, an
explicit max_norm=1.0 hides a hard-coded threshold. When updates differ, the
message says which common variant they match (clip after adamw, adam without
weight decay, the element-wise clip, a constant learning rate, ...).
"""

import importlib
import math
from typing import Any

import jax
import numpy as np
import optax

from grader.authoring import Credit, check
from grader.checks import calls, diagnose, jit, purity, values
from grader.checks.failure import CheckFailure, fail
from grader.plugin import Gate
from grader.sandbox import client
from grader.sandbox.client import Remote
from grader.suites._shared import FLOAT32, TIGHT, Tolerance, score_cases

inputs = importlib.import_module("grader.inputs.09_optax")

LESSON = "09_optax"
TITLE = "composable optimizers with Optax"

DEFAULTS = {
    "peak_lr": 1e-3,
    "warmup_steps": 1000,
    "decay_steps": 50000,
    "weight_decay": 0.01,
    "max_norm": 1.0,
}
DEFAULTS_SCHEDULE = (DEFAULTS["peak_lr"], DEFAULTS["warmup_steps"], DEFAULTS["decay_steps"])
MIXED_NORMS = (1e-3, 0.3, 5.0, 200.0, 0.02, 1.5, 40.0, 0.7, 3.0, 0.05, 12.0, 0.4)
SMALL_NORMS = (0.01, 0.2, 0.05, 0.3, 0.002, 0.15, 0.08, 0.25, 0.03, 0.1, 0.2, 0.06)

# -- tolerances (besides _shared's) --
# Updates: FLOAT32 (another order of float32 operations), atol relative to the largest
# update of the step, as updates scale with the learning rate.
# Learning rates: TIGHT's rtol, atol 1e-7 of peak_lr (TIGHT's 1e-6 would pass a learning
# rate of a few 1e-7 where the schedule is 0, at step 0 and from decay_steps on).
SCHEDULE_ATOL_PER_PEAK = 1e-7
# A diagnosis only (does the schedule end at warmup_steps + decay_steps?): FLOAT32's rtol,
# an atol far below any learning rate the check uses.
LATE_END: Tolerance = {"rtol": 1e-4, "atol": 1e-9}
# A diagnosis only (does the schedule start at peak_lr?): within 1e-6 of peak_lr.
STARTS_AT_PEAK = 1e-6
# optax.cosine_decay_schedule's values in float32 against float64 (a diagnosis only): the
# same comparison as LATE_END's
NO_WARMUP = LATE_END
# The same schedule compiled and eager: learning rates of 1e-2 to 0.5, judged to float32's
# precision (TIGHT's atol 1e-6 is too coarse for the smallest).
SCHEDULE_JIT: Tolerance = {"rtol": 1e-6, "atol": 1e-9}
# The same update compiled and eager: TIGHT's rtol, an atol far below updates of order
# lr = 1e-2 (TIGHT's 1e-6 would pass an error the size of an early warm-up update).
UPDATE_JIT: Tolerance = {"rtol": TIGHT["rtol"], "atol": 1e-9}


# -- references (written here, independently of solutions/) ---------------------------


def _ref_schedule_value(step: Any, peak_lr: Any, warmup_steps: Any, decay_steps: Any) -> Any:
    """warmup_cosine_decay_schedule(0, peak, warmup, decay) at `step`, in float64."""
    if step < warmup_steps:
        return peak_lr * step / warmup_steps
    span = decay_steps - warmup_steps
    progress = min(step - warmup_steps, span) / span
    return peak_lr * 0.5 * (1.0 + math.cos(math.pi * progress))


def _ref_updates(
    params: Any, grads: Any, learning_rates: Any, weight_decay: Any, max_norm: Any
) -> Any:
    """The updates of clip_by_global_norm(max_norm), then AdamW (b1 0.9, b2 0.999, eps 1e-8)
    at these learning rates (one per step), params held fixed: in float64 NumPy, so the judge
    compiles nothing. As float32 leaves, the dtype the student's updates have."""
    leaves, treedef = jax.tree.flatten(params)
    params = [np.asarray(p, np.float64) for p in leaves]
    mu = [np.zeros_like(p) for p in params]
    nu = [np.zeros_like(p) for p in params]
    out = []
    for t, (g, lr) in enumerate(zip(grads, learning_rates, strict=True), start=1):
        g = [np.asarray(leaf, np.float64) for leaf in jax.tree.leaves(g)]
        norm = math.sqrt(sum(float(np.sum(leaf**2)) for leaf in g))
        if norm >= max_norm:
            g = [leaf / norm * max_norm for leaf in g]
        mu = [0.9 * m + 0.1 * leaf for m, leaf in zip(mu, g, strict=True)]
        nu = [0.999 * v + 0.001 * leaf**2 for v, leaf in zip(nu, g, strict=True)]
        updates = [
            -lr * ((m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8) + weight_decay * p)
            for m, v, p in zip(mu, nu, params, strict=True)
        ]
        out.append(jax.tree.unflatten(treedef, [u.astype(np.float32) for u in updates]))
    return out


def _learning_rates(
    schedule: Any, own: Any, n: int, peak_lr: Any, warmup_steps: Any, decay_steps: Any
) -> Any:
    """The learning rates of steps 0 .. n-1: the student's schedule (called as optax calls it,
    on an int32 step count) when `own`, else the formula."""
    if own:
        return [float(schedule(_step(t))) for t in range(n)]
    return [_ref_schedule_value(t, peak_lr, warmup_steps, decay_steps) for t in range(n)]


def _step(t: Any) -> Any:
    """A step count as optax holds it, an int32 JAX array (put on the device, not computed)."""
    return jax.device_put(np.int32(t))


def _ref_optimizer(schedule: Any, weight_decay: Any, max_norm: Any) -> Any:
    """clip_by_global_norm, then AdamW spelled out as its parts."""
    return optax.chain(
        optax.clip_by_global_norm(max_norm),
        optax.scale_by_adam(b1=0.9, b2=0.999, eps=1e-8),
        optax.add_decayed_weights(weight_decay),
        optax.scale_by_learning_rate(schedule),
    )


def _ref_schedule(peak_lr: Any, warmup_steps: Any, decay_steps: Any) -> Any:
    return optax.warmup_cosine_decay_schedule(0.0, peak_lr, warmup_steps, decay_steps)


def _schedule_for(student: Remote, peak_lr: Any, warmup_steps: Any, decay_steps: Any) -> Any:
    """The student's own schedule when it runs, so that a wrong schedule is judged once (by
    the schedule checks) and the chain checks judge the chain; else the reference's."""
    try:
        schedule = student.make_schedule(peak_lr, warmup_steps, decay_steps)
        for step in (0, warmup_steps, decay_steps):
            float(schedule(_step(step)))
    except Exception:
        return _ref_schedule(peak_lr, warmup_steps, decay_steps), False
    return schedule, True


def _variants(
    schedule: Any,
    peak_lr: Any,
    warmup_steps: Any,
    decay_steps: Any,
    weight_decay: Any,
    max_norm: Any,
    defaults: bool = False,
) -> Any:
    """Common wrong chains, each with the cause it stands for and its kind (`defaults`: the
    chain was made with weight_decay left at its default)."""
    clip = optax.clip_by_global_norm(max_norm)
    adamw = optax.adamw(schedule, weight_decay=weight_decay)
    found = [
        (
            optax.chain(adamw, optax.clip_by_global_norm(max_norm)),
            # adamw's updates, of the order of the learning rate, stay below every max_norm
            # the checks use: a clip after adamw changes nothing, as no clip at all
            "the gradients reach adamw unclipped: the clip runs AFTER adamw, or there is "
            "none (optax.chain applies its transformations in order; adamw's updates are of "
            "the order of the learning rate, below max_norm, so a clip after it changes "
            "nothing)",
            "clip_after",
        ),
        (
            optax.chain(optax.clip(max_norm), adamw),
            "`optax.clip` clips each element to [-max_norm, max_norm]; the lesson clips the "
            "global norm of the whole gradient pytree (`optax.clip_by_global_norm`)",
            "elementwise_clip",
        ),
        (
            optax.chain(clip, optax.adam(schedule)),
            "this is optax.adam, which has no weight decay: use optax.adamw(..., "
            "weight_decay=weight_decay)",
            "no_decay",
        ),
        (
            optax.chain(clip, optax.adamw(schedule)),
            "weight_decay is not passed to optax.adamw, which then uses its own default (1e-4)",
            "default_decay",
        ),
        (
            optax.chain(clip, optax.adam(schedule), optax.add_decayed_weights(weight_decay)),
            "the decay is added after Adam's learning rate: optax.add_decayed_weights after "
            "optax.adam adds weight_decay * params to an update already scaled (and negated) "
            "by the learning rate, where optax.adamw adds it before that scaling",
            "decay_after_lr",
        ),
        (
            optax.chain(clip, optax.adamw(schedule, weight_decay)),
            "weight_decay is passed to optax.adamw by position, where it lands in b1 (adamw's "
            "second parameter, the momentum's decay rate): the weight decay stays at adamw's "
            "default 1e-4; pass it by name, `weight_decay=weight_decay`",
            "decay_as_b1",
        ),
        (
            optax.chain(clip, optax.adamw(peak_lr, weight_decay=weight_decay)),
            "the learning rate is the constant peak_lr: the schedule is not passed to adamw",
            "constant_lr",
        ),
        (
            optax.chain(
                clip,
                optax.adamw(_ref_schedule(*DEFAULTS_SCHEDULE), weight_decay=weight_decay),
            ),
            "the schedule uses the default peak_lr, warmup_steps and decay_steps, not the "
            "arguments given to make_optimizer",
            "default_schedule",
        ),
    ]
    if max_norm != weight_decay:
        found.append(
            (
                optax.chain(
                    optax.clip_by_global_norm(weight_decay),
                    optax.adamw(schedule, weight_decay=max_norm),
                ),
                f"max_norm and weight_decay trade places: the clip threshold is "
                f"weight_decay ({weight_decay:g}) and the weight decay is max_norm "
                f"({max_norm:g})",
                "norm_decay_swapped",
            )
        )
    if max_norm != DEFAULTS["max_norm"]:
        found.append(
            (
                optax.chain(optax.clip_by_global_norm(DEFAULTS["max_norm"]), adamw),
                f"the clip threshold is 1.0, not max_norm={max_norm}: the argument is ignored",
                "ignored_max_norm",
            )
        )
    if defaults:
        # the signature's default for weight_decay is another value: with the default
        # arguments the decay is that value (0.0 is optax.adam's and 1e-4 adamw's own default,
        # which the variants above stand for)
        for other in OTHER_DEFAULT_DECAYS:
            found.append(
                (
                    optax.chain(clip, optax.adamw(schedule, weight_decay=other)),
                    f"with the default arguments the weight decay is {other:g}, where the "
                    f"spec's default is weight_decay={DEFAULTS['weight_decay']:g}: the "
                    "default of weight_decay in make_optimizer's signature is another value "
                    "(or the chain uses a decay of its own in its place)",
                    "other_default_decay",
                )
            )
    if weight_decay != DEFAULTS["weight_decay"]:
        found.append(
            (
                optax.chain(clip, optax.adamw(schedule, weight_decay=DEFAULTS["weight_decay"])),
                f"the weight decay is 0.01, not weight_decay={weight_decay}: the argument is "
                "ignored",
                "ignored_decay",
            )
        )
    return found


# weight decays other than the spec's default that a signature may hold instead (0.0 and
# adamw's own 1e-4 are left out: optax.adam and a weight_decay never passed give those)
OTHER_DEFAULT_DECAYS = (1e-3, 5e-4, 5e-3, 0.02, 0.05, 0.1)


# -- inputs ----------------------------------------------------------------------------


def _f32(a: Any) -> Any:
    """`a` as a float32 JAX array, converted in NumPy and put on the device: the array
    `jnp.asarray(a, jnp.float32)` gives, without an eager JAX op (a compile) in the judge."""
    return jax.device_put(np.asarray(a, np.float32))


# the params' leaves: the checks' own (4, 3) and (3,), and a second size on which a cause
# must hold too before it is named
SIZES = (4, 3)
OTHER_SIZES = (2, 5)


def _params(zero: Any, sizes: tuple[int, int] = SIZES) -> Any:
    rng = np.random.default_rng(0)
    params = {"w": rng.normal(size=sizes), "b": rng.normal(size=sizes[1])}
    return jax.tree.map(lambda a: _f32(0 * a if zero else a), params)


def _gradients(norms: Any, seed: int = 1, sizes: tuple[int, int] = SIZES) -> Any:
    """One gradient pytree per step, in random directions, with these global norms."""
    rng = np.random.default_rng(seed)
    grads = []
    for norm in norms:
        g = {"w": rng.normal(size=sizes), "b": rng.normal(size=sizes[1])}
        total = math.sqrt(sum(float(np.sum(a**2)) for a in g.values()))
        grads.append(jax.tree.map(lambda a, n=norm, t=total: _f32(a * n / t), g))
    return grads


def _run(tx: Any, params: Any, grads: Any, *, compiled: bool = True) -> Any:
    """The updates of `tx` for each gradient, params held fixed (updates only)."""
    update = jax.jit(tx.update) if compiled else tx.update
    state = tx.init(params)
    out = []
    for g in grads:
        u, state = update(g, state, params)
        out.append(jax.tree.map(np.asarray, u))
    return out


def _first_difference(updates: Any, expected: Any) -> Any:
    """(step, Difference) of the first step whose updates differ, or None."""
    for step, (u, e) in enumerate(zip(updates, expected, strict=True)):
        scale = max(float(np.max(np.abs(leaf))) for leaf in jax.tree.leaves(e))
        found = values.difference(u, e, rtol=FLOAT32["rtol"], atol=FLOAT32["atol"] * scale)
        if found is not None:
            return step, found
    return None


def _scales(updates: Any) -> Any:
    """The largest update of each step (1 where all are 0)."""
    return [max(float(np.max(np.abs(leaf))) for leaf in jax.tree.leaves(u)) or 1.0 for u in updates]


def _scaled(updates: Any, scales: Any) -> Any:
    """Each step's updates divided by that step's largest expected update: values of order one,
    for diagnose's tolerances (the updates themselves scale with the learning rate)."""
    return [
        jax.tree.map(lambda a, s=s: np.asarray(a, np.float64) / s, u)
        for u, s in zip(updates, scales, strict=True)
    ]


def _mistake(
    variant: Any, text: Any, kind: Any, params: Any, grads: Any, scales: Any, *, compiled: Any
) -> Any:
    """diagnose.matches for the chain `variant`, run only when the diagnostic is tried."""

    def diagnostic(actual: Any, expected: Any) -> Any:
        alternative = _scaled(_run(variant, params, grads, compiled=compiled), scales)
        return diagnose.matches(alternative, text, kind)(actual, expected)

    return diagnostic


def _student_updates(student: Remote, kwargs: Any, params: Any, grads: Any) -> Any:
    tx = student.make_optimizer(**kwargs)
    if not (callable(getattr(tx, "init", None)) and callable(getattr(tx, "update", None))):
        raise fail(
            f"make_optimizer({_kw(kwargs)})",
            expected="an optax GradientTransformation (with init and update)",
            observed=f"a {type(tx).__name__}",
            fix="return `optax.chain(...)`",
        )
    return _run(tx, params, grads, compiled=False)  # eagerly: jit has its own check


def _kw(kwargs: Any) -> Any:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def _assert_updates(
    student: Remote, kwargs: Any, *, zero_params: Any, norms: Any, what: str
) -> None:
    args = {**DEFAULTS, **kwargs}
    schedule, own = _schedule_for(
        student, args["peak_lr"], args["warmup_steps"], args["decay_steps"]
    )
    learning_rates = _learning_rates(
        schedule, own, len(norms), args["peak_lr"], args["warmup_steps"], args["decay_steps"]
    )

    def judged(sizes: tuple[int, int]) -> Any:
        """(params, grads, scales), the student's and the expected updates (scaled)."""
        params, grads = _params(zero_params, sizes), _gradients(norms, sizes=sizes)
        updates = _student_updates(student, kwargs, params, grads)
        expected = _ref_updates(
            params, grads, learning_rates, args["weight_decay"], args["max_norm"]
        )
        return (params, grads, _scales(expected)), updates, expected

    try:
        (params, grads, scales), updates, expected = judged(SIZES)
    except client.StudentError as exc:
        # make_optimizer raising what make_schedule raises with the lengths swapped, at this
        # call's schedule arguments and at the schedule check's settings
        peak, warmup, decay = args["peak_lr"], args["warmup_steps"], args["decay_steps"]
        if (exc.info.type, calls.first_line(exc)) != _swapped_error(peak, warmup, decay):
            raise
        cause = _lengths_swapped(student, peak, warmup, decay)
        if not cause:
            raise
        raise CheckFailure(
            f"make_optimizer({_kw(kwargs)})",
            expected="an optax GradientTransformation whose updates are the reference chain's",
            observed=_raised(exc),
            cause=f"make_schedule raises: {cause}",
            fix="`optax.warmup_cosine_decay_schedule(0.0, peak_lr, warmup_steps, decay_steps)`",
        ) from exc
    found = _first_difference(updates, expected)
    if found is None:
        return
    step, difference = found
    # The variants are Optax chains, run only for updates that differ, and a cause is named
    # only when the same variant also gives the updates on params of another size
    # (diagnose.confirmed). The student's schedule may be plain Python (a jit problem its own
    # check reports): run them eagerly then.
    seen = ((params, grads, scales), updates, expected), judged(OTHER_SIZES)

    def mistakes(inputs: Any) -> Any:
        params, grads, scales = inputs
        return [
            _mistake(variant, text, kind, params, grads, scales, compiled=not own)
            for variant, text, kind in _variants(
                schedule, **args, defaults="weight_decay" not in kwargs
            )
        ]

    cause = diagnose.confirmed(
        [(inputs, _scaled(got, inputs[2]), _scaled(want, inputs[2])) for inputs, got, want in seen],
        mistakes,
    )
    cause = cause or difference.cause
    call = f"make_optimizer({_kw(kwargs)})"
    raise fail(
        f"the updates of {call} {what}",
        expected=f"at step {step + 1} (gradient norm {norms[step]:g}): {difference.expected}"
        + (" (with your make_schedule's learning rates)" if own else ""),
        observed=difference.observed,
        cause=cause,
        fix="`optax.chain(optax.clip_by_global_norm(max_norm), optax.adamw(make_schedule("
        "peak_lr, warmup_steps, decay_steps), weight_decay=weight_decay))`",
    )


# -- make_schedule -------------------------------------------------------------------


def _schedule_steps(warmup: int, decay: int) -> list[int]:
    return sorted(
        {
            0,
            1,
            warmup // 2,
            warmup - 1,
            warmup,
            warmup + 1,
            (warmup + decay) // 2,
            decay - 1,
            decay,
            decay + 7,
        }
    )


def _late_everywhere(student: Remote) -> bool:
    """Whether make_schedule gives, for every configuration of the values check, the
    schedule whose cosine ends at warmup_steps + decay_steps (a failing call: not confirmed)."""
    for peak, warmup, decay in SCHEDULE_CONFIGS:
        steps = _schedule_steps(warmup, decay)
        try:
            schedule = student.make_schedule(peak, warmup, decay)
            got = np.array([float(schedule(_step(s))) for s in steps])
        except (client.StudentError, TypeError, ValueError):
            return False
        late = np.array([_ref_schedule_value(s, peak, warmup, warmup + decay) for s in steps])
        if not np.allclose(got, late, **LATE_END):
            return False
    return True


SCHEDULE_CONFIGS = ((1e-3, 1000, 50000), (0.5, 10, 30), (2.0, 4, 5))


def _end_values(student: Remote) -> list[float] | None:
    """For every configuration of the values check, the value above 0 at which make_schedule
    ends, where it equals the warm-up and cosine that end there
    (`optax.warmup_cosine_decay_schedule(..., end_value=e)`); None where any does not (or a
    call fails: not confirmed)."""
    ends = []
    for peak, warmup, decay in SCHEDULE_CONFIGS:
        steps = _schedule_steps(warmup, decay)
        try:
            schedule = student.make_schedule(peak, warmup, decay)
            got = np.array([float(schedule(_step(s))) for s in steps])
        except (client.StudentError, TypeError, ValueError):
            return None
        end = got[-1]
        if not 0 < end < peak:
            return None
        shifted = optax.warmup_cosine_decay_schedule(0.0, peak, warmup, decay, end_value=end)
        want = np.array([float(shifted(s)) for s in steps])
        if not np.allclose(got, want, **LATE_END):
            return None
        ends.append(float(end))
    return ends


def _swapped_error(peak: Any, warmup: Any, decay: Any) -> tuple[str, str] | None:
    """What optax raises when the two lengths are in each other's place (for decay_steps >
    warmup_steps: a ValueError naming decay_steps = warmup_steps - decay_steps)."""
    return calls.error_of(
        lambda: optax.warmup_cosine_decay_schedule(0.0, peak, decay, warmup)  # the mistake
    )


def _lengths_swapped(student: Remote, peak: Any, warmup: Any, decay: Any) -> str:
    """The cause when make_schedule raises, at (peak, warmup, decay) and at every setting of
    the values check, the very error (type and message) optax raises with warmup_steps and
    decay_steps in each other's place; else "" (an error of its own, or another one)."""
    settings = [(peak, warmup, decay)]
    settings += [c for c in SCHEDULE_CONFIGS if c != (peak, warmup, decay)]
    for p, w, d in settings:
        mistake = _swapped_error(p, w, d)
        got = calls.error_of(lambda p=p, w=w, d=d: student.make_schedule(p, w, d))
        if mistake is None or got != mistake:
            return ""
    return (
        f"optax was given warmup_steps={decay} and decay_steps={warmup} (its error's "
        f"decay_steps={warmup - decay} is warmup_steps - decay_steps of this call; for each of "
        f"the {len(settings)} (peak_lr, warmup_steps, decay_steps) tried, make_schedule raises "
        "what optax raises with the two swapped): the two lengths are passed in each other's "
        "place (`optax.warmup_cosine_decay_schedule(init_value, peak_value, warmup_steps, "
        "decay_steps)`)"
    )


def _raised(exc: client.StudentError) -> str:
    where = calls.student_line(exc)
    return f"it raised {exc.info.type}: {calls.first_line(exc)}" + (
        f"\n    at {where}" if where else ""
    )


@check(
    "make_schedule warms up linearly from 0 and decays along a cosine to 0",
    points=3,
    hint="Which value does the schedule take at step 0, at warmup_steps and at decay_steps, "
    "and does decay_steps count from step 0 or from the end of the warm-up?",
    spec="`make_schedule(peak_lr, warmup_steps, decay_steps)` -> `optax.warmup_cosine_decay_schedule(0.0, peak_lr, warmup_steps, decay_steps)` ... schedule values at several steps",
    nudge="Optax builds this whole curve for you: one schedule function takes the initial value, the peak, the warm-up length and the total decay length, in that order.",
)
def test_schedule_values(student: Remote) -> None:
    fix = "`optax.warmup_cosine_decay_schedule(0.0, peak_lr, warmup_steps, decay_steps)`"
    for peak, warmup, decay in SCHEDULE_CONFIGS:
        try:
            schedule = student.make_schedule(peak, warmup, decay)
        except client.StudentError as exc:
            cause = _lengths_swapped(student, peak, warmup, decay)
            if not cause:
                raise
            raise CheckFailure(
                f"make_schedule({peak}, {warmup}, {decay})",
                expected=f"a schedule: 0 at step 0, {peak} at step {warmup}, 0 from step {decay}",
                observed=_raised(exc),
                cause=cause,
                fix=fix,
            ) from exc
        steps = _schedule_steps(warmup, decay)
        got = np.array([float(schedule(_step(s))) for s in steps])
        expected = np.array([_ref_schedule_value(s, peak, warmup, decay) for s in steps])
        late = np.array([_ref_schedule_value(s, peak, warmup, warmup + decay) for s in steps])
        cause = ""
        # optax.cosine_decay_schedule(peak, decay): the lesson's schedule with no warm-up
        no_warmup = np.array([_ref_schedule_value(s, peak, 0, decay) for s in steps])
        if np.allclose(got, no_warmup, **NO_WARMUP):
            cause = (
                f"every value is a cosine decay from peak_lr ({peak:g}) at step 0 to 0 at "
                "decay_steps (`optax.cosine_decay_schedule(peak_lr, decay_steps)`'s values): "
                "there is no warm-up, and warmup_steps is never used"
            )
        elif abs(got[0] - peak) < STARTS_AT_PEAK * peak:
            cause = (
                f"the schedule's value at step 0 is peak_lr ({peak:g}): it starts at the peak, "
                "where the warm-up starts at 0.0 and reaches peak_lr only at warmup_steps"
            )
        elif (ends := _end_values(student)) is not None:
            cause = (
                f"the cosine ends above 0: at and after decay_steps the schedule stays at "
                f"{', '.join(f'{e:.3g}' for e in ends)} for the {len(SCHEDULE_CONFIGS)} "
                "(peak_lr, warmup_steps, decay_steps) tried, and every other step is the "
                "lesson's cosine ending there (an end_value other than 0.0)"
            )
        elif np.allclose(got, late, **LATE_END) and _late_everywhere(student):
            cause = (
                "the cosine ends at warmup_steps + decay_steps, for each of the "
                f"{len(SCHEDULE_CONFIGS)} (peak_lr, warmup_steps, decay_steps) tried: "
                "decay_steps counts from step 0, warm-up included"
            )
        values.assert_close(
            got,
            expected,
            what=f"make_schedule({peak}, {warmup}, {decay}) at steps {steps}",
            rtol=TIGHT["rtol"],
            atol=SCHEDULE_ATOL_PER_PEAK * peak,
            cause=cause,
            fix=fix,
        )


@check(
    "the schedule works on a traced step count under jax.jit",
    points=1,
    hint="Inside a jitted update the step count is a traced array: can a Python `if` look at it?",
    requires=("test_schedule_values",),
    spec="Every function that is meant to be jittable is checked both eagerly and under `jax.jit`",
    nudge="Optax calls the schedule inside the jitted update with the step count as a traced array, so the schedule must choose with array operations (`jnp.where`, Optax's own schedules), not a Python `if`.",
)
def test_schedule_jits(student: Remote) -> None:
    schedule = student.make_schedule(0.5, 10, 30)
    for step in (3, 20):
        jit.assert_jittable(schedule, (_step(step),), what=f"schedule(step={step})", **SCHEDULE_JIT)


# -- make_optimizer ------------------------------------------------------------------


@check(
    "make_optimizer returns an Optax transformation whose updates are shaped like params",
    points=1,
    hint="What does optax.chain return, and what do its init and update take?",
    requires=("test_clip_before_adamw",),
    spec="-> `optax.chain(optax.clip_by_global_norm(max_norm), optax.adamw(schedule, weight_decay=weight_decay))`",
    nudge="optax.chain combines transformations into one GradientTransformation, whose init(params) builds the state and update(grads, state, params) returns updates shaped like params.",
)
def test_optimizer_interface(student: Remote) -> None:
    params = _params(zero=False)
    tx = student.make_optimizer()
    if not (callable(getattr(tx, "init", None)) and callable(getattr(tx, "update", None))):
        raise fail(
            "make_optimizer()",
            expected="an optax GradientTransformation (with init and update)",
            observed=f"a {type(tx).__name__}",
            fix="return `optax.chain(...)`",
        )
    state = tx.init(params)
    updates, _ = tx.update(_gradients((0.5,))[0], state, params)
    # (an update called without params is not in the spec: weight decay is judged by values)
    values.assert_tree_structure(updates, params, what="the updates of make_optimizer()")


@check(
    "the clip runs before adamw (gradient norms from 1e-3 to 200)",
    points=3,
    hint="optax.chain applies its transformations in order: which one should see the raw "
    "gradients, and which one the clipped ones?",
    spec="-> `optax.chain(optax.clip_by_global_norm(max_norm), optax.adamw(schedule, weight_decay=weight_decay))` ... updates equal the reference chain's over a sequence of gradients of very different norms (so clip order, clip threshold and weight decay are all observed)",
    nudge="optax.chain runs its transformations left to right, each on the output of the one before: the clip must come first so that Adam only ever sees clipped gradients.",
)
def test_clip_before_adamw(student: Remote) -> None:
    _assert_updates(
        student,
        {"peak_lr": 1e-2, "warmup_steps": 3, "decay_steps": 20, "max_norm": 1.0},
        zero_params=True,
        norms=MIXED_NORMS,
        what="over gradients of very different norms (params 0)",
    )


@check(
    "the clip threshold is max_norm",
    points=2,
    hint="Where does the max_norm argument go, and what does clip_by_global_norm do to a "
    "gradient whose norm is below it?",
    spec="-> `optax.chain(optax.clip_by_global_norm(max_norm), optax.adamw(schedule, weight_decay=weight_decay))` ... (so clip order, clip threshold and weight decay are all observed)",
    nudge="optax.clip_by_global_norm takes the threshold as its argument and rescales the whole gradient pytree only when its global norm is above it.",
)
def test_max_norm_observed(student: Remote) -> None:
    for max_norm in (0.5, 3.0):
        _assert_updates(
            student,
            {"peak_lr": 1e-2, "warmup_steps": 3, "decay_steps": 20, "max_norm": max_norm},
            zero_params=True,
            norms=MIXED_NORMS,
            what=f"with max_norm={max_norm} (params 0)",
        )


@check(
    "adamw applies weight_decay to the params",
    points=2,
    hint="Which optax optimizer adds weight_decay * params to its update, and does it get "
    "your weight_decay argument?",
    spec="-> `optax.chain(optax.clip_by_global_norm(max_norm), optax.adamw(schedule, weight_decay=weight_decay))` ... (so clip order, clip threshold and weight decay are all observed)",
    nudge="Decoupled weight decay is what separates optax.adamw from optax.adam, and it comes from adamw's weight_decay keyword.",
)
def test_weight_decay_observed(student: Remote) -> None:
    for weight_decay in (0.3, 0.0):
        _assert_updates(
            student,
            {"peak_lr": 1e-2, "warmup_steps": 3, "decay_steps": 20, "weight_decay": weight_decay},
            zero_params=False,
            norms=SMALL_NORMS,
            what=f"with weight_decay={weight_decay} (gradient norms below max_norm)",
        )


@check(
    "make_schedule's schedule drives adamw's learning rate",
    points=2,
    hidden=True,
    hint="Is adamw given the schedule function itself, or a number, and is the schedule built "
    "from make_optimizer's own arguments?",
    spec="-> `optax.chain(optax.clip_by_global_norm(max_norm), optax.adamw(schedule, weight_decay=weight_decay))` ... updates equal the reference chain's over a sequence of gradients of very different norms",
    nudge="optax.adamw accepts a schedule (a function of the step count) wherever it accepts a learning rate, and calls it at every update.",
)
def test_schedule_drives_learning_rate(student: Remote) -> None:
    _assert_updates(
        student,
        {"peak_lr": 0.05, "warmup_steps": 4, "decay_steps": 9},
        zero_params=True,
        norms=SMALL_NORMS,
        what="over warm-up, decay and past decay_steps (params 0, no clipping)",
    )


@check(
    "make_optimizer() with the default arguments matches the lesson's optimizer",
    points=2,
    hint="What are the lesson's peak learning rate, warm-up and decay lengths, weight decay "
    "and clip threshold?",
    spec="`make_optimizer(peak_lr=1e-3, warmup_steps=1000, decay_steps=50000, weight_decay=0.01, max_norm=1.0)`",
    nudge="The defaults in make_optimizer's signature are the lesson's values, and each one must reach the part of the chain that uses it.",
)
def test_defaults(student: Remote) -> None:
    _assert_updates(
        student,
        {},
        zero_params=False,
        norms=MIXED_NORMS,
        what="(the defaults) over gradients of very different norms",
    )


@check(
    "the optimizer's update compiles under jax.jit",
    points=1,
    hint="Does anything in your chain or schedule need a concrete step count?",
    requires=("test_clip_before_adamw",),
    spec="Every function that is meant to be jittable is checked both eagerly and under `jax.jit`",
    nudge="Under jax.jit the optimizer state's step count is traced, so everything the chain computes from it must be array operations.",
)
def test_update_jits(student: Remote) -> None:
    params = _params(zero=False)
    tx = student.make_optimizer(peak_lr=1e-2, warmup_steps=3, decay_steps=20)
    state = tx.init(params)
    update = client.probe(inputs.updates_only, tx)  # the updates; the state is the student's
    for g in _gradients((0.5, 4.0)):
        jit.assert_jittable(
            update,
            (g, state, params),
            what="make_optimizer(...).update(grads, state, params)",
            **UPDATE_JIT,
        )
        _, state = tx.update(g, state, params)


@check(
    "the schedule and the optimizer's update are pure, also while jax.jit traces them",
    points=1,
    hint="Does your schedule or your chain read or write anything besides its arguments, for "
    "instance a module-level counter that only moves while jax.jit traces?",
    spec="purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
    nudge="jax.jit runs the Python code of a function once, while tracing: anything it does besides computing from its arguments (a counter, a print, a global) happens then and never again.",
)
def test_pure(student: Remote, credit: Credit, gate: Gate) -> None:
    params = _params(zero=False)

    def schedule_case() -> None:
        gate.require("test_schedule_values")
        gate.require("test_schedule_jits")  # a jit failure is reported there, once
        schedule = student.make_schedule(0.5, 10, 30)
        for step in (3, 20):
            args, what = (_step(step),), f"make_schedule(0.5, 10, 30)(step={step})"
            purity.assert_pure(schedule, args, what=what, module=student)
            purity.assert_no_trace_side_effects(schedule, args, what=what, module=student)

    def update_case() -> None:
        gate.require("test_clip_before_adamw")
        gate.require("test_update_jits")
        tx = student.make_optimizer(peak_lr=1e-2, warmup_steps=3, decay_steps=20)
        state = tx.init(params)
        update = client.probe(inputs.updates_only, tx)
        what = "make_optimizer(...).update(grads, state, params)"
        for g in _gradients((0.5, 4.0)):
            args = (g, state, params)
            purity.assert_pure(update, args, what=what, module=student)
            purity.assert_no_trace_side_effects(update, args, what=what, module=student)
            _, state = tx.update(g, state, params)

    score_cases(credit, [("the schedule", schedule_case), ("the update", update_case)])
