"""Hidden checks for ex3_generic_mlp.py: init_mlp and mlp_forward for any depth.

Two pytree facts make this exercise a trap, and each has its own check with a
probe built so that the mistake gives wrong numbers instead of a crash:
`jax.tree.leaves` yields a layer's leaves as [b, w] (dict keys are sorted),
and the string 'layer10' sorts before 'layer2'. The probes use square layers
(every w is (d, d)) and a batch of d examples, so even swapped w and b, or
layers applied out of order, still have compatible shapes.
"""

import itertools
import math
import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from grader.authoring import Credit, check
from grader.checks import diagnose, jit, keys, purity, values
from grader.checks.failure import CheckFailure, fail
from grader.sandbox import client
from grader.sandbox.client import Remote, StudentError
from grader.suites._shared import (
    FLOAT32,
    HE_NORMALS,
    assert_normal,
    for_the_cache,
    init_scale_cause,
    mlp_params,
)

LESSON = "ex3_generic_mlp"
TITLE = "Exercise 3: an MLP of any depth"

LESSON_SIZES = (64, 256, 128, 10)
DEPTHS = tuple(range(1, 13))
SQUARE = 6  # width of the probes' square layers (and their batch size)
# a mistake is named when it reproduces the student's output on two inputs of different sizes:
# the check's own input (when the student's code ran on it) and square probes of these widths
PROBE_WIDTHS = (SQUARE, SQUARE + 1)
# The compiled checks of mlp_forward (jit, trace-time effects) share one program:
# widths from _sizes_for's set and the depth checks' batch, whose eager kernels are compiled
# already; the sandbox's compilation cache loads the program after its first compile.
JIT_SIZES = (5, 3, 5, 5, 3)
JIT_BATCH = 5
# init_mlp's checks that compile it (key reuse under jit, a global RNG at trace time) share
# these sizes: layers of one shape (so equal draws show), drawn by test_init_structure already.
KEY_SIZES = (4, 4, 4, 4)

Params = dict[str, dict[str, jax.Array]]


# -- fixtures built in the suite (NumPy generators, never the global RNG) -------
def _params(rng: np.random.Generator, sizes: tuple[int, ...]) -> Params:
    """Lesson-dict params with non-zero biases, so that every leaf matters."""
    return mlp_params(sizes, rng, w_std="lecun", b_std=0.5)


def _inputs(rng: np.random.Generator, batch: int, n_in: int) -> jax.Array:
    return jnp.asarray(rng.normal(0.0, 1.0, (batch, n_in)), jnp.float32)


def _sizes_for(rng: np.random.Generator, depth: int) -> tuple[int, ...]:
    """Widths from a small set: varied layers, few distinct shapes (each compiles once)."""
    return tuple(int(n) for n in rng.choice((3, 5), depth + 1))


# -- references (written in another style than solutions/) -------------------
def _numeric(name: str) -> int:
    return int(name.removeprefix("layer"))


def _ref_forward(params: Params, x: jax.Array) -> jax.Array:
    names = sorted(params, key=_numeric)
    for name in names[:-1]:
        x = jnp.maximum(jnp.dot(x, params[name]["w"]) + params[name]["b"], 0.0)
    return jnp.dot(x, params[names[-1]]["w"]) + params[names[-1]]["b"]


def _lesson_forward(params: Params, x: jax.Array) -> jax.Array:
    """The lesson's hand-written three-layer forward (08's `forward`)."""
    x = jnp.dot(x, params["layer1"]["w"]) + params["layer1"]["b"]
    x = jax.nn.relu(x)
    x = jnp.dot(x, params["layer2"]["w"]) + params["layer2"]["b"]
    x = jax.nn.relu(x)
    return jnp.dot(x, params["layer3"]["w"]) + params["layer3"]["b"]


# -- the known mistakes, as functions, to recognise them by their output -------
def _apply(
    pairs: list[tuple[jax.Array, jax.Array]], x: jax.Array, relu_last: bool = False
) -> jax.Array:
    for i, (w, b) in enumerate(pairs):
        x = x @ w + b
        if i < len(pairs) - 1 or relu_last:
            x = jax.nn.relu(x)
    return x


def _string_order(params: Params) -> list[str]:
    return sorted(params)


def _numeric_order(params: Params) -> list[str]:
    return sorted(params, key=_numeric)


def _no_relu(params: Params, x: jax.Array) -> jax.Array:
    for name in _numeric_order(params):
        x = x @ params[name]["w"] + params[name]["b"]
    return x


def _relu_before(params: Params, x: jax.Array) -> jax.Array:
    """ReLU on each layer's input, the raw x included, and none on the logits."""
    for name in _numeric_order(params):
        x = jax.nn.relu(x) @ params[name]["w"] + params[name]["b"]
    return x


