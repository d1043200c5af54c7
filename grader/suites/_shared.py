"""Small helpers the lesson suites share (not a suite: the catalog reads only `test_*.py`)."""

import dataclasses
import functools
import hashlib
import itertools
import math
import sys
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any, TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from grader.authoring import Credit
from grader.checks.failure import CheckFailure
from grader.sandbox import client


class Tolerance(TypedDict):
    """Keyword arguments of a comparison: `values.assert_close(a, b, **TIGHT)`."""

    rtol: float
    atol: float


# -- named tolerances ------------------------------------------------------------------------
# A suite compares with one of these (`values.assert_close(..., **FLOAT32)`), or with a named
# constant of its own that says why it differs; never with a bare number.

#: Bit for bit: the same key, the same program, a restored checkpoint, an eval-mode pass.
EXACT: Tolerance = {"rtol": 0.0, "atol": 0.0}
#: The same operations, compiled or eager: float32 rounding of a few ulps.
TIGHT: Tolerance = {"rtol": 1e-5, "atol": 1e-6}
#: The same maths written another way (a matmul against a loop, `jnp.mean` against a sum
#: over n): float32 sums in another order, relative to values of order one.
FLOAT32: Tolerance = {"rtol": 1e-4, "atol": 1e-5}


# -- inputs the suites build (in NumPy: building them compiles nothing) ----------------------


def mlp_params(
    sizes: Sequence[int],
    rng: int | np.random.Generator = 0,
    *,
    w_std: float | str = 1.0,
    b_std: float = 1.0,
    exact: bool = False,
) -> dict[str, dict[str, jax.Array]]:
    """The lesson's MLP params, `{"layer1": {"w": (n_in, n_out), "b": (n_out,)}, ...}`, as
    float32 JAX arrays drawn from NumPy's `rng` (a seed or a Generator; per layer, `w` then
    `b`): normal with standard deviation `w_std` (a number, or "he" for sqrt(2 / n_in), the
    lesson's init, or "lecun" for 1 / sqrt(n_in)) and `b_std`. With `exact`, every value is a
    quarter in [-1, 1]: sums and products of a few of them are exact in float32, so a check
    can ask for equality whatever order the student adds in."""
    gen = np.random.default_rng(rng) if isinstance(rng, int) else rng

    def draw(shape: tuple[int, ...], std: float | str) -> np.ndarray:
        if exact:
            drawn: np.ndarray = gen.integers(-4, 5, size=shape).astype(np.float32) / 4
            return drawn
        assert not isinstance(std, str)  # w_scale resolves "he" and "lecun"
        return std * gen.normal(size=shape)

    def w_scale(n_in: int) -> float | str:
        if w_std == "he":
            return float(np.sqrt(2.0 / n_in))
        if w_std == "lecun":
            return float(1.0 / np.sqrt(n_in))
        return w_std

    return {
        f"layer{i}": {
            "w": jnp.asarray(draw((n_in, n_out), w_scale(n_in)), jnp.float32),
            "b": jnp.asarray(draw((n_out,), b_std), jnp.float32),
        }
        for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes), start=1)
    }


def labelled_batch(n: int, dim: int, classes: int, seed: int = 1) -> tuple[jax.Array, jax.Array]:
    """`(x, y)`: `n` standard-normal float32 inputs of width `dim` and int32 labels in
    `[0, classes)`, as JAX arrays."""
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.normal(size=(n, dim)), jnp.float32)
    y = jnp.asarray(rng.integers(0, classes, size=n), jnp.int32)
    return x, y


# -- running the student's code ---------------------------------------------------------------


