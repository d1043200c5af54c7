"""Hidden checks for 06_random.py: explicit PRNG keys.

Random outputs are never compared with a reference's values (the key layout
inside a function is the student's): they are judged by their statistics, by
determinism for one key, by change across keys, and by key use, which JAX's
key-reuse checker follows for typed keys (`jax.random.key`).
"""

import importlib
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from grader.authoring import Credit, check
from grader.checks import diagnose, jit, keys, purity, values
from grader.checks.failure import CheckFailure, fail
from grader.plugin import Gate
from grader.sandbox import client
from grader.sandbox.client import Remote
from grader.suites._shared import Tolerance, assert_normal, score_cases

LESSON = "06_random"
TITLE = "explicit PRNG keys"

# Few distinct shapes: every new shape costs a compile of the PRNG kernels.
_SHAPES = ((64, 32), (32,), (16, 8))
# The shapes init_weights is compiled with (purity, trace effects, global RNG, jit): one
# program for all of them (the sandbox's compilation cache loads it after the first
# compile), with two draws instead of three (each draw is ~0.25 s of XLA compile).
_JIT_SHAPES = ((16, 8), (32,))
_X_SHAPE = (100, 200)
# the same draws compiled and eager: TIGHT's rtol, an atol for normals near zero
JIT_TOL: Tolerance = {"rtol": 1e-5, "atol": 1e-5}

_inputs = importlib.import_module("grader.inputs.06_random")


# -- helpers ----------------------------------------------------------------------------


def _is_typed(key: Any) -> bool:
    # jnp.issubdtype's own function, not re-exported in jax.dtypes' stubs
    issub = jax.dtypes.issubdtype  # type: ignore[attr-defined]
    return bool(issub(getattr(key, "dtype", None), jax.dtypes.prng_key))


def _bits(key: Any) -> Any:
    """The raw uint32 data of one key, typed or raw, as a hashable tuple."""
    if _is_typed(key):
        key = jax.random.key_data(key)
    return tuple(int(v) for v in np.asarray(key).ravel())


def _key_list(out: Any, n: int, what: str, *, raw: bool = False) -> Any:
    """The n keys split_into returned, as a list (a stacked key array, a list or a tuple)."""
    if isinstance(out, list | tuple):
        found = list(out)
    else:
        shape = np.shape(out)
        key_ndim = 1 if raw else 0
        if len(shape) != key_ndim + 1:
            dtype = getattr(out, "dtype", None)
            # what the array shows, nothing more: raw keys (uint32 pairs) for a typed key
            raw_for_typed = not raw and len(shape) == 2 and shape[1] == 2 and dtype == np.uint32
            raise fail(
                what,
                expected=f"{n} keys (a key array of shape ({n},{' 2' if raw else ''}) or a list)",
                observed=f"an array of shape {shape}"
                + (f", dtype {dtype}" if dtype is not None else ""),
                cause="split_into returned raw uint32 keys, two numbers each (what "
                "jax.random.PRNGKey makes), where the key it was given is a typed key "
                "(jax.random.key)"
                if raw_for_typed
                else "",
                fix="return `jax.random.split(key, n)`",
            )
        found = [out[i] for i in range(shape[0])]
    if len(found) != n:
        raise fail(
            what,
            expected=f"{n} keys",
            observed=f"{len(found)} keys",
            fix="return `jax.random.split(key, n)`",
        )
    return found


def _assert_distinct(student: Remote, key: Any, n: int) -> None:
    what = f"split_into(key, {n})"
    parent = _bits(key)
    out = student.split_into(key, n)
    _default_split(out, key, n, what)
    found = [_bits(k) for k in _key_list(out, n, what)]
    if parent in found:
        raise fail(
            what,
            expected=f"{n} new keys, none equal to key",
            observed=f"subkey {found.index(parent)} is the key itself",
            cause="the key itself is among the subkeys: a key that was split is used up, and "
            "handing it out again lets it be consumed twice",
            fix="return only the keys `jax.random.split(key, n)` gives",
        )
    if len(set(found)) != n:
        raise fail(
            what,
            expected=f"{n} distinct keys",
            observed=f"only {len(set(found))} distinct keys among {n}",
            cause="some subkeys are the same key: draws from them give the same numbers",
            fix="`jax.random.split(key, n)` gives n independent keys",
        )