TRAPS: dict[str, Callable[[Params, jax.Array], jax.Array]] = {
    "swapped": lambda p, x: _apply([(p[k]["b"], p[k]["w"]) for k in _numeric_order(p)], x),
    "leaves": lambda p, x: _apply([(p[k]["b"], p[k]["w"]) for k in _string_order(p)], x),
    "string_order": lambda p, x: _apply([(p[k]["w"], p[k]["b"]) for k in _string_order(p)], x),
    "relu_last": lambda p, x: _apply([(p[k]["w"], p[k]["b"]) for k in _numeric_order(p)], x, True),
    "no_relu": lambda p, x: _no_relu(p, x),
    "relu_before": _relu_before,
    # the loop stops one layer early (`range(1, n_layers)`): every layer it applies has its ReLU
    "skip_last": lambda p, x: _apply(
        [(p[k]["w"], p[k]["b"]) for k in _numeric_order(p)][:-1], x, relu_last=True
    ),
    # the loop starts one layer late (`range(2, n_layers + 1)`)
    "skip_first": lambda p, x: _apply([(p[k]["w"], p[k]["b"]) for k in _numeric_order(p)][1:], x),
    # every layer applied to the original x (`h = x @ w + b`, x never reassigned): what is left
    # is the last layer of x alone
    "unchained": lambda p, x: _apply([(p[k]["w"], p[k]["b"]) for k in _numeric_order(p)][-1:], x),
    # a `return` inside the loop: the first layer and its ReLU, then nothing (one layer: right)
    "first_only": lambda p, x: _apply(
        [(p[k]["w"], p[k]["b"]) for k in _numeric_order(p)][:1], x, relu_last=len(p) > 1
    ),
}


PAIRING = (
    "jax.tree.leaves returns a dict's leaves in sorted key order, so each layer's leaves come "
    "out as [b, w], not [w, b]: pairing them by position, e.g. `w, b = leaves[2*i], "
    "leaves[2*i + 1]`, uses the bias as the weight matrix and the weight matrix as the bias"
)
ORDER = (
    "the layers were applied in string order, layer1, layer10, layer11, layer12, layer2, ...: "
    "that is how `sorted(params)` and `jax.tree.leaves` order the names, because the string "
    "'layer10' sorts before 'layer2'"
)
CAUSES = {
    "swapped": f"your mlp_forward used each layer's 'b' as its weight and 'w' as its bias. {PAIRING}",
    "leaves": (
        "your mlp_forward paired the flat list of jax.tree.leaves two by two. That goes wrong "
        f"twice: {PAIRING}; and, with ten or more layers, {ORDER}"
    ),
    "string_order": f"with ten or more layers, {ORDER}",
    "relu_last": "your mlp_forward also applies ReLU to the last layer: logits must stay linear "
    "(a ReLU there clips every negative logit to 0)",
    "no_relu": "your mlp_forward applies no ReLU between the layers, so the whole network "
    "collapses to one linear map",
    "relu_before": "your mlp_forward applies ReLU to each layer's input, the raw x included "
    "(`relu(x) @ w + b`): the input's negative values are cut to 0 before the first layer, "
    "where ReLU belongs after each layer but the last",
    "skip_last": "your mlp_forward never applies the last layer: the loop stops one layer early "
    "(e.g. `range(1, n_layers)`), so it returns the ReLU activations of the last hidden layer "
    "instead of the logits",
    "skip_first": "your mlp_forward never applies the first layer: the loop starts one layer "
    "late (e.g. `range(2, n_layers + 1)`)",
    "unchained": "your mlp_forward applies every layer to the original x: the output is the "
    "last layer applied to x alone, so the layers are not chained (each layer's output must "
    "be the next layer's input: reassign it, `x = x @ w + b`)",
    "first_only": "your mlp_forward returns after the first layer: the output is the first "
    "layer's ReLU activations, whatever the depth (a `return` inside the loop ends it on its "
    "first pass)",
    "past_last": "the depth is counted too high: your mlp_forward asks for the layer one past "
    "the last, whatever the depth (and on params of one and two more layers too), so the "
    "number of layers it finds from the params is more than the params hold",
    "layer0": "your mlp_forward asks for 'layer0', whatever the depth: the loop counts the "
    "layers from 0, but the names count from 'layer1'",
}
FIXES = {
    "swapped": "take a layer's arrays by name: `layer = params[f'layer{i}']`, then "
    "`x @ layer['w'] + layer['b']`; use jax.tree.leaves only to count the layers "
    "(`len(jax.tree.leaves(params)) // 2`)",
    "leaves": "count the layers with `n = len(jax.tree.leaves(params)) // 2`, then loop "
    "`for i in range(1, n + 1)` over `params[f'layer{i}']`, taking 'w' and 'b' by name",
    "string_order": "loop over the layer numbers, `for i in range(1, n + 1): params[f'layer{i}']`, "
    "or sort the names numerically: `sorted(params, key=lambda k: int(k[5:]))`",
    "relu_last": "apply jax.nn.relu after every layer except the last one",
    "no_relu": "apply jax.nn.relu after every layer except the last one",
    "relu_before": "apply each layer first, then its ReLU: `x = jax.nn.relu(x @ w + b)` for "
    "every layer but the last, which gives the logits as they are",
    "skip_last": "visit every layer, `for i in range(1, n + 1)`, and apply jax.nn.relu after all "
    "but the last",
    "skip_first": "visit every layer, `for i in range(1, n + 1)`: the names count from 'layer1'",
    "unchained": "feed each layer the previous layer's output: `h = x`, then `h = h @ w + b` "
    "(and the ReLU) for every layer in turn",
    "first_only": "return after the loop has visited every layer, not inside it",
    "past_last": "count the layers from the params' leaves (each layer has two, 'w' and 'b') "
    "and visit 'layer1' up to the last one",
    "layer0": "visit 'layer1' up to 'layerN': the layer numbers start at 1",
}