def compiled(fn: Any, static_argnames: Sequence[str] = ()) -> Callable[..., Any]:
    """`fn` under `jax.jit` while it compiles, eager from the first failure on.

    For property-based value checks that call a student's function on many
    generated inputs: the jitted call is compiled once per shape instead of
    dispatching every operation eagerly, which keeps a suite at a few seconds.
    A function that does not compile is still judged on its values (eagerly);
    whether it compiles is a separate check.
    """
    jitted: Callable[..., Any]
    if isinstance(fn, client.Remote):  # the student's function: jitted in its sandbox
        jitted = client.jit(fn, static_argnames=tuple(static_argnames))
    else:
        jitted = jax.jit(fn, static_argnames=tuple(static_argnames))
    compiles = [True]

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if compiles[0]:
            try:
                return jitted(*args, **kwargs)
            except (NotImplementedError, CheckFailure, MemoryError):
                raise
            except Exception:  # the eager call below shows the student's error
                compiles[0] = False
        return fn(*args, **kwargs)

    return call


_ONCE: dict[tuple[object, ...], tuple[bool, object, bool, client.Reached]] = {}


def once(student: Any, tag: Hashable, compute: Callable[[], Any]) -> Any:
    """`compute()` run once per student module and `tag` (any hashable), its result shared by
    every check that asks for it: a training run, a reference, a compiled program. An
    exception is kept too and raised again to each check that asks, so a run that fails is
    paid for once and reported by every check that stands on it. A check that reads a run
    the student's code answered counts that answer as its own (`Channel.replay`): what the
    suite raises on it is the student's, never a grader error that would count no points;
    and what of the module the run reached as reached by it too (`Channel.note`)."""
    key = (id(student), tag)
    channel = client.channel_of(student)
    if key not in _ONCE:
        before = channel.answers
        with channel.reaching() as reached:
            try:
                _ONCE[key] = (True, compute(), channel.answers > before, reached)
            except BaseException as exc:  # kept, and raised again below, to every check
                _ONCE[key] = (False, exc, channel.answers > before, reached)
    else:
        if _ONCE[key][2]:
            channel.replay()
        reached = _ONCE[key][3]
        channel.note(reached.names, reached.whole)
    ok, value, _, _ = _ONCE[key]
    if not ok:
        assert isinstance(value, BaseException)
        raise value
    return value


WARMED = "grader-warmed"
"""The folder, inside the judge's compilation cache, of the marks `for_the_cache` leaves:
one empty file per warm-up that has filled this cache (not an entry JAX reads)."""


def for_the_cache(fn: Callable[[], object]) -> Callable[[], None]:
    """`fn` (no arguments) run at most once per judge, and only when the judge has a
    compilation cache that `fn` has not filled before: for a judge that runs the lesson's
    canonical programs so that the sandbox loads them instead of compiling them. Without a
    cache that would add the judge's compiles and spare the sandbox none; once the cache
    holds them (a mark in the cache's `WARMED` folder, `warmed_mark`), every later judge on that cache (`grade watch`'s regradings, a
    class) would compile them again for nothing. No verdict may read what `fn` computes."""

    @functools.cache
    def run() -> None:
        from grader.sandbox import jax_cache

        folder = jax_cache.configured_dir()
        if not folder:
            return
        mark = warmed_mark(folder, fn)
        if mark.exists():
            return
        fn()
        try:
            mark.parent.mkdir(mode=0o700, exist_ok=True)
            mark.touch()
        except OSError:
            pass  # a cache that cannot take the mark is warmed again next time

    return functools.wraps(fn)(run)


def warmed_mark(folder: str, fn: Callable[[], object]) -> Path:
    """Where `for_the_cache` marks that `fn` has filled the cache in `folder`: named by the
    warm-up, a digest of its suite's source (an edited suite warms again), and JAX's
    version."""
    module = sys.modules.get(fn.__module__)
    source = getattr(module, "__file__", None) or ""
    try:
        digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()[:16]
    except OSError:
        digest = "unread"
    name = f"{fn.__module__}.{fn.__qualname__}-{digest}-jax{jax.__version__}"
    return Path(folder) / WARMED / name