def _default_split(out: Any, key: Any, n: int, what: str) -> None:
    """Fail where split_into(key, n), n not 2, returned the two keys `jax.random.split(key)`
    gives: n never reached the split (its default is 2 keys)."""
    if n == 2:
        return
    try:
        got = [_bits(k) for k in (out if isinstance(out, list | tuple) else list(out))]
    except Exception:
        return  # not keys at all: _key_list says what came back
    if got == [_bits(k) for k in jax.random.split(key)]:
        raise fail(
            what,
            expected=f"{n} keys",
            observed="2 keys: the two keys jax.random.split(key) gives",
            cause="n never reaches the split: `jax.random.split(key)` without n makes its "
            "default 2 keys",
            fix="`jax.random.split(key, n)`",
        )


def _init_weights(student: Remote) -> Any:
    def init_weights(key: Any) -> Any:
        return student.init_weights(key, _SHAPES)

    return init_weights


def _noisy(student: Remote) -> Any:
    def noisy(key: Any) -> Any:
        return student.noisy(key, jnp.full(_X_SHAPE, 2.0), 3.0)

    return noisy


def _split_into(student: Remote) -> Any:
    """split_into(key, 4) as the raw data of its keys: comparable, and the same for a stacked
    key array and a list of keys."""

    def split_into(key: Any) -> Any:
        raw = not _is_typed(key)
        found = _key_list(student.split_into(key, 4), 4, "split_into(key, 4)", raw=raw)
        return [k if raw else jax.random.key_data(k) for k in found]

    return split_into


def _three(student: Remote) -> Any:
    return [
        ("split_into", _split_into(student)),
        ("init_weights", _init_weights(student)),
        ("noisy", _noisy(student)),
    ]


# The value check each function's properties stand on (gates, case by case).
_VALUES = {
    "split_into": "test_split_into_distinct",
    "init_weights": "test_init_weights_shapes_and_stats",
    "noisy": "test_noisy_statistics",
}