def _trap_diagnostics(params: Params, x: jax.Array) -> list[diagnose.Diagnostic]:
    """One `diagnose.matches` per trap, each computing its mistake on (params, x) only when
    tried (a trap that cannot run on these shapes confirms nothing). Below ten layers string
    order is numeric order, so the flat leaves paired two by two give what swapped 'w' and
    'b' give: the "leaves" trap is left out there (such an input cannot tell them apart)."""

    def make(name: str) -> diagnose.Diagnostic:
        def diagnostic(actual: Any, expected: Any) -> diagnose.Cause | None:
            try:
                mistake = TRAPS[name](params, x)
            except Exception:
                return None
            return diagnose.matches(mistake, CAUSES[name], name)(actual, expected)

        diagnostic.kinds = frozenset({name})  # type: ignore[attr-defined]
        return diagnostic

    return [make(name) for name in TRAPS if name != "leaves" or len(params) >= 10]


_KINDS = {text: kind for kind, text in CAUSES.items()}


def _probe(depth: int, width: int) -> tuple[Params, jax.Array]:
    """`depth` square layers of `width` and a batch of `width` rows: no trap can crash on it."""
    rng = np.random.default_rng(1000 + 100 * width + depth)
    return _params(rng, (width,) * (depth + 1)), _inputs(rng, width, width)


def _trap_inputs(
    fn: Callable[[Params, jax.Array], Any], own: diagnose.Input | None, depth: int
) -> list[diagnose.Input]:
    """The inputs a trap is confirmed on: the check's own input `own` ((params, x), output,
    expected; None when `fn` raised on it) and square probes of `depth` layers of
    PROBE_WIDTHS and one of `depth + 1` layers, two sizes and two depths at least."""
    inputs = [own] if own is not None else []
    # one depth cannot tell some mistakes apart: with one layer a loop that stops early and one
    # that starts late both apply no layer; with two, a loop that starts late and one that
    # applies every layer to the original x both return the last layer of x alone. A probe one
    # layer deeper tells them apart
    probes = [(depth, width) for width in PROBE_WIDTHS] + [(depth + 1, SQUARE)]
    for layers, width in probes:
        params, x = _probe(layers, width)
        try:
            out = fn(params, x)
        except NotImplementedError:
            raise
        except Exception:
            continue  # an input the code cannot run on confirms nothing
        inputs.append(((params, x), out, _ref_forward(params, x)))
    return inputs


def _confirmed(inputs: list[diagnose.Input]) -> str:
    """The cause `diagnose.confirmed` holds on every input where the student's output is
    wrong: a trap's text, else the factor's or the general tier's ("" for none)."""
    return diagnose.confirmed(inputs, lambda args: _trap_diagnostics(*args))


_LAYER_KEY = re.compile(r"^'layer(\d+)'$")


def _missing_key(error: Exception) -> int | None:
    """K when `error` is a KeyError for the name 'layerK', else None."""
    if not (isinstance(error, StudentError) and error.is_a("KeyError")):
        return None
    found = _LAYER_KEY.match(str(error).strip().strip('"'))
    return int(found.group(1)) if found else None


def _missing_layer(error: Exception, params: Params) -> str | None:
    """What a KeyError for a layer name the params do not have shows, as a fact, or None."""
    asked = _missing_key(error)
    if asked is None or f"layer{asked}" in params:
        return None
    n = len(params)
    held = "'layer1'" if n == 1 else f"'layer1' to 'layer{n}'"
    return (
        f"the params hold {n} layer{'s' if n > 1 else ''}, {held} ({2 * n} leaves, two per "
        f"layer), and mlp_forward asked for 'layer{asked}'"
    )


def _confirmed_miscount(
    fn: Callable[[Params, jax.Array], Any], error: Exception, params: Params, depth: int
) -> str | None:
    """ "past_last" or "layer0" when the KeyError on the check's own params is for the layer
    one past the last ('layer{n + 1}') or for 'layer0', and probes of depth + 1 and depth + 2
    raise the KeyError for their own one-past-the-last layer (or 'layer0') too: the loop's
    bound (or start) is off in the same way whatever the depth; None otherwise."""
    asked = _missing_key(error)
    kind = "past_last" if asked == len(params) + 1 else "layer0" if asked == 0 else None
    if kind is None:
        return None
    for layers in (depth + 1, depth + 2):
        probe, x = _probe(layers, SQUARE)
        try:
            fn(probe, x)
        except NotImplementedError:
            raise
        except Exception as exc:
            again = _missing_key(exc)
            if again != (layers + 1 if kind == "past_last" else 0):
                return None
        else:
            return None
    return kind


