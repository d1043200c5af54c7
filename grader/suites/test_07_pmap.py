"""Hidden checks for 07_pmap.py: data parallelism across simulated devices.

The file runs with 8 simulated CPU devices: the runner sets `jax_num_cpu_devices`
before JAX starts (DEVICES below). By hand:

    XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu \\
        python -m pytest -p grader.plugin --lesson-dir solutions grader/suites/test_07_pmap.py

The averaged gradients are compared with the full-batch gradient computed here on
one device; when they differ, the message says whether they match the per-device
gradients (no `pmean`) or `n_devices` times the mean (`psum` instead of `pmean`).
"""

import contextlib
import importlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from grader.authoring import check
from grader.checks import calls, diagnose, jit, primitives, purity, values
from grader.checks.failure import CheckFailure, fail
from grader.sandbox import client
from grader.sandbox.client import Remote
from grader.suites._shared import EXACT, TIGHT, once

LESSON = "07_pmap"
TITLE = "data parallelism with pmap"
DEVICES = 8

# -- devices ----------------------------------------------------------------------


def _n_devices(wanted: int = 8) -> Any:
    available = jax.local_device_count()
    if available < 2:
        raise RuntimeError(
            f"the grader started JAX with {available} device; this suite needs simulated CPU "
            "devices: set XLA_FLAGS=--xla_force_host_platform_device_count=8 before JAX starts "
            "(the runner does this from the suite's DEVICES)"
        )
    return min(wanted, available)


# -- losses and references (written here, independently of solutions/) --------------------

# The losses are public inputs: the sandbox hands these very functions to the student's
# code (`_public(_mse)`), and the references below differentiate them on one device.
_inputs = importlib.import_module("grader.inputs.07_pmap")
_mse = _inputs.pmap_mse  # linear regression: mean squared error of x @ w + b
_xent = _inputs.pmap_cross_entropy  # a two-layer tanh classifier: mean cross-entropy


def _public(loss_fn: Any) -> Any:
    """`loss_fn` as the student's code receives it: built in the sandbox, by name."""
    return client.Public(loss_fn.__name__)


def _mse_problem(n: int, per_device: int = 4, dim: int = 3) -> Any:
    rng = np.random.default_rng(7)
    params = {"w": rng.normal(size=dim).astype(np.float32), "b": np.float32(0.5)}
    params = jax.tree.map(jnp.asarray, params)
    xs = rng.normal(size=(n, per_device, dim)).astype(np.float32)
    # Each shard has its own offset, so every device's gradient differs from the mean.
    ys = (rng.normal(size=(n, per_device)) + 3.0 * np.arange(n)[:, None]).astype(np.float32)
    return params, jnp.asarray(xs), jnp.asarray(ys)


def _xent_problem(n: int, per_device: int = 6, dim: int = 5, classes: int = 3) -> Any:
    rng = np.random.default_rng(11)
    params = {
        "hidden": {"kernel": 0.5 * rng.normal(size=(dim, 8)), "bias": np.zeros(8)},
        "out": {"kernel": rng.normal(size=(8, classes))},
    }
    params = jax.tree.map(lambda a: jnp.asarray(a, jnp.float32), params)
    xs = rng.normal(size=(n, per_device, dim)).astype(np.float32)
    ys = rng.integers(0, classes, size=(n, per_device)).astype(np.int32)
    return params, jnp.asarray(xs), jnp.asarray(ys)


def _ref_mean_grads(loss_fn: Any, params: Any, xs: Any, ys: Any) -> Any:
    """The full-batch gradient on one device, one copy per device."""
    n = xs.shape[0]
    flat_x = xs.reshape((-1, *xs.shape[2:]))
    flat_y = ys.reshape((-1, *ys.shape[2:]))
    grads = jax.jit(jax.grad(loss_fn))(params, flat_x, flat_y)
    return jax.tree.map(lambda g: np.broadcast_to(np.asarray(g), (n, *g.shape)), grads)


def _ref_per_device_grads(loss_fn: Any, params: Any, xs: Any, ys: Any) -> Any:
    grad = jax.jit(jax.grad(loss_fn))
    per = [grad(params, xs[i], ys[i]) for i in range(xs.shape[0])]
    return jax.tree.map(lambda *gs: np.stack([np.asarray(g) for g in gs]), *per)