def rebuilt(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` called with freshly rebuilt containers (dicts, lists, tuples) around the same
    leaves, so a function that updates its argument in place cannot change what a later
    call of the same check sees."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = jax.tree.map(lambda leaf: leaf, (args, kwargs))
        return fn(*args, **kwargs)

    return call


def no_trace_effects(fn: Any, args: Sequence[Any], *, what: str, module: Any) -> None:
    """No trace-time side effects under jax.jit; a function that does not compile is left
    to the checks that jit it (one cause, one failed check)."""
    from grader.checks import purity

    try:
        purity.assert_no_trace_side_effects(fn, args, what=what, module=module)
    except CheckFailure as failure:
        if failure.finding.expected != "the function runs under jit":
            raise


def with_cause(failure: CheckFailure, *, cause: str, fix: str) -> CheckFailure:
    """The same finding as `failure`, with the cause and fix a suite knows better."""
    f = failure.finding
    return CheckFailure(f.checked, expected=f.expected, observed=f.observed, cause=cause, fix=fix)


def score_cases(credit: Credit, cases: Sequence[tuple[str, Callable[[], object]]]) -> None:
    """Run each `(label, thunk)`: full marks if all pass, a share of the points if some
    do, and the first exception if none does (so an untouched stub still reads as not
    attempted); a real failure is raised before a closed gate (`gate.require`), so the
    message shows what is wrong rather than "fix the values first". The points are shared
    equally among the cases, which the message says; where every case that failed raised
    the same exception of the student's at the same line, the credit carries it (the
    reports show that cause once, with every check it cost)."""
    from grader.plugin import GateClosed

    errors: list[tuple[str, Exception]] = []
    for label, run in cases:
        try:
            run()
        except Exception as exc:  # reported below, one line per case
            errors.append((label, exc))
    if not errors:
        return
    if len(errors) == len(cases):
        raise next((exc for _, exc in errors if not isinstance(exc, GateClosed)), errors[0][1])
    passed = len(cases) - len(errors)
    lines = [_shares(passed, [label for label, _ in cases], [label for label, _ in errors])]
    fixes = []
    for label, error in errors:
        if isinstance(error, CheckFailure):
            text = (
                error.finding.message()
            )  # the fix goes with the fixes, shown as the policy allows
            if error.finding.fix:
                fixes.append(f"{label}: {error.finding.fix}")
        elif isinstance(error, NotImplementedError):
            text = "not implemented yet (still raises NotImplementedError)"
        else:
            kind = (
                error.info.type if isinstance(error, client.StudentError) else type(error).__name__
            )
            text = f"raised {kind}: {error}"
        lines.append(f"{label}: {text}")
    root_cause, location = _one_cause([error for _, error in errors])
    credit.award(
        passed / len(cases),
        "\n".join(lines),
        fix="; ".join(fixes),
        root_cause=root_cause,
        location=location,
    )


def _shares(passed: int, labels: Sequence[str], failed: Sequence[str]) -> str:
    """`2 of 3 passed (piecewise failed); each of the 3 parts is 1/3 of the points.`: where
    a fractional score comes from."""
    return (
        f"{passed} of {len(labels)} passed ({', '.join(failed)} failed); each of the "
        f"{len(labels)} parts is 1/{len(labels)} of the points."
    )


def _one_cause(errors: Sequence[Exception]) -> tuple[str | None, Any]:
    """The root-cause key and line of the student's exception every one of `errors` stands
    on, or (None, None) when they do not all share one."""
    from grader.plugin import wording

    keys, where = set(), None
    for error in errors:
        if isinstance(error, client.StudentError):
            key = wording.root_cause(error)
        elif isinstance(error, CheckFailure):
            key = wording.student_root_cause(error)
        else:
            key = None
        keys.add(key)
        where = where or wording.error_location(error)
    if len(keys) != 1 or None in keys:
        return None, None
    return keys.pop(), where


# -- He init's scale (08's init_params, ex3's init_mlp) ----------------------------------------

INIT_SCALES: tuple[tuple[Callable[[int, int], float], str], ...] = (
    (
        lambda fan_in, fan_out: math.sqrt(1.0 / fan_in),
        "every layer's standard deviation is sqrt(1 / fan_in) (LeCun/Xavier-style): He init "
        "for ReLU uses sqrt(2 / fan_in)",
    ),
    (
        lambda fan_in, fan_out: math.sqrt(2.0 / (fan_in + fan_out)),
        "every layer's standard deviation is the Glorot/Xavier scale sqrt(2 / (fan_in + "
        "fan_out)); He init uses sqrt(2 / fan_in)",
    ),
    (
        lambda fan_in, fan_out: 1.0,
        "every layer's standard deviation is 1: unscaled standard normal weights, the "
        "sqrt(2 / fan_in) factor is missing",
    ),
    (
        lambda fan_in, fan_out: math.sqrt(2.0 / fan_out),
        "every layer's standard deviation is sqrt(2 / fan_out): scaled by the fan-OUT (the "
        "layer's output size) instead of the fan-in",
    ),
    (
        lambda fan_in, fan_out: math.sqrt(2.0) / fan_in,
        "every layer's standard deviation is sqrt(2) / fan_in: the square root covers the 2 "
        "alone, where He's scale is the square root of the whole ratio, sqrt(2 / fan_in)",
    ),
    (
        lambda fan_in, fan_out: 2.0 / fan_in,
        "every layer's standard deviation is 2 / fan_in: the square root is missing (He's "
        "scale is sqrt(2 / fan_in))",
    ),
)
"""Other scales than He's that weights are commonly drawn at, each as a function of a
layer's (fan_in, fan_out), with what it is."""


def init_scale_cause(
    sizes: Sequence[int], stds: Sequence[float], tolerances: Sequence[float]
) -> str:
    """The scale of INIT_SCALES that every layer's std (layers of `sizes`, in order) fits
    within its tolerance, else "": one layer's std alone confirms nothing (a std half He's is
    nearer Glorot's on 08's layer1), and a scale that fits as well as another names nothing."""
    layers = list(itertools.pairwise(sizes))

    def fits(scale: Callable[[int, int], float]) -> bool:
        return all(
            abs(std / scale(fan_in, fan_out) - 1.0) <= tol
            for std, (fan_in, fan_out), tol in zip(stds, layers, tolerances, strict=True)
        )

    if sum(fits(scale) for scale, _ in INIT_SCALES) != 1:
        return ""
    for scale, text in INIT_SCALES:
        if fits(scale):
            return text
    return ""


# -- draws meant to be standard normal (06's init_weights, 08's and ex3's He init) -----------
# Moments of many draws, each compared with its value for a reference distribution within
# SIGMAS standard errors: enough draws (tens of thousands) put a bounded or reshaped
# distribution of the right spread (a uniform has no draw beyond 1.74 and kurtosis 1.8; a
# normal truncated to [-2, 2] has std 0.88 and no draw beyond 2) tens of standard errors off,
# while draws of the reference stay within SIGMAS of it.
SIGMAS = 6.0
TAIL = 2.0
# P(|z| > 2) for z ~ N(0, 1): erfc(2 / sqrt(2))
TAIL_SHARE = 0.04550026389635842


@dataclasses.dataclass(frozen=True)
class Reference:
    """A distribution of mean 0 and std 1 that draws are compared with: its name in the
    messages, its share beyond +-TAIL and its kurtosis E[z^4] / E[z^2]^2."""

    name: str
    tail_share: float
    kurtosis: float


STANDARD_NORMAL = Reference("N(0, 1)", TAIL_SHARE, 3.0)


def _rescaled_truncated_normal(cut: float) -> Reference:
    """N(0, 1) cut to [-cut, cut] and rescaled to std 1: jax.nn.initializers' truncated
    normal (`variance_scaling(..., "truncated_normal")`, cut = 2, which `he_normal` draws),
    its moments in closed form (the mass inside, the density at the cut)."""
    mass = math.erf(cut / math.sqrt(2.0))
    density = math.exp(-cut * cut / 2.0) / math.sqrt(2.0 * math.pi)
    var = 1.0 - 2.0 * cut * density / mass  # 0.7737 for cut 2: std 0.8796, jax's constant
    fourth = 3.0 - 2.0 * density * (cut**3 + 3.0 * cut) / mass
    beyond = TAIL * math.sqrt(var)  # +-TAIL after rescaling, before it
    share = (math.erfc(beyond / math.sqrt(2.0)) - math.erfc(cut / math.sqrt(2.0))) / mass
    return Reference(
        f"a truncated normal (N(0, 1) cut at +-{cut:g}, rescaled to std 1)",
        share,
        fourth / var**2,
    )


#: He init drawn as the spec writes it (`normal * sqrt(2 / fan_in)`), or by JAX's own He
#: normal initializer (a truncated normal with the He variance: share beyond +-2 0.0346,
#: kurtosis 2.37); a He-uniform init of the same std (no draw beyond +-1.74) fits neither.
HE_NORMALS = (STANDARD_NORMAL, _rescaled_truncated_normal(2.0))


def normal_moments(
    flat: Any, reference: Reference = STANDARD_NORMAL
) -> dict[str, tuple[float, float, float]]:
    """Each statistic of `flat` as (observed, the reference's value, SIGMAS standard errors of
    it for len(flat) independent draws): mean (1/sqrt(n)), std (1/sqrt(2n)), the share beyond
    +-TAIL (binomial) and the kurtosis (sqrt(24/n)). The std's and the kurtosis' errors are
    N(0, 1)'s: a truncated normal's are smaller (lighter tails), so its band is wider."""
    n = flat.size
    share = reference.tail_share
    centred = flat - flat.mean()
    var = float(np.mean(centred**2))
    return {
        "mean": (float(flat.mean()), 0.0, SIGMAS / np.sqrt(n)),
        "std": (float(np.sqrt(var)), 1.0, SIGMAS / np.sqrt(2.0 * n)),
        f"share beyond +-{TAIL:g}": (
            float(np.mean(np.abs(flat) > TAIL)),
            share,
            SIGMAS * np.sqrt(share * (1.0 - share) / n),
        ),
        "kurtosis": (  # undefined for draws that are all one value (no spread): nan
            float(np.mean(centred**4)) / var**2 if var > 0 else float("nan"),
            reference.kurtosis,
            SIGMAS * np.sqrt(24.0 / n),
        ),
    }


def _bounded_cause(flat: Any) -> str:
    """What 10,000 draws or more with none beyond +-TAIL show: N(0, 1) puts 4.55% there (the
    chance that 10,000 of its draws put none there is below 1e-200); else ""."""
    if flat.size < 10_000 or bool(np.any(np.abs(flat) > TAIL)) or np.ptp(flat) == 0:
        return ""  # (values all one number show no distribution at all: the range says so)
    return (
        f"none of the {flat.size:,} values lies beyond +-{TAIL:g} (they span "
        f"[{flat.min():.3f}, {flat.max():.3f}]), where a normal puts {TAIL_SHARE:.2%} of its "
        "draws: they come from a bounded distribution, not a normal one"
    )


def assert_normal(
    flat: Any,
    what: str,
    *,
    fix: str,
    references: Sequence[Reference] = (STANDARD_NORMAL,),
    name_bounded: bool = False,
) -> None:
    """Fail unless the draws `flat` (a 1-D float64 array) fit one of `references` by every
    statistic of normal_moments. The message states the first reference's values (then the
    others'), the statistics observed, the range and which statistics are off the first;
    with `name_bounded`, the likely cause when no draw lies beyond +-TAIL."""
    __tracebackhide__ = True
    tables = [normal_moments(flat, reference) for reference in references]
    if any(all(abs(seen - want) <= tol for seen, want, tol in t.values()) for t in tables):
        return
    stats = tables[0]
    off = {name: s for name, s in stats.items() if abs(s[0] - s[1]) > s[2]}
    raise CheckFailure(
        what,
        expected="; or ".join(
            f"{reference.name}: "
            + ", ".join(f"{name} {want:.4g} +- {tol:.2g}" for name, (_, want, tol) in t.items())
            for reference, t in zip(references, tables, strict=True)
        )
        + f" ({SIGMAS:g} standard errors)",
        observed=", ".join(f"{name} {seen:.4g}" for name, (seen, _, _) in stats.items())
        + f"; range [{flat.min():.3f}, {flat.max():.3f}]; off: {', '.join(off)}",
        cause=_bounded_cause(flat) if name_bounded else "",
        fix=fix,
    )