def _check_forward(
    student: Remote,
    params: Params,
    x: jax.Array,
    what: str,
    depth: int,
    reference: Callable[[Params, jax.Array], jax.Array] = _ref_forward,
) -> None:
    """mlp_forward(params, x) equals the reference; a failure names the trap when one shows."""
    expected = reference(params, x)
    try:
        out = student.mlp_forward(params, x)
        found = values.difference(out, expected, **FLOAT32)
        error = None
    except NotImplementedError:
        raise
    except Exception as exc:  # a shape error is what most traps give on real sizes
        found, error = None, exc
    if found is None and error is None:
        return
    # the trap that gives the student's output on these inputs (when they ran) and on square
    # probes of two widths, where no trap can crash
    own = ((params, x), out, expected) if error is None else None
    inputs = _trap_inputs(student.mlp_forward, own, depth)
    confirmed = _confirmed(inputs)
    trap = _KINDS.get(confirmed)
    # no trap: what any function can get wrong (a log_softmax at the end, a constant factor),
    # confirmed on the same inputs, named where the student's code ran on the check's own
    general = confirmed if trap is None and own else ""
    probed = error is not None
    kind = error.info.type if isinstance(error, StudentError) else type(error).__name__
    observed = (
        f"it raised {kind}: {str(error).strip().splitlines()[0][:300]}"
        if error is not None
        else found.observed
        if found is not None
        else ""
    )
    if trap is None and error is not None:
        missing = _missing_layer(error, params)
        if missing is not None:
            observed += f"\n    {missing}"
            trap = _confirmed_miscount(student.mlp_forward, error, params, depth)
    if trap is not None and probed and trap in TRAPS:
        observed += (
            f"\n    on probes of {depth} square layer{'s' if depth > 1 else ''} of widths "
            f"{' and '.join(map(str, PROBE_WIDTHS))} and of {depth + 1} square layers of width "
            f"{SQUARE} (where that mistake cannot crash) the output matched the mistake "
            "described below"
        )
    raise CheckFailure(
        f"mlp_forward(params, x) for {what}",
        expected=found.expected
        if found is not None
        else f"logits of shape {tuple(expected.shape)}",
        observed=observed,
        cause=CAUSES[trap] if trap else (general or (found.cause if found is not None else "")),
        fix=FIXES[trap] if trap else "",
    ) from error


# -- init_mlp ----------------------------------------------------------------

STRUCTURE_SIZES = ((4, 3), (6, 4, 4, 3), (6, *(4,) * 11, 3))
INIT_SIZES = (64, 256, 128, 64, 10)


@for_the_cache
def _init_programs_cached() -> None:
    """Draw in the judge, once, what an init_mlp written as the lesson shows draws for the
    sizes the init checks pass (a key split into one per layer, each layer's key taken from
    the split, `jax.random.normal` of each weight shape, scaled; raw keys too for
    KEY_SIZES, which the raw-key check passes). With a judge compilation cache these
    programs are in it, and a submission that draws the same way loads them instead of
    compiling them (~0.3 s each for the normals)."""
    drawn = []
    cases = [(jax.random.key(0), sizes) for sizes in (*STRUCTURE_SIZES, INIT_SIZES, KEY_SIZES)]
    cases.append((jax.random.PRNGKey(0), KEY_SIZES))
    for key, sizes in cases:
        split = jax.random.split(key, len(sizes) - 1)
        for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes)):
            drawn.append(jax.random.normal(split[i], (n_in, n_out)) * jnp.sqrt(2.0 / n_in))
    jax.block_until_ready(drawn)  # type: ignore[no-untyped-call]  # untyped in jax


@check(
    "init_mlp builds the lesson dict for any number of layers",
    points=2,
    hint="For sizes of length n + 1 there are n layers: what are the names, and what shape "
    "does layer i's 'w' get if it maps sizes[i-1] inputs to sizes[i] outputs?",
    spec="`init_mlp(key, sizes)` -> the lesson dict for any number of layers ... `{'layer1': {'w': (in, out), 'b': (out,)}, 'layer2': ..., 'layerN': ...}`, weights stored (in, out)",
    nudge="Consecutive pairs of sizes give the layers: layer i maps sizes[i-1] inputs to sizes[i] outputs, and the names count from 1.",
)
def test_init_structure(student: Remote) -> None:
    _init_programs_cached()
    for sizes in STRUCTURE_SIZES:
        params = student.init_mlp(jax.random.key(0), sizes)
        expected = {
            f"layer{i + 1}": {
                "b": jax.ShapeDtypeStruct((n_out,), jnp.float32),  # type: ignore[no-untyped-call]
                "w": jax.ShapeDtypeStruct((n_in, n_out), jnp.float32),  # type: ignore[no-untyped-call]
            }
            for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes))
        }
        what = f"init_mlp(key, {sizes})"
        if not isinstance(params, dict):
            raise fail(
                f"the type of {what}",
                expected="a dict {'layer1': {'w': ..., 'b': ...}, ...}",
                observed=type(params).__name__,
                cause=_layers_listed_cause(params, expected),
                fix="return the lesson's nested dict, one entry 'layer<i>' per layer",
            )
        values.assert_tree_structure(
            params,
            expected,
            what=what,
            fix="name the layers 'layer1' ... 'layerN' (1-based) and give each a 'w' and a 'b'",
        )
        for name, layer in expected.items():
            for leaf in ("w", "b"):
                values.assert_shape(
                    params[name][leaf],
                    layer[leaf].shape,
                    what=f"{what}['{name}']['{leaf}']",
                    fix="weights are stored (in, out) and used as x @ w + b; biases are (out,)",
                )