def _gated(gate: Gate, cases: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """`(name, thunk)` cases, each run only once `name`'s value check passed."""
    return [
        (name, lambda name=name, run=run: (gate.require(_VALUES[name]), run()))  # type: ignore[func-returns-value]  # a tuple: gate, then check
        for name, run in cases
    ]


def _reuse_cause(student: Remote) -> Any:
    """Why noisy's statistics are off, when the cause is a key used for two draws (the
    key-use check stands on the statistics, so the statistics name it)."""
    try:
        keys.assert_no_key_reuse(
            student.noisy,
            (jax.random.key(8), jnp.zeros(_X_SHAPE), 3.0),
            what="noisy(key, x, sigma)",
            jit=False,
        )
    except CheckFailure as exc:
        if "the key was reused" in str(exc):
            where = str(exc.finding.observed).partition("\n")[2].strip()
            return (
                "the key was used for two draws (JAX's key-reuse checker saw one key consumed "
                "twice" + (f", {where}" if where else "") + "): draws from one key are the "
                "same numbers, not independent noise"
            )
    except Exception:  # another error is not this diagnosis's business
        pass
    return ""


def _variance_cause(student: Remote, x: Any, noise: Any) -> Any:
    """The noise at sigma=3 is exactly 9 times the noise at sigma=1 with the same key (it is
    standard normal there): sigma was squared."""
    unit = np.asarray(student.noisy(jax.random.key(8), x, 1.0), np.float64) - 2.0
    if abs(float(unit.std()) - 1.0) > 0.05:
        return ""
    found = diagnose.matches(
        9.0 * unit,
        "the noise was scaled by sigma**2 (the variance) instead of sigma: with the same key, "
        "sigma=3 gives exactly 9 times the noise of sigma=1",
        kind="variance",
    )(noise, 3.0 * unit)
    return found.text if found else ""


# -- split_into --------------------------------------------------------------------------


@check(
    "split_into gives n distinct keys, none of them the key itself",
    points=2,
    hint="What does jax.random.split(key, n) return, and why must the parent key not be one of the subkeys?",
    nudge="One split of the key yields all n fresh subkeys at once; the parent key is used up by that split and must not be handed out again.",
    spec="`split_into(key, n)` -> `n` independent subkeys ... no key is consumed twice (JAX's key-reuse checker with typed keys)",
)
def test_split_into_distinct(student: Remote) -> None:
    for n in (4, 2):
        _assert_distinct(student, jax.random.key(7), n)


@check(
    "split_into's subkeys are independent and each usable once",
    points=1,
    hidden=True,
    hint="If two of your subkeys were the same key, what would two draws with them give?",
    requires=("test_split_into_distinct",),
    nudge="Keys derived by JAX's splitting give statistically independent streams, each to be used once.",
    spec="`split_into(key, n)` -> `n` independent subkeys ... no key is consumed twice (JAX's key-reuse checker with typed keys) ... Random-valued outputs (inits, splits, noise, dropout masks, training runs) are judged statistically and by key use, never by equality with the reference's values",
)
def test_split_into_independent(student: Remote) -> None:
    _key_list(student.split_into(jax.random.key(11), 4), 4, "split_into(key, 4)")
    # One draw from each subkey, run in the sandbox next to split_into: the key-reuse
    # checker then follows a key split_into consumed and handed out again.
    draw_each = client.probe(_inputs.draws_from_subkeys, student.split_into, 4, _SHAPES[0])
    draws = np.asarray(
        keys.assert_no_key_reuse(
            draw_each,
            (jax.random.key(11),),
            what="one draw from each of split_into(key, 4)",
            jit=False,
        )
    )
    corr = np.corrcoef(draws)
    worst = float(np.max(np.abs(corr - np.eye(4))))
    if worst > 0.15:
        raise fail(
            "correlation between draws from the 4 subkeys of split_into(key, 4)",
            expected="|correlation| < 0.15 for every pair (independent streams)",
            observed=f"largest |correlation| {worst:.3f}",
            cause="draws from the subkeys are correlated: the subkeys do not give independent "
            "streams",
            fix="`jax.random.split(key, n)`",
        )


# -- init_weights ------------------------------------------------------------------------


def _kind_of(got: Any) -> str:
    """What came back, where a list was expected: a sequence and its length, or its type."""
    if isinstance(got, Remote):
        return f"a {got.type_name} (left in the sandbox: not a list or tuple)"
    if isinstance(got, list | tuple):
        return f"a {type(got).__name__} of length {len(got)}"
    return f"a {type(got).__name__}"


def _generator_cause(got: Any) -> str:
    """A generator came back: made by a `(... for ...)` expression or `yield`."""
    if isinstance(got, Remote) and got.type_name == "generator":
        return (
            "a generator was returned (a `(... for ...)` expression, or `yield`): it makes "
            "its arrays one at a time, has no length and is used up once read; the spec "
            "asks for a list"
        )
    return ""


@check(
    "init_weights returns standard normal arrays of the given shapes",
    points=2,
    hint="Which jax.random function draws N(0, 1) samples, and how do you give it a shape?",
    nudge="jax.random has a standard-normal sampler that takes a key and a shape; draw one array per requested shape.",
    spec="`init_weights(key, shapes)` -> a list of `normal` arrays, one per shape ... Random-valued outputs (inits, splits, noise, dropout masks, training runs) are judged statistically and by key use, never by equality with the reference's values",
)
def test_init_weights_shapes_and_stats(student: Remote) -> None:
    got = student.init_weights(jax.random.key(3), list(_SHAPES))
    if not isinstance(got, list | tuple) or len(got) != len(_SHAPES):
        raise fail(
            f"init_weights(key, {list(_SHAPES)})",
            expected=f"a list of {len(_SHAPES)} arrays",
            observed=_kind_of(got),
            cause=_generator_cause(got),
            fix="return one array per shape, in the order of `shapes`",
        )
    for i, (w, shape) in enumerate(zip(got, _SHAPES, strict=True)):
        values.assert_shape(w, shape, what=f"init_weights(key, shapes)[{i}]")
        if np.asarray(w).dtype.kind != "f":
            raise fail(
                f"init_weights(key, shapes)[{i}]",
                expected="floating-point values",
                observed=f"dtype {np.asarray(w).dtype}",
                fix="use `jax.random.normal`",
            )
    flat = np.concatenate([np.asarray(w, np.float64).ravel() for w in got])
    mean, std = float(flat.mean()), float(flat.std())
    if abs(mean) > 0.15 or abs(std - 1.0) > 0.1:
        raise fail(
            f"the statistics of all {flat.size} values init_weights(key, {list(_SHAPES)}) drew",
            expected="mean 0 +- 0.15 and std 1 +- 0.1 (standard normal)",
            observed=f"mean {mean:.3f}, std {std:.3f}",
            cause=_init_cause(flat, mean, std) or _scaled_init_cause(got),
            fix="draw each array with `jax.random.normal(subkey, shape)`",
        )


def _init_cause(flat: Any, mean: Any, std: Any) -> Any:
    """A cause the drawn values confirm: uniform on [0, 1) (every value inside it, mean 1/2
    and std 1/sqrt(12) within the sampling error of ~2,000 values); else none."""
    inside = flat.min() >= 0.0 and flat.max() < 1.0
    if inside and abs(mean - 0.5) < 0.05 and abs(std - np.sqrt(1 / 12)) < 0.03:
        return "the values are uniform on [0, 1) (`jax.random.uniform`), not standard normal"
    return ""


# scalings of N(0, 1) by the first dimension (the fan-in) that an init may carry over from
# lesson 08: (name, the std's numerator: std = sqrt(numerator / fan_in))
_FAN_IN_SCALINGS = (
    ("sqrt(2 / shape[0]) (He initialization)", 2.0),
    ("1 / sqrt(shape[0]) (LeCun initialization)", 1.0),
)


def _scaled_init_cause(arrays: Any) -> str:
    """A fan-in scaling that every array's own std confirms (each within 4 standard errors of
    a sample std, 1 / sqrt(2 n) relative, of the scaling's std for its first dimension: the
    arrays have different first dimensions, so one factor cannot fit them all); else ""."""
    drawn = [np.asarray(a, np.float64) for a in arrays]
    if len(drawn) < 2 or any(a.ndim == 0 or a.size < 2 for a in drawn):
        return ""
    if len({a.shape[0] for a in drawn}) < 2:
        return ""
    for name, numerator in _FAN_IN_SCALINGS:
        if all(
            abs(float(a.std()) / np.sqrt(numerator / a.shape[0]) - 1.0)
            < 4.0 / np.sqrt(2.0 * a.size)
            for a in drawn
        ):
            return (
                f"each array's std is {name}: the values are scaled by the fan-in, where "
                "init_weights draws plain standard normal values, N(0, 1)"
            )
    return ""


# One array of 200,000 draws: the sampling error of each statistic of _shared.normal_moments is
# small enough that a bounded or reshaped distribution sits tens of standard errors off.
_MOMENT_SHAPE = (500, 400)


@check(
    "init_weights draws from N(0, 1) itself: its spread, tails and kurtosis",
    points=1,
    hint="Is every draw a standard normal, or is the distribution cut off or reshaped somewhere?",
    requires=("test_init_weights_shapes_and_stats",),
    nudge="jax.random has a sampler for the standard normal itself, unbounded; other samplers "
    "with a mean of 0 and a spread near 1 have other tails.",
    spec="`init_weights(key, shapes)` -> a list of `normal` arrays, one per shape ... "
    "Random-valued outputs (inits, splits, noise, dropout masks, training runs) are judged "
    "statistically",
)
def test_init_weights_normal(student: Remote) -> None:
    got = student.init_weights(jax.random.key(12), [_MOMENT_SHAPE])
    call = f"init_weights(key, [{_MOMENT_SHAPE}])"
    if not isinstance(got, list | tuple) or len(got) != 1:
        raise fail(call, expected="a list of 1 array", observed=repr(got)[:120])
    values.assert_shape(got[0], _MOMENT_SHAPE, what=f"{call}[0]")
    flat = np.asarray(got[0], np.float64).ravel()
    assert_normal(
        flat,
        f"the distribution of the {flat.size:,} values of {call}",
        fix="draw each array with `jax.random.normal(subkey, shape)`",
    )


@check(
    "init_weights draws every array with its own key",
    points=2,
    hint="How many keys do you need for len(shapes) arrays, and what happens when two draws share one?",
    requires=("test_init_weights_shapes_and_stats",),
    nudge="Split the key into as many subkeys as there are shapes and give each draw its own: two draws from one key repeat each other.",
    spec="each drawn with its own key ... no key is consumed twice (JAX's key-reuse checker with typed keys)",
)
def test_init_weights_own_keys(student: Remote) -> None:
    # Eagerly only: the checker reads the same key flow from the jaxpr under jit, and the
    # compiled version is judged (and paid for) once, in test_jit.
    keys.assert_no_key_reuse(
        student.init_weights,
        (jax.random.key(5), _SHAPES),
        static_argnames=("shapes",),
        what="init_weights(key, shapes)",
        jit=False,
    )
    a, b = student.init_weights(jax.random.key(6), [(64, 32), (64, 32)])
    corr = float(np.corrcoef(np.asarray(a).ravel(), np.asarray(b).ravel())[0, 1])
    if abs(corr) > 0.2:
        same = np.array_equal(np.asarray(a), np.asarray(b))
        raise fail(
            "two arrays of the same shape from init_weights(key, [(64, 32), (64, 32)])",
            expected="independent draws (correlation near 0)",
            observed=f"correlation {corr:.3f}" + (" (the very same numbers)" if same else ""),
            cause="the two arrays are the very same numbers: they come from one key (or are "
            "one draw)"
            if same
            else "",
            fix="`keys = jax.random.split(key, len(shapes))` and one key per array",
        )


# -- noisy ---------------------------------------------------------------------------


def _without_x_cause(student: Remote, got: Any) -> str:
    """The result itself has mean 0 and std sigma, for x = 2.0 and for x = -1.5 everywhere:
    the noise alone came back, x never added; else ""."""
    other = np.asarray(student.noisy(jax.random.key(8), jnp.full(_X_SHAPE, -1.5), 3.0))
    for values_ in (np.asarray(got, np.float64), other.astype(np.float64)):
        if (
            values_.shape != _X_SHAPE
            or abs(values_.mean()) > 0.11
            or abs(values_.std() - 3.0) > 0.15
        ):
            return ""
    return (
        "the result is the noise alone: its mean is 0 where x is 2.0 everywhere, and again "
        "where x is -1.5, so x is never added to it"
    )


# sigmas other than 1 (where any scaling of N(0, 1) gives std 1) at which noise that sigma never
# scales still has std 1; the check's own call is the first
_SIGMAS = (3.0, 0.5)
# a mean and a std of 20,000 standard-normal draws: within this of 0 and of 1 (their
# standard errors are 0.007 and 0.005)
_UNIT_TOL = 0.05


def _sigma_ignored_cause(student: Remote, noise: Any) -> str:
    """The noise has mean 0 and std 1 at sigma = 3 (the check's call, `noise`) and again at
    sigma = 0.5: N(0, 1) that sigma never scales; else ""."""
    x = jnp.full(_X_SHAPE, 2.0)
    seen = [noise]
    for sigma in _SIGMAS[1:]:
        try:
            got = np.asarray(student.noisy(jax.random.key(8), x, sigma), np.float64)
        except (client.StudentError, TypeError, ValueError):
            return ""
        if got.shape != _X_SHAPE:
            return ""
        seen.append(got - 2.0)
    for unit in seen:
        if abs(float(unit.mean())) > _UNIT_TOL or abs(float(unit.std()) - 1.0) > _UNIT_TOL:
            return ""
    stds = " and ".join(
        f"{float(unit.std()):.3f} at sigma={sigma:g}"
        for unit, sigma in zip(seen, _SIGMAS, strict=True)
    )
    return (
        f"the noise has std 1 whatever sigma is ({stds}, mean 0 at both): sigma never "
        "scales it (the noise is sigma * N(0, 1))"
    )


@check(
    "noisy adds N(0, sigma^2) noise: mean 0, std sigma",
    points=2,
    hint="Is sigma the standard deviation or the variance of the noise? Which distribution does jax.random.normal draw from?",
    nudge="sigma is a standard deviation: it multiplies standard-normal noise drawn with the shape of x, once per element.",
    spec="`noisy(key, x, sigma)` -> `x + sigma * N(0, 1)` noise ... Random-valued outputs (inits, splits, noise, dropout masks, training runs) are judged statistically and by key use, never by equality with the reference's values",
)
def test_noisy_statistics(student: Remote) -> None:
    x = jnp.full(_X_SHAPE, 2.0)
    got = student.noisy(jax.random.key(8), x, 3.0)
    values.assert_shape(got, _X_SHAPE, what="noisy(key, x, 3.0) for x of shape (100, 200)")
    noise = np.asarray(got, np.float64) - 2.0
    mean, std = float(noise.mean()), float(noise.std())
    if abs(mean) > 0.11 or abs(std - 3.0) > 0.15:
        if np.all(noise == noise.flat[0]):
            cause = "one random number was added to every element (a scalar draw)"
        else:
            cause = (
                _without_x_cause(student, got)
                or _sigma_ignored_cause(student, noise)
                or _variance_cause(student, x, noise)
                or _reuse_cause(student)
            )
        raise fail(
            "the noise noisy(key, x, 3.0) - x over 20,000 elements",
            expected="mean 0 +- 0.11 and std 3 +- 0.15",
            observed=f"mean {mean:.3f}, std {std:.3f}",
            cause=cause,
            fix="`x + sigma * jax.random.normal(key, x.shape)`",
        )


@check(
    "noisy draws independent noise per element, not depending on x's values",
    points=1,
    hidden=True,
    hint="Should the noise for one element depend on the value of x there, or only on the key and the shape?",
    requires=("test_noisy_statistics",),
    nudge="The noise is added to x and comes from the key and x's shape alone, one independent draw per element.",
    spec="`noisy(key, x, sigma)` -> `x + sigma * N(0, 1)` noise; the noise depends only on `key` and the shape of `x` ... deterministic for a given key",
)
def test_noisy_elementwise(student: Remote) -> None:
    x0 = jnp.zeros(_X_SHAPE)
    x1 = jnp.linspace(-5.0, 5.0, 20_000).reshape(_X_SHAPE)
    n0 = np.asarray(student.noisy(jax.random.key(9), x0, 0.5)) - np.asarray(x0)
    again = np.asarray(student.noisy(jax.random.key(9), x0, 0.5)) - np.asarray(x0)
    n1 = np.asarray(student.noisy(jax.random.key(9), x1, 0.5)) - np.asarray(x1)
    if float(n0.std()) < 0.05:
        raise fail(
            "the noise noisy(key, zeros((100, 200)), 0.5) - x",
            expected="std 0.5 across elements",
            observed=f"std {float(n0.std()):.3f}",
            cause=_flat_noise_cause(n0),
            fix="draw noise with the shape of x: `jax.random.normal(key, x.shape)`",
        )
    if not np.array_equal(n0, again):
        cause = (
            "the same key and x gave different noise on two calls: the noise comes from state "
            "outside the arguments (a global RNG, say), not from the key alone"
        )
    else:
        cause = (
            "the noise depends on x's values: with the same key, x = zeros and x = a ramp get "
            "different noise, where it is drawn from the key and x's shape alone"
        )
    differ = np.abs(n1 - n0) > 1e-4
    if differ.any():
        raise fail(
            "noisy(key, x, 0.5) - x for two different x (zeros and a ramp) with the same key",
            expected="the same noise: it depends only on the key and the shape of x",
            observed=f"the noise differs in {int(differ.sum())} of {differ.size} elements "
            f"(largest difference {float(np.abs(n1 - n0).max()):.3g})",
            cause=cause,
            fix="`x + sigma * jax.random.normal(key, x.shape)`",
        )


def _flat_noise_cause(noise: Any) -> str:
    """What noise without spread shows: none at all, or one number added to every element."""
    if not np.all(noise == noise.flat[0]):
        return ""
    if noise.flat[0] == 0:
        return "no noise was added to x = zeros: every element came back unchanged"
    return "the same number was added to every element"


@check(
    "noisy consumes its key once",
    points=1,
    hint="If the key is used for two draws, how are those two draws related?",
    requires=("test_noisy_statistics",),
    nudge="One draw of the whole noise array consumes the key once; a second draw from the same key needs a split first.",
    spec="no key is consumed twice (JAX's key-reuse checker with typed keys)",
)
def test_noisy_key_once(student: Remote) -> None:
    keys.assert_no_key_reuse(
        student.noisy,
        (jax.random.key(10), jnp.zeros(_X_SHAPE), 1.0),
        what="noisy(key, x, sigma)",
        jit=False,
    )


# -- keys, determinism, global state ---------------------------------------------------------


@check(
    "the same key gives the same result (all three functions)",
    points=1,
    hint="Does anything besides the key feed randomness into your functions?",
    nudge="All randomness must come from the key argument, so the same key always replays the same numbers.",
    spec="Checks: deterministic for a given key",
)
def test_deterministic(student: Remote, credit: Credit, gate: Gate) -> None:
    score_cases(
        credit,
        _gated(
            gate,
            [
                (
                    name,
                    lambda fn=fn, name=name: keys.assert_deterministic(
                        fn, lambda k: (k,), what=name
                    ),
                )
                for name, fn in _three(student)
            ],
        ),
    )


@check(
    "different keys give different results (all three functions)",
    points=1,
    hint="Is the key argument actually used, or is a fixed key (or np.random) inside the function?",
    nudge="Draw from the key you were given, not from a key made inside the function.",
    spec="different keys give different results",
)
def test_varies_with_key(student: Remote, credit: Credit, gate: Gate) -> None:
    score_cases(
        credit,
        _gated(
            gate,
            [
                (
                    name,
                    lambda fn=fn, name=name: keys.assert_varies_with_key(
                        fn, lambda k: (k,), what=name
                    ),
                )
                for name, fn in _three(student)
            ],
        ),
    )


def _pure(student: Remote, name: str, args: Any, static_argnames: Any = ()) -> None:
    """Pure (no global RNG drawn from, no module state, no trace-time effects), and the same key
    gives the same result after NumPy's global RNG moved (also a draw made at trace time)."""
    fn = getattr(student, name)
    what = f"{name}(key, ...)"
    purity.assert_pure(fn, args, what=what, module=student)
    purity.assert_no_trace_side_effects(
        fn, args, static_argnames=static_argnames, what=what, module=student
    )
    keys.assert_ignores_global_rng(fn, args, static_argnames=static_argnames, what=what)


@check(
    "pure: no global NumPy or Python RNG, no module state, the key alone decides",
    points=1,
    hint="np.random and Python's random keep hidden global state: where should every random number come "
    "from, and what does a NumPy draw become when jit traces your function?",
    nudge="np.random and Python's random keep hidden global state (and run only once under jit); JAX's explicit keys are the only source to use.",
    spec="no global RNG (NumPy/`random`) touched ... purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
)
def test_no_global_rng(student: Remote, credit: Credit, gate: Gate) -> None:
    x = np.zeros(_X_SHAPE, np.float32)
    score_cases(
        credit,
        _gated(
            gate,
            [
                (
                    "split_into",
                    lambda: _pure(student, "split_into", (jax.random.key(1), 4), ("n",)),
                ),
                (
                    "init_weights",
                    lambda: _pure(
                        student, "init_weights", (jax.random.key(1), _JIT_SHAPES), ("shapes",)
                    ),
                ),
                ("noisy", lambda: _pure(student, "noisy", (jax.random.key(1), x, 0.5))),
            ],
        ),
    )


@check(
    "raw jax.random.PRNGKey keys work too",
    points=1,
    hint="Do you only call jax.random functions on the key, or do you inspect it (dtype, shape, key_data)?",
    nudge="jax.random's functions accept both key kinds; code that only passes the key to them works with either, code that inspects it may not.",
    spec="a correct solution works with both `jax.random.key(s)` (typed) and `jax.random.PRNGKey(s)` (raw) keys",
)
def test_raw_keys(student: Remote, credit: Credit, gate: Gate) -> None:
    score_cases(
        credit,
        _gated(
            gate,
            [
                (
                    "split_into",
                    lambda: keys.assert_accepts_raw_keys(
                        _split_into(student), lambda k: (k,), what="split_into(key, 4)"
                    ),
                ),
                (
                    "init_weights",
                    lambda: keys.assert_accepts_raw_keys(
                        _init_weights(student), lambda k: (k,), what="init_weights(key, shapes)"
                    ),
                ),
                (
                    "noisy",
                    lambda: keys.assert_accepts_raw_keys(
                        _noisy(student), lambda k: (k,), what="noisy(key, x, sigma)"
                    ),
                ),
            ],
        ),
    )


@check(
    "all three compile under jax.jit (n and shapes static)",
    points=1,
    hint="Under jit, is every random draw a jax.random call on the traced key? What does a NumPy draw become at trace time?",
    nudge="Under jit the key is a tracer: every draw must be a jax.random call on it, and n and the shapes stay Python values.",
    spec="Every function that is meant to be jittable is checked both eagerly and under `jax.jit` (arguments documented as Python values, such as `train`, `rate`, `n_iters` or `sizes`, are static)",
)
def test_jit(student: Remote, credit: Credit, gate: Gate) -> None:
    x = jnp.linspace(0.0, 1.0, 20_000).reshape(_X_SHAPE)
    score_cases(
        credit,
        _gated(
            gate,
            [
                (
                    "split_into",
                    lambda: jit.assert_jittable(
                        student.split_into,
                        (jax.random.key(2), 4),
                        static_argnames=("n",),
                        what="split_into(key, n)",
                    ),
                ),
                (
                    "init_weights",
                    lambda: jit.assert_jittable(
                        student.init_weights,
                        (jax.random.key(2), _JIT_SHAPES),
                        static_argnames=("shapes",),
                        what="init_weights(key, shapes)",
                        **JIT_TOL,
                    ),
                ),
                (
                    "noisy",
                    lambda: jit.assert_jittable(
                        student.noisy,
                        (jax.random.key(2), x, 0.5),
                        what="noisy(key, x, sigma)",
                        **JIT_TOL,
                    ),
                ),
            ],
        ),
    )