def _ref_shard(x: Any, n: int) -> Any:
    x = np.asarray(x)
    return x.reshape((n, x.shape[0] // n, *x.shape[1:]))


def _run_grads(student: Remote, loss_fn: Any, params: Any, xs: Any, ys: Any) -> Any:
    """The student's result and where each of its leaves lives (placement is observed in
    the sandbox: the judge receives plain arrays), computed once per module, loss and
    device count (pmap of a fresh inner function compiles on every call: about a second
    each); an error it raised is kept and raised again to every check that asks."""

    def compute() -> Any:
        seen = client.probe(
            _inputs.grads_and_placement,
            student.parallel_mean_grads,
            _public(loss_fn),
            params,
            xs,
            ys,
        )
        if isinstance(seen["out"], client.StudentError):
            raise seen["out"]  # as if the call had raised it here
        return seen

    return once(student, (loss_fn.__name__, xs.shape), compute)


def _call_grads(student: Remote, loss_fn: Any, params: Any, xs: Any, ys: Any) -> Any:
    """The student's result (see `_run_grads`)."""
    return _run_grads(student, loss_fn, params, xs, ys)["out"]


def _grads_diagnostics(loss_fn: Any, params: Any, xs: Any, ys: Any) -> Any:
    """The usual mistakes of parallel_mean_grads, each confirmed on the numbers: every device
    kept its own shard's gradient (no pmean), or holds n_devices times (psum) or 1/n_devices
    of the mean."""
    n, per_device = xs.shape[0], xs.shape[1]
    scale = diagnose.batch_scale(n, what="the device axis")

    def summed_or_divided(actual: Any, expected: Any) -> Any:
        found = scale(actual, expected)
        if found is None:
            return None
        if found.kind == "batch_sum":
            return diagnose.Cause(
                found.kind,
                f"every device holds {n} times the mean gradient: the gradients were summed "
                "across devices (`jax.lax.psum`) instead of averaged (`jax.lax.pmean`)",
            )
        return diagnose.Cause(
            found.kind,
            f"every device holds 1/{n} of the mean gradient: the average across devices was "
            f"divided by the {n} devices once more (`pmean` already divides)",
        )

    def per_device_batch(actual: Any, expected: Any) -> Any:
        factor = diagnose.ratio(actual, expected)
        if n == per_device or factor is None or not np.isclose(factor, n / per_device, rtol=1e-4):
            return None
        return diagnose.Cause(
            "psum_per_batch",
            f"every device holds {n}/{per_device} of the mean gradient: the gradients were "
            f"summed across the {n} devices (`jax.lax.psum`) and divided by each device's "
            f"{per_device} rows, where the mean across devices divides by the {n} devices "
            "(`jax.lax.pmean`)",
        )

    mean = _ref_mean_grads(loss_fn, params, xs, ys)
    return (
        diagnose.matches(
            _ref_per_device_grads(loss_fn, params, xs, ys),
            "every device returned the gradient of its OWN shard: the gradients were never "
            "averaged across devices (`jax.lax.pmean` of the gradients, inside the pmapped "
            "function, averages them)",
            kind="no_pmean",
        ),
        diagnose.matches(
            jax.tree.map(lambda g: g[0], mean),
            "the result is the mean gradient without the device axis: one copy, where "
            "parallel_mean_grads returns one per device (the per-device gradients averaged "
            "after `jax.pmap` returned, or one device's copy taken out); return what "
            "`jax.pmap` returns, with `jax.lax.pmean` inside the pmapped function",
            kind="device_axis_dropped",
        ),
        summed_or_divided,
        per_device_batch,
    )


PARAMS_MAPPED = (
    "the parameters are mapped over devices too (they should be given whole to every "
    "device): jax.pmap splits every argument along its axis 0 unless told otherwise, so "
    "each device got a slice of params instead of the whole pytree"
)


def _params_mapped_error(loss_fn: Any, params: Any, xs: Any, ys: Any) -> tuple[str, str] | None:
    """What the reference raises with params mapped like the data (pmap's default in_axes)."""

    def device_grads(p: Any, x: Any, y: Any) -> Any:
        return jax.lax.pmean(jax.grad(loss_fn)(p, x, y), axis_name="devices")  # type: ignore[no-untyped-call]  # untyped in jax

    return calls.error_of(lambda: jax.pmap(device_grads, axis_name="devices")(params, xs, ys))


def _params_mapped(student: Remote, problem: Any, other: Any) -> bool:
    """The student's function raises, on `problem` and on `other` (another loss, params
    pytree and device count), the very error (type and message) the reference raises with
    params mapped over the devices, and gives the full-batch mean on `problem` once every
    device's copy of params is stacked on a leading axis (what mapping params expects)."""
    for loss_fn, params, xs, ys in (problem, other):
        mistake = _params_mapped_error(loss_fn, params, xs, ys)
        got = calls.error_of(lambda: _call_grads(student, loss_fn, params, xs, ys))  # noqa: B023
        if mistake is None or got != mistake:
            return False
    loss_fn, params, xs, ys = problem
    n = xs.shape[0]
    stacked = jax.tree.map(
        lambda leaf: np.broadcast_to(np.asarray(leaf), (n, *np.shape(leaf))), params
    )
    try:
        out = student.parallel_mean_grads(_public(loss_fn), stacked, xs, ys)
    except client.StudentError:
        return False
    expected = _ref_mean_grads(loss_fn, params, xs, ys)
    return (
        values.structure_difference(out, expected) is None
        and values.difference(out, expected, **TIGHT) is None
    )


def _assert_full_batch_mean(student: Remote, problem: Any, other: Any, what: str) -> None:
    """`problem` is (loss_fn, params, xs, ys); a cause is named only when `other`, a problem
    with another device count, confirms it too."""
    try:
        out = _call_grads(student, *problem)
    except client.StudentError as exc:
        if not _params_mapped(student, problem, other):
            raise
        where = calls.student_line(exc)
        raise CheckFailure(
            what,
            expected="the gradients averaged across the devices, one copy per device",
            observed=f"it raised {exc.info.type}: {calls.first_line(exc)}"
            + (f"\n    at {where}" if where else ""),
            cause=PARAMS_MAPPED,
            fix="tell `jax.pmap` which arguments are split over the devices and which are "
            "given whole to each (its `in_axes`)",
        ) from exc
    expected = _ref_mean_grads(*problem)
    cause = ""
    if values.difference(out, expected, **TIGHT) is not None:
        seen = [(problem, out, expected)]
        with contextlib.suppress(Exception):  # its own check reports what the other one raises
            seen.append((other, _call_grads(student, *other), _ref_mean_grads(*other)))
        cause = diagnose.confirmed(seen, lambda args: _grads_diagnostics(*args))
    values.assert_close(
        out,
        expected,
        what=what,
        **TIGHT,
        cause=cause,
        fix="inside the function you pmap, compute `grads = jax.grad(loss_fn)(params, x, y)` "
        "and return `jax.lax.pmean(grads, axis_name=...)` with the same axis_name you gave "
        "`jax.pmap`",
    )


def _shard_diagnostics(batch: Any, n: int) -> Any:
    """shard's confirmable mistakes: rows dealt out round-robin (device i got x[i::n], what
    `x.reshape(B // n, n, ...)` with its two leading axes swapped gives); each device's rows
    merged into one axis with their features (`x.reshape(n, -1)`)."""
    return (
        diagnose.matches(
            _ref_shard(batch, n).reshape(n, -1),
            f"each device's rows were merged with their features into one axis (shape (n_devices, "
            f"-1), here {(n, batch.size // n)}): the per-device batch axis of {batch.shape[0] // n} "
            "rows is lost, as `x.reshape(n_devices, -1)` loses it",
            kind="merged_axes",
        ),
        diagnose.matches(
            batch.reshape(batch.shape[0] // n, n, *batch.shape[1:]),
            f"the result is x.reshape(B // n_devices, n_devices, ...): the two leading sizes are "
            f"in each other's place (shape {(batch.shape[0] // n, n)} where {(n, batch.shape[0] // n)} "
            "is wanted); the device axis comes first",
            kind="leading_sizes_swapped",
        ),
        diagnose.matches(
            np.stack([batch[i::n] for i in range(n)]),
            "the rows were dealt out round-robin (device i got x[i::n], the reshape to "
            "(B // n_devices, n_devices) transposed) instead of in consecutive slices (device i "
            "gets rows i*b to (i+1)*b - 1)",
            kind="round_robin",
        ),
    )


# -- shard ----------------------------------------------------------------------------


def _right_shard(out: Any, expected: Any) -> bool:
    return np.shape(out) == np.shape(expected) and values.difference(out, expected, **EXACT) is None


def _device_count_cause(student: Remote, seen: Any) -> str:
    """The batch split over every device whatever n_devices is (`jax.device_count()` in its
    place): the check's own call with n_devices = the device count is right (in `seen`), and
    on batches of two sizes that every device count in play divides, shard(x, n) for an n
    other than the device count is x split over all the devices; else ""."""
    d = jax.device_count()
    if not any(n == d and _right_shard(out, want) for (_, n), out, want in seen):
        return ""
    probes = []
    for rows, features in ((2 * d, 3), (3 * d, 2)):
        # an n that divides the batch, whose split is not the device count's leading sizes
        # swapped (rows // n = d reads as (B // n, n) in each other's place)
        n = next((k for k in (2, 4, 3, 6) if rows % k == 0 and d not in (k, rows // k)), 0)
        if not n:
            return ""
        batch = np.arange(rows * features, dtype=np.float32).reshape(rows, features)
        try:
            out = student.shard(jnp.asarray(batch), n)
        except client.StudentError:
            return ""
        probes.append(((batch, n), out, _ref_shard(batch, n)))
    said = " and ".join(f"shard(x of {batch.shape[0]} rows, {n})" for (batch, n), _, _ in probes)
    text = (
        f"the batch is split over all {d} devices whatever n_devices is given ({said} have a "
        f"leading axis of {d}, each x split into {d} consecutive slices, and n_devices = {d} is "
        f"right): the argument is not used (`jax.device_count()`, or a fixed {d}, in its place)"
    )
    found = diagnose.confirmed(
        probes,
        lambda args: (diagnose.matches(_ref_shard(args[0], d), text, kind="device_count"),),
    )
    return text if found == text else ""


@check(
    "shard splits a batch into consecutive per-device slices",
    points=2,
    hint="Which single array method turns (B, ...) into (n_devices, B // n_devices, ...) "
    "without moving any row out of order?",
    nudge="A row-major reshape keeps the rows in order, so device i gets the i-th consecutive block; no transposing or striding is needed.",
    spec="`shard(x, n_devices)` -> reshape a batch `(B, ...)` to `(n_devices, B // n_devices, ...)`; `n_devices` is a Python int that divides `B`",
)
def test_shard_layout(student: Remote) -> None:
    x = np.arange(16 * 3 * 2, dtype=np.float32).reshape(16, 3, 2)
    fix = "`x.reshape((n_devices, x.shape[0] // n_devices) + x.shape[1:])`"
    # both inputs first: a cause is named only when both sizes confirm it
    seen: list[Any] = []
    for n, batch in ((8, x), (4, x[:12].reshape(12, 6))):
        try:
            out = student.shard(jnp.asarray(batch), n)
        except client.StudentError as exc:
            cause = _device_count_cause(student, seen)
            if not cause:
                raise
            where = calls.student_line(exc)
            raise CheckFailure(
                f"shard(x of shape {batch.shape}, {n})",
                expected=f"shape {(n, batch.shape[0] // n, *batch.shape[1:])}: {n} consecutive "
                f"slices of {batch.shape[0] // n} rows",
                observed=f"it raised {exc.info.type}: {calls.first_line(exc)}"
                + (f"\n    at {where}" if where else ""),
                cause=cause,
                fix=fix,
            ) from exc
        seen.append(((batch, n), out, _ref_shard(batch, n)))
    cause = diagnose.confirmed(seen, lambda args: _shard_diagnostics(*args), reference=_ref_shard)
    if not cause and any(not _right_shard(out, expected) for _, out, expected in seen):
        cause = _device_count_cause(student, seen)
    for (batch, n), out, expected in seen:
        what = f"shard(x of shape {batch.shape}, {n})"
        shape = (n, batch.shape[0] // n, *batch.shape[1:])
        values.assert_shape(out, shape, what=what, cause=cause, fix=fix)
        values.assert_close(out, expected, what=what, **EXACT, cause=cause, fix=fix)


@check(
    "shard is pure: no mutation, no module state, nothing only at trace time",
    points=1,
    hint="Does shard touch anything besides its arguments: a global counter, a log, the "
    "caller's array?",
    requires=("test_shard_layout",),
    nudge="shard should compute its result from x and n_devices alone, without counting or logging anything outside the function.",
    spec="purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
)
def test_shard_jits(student: Remote) -> None:
    # Purity only: the spec does not make shard a jitted function (it prepares the batch on
    # the host, before pmap), so a NumPy reshape is as right as a jax.numpy one. Trace-time
    # effects are looked for where shard traces; one that does not is not judged on them.
    x = np.arange(24.0, dtype=np.float32).reshape(8, 3)
    what = "shard(x, n_devices)"
    purity.assert_pure(student.shard, (x, 4), what=what, module=student)
    try:
        purity.assert_no_trace_side_effects(
            student.shard,
            (jax.device_put(x), 4),
            static_argnames=("n_devices",),
            what=what,
            module=student,
        )
    except CheckFailure as failure:
        if failure.finding.expected != "the function runs under jit":
            raise


# -- parallel_mean_grads ----------------------------------------------------------------


@check(
    "parallel_mean_grads returns one gradient pytree per device",
    points=2,
    hint="What does pmap put in front of every output leaf, and how long is that axis?",
    requires=("test_full_batch_mean",),
    nudge="pmap stacks each device's output along a new leading axis, one entry per device, in a pytree shaped like params.",
    spec="returns one copy of the averaged gradients per device (leading device axis)",
)
def test_one_copy_per_device(student: Remote) -> None:
    n = _n_devices()
    params, xs, ys = _mse_problem(n)
    out = _call_grads(student, _mse, params, xs, ys)
    values.assert_tree_structure(
        out,
        params,
        what="parallel_mean_grads(loss_fn, params, xs, ys)",
        fix="return the gradients as a pytree shaped like params",
    )
    for name in ("w", "b"):
        values.assert_shape(
            out[name],
            (n, *params[name].shape),
            what=f"parallel_mean_grads(...)['{name}'] with {n} devices",
            fix="return what `jax.pmap` returns: leaves with a leading device axis",
        )


@check(
    "every device holds the full-batch mean gradient",
    points=4,
    hint="After jax.grad on its own shard, what does each device still have to do so that "
    "all devices take the same step, and is that a sum or a mean?",
    nudge="Each device differentiates its own shard; a collective over the named pmap axis must then average (not add) those gradients so all devices agree.",
    spec="gradients of `loss_fn` averaged across devices with `jax.pmap(..., axis_name=...)` and `jax.lax.pmean` ... every device's result equals the full-batch mean gradient",
)
def test_full_batch_mean(student: Remote) -> None:
    n = _n_devices()
    _assert_full_batch_mean(
        student,
        (_mse, *_mse_problem(n)),
        (_xent, *_xent_problem(_n_devices(4))),
        what=f"parallel_mean_grads(mse, params, xs, ys) on {n} devices",
    )


@check(
    "the jaxpr of parallel_mean_grads reduces across devices (psum)",
    points=2,
    hint="Which jax.lax collective makes the devices exchange their gradients, and does "
    "vmap or a plain mean over axis 0 ever talk to another device?",
    requires=("test_full_batch_mean",),
    nudge="Only a jax.lax collective named after the pmap axis makes devices exchange values; a mean over axis 0 outside pmap stays on one device.",
    spec="averaged across devices with `jax.pmap(..., axis_name=...)` and `jax.lax.pmean` ... the jaxpr contains a cross-device reduction (`psum`/`pmean`)",
)
def test_cross_device_reduction(student: Remote) -> None:
    n = _n_devices()
    params, xs, ys = _mse_problem(n)
    primitives.assert_contains(
        client.partial(student.parallel_mean_grads, _public(_mse)),
        (params, xs, ys),
        "psum",
        what="parallel_mean_grads(loss_fn, params, xs, ys)",
        reference=lambda params, xs, ys: _ref_mean_grads(_mse, params, xs, ys),
        cause="the gradients are not averaged by a cross-device collective: no "
        "`jax.lax.pmean`/`psum` under `jax.pmap` (jax.pmap lowers to shard_map, and pmean "
        "appears as psum followed by a division)",
        fix="`jax.pmap(device_grads, axis_name='devices')` with `jax.lax.pmean(grads, "
        "axis_name='devices')` inside `device_grads`",
    )


@check(
    "the averaged gradients live on every device",
    points=1,
    hidden=True,
    hint="Where does the output of jax.pmap live, compared with a jnp.mean over axis 0?",
    requires=("test_full_batch_mean",),
    nudge="pmap runs one copy of the function per device and leaves each result on its device; vmap or a loop computes everything on one.",
    spec="with `jax.pmap(..., axis_name=...)` ... returns one copy of the averaged gradients per device (leading device axis) ... every device's result equals the full-batch mean gradient",
)
def test_result_spans_devices(student: Remote) -> None:
    n = _n_devices()
    params, xs, ys = _mse_problem(n)
    placement = _run_grads(student, _mse, params, xs, ys)["placement"]
    leaf = placement["w"]  # observed in the sandbox: its type, and how many devices hold it
    spread = leaf["devices"] or 0
    if spread != n:
        raise fail(
            "where parallel_mean_grads' result is computed",
            expected=f"a jax.Array sharded over the {n} devices (what jax.pmap returns)",
            observed=f"a jax.Array on {spread} device(s)"
            if leaf["devices"] is not None
            else f"a {leaf['type']}, not a jax.Array",
            cause=f"the result is not spread over the {n} devices, as what `jax.pmap` returns "
            "is: it was not computed (or not returned) as jax.pmap's per-device output",
            fix="map the per-device gradient with `jax.pmap(..., axis_name=...)`",
        )


@check(
    "works for any loss, params pytree and number of devices",
    points=2,
    hidden=True,
    hint="Does your function hard-code the loss, the params' keys or the device count, or "
    "does it take them from its arguments?",
    nudge="Take the loss, the params' structure and the device count from the arguments: xs.shape[0] is the number of devices.",
    spec="`parallel_mean_grads(loss_fn, params, xs, ys)` -> gradients of `loss_fn` averaged across devices ... `xs`, `ys` carry a leading device axis ... run with several simulated CPU devices",
)
def test_other_loss_and_devices(student: Remote) -> None:
    n = _n_devices(4)
    _assert_full_batch_mean(
        student,
        (_xent, *_xent_problem(n)),
        (_mse, *_mse_problem(_n_devices())),
        what=f"parallel_mean_grads(cross_entropy, nested params, xs, ys) on {n} devices",
    )


@check(
    "parallel_mean_grads is pure and gives the same result under jax.jit",
    points=1,
    hint="Does the function depend on, or change, anything besides its arguments?",
    requires=("test_full_batch_mean",),
    nudge="The result must depend only on the arguments: no state kept between calls, and nothing that only happens while tracing.",
    spec="Every function that is meant to be jittable is checked both eagerly and under `jax.jit` ... purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
)
def test_jit_and_repeat(student: Remote) -> None:
    n = _n_devices()
    params, xs, ys = _mse_problem(n)
    first = _call_grads(student, _mse, params, xs, ys)
    again = jax.block_until_ready(  # type: ignore[no-untyped-call]  # untyped in jax
        student.parallel_mean_grads(_public(_mse), params, xs, ys)
    )
    values.assert_close(
        again,
        first,
        what="two calls of parallel_mean_grads with the same inputs",
        **EXACT,
        cause="the result depends on state kept between calls",
        fix="compute the gradients from the arguments only",
    )
    grads = client.partial(student.parallel_mean_grads, _public(_mse))
    what = "parallel_mean_grads(loss_fn, params, xs, ys)"
    purity.assert_pure(grads, (params, xs, ys), what=what, module=student)
    purity.assert_no_trace_side_effects(grads, (params, xs, ys), what=what, module=student)
    jit.assert_jittable(
        client.partial(student.parallel_mean_grads, _public(_mse)),
        (params, xs, ys),
        what="parallel_mean_grads(loss_fn, params, xs, ys)",
        **TIGHT,
    )