def _layers_listed_cause(params: Any, expected: dict[str, Any]) -> str:
    """A list or tuple holding each expected layer, in order ({'w', 'b'} of the expected
    shapes): the layers are right and only their keys are missing; else ""."""
    if not isinstance(params, list | tuple) or len(params) != len(expected):
        return ""
    for got, want in zip(params, expected.values(), strict=True):
        if not isinstance(got, dict) or set(got) != set(want):
            return ""
        if any(tuple(np.shape(got[leaf])) != want[leaf].shape for leaf in want):
            return ""
    n = len(expected)
    names = "'layer1'" if n == 1 else f"'layer1' to 'layer{n}'"
    return (
        f"a {type(params).__name__} of the layers was returned, each the right layer in "
        f"order, where they are keyed by name: a dict with the keys {names}"
    )


@check(
    "init_mlp gives every layer its own key",
    points=1,
    hint="If two layers have the same shape and are drawn with the same key, what do their "
    "weights look like? How many subkeys does jax.random.split give you?",
    nudge="Each layer's weights are a draw of their own: split the key into one subkey per layer.",
    spec="initialised as 08's `init_params` (He, zero biases, a key per layer, float32) ... Random-valued outputs (inits, splits, noise, dropout masks, training runs) are judged statistically and by key use",
    requires=("test_init_structure",),
)
def test_init_keys(student: Remote) -> None:
    sizes = KEY_SIZES
    params = student.init_mlp(jax.random.key(5), sizes)
    ws = [np.asarray(params[f"layer{i}"]["w"]) for i in (1, 2, 3)]
    for i in range(3):
        for j in range(i + 1, 3):
            # weights of one value (all zeros) show no key: the key use below judges that
            if np.allclose(ws[i], ws[j]) and np.ptp(ws[i]) > 0:
                raise fail(
                    f"init_mlp(key, {sizes}): the weights of layer{i + 1} and layer{j + 1}",
                    expected="independent draws (different values)",
                    observed="identical matrices",
                    cause="both layers were drawn with the same key",
                    fix="split the key once per layer: `keys = jax.random.split(key, len(sizes) - 1)`",
                )
    keys.assert_no_key_reuse(
        student.init_mlp,
        (jax.random.key(5), sizes),
        static_argnames=("sizes",),
        what="init_mlp(key, sizes)",
    )


# 08's init on a deeper network than 08's: the He scale of every layer, exact zero biases,
# float32 leaves (the statistics' tolerances as 08's: 5% on 10,000 weights or more, else 12%)
@check(
    "init_mlp initialises as 08's init_params: He weights, zero biases, float32",
    points=1,
    hint="Which standard deviation does 08's init_params give a weight with fan_in inputs, "
    "what do its biases start at, and in which dtype?",
    nudge="Draw each layer's weights as standard normals scaled by the square root of 2 over its "
    "input size, start every bias at exact zeros, and keep JAX's default float32.",
    spec="initialised as 08's `init_params` (He, zero biases, a key per layer, float32)",
    requires=("test_init_structure",),
)
def test_init_like_08(student: Remote) -> None:
    params = student.init_mlp(jax.random.key(3), INIT_SIZES)
    what = f"init_mlp(key, {INIT_SIZES})"
    for i, (fan_in, fan_out) in enumerate(itertools.pairwise(INIT_SIZES), start=1):
        name = f"layer{i}"
        w, b = params[name]["w"], params[name]["b"]
        for leaf, array in (("w", w), ("b", b)):
            if np.dtype(array.dtype) != np.float32:
                raise fail(
                    f"the dtype of {what}['{name}']['{leaf}']",
                    expected="float32, as 08's init_params",
                    observed=str(array.dtype),
                    fix="draw with `jax.random.normal(k, shape)` and build the biases with "
                    "`jnp.zeros(fan_out)`, both float32 by default",
                )
        bias = np.asarray(b)
        if np.any(bias != 0):
            raise fail(
                f"{what}['{name}']['b']",
                expected="all zeros, as 08's init_params",
                observed=f"{np.count_nonzero(bias)} of {bias.size} entries nonzero",
                cause=(
                    f"the {bias.size} biases hold {np.unique(bias).size} distinct values: "
                    "they were drawn at random like the weights, not started at zero"
                    if np.unique(bias).size >= max(3, bias.size // 2)
                    else ""
                ),
                fix="`jnp.zeros((fan_out,))`",
            )
        weights = np.asarray(w, np.float64)
        target = math.sqrt(2.0 / fan_in)
        std, mean = float(weights.std()), float(weights.mean())
        tolerance = 0.05 if weights.size >= 10_000 else 0.12
        if abs(std / target - 1.0) > tolerance or abs(mean) > 5 * target / math.sqrt(weights.size):
            raise fail(
                f"the statistics of {what}['{name}']['w'] ({fan_in} x {fan_out})",
                expected=f"mean 0 and standard deviation sqrt(2 / {fan_in}) = {target:.4f} "
                f"(within {tolerance:.0%}): 08's He init",
                observed=f"mean {mean:.4f}, standard deviation {std:.4f} "
                f"({std / target:.2f} x the He value)",
                cause=FAN_OUT if _scaled_by_fan_out(params) else _scale_cause(params),
                fix="`jax.random.normal(k, (fan_in, fan_out)) * jnp.sqrt(2.0 / fan_in)`",
            )


FAN_OUT = (
    "every layer's weights have the standard deviation sqrt(2 / fan_out), the layer's OUTPUT "
    "size: He's scale divides by the input size, sqrt(2 / fan_in) (the first dimension of w)"
)


def _scale_cause(params: Params) -> str:
    """The other scale than He's (`init_scale_cause`) every layer's weights are drawn at."""
    stds, tolerances = [], []
    for i in range(1, len(INIT_SIZES)):
        weights = np.asarray(params[f"layer{i}"]["w"], np.float64)
        stds.append(float(weights.std()))
        tolerances.append(0.05 if weights.size >= 10_000 else 0.12)
    return init_scale_cause(INIT_SIZES, stds, tolerances)


def _scaled_by_fan_out(params: Params) -> bool:
    """Every layer of INIT_SIZES has the std sqrt(2 / fan_out) (within the statistics'
    tolerance), and so do two layers at least whose fan_out differs from their fan_in."""
    told = 0
    for i, (fan_in, fan_out) in enumerate(itertools.pairwise(INIT_SIZES), start=1):
        weights = np.asarray(params[f"layer{i}"]["w"], np.float64)
        tolerance = 0.05 if weights.size >= 10_000 else 0.12
        if abs(float(weights.std()) / math.sqrt(2.0 / fan_out) - 1.0) > tolerance:
            return False
        he_apart = abs(math.sqrt(fan_in / fan_out) - 1.0) > 2 * tolerance
        told += he_apart
    return told >= 2


@check(
    "init_mlp draws its weights from a normal distribution, as 08's init_params",
    points=1,
    hint="Past its standard deviation, what shape has the distribution your weights are drawn "
    "from: does it have a normal's tails, or is it cut off somewhere?",
    nudge="08's He init scales draws of the standard normal, whose tails are unbounded; a "
    "sampler with the same spread but another shape gives the right standard deviation and "
    "the wrong distribution.",
    spec="initialised as 08's `init_params` (He, zero biases, a key per layer, float32) ... Random-valued outputs (inits, splits, noise, dropout masks, training runs) are judged statistically",
    requires=("test_init_structure",),
)
def test_init_normal(student: Remote) -> None:
    # INIT_SIZES again (nothing new compiles), another key: ~58,000 weights, each layer's over
    # its own standard deviation, pooled. The scale is test_init_like_08's (a LeCun or fan-out
    # scale fails there alone); this check judges the shape of the distribution alone.
    params = student.init_mlp(jax.random.key(4), INIT_SIZES)
    layers = [
        np.asarray(params[f"layer{i}"]["w"], np.float64).ravel() for i in range(1, len(INIT_SIZES))
    ]
    flat = np.concatenate([w / (float(w.std()) or 1.0) for w in layers])
    assert_normal(
        flat,
        f"the distribution of init_mlp(key, {INIT_SIZES})'s {flat.size:,} weights, each "
        "divided by its layer's standard deviation",
        fix="draw every weight from the standard normal distribution, then scale it by "
        "`jnp.sqrt(2.0 / fan_in)`, as 08's init_params: the right spread alone does not make "
        "a normal",
        references=HE_NORMALS,
        name_bounded=True,
    )


@check(
    "init_mlp is deterministic per key and accepts raw PRNGKey keys",
    points=1,
    hint="Does your init depend on anything but the key you were given, and does it work "
    "with both jax.random.key(0) and jax.random.PRNGKey(0)?",
    hidden=True,
    requires=("test_init_structure",),
    spec="a correct solution works with both `jax.random.key(s)` (typed) and `jax.random.PRNGKey(s)` (raw) keys. ... Random-valued outputs (inits, splits, noise, dropout masks, training runs) are judged statistically and by key use ... no global NumPy/`random` RNG",
    nudge="Every random draw should come from the key argument through jax.random.split and jax.random.normal, which accept typed and raw keys alike; NumPy's global generator is state outside the function.",
)
def test_init_key_use(student: Remote) -> None:
    sizes = KEY_SIZES
    init = client.partial(student.init_mlp, client.HOLE, sizes)  # init(k) is init_mlp(k, sizes)
    keys.assert_deterministic(init, lambda k: (k,), what=f"init_mlp(key, {sizes})")
    keys.assert_varies_with_key(init, lambda k: (k,), what=f"init_mlp(key, {sizes})")
    keys.assert_accepts_raw_keys(init, lambda k: (k,), what=f"init_mlp(key, {sizes})")
    keys.assert_ignores_global_rng(
        student.init_mlp,
        (jax.random.key(0), sizes),
        static_argnames=("sizes",),
        what=f"init_mlp(key, {sizes})",
    )


# -- mlp_forward ---------------------------------------------------------------
@check(
    "mlp_forward equals the lesson's three-layer forward",
    points=2,
    hint="For the lesson's three layers, is your loop doing exactly x @ w + b and ReLU, "
    "twice, then a final x @ w + b?",
    spec="equals 08's `forward` for the lesson's 3 layers",
    nudge="With three layers the generic loop must do exactly what the lesson's hand-written forward does: x @ w + b with ReLU twice, then a last x @ w + b.",
)
def test_forward_lesson(student: Remote, seed: int) -> None:
    rng = np.random.default_rng(seed)
    params = _params(rng, LESSON_SIZES)
    x = _inputs(rng, 32, LESSON_SIZES[0])
    _check_forward(
        student,
        params,
        x,
        "the lesson's sizes (64, 256, 128, 10), batch 32",
        3,
        reference=_lesson_forward,
    )


@check(
    "mlp_forward is right for 1 to 12 layers",
    points=3,
    hint="Where does your code find the depth, and in which order does it visit the layers "
    "once there are more than nine of them?",
    spec="`mlp_forward(params, x)` -> logits for any depth; depth found from `jax.tree.leaves` (two leaves per layer); ReLU on all but the last layer. ... equals the reference for 1 to 12 layers",
    nudge="jax.tree.leaves is only there to count the layers (two leaves each); the layers themselves are visited by their number, 'layer1' up to 'layerN'.",
)
def test_forward_depths(student: Remote, seed: int, credit: Credit) -> None:
    rng = np.random.default_rng(seed + 1)
    failures = []
    for depth in DEPTHS:
        sizes = _sizes_for(rng, depth)
        params = _params(rng, sizes)
        x = _inputs(rng, 5, sizes[0])
        try:
            _check_forward(student, params, x, f"{depth} layer(s) of sizes {sizes}", depth)
        except AssertionError as found:
            failures.append((depth, found))
    if not failures:
        return
    right = len(DEPTHS) - len(failures)
    depths = ", ".join(str(d) for d, _ in failures)
    if right == 0:
        raise failures[0][1]
    credit.award(
        right / len(DEPTHS),
        f"right for {right} of {len(DEPTHS)} depths; wrong for {depths} layer(s). "
        f"The first one:\n{failures[0][1]}",
    )


@check(
    "mlp_forward takes each layer's w and b by name",
    points=2,
    hint="In what order does jax.tree.leaves return the two leaves of {'w': ..., 'b': ...}?",
    spec="pairing leaves naively swaps 'b' and 'w'",
    nudge="A dict's leaves come out of jax.tree.leaves in sorted key order, so each layer's pair is [b, w]: take 'w' and 'b' by their keys instead.",
)
def test_forward_pairing(student: Remote, seed: int) -> None:
    rng = np.random.default_rng(seed + 2)
    for depth in (1, 3):
        params = _params(rng, (SQUARE,) * (depth + 1))
        x = _inputs(rng, SQUARE, SQUARE)
        _check_forward(student, params, x, f"{depth} square layer(s) of width {SQUARE}", depth)


@check(
    "mlp_forward applies layer10 after layer9",
    points=2,
    hint="Where does the string 'layer10' sort relative to 'layer2', and how can your loop "
    "visit the layers by their number instead?",
    spec="12 catches the sort order of 'layer10' vs 'layer2'",
    nudge="Layer names are strings, and strings sort character by character, so 'layer10' comes before 'layer2': build the names from the layer numbers, or sort on the number.",
)
def test_forward_order(student: Remote, seed: int) -> None:
    rng = np.random.default_rng(seed + 3)
    params = _params(rng, (SQUARE,) * 13)
    x = _inputs(rng, SQUARE, SQUARE)
    _check_forward(student, params, x, f"12 square layers of width {SQUARE}", 12)
    _check_sorted_keys(student, params, x)


# a params dict that has been through jax.tree.map, jax.jit or an optax update comes back
# with its keys in sorted order: the order check passes the same params that way too
SORTED_KEYS = (
    "the same params as jax.tree.map(lambda a: a, params) returns them, keys in sorted "
    "order ('layer1', 'layer10', 'layer11', 'layer12', 'layer2', ...)"
)
DICT_ORDER = (
    "your mlp_forward applies the layers in the order the params dict holds its keys (e.g. "
    "`for layer in params.values()`): the suite's params are built 'layer1', 'layer2', ..., "
    "but a params dict that has been through jax.tree.map, jax.jit or an optax update comes "
    "back with its keys sorted as strings, 'layer1', 'layer10', 'layer11', 'layer12', "
    "'layer2', ..., and then the layers run out of order"
)
DICT_ORDER_FIX = (
    "do not rely on the dict's key order: count the layers with "
    "`n = len(jax.tree.leaves(params)) // 2` and visit `params[f'layer{i}']` for i in 1..n"
)


def _sorted_keys(params: Params) -> Params:
    """`params` as JAX itself rebuilds it: every dict's keys in sorted order."""
    rebuilt: Params = jax.tree.map(lambda a: a, params)
    return rebuilt


def _dict_order(params: Params, x: jax.Array) -> jax.Array:
    """The layers applied in the order `params` holds its keys, 'w' and 'b' taken by name."""
    return _apply([(layer["w"], layer["b"]) for layer in params.values()], x)


def _check_sorted_keys(student: Remote, params: Params, x: jax.Array) -> None:
    """mlp_forward gives the reference's logits on `params` with its keys in sorted order
    (the same params in numeric order passed already). The cause is named when the output
    equals the layers applied in dict order here and on a probe of 11 layers of another
    width, passed sorted too."""
    shuffled = _sorted_keys(params)
    expected = _ref_forward(shuffled, x)
    what = f"mlp_forward(params, x) for {SORTED_KEYS}"
    try:
        out = student.mlp_forward(shuffled, x)
    except NotImplementedError:
        raise
    except Exception as exc:
        kind = exc.info.type if isinstance(exc, StudentError) else type(exc).__name__
        raise CheckFailure(
            what,
            expected=f"logits of shape {tuple(expected.shape)}, as with the keys in numeric order",
            observed=f"it raised {kind}: {str(exc).strip().splitlines()[0][:300]}",
        ) from exc
    found = values.difference(out, expected, **FLOAT32)
    if found is None:
        return
    cause = ""
    if diagnose.matches(_dict_order(shuffled, x), DICT_ORDER, "dict_order")(out, expected):
        probe, probe_x = _probe(11, SQUARE + 1)
        probe = _sorted_keys(probe)
        try:
            again = student.mlp_forward(probe, probe_x)
        except NotImplementedError:
            raise
        except Exception:
            again = None
        if again is not None and diagnose.matches(
            _dict_order(probe, probe_x), DICT_ORDER, "dict_order"
        )(again, _ref_forward(probe, probe_x)):
            cause = DICT_ORDER
    raise CheckFailure(
        what,
        expected=found.expected,
        observed=f"{found.observed}\n    with the keys in numeric order ('layer1', 'layer2', "
        "..., 'layer12') the same params gave the right logits",
        cause=cause or found.cause,
        fix=DICT_ORDER_FIX if cause else "",
    )


@check(
    "mlp_forward compiles under jax.jit",
    points=1,
    hint="Is everything your loop depends on (the number of layers, the layer names) known "
    "from the structure of params rather than from its values?",
    requires=("test_forward_lesson",),
    spec="jittable. ... Every function that is meant to be jittable is checked both eagerly and under `jax.jit`",
    nudge="The number of layers comes from the structure of params (how many leaves), which jax.jit knows while tracing; only the values are traced.",
)
def test_forward_jit(student: Remote, seed: int) -> None:
    rng = np.random.default_rng(seed + 4)
    sizes = JIT_SIZES
    params = _params(rng, sizes)
    x = _inputs(rng, JIT_BATCH, sizes[0])
    # (tracing once is not in ex3's spec: the compiled values are what is judged)
    jit.assert_jittable(student.mlp_forward, (params, x), what="mlp_forward(params, x)", **FLOAT32)


@check(
    "mlp_forward is pure: params unchanged, no global state",
    points=1,
    hint="Does mlp_forward write into params (or anything outside itself) while it runs?",
    hidden=True,
    requires=("test_forward_lesson",),
    spec="purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
    nudge="mlp_forward should only read params and x and return new arrays: writing into params or into module state is a side effect jax.jit would not repeat.",
)
def test_forward_pure(student: Remote, seed: int) -> None:
    rng = np.random.default_rng(seed + 5)
    params = _params(rng, JIT_SIZES)
    x = _inputs(rng, JIT_BATCH, JIT_SIZES[0])
    purity.assert_pure(
        student.mlp_forward, (params, x), what="mlp_forward(params, x)", module=student
    )
    purity.assert_no_trace_side_effects(
        student.mlp_forward, (params, x), what="mlp_forward(params, x)", module=student
    )
