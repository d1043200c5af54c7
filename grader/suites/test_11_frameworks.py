"""Hidden checks for 11_frameworks.py: the lesson MLP in Flax and in Equinox.

Optional: the file needs the `frameworks` extra. Where flax or equinox is missing the
whole file is skipped with the install command (the runner also reads REQUIRES).
The forward passes are compared with a NumPy forward pass through the model's own
weights (found by shape, not by name), so ReLU placement is judged, not spelling.

The models stay in the student's sandbox (the suite holds handles): what a check needs
to know about one (its classes, its arrays, its Linear layers) is read there by the
probes of `grader.inputs.11_frameworks`.
"""

import importlib
from typing import Any

import numpy as np
import pytest

LESSON = "11_frameworks"
TITLE = "the same MLP in Flax and Equinox (optional extras)"
REQUIRES = ("flax", "equinox")

_EXTRA = "install the extra: pip install '.[frameworks]'"
flax_linen = pytest.importorskip("flax.linen", reason=_EXTRA)
eqx = pytest.importorskip("equinox", reason=_EXTRA)

import jax  # noqa: E402 - after the skips, so a missing extra skips before JAX starts
import jax.numpy as jnp  # noqa: E402

from grader.authoring import check  # noqa: E402
from grader.checks import jit, keys, purity, values  # noqa: E402
from grader.checks.failure import fail  # noqa: E402
from grader.sandbox import client  # noqa: E402
from grader.sandbox.client import Remote  # noqa: E402
from grader.suites._shared import FLOAT32, for_the_cache, once  # noqa: E402

inputs = importlib.import_module("grader.inputs.11_frameworks")

FLAX_PARAMS = 235_146  # 784*256 + 256 + 256*128 + 128 + 128*10 + 10
EQUINOX_PARAMS = 269_322  # 784*256 + 256 + 256*256 + 256 + 256*10 + 10


# Batch sizes: every new one costs the student's model a compile of each of its eager ops
# (matmul, add, relu per layer), so the checks share two: 1 (Flax's init traces a batch of
# one) and _N for Flax, one example and _N_EQX for Equinox.
_N = 5
_N_EQX = 4


def _batch(n: int = _N, seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    return jnp.asarray(rng.uniform(size=(n, 784)), jnp.float32)


def _count(tree: Any) -> Any:
    return sum(int(np.size(leaf)) for leaf in jax.tree.leaves(tree))


def _types(obj: Any) -> Any:
    """What the sandbox says `obj` is: {"is_class", "type", "mro", "repr"}."""
    seen = client.probe(inputs.type_names, obj)
    if not (
        isinstance(seen, dict)
        and isinstance(seen.get("is_class"), bool)
        and all(isinstance(seen.get(k), str) for k in ("type", "repr"))
        and isinstance(seen.get("mro"), list)
    ):
        raise TypeError("the sandbox sent a malformed type description")
    return seen


def _derives(seen: Any, cls: type) -> bool:
    """`seen` (from `_types`) names `cls` among its classes."""
    return f"{cls.__module__}.{cls.__qualname__}" in seen["mro"]


# -- Flax -------------------------------------------------------------------------------------


@for_the_cache
def _flax_programs_cached() -> None:
    """Build and run the lesson's FlaxMLP in the judge, once, as the checks have the
    student's built and run (init from key 0 on a batch of one, apply to batches of _N and
    1): with a judge compilation cache, the programs of its eager ops (the initializers'
    truncated normals, ~0.5 s each to compile, the matmuls, adds and relus) are in it, and a
    submission built as the lesson shows loads them instead of compiling them."""

    class Lesson(flax_linen.Module):  # type: ignore[misc,name-defined]  # flax: Any here
        @flax_linen.compact  # type: ignore[untyped-decorator]
        def __call__(self, x: Any) -> Any:
            x = flax_linen.relu(flax_linen.Dense(256)(x))
            x = flax_linen.relu(flax_linen.Dense(128)(x))
            return flax_linen.Dense(10)(x)

    model = Lesson()
    variables = model.init(jax.random.key(0), jnp.ones((1, 784)))
    jax.block_until_ready([model.apply(variables, _batch(n)) for n in (_N, 1)])  # type: ignore[no-untyped-call]  # untyped in jax


@for_the_cache
def _equinox_programs_cached() -> None:
    """The lesson's eqx.nn.MLP built in the judge, once, from key 0 and called as the checks
    call the student's (one example, then jax.vmap over _N_EQX): its uniform draws (~0.2 s
    each to compile) and eager ops are then in the judge's compilation cache."""
    model = eqx.nn.MLP(
        in_size=784, out_size=10, width_size=256, depth=2, activation=jax.nn.relu,
        key=jax.random.key(0),
    )  # fmt: skip
    jax.block_until_ready([model(_batch(1)[0]), jax.vmap(model)(_batch(_N_EQX))])  # type: ignore[no-untyped-call]  # untyped in jax


def _flax_init(student: Remote) -> Any:
    """FlaxMLP() and its variables from key 0, built once per student: every check reads the
    same model (init's eager ops compile once)."""
    _flax_programs_cached()

    def build() -> Any:
        model = student.FlaxMLP()
        return model, model.init(jax.random.key(0), jnp.ones((1, 784)))

    return once(student, "flax_init", build)


def _flax_layers(variables: Any) -> Any:
    """The Dense layers as (kernel, bias) pairs, chained by shape from the 784 inputs."""
    params = variables.get("params", variables)
    denses = [
        node
        for node in jax.tree.leaves(params, is_leaf=lambda n: isinstance(n, dict) and "kernel" in n)
        if isinstance(node, dict) and "kernel" in node
    ]
    ordered: list[Any] = []
    width = 784
    while True:
        used = {id(d) for d in ordered}
        nxt = [d for d in denses if np.shape(d["kernel"])[0] == width and id(d) not in used]
        if not nxt:
            return ordered
        ordered.append(nxt[0])
        width = np.shape(nxt[0]["kernel"])[1]


def _layers_named(numbers: list[int]) -> str:
    """'Dense layer 2' or 'Dense layers 1, 2, 3'."""
    return ("Dense layer " if len(numbers) == 1 else "Dense layers ") + ", ".join(
        str(i) for i in numbers
    )


def _flax_count_cause(variables: Any) -> str:
    """What the Dense layers themselves show about a wrong parameter count, or "": a Dense
    without a bias where the widths are right, or the widths of a chain of Dense layers
    (kernels and biases) that holds every parameter."""
    params = variables.get("params", variables)
    denses = _flax_layers(variables)
    every = [
        node
        for node in jax.tree.leaves(params, is_leaf=lambda n: isinstance(n, dict) and "kernel" in n)
        if isinstance(node, dict) and "kernel" in node
    ]
    if not denses or len(every) != len(denses) or _count(denses) != _count(params):
        return ""  # parameters outside the chain of Dense layers: nothing shown for sure
    widths = [784] + [int(np.shape(d["kernel"])[1]) for d in denses]
    missing = [i + 1 for i, d in enumerate(denses) if "bias" not in d]
    if widths == [784, 256, 128, 10]:
        if not missing:
            return ""
        return (
            f"{_layers_named(missing)} of 3 without a bias (nn.Dense(..., use_bias=False)): "
            "each Dense holds a kernel and a bias"
        )
    if missing or any(np.shape(d["bias"]) != np.shape(d["kernel"])[1:] for d in denses):
        return ""
    return (
        f"the Dense layers' widths are {' -> '.join(str(w) for w in widths)}, where "
        "784 -> 256 -> 128 -> 10 is expected"
    )


def _np_forward(
    layers: Any,
    x: Any,
    *,
    relu_hidden: bool = True,
    relu_last: bool = False,
    hidden: Any = None,
) -> Any:
    """The MLP of `layers` on x, relu between the layers (or the activation `hidden`)."""
    h = np.asarray(x, np.float64)
    for i, (w, b) in enumerate(layers):
        h = h @ np.asarray(w, np.float64) + np.asarray(b, np.float64)
        last = i == len(layers) - 1
        if not last and hidden is not None:
            h = hidden(h)
        elif relu_last if last else relu_hidden:
            h = np.maximum(h, 0.0)
    return h


# activations a model may apply between its layers where relu belongs (NumPy, float64)
_OTHER_ACTIVATIONS = {
    "tanh": np.tanh,
    "sigmoid": lambda h: 1.0 / (1.0 + np.exp(-h)),
    "gelu": lambda h: np.asarray(jax.nn.gelu(jnp.asarray(h, jnp.float32)), np.float64),
}


def _activation_cause(run: Any, layers: Any, batches: Any) -> str:
    """The activation other than relu that the model applies between its layers, confirmed on
    every batch of `batches` (two sizes): `run(x)` is the model's output on x; or ""."""
    seen = []
    for x in batches:
        try:
            out = run(x)
        except Exception:  # its shape check reports what it raises
            return ""
        seen.append((x, out))
    for name, act in _OTHER_ACTIVATIONS.items():
        if all(
            np.shape(out) == (len(x), 10)
            and values.difference(out, _np_forward(layers, x, hidden=act), **FLOAT32) is None
            for x, out in seen
        ):
            return (
                f"the hidden layers apply {name} where relu is wanted: the outputs are the "
                f"same layers' with {name} between them"
            )
    return ""


def _softmax(z: Any) -> Any:
    z = z - z.max(axis=-1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)


def _relu_cause(run: Any, layers: Any, batches: Any) -> str:
    """Where relu went instead, confirmed on every batch of `batches` (two sizes): `run(x)` is
    the model's output on x; or ""."""
    seen = []
    for x in batches:
        try:
            seen.append((x, run(x)))
        except Exception:  # its shape check reports what it raises
            return ""
    mistakes: list[tuple[Any, str]] = [
        (
            lambda x: _np_forward(layers, x, relu_hidden=False),
            "there is no relu between the layers: the model is linear",
        ),
        (
            lambda x: _np_forward(layers, x, relu_last=True),
            "a relu follows the last layer too, so no logit can be negative",
        ),
        (
            lambda x: _softmax(_np_forward(layers, x)),
            "the model returns probabilities (a softmax after the last layer), "
            "not logits: the loss (log_softmax / optax's cross-entropy) applies the softmax itself",
        ),
        (
            lambda x: np.log(_softmax(_np_forward(layers, x))),
            "the model returns log-probabilities (a log_softmax after the last layer), not logits",
        ),
    ]
    for wrong, text in mistakes:
        if all(values.difference(out, wrong(x), **FLOAT32) is None for x, out in seen):
            return text
    return ""


@check(
    "FlaxMLP is a flax.linen Module that maps (batch, 784) to (batch, 10)",
    points=2,
    hint="Which class does a linen model subclass, and what do `model.init(key, x)` and "
    "`model.apply(variables, x)` need?",
    spec="`FlaxMLP` (a `flax.linen` module, as in the lesson: Dense 256 -> relu -> Dense 128 -> relu -> Dense 10) ... output shapes",
    nudge="A linen model subclasses nn.Module and describes its layers in a @nn.compact __call__; model.init(key, x) builds the variables and model.apply(variables, x) runs it.",
)
def test_flax_output_shape(student: Remote) -> None:
    seen = _types(student.FlaxMLP)
    if not (seen["is_class"] and _derives(seen, flax_linen.Module)):
        raise fail(
            "FlaxMLP",
            expected="a subclass of flax.linen.Module",
            observed=seen["repr"][:200],
            fix="`class FlaxMLP(nn.Module):` with an `@nn.compact def __call__(self, x)`",
        )
    model, variables = _flax_init(student)
    for n in (_N, 1):
        values.assert_shape(
            model.apply(variables, _batch(n)),
            (n, 10),
            what=f"FlaxMLP().apply(variables, x of shape ({n}, 784))",
        )


@check(
    "FlaxMLP has 235,146 parameters: Dense 256, Dense 128, Dense 10",
    points=3,
    hint="How many weights and biases does Dense(features) have for a given input width, "
    "and in which order do the widths 256, 128 and 10 come?",
    spec="Dense 256 -> relu -> Dense 128 -> relu -> Dense 10) ... parameter counts (Flax 235,146",
    nudge="nn.Dense(features) infers its input width from the data and holds a kernel (in, features) and a bias (features,): the three widths in the lesson's order give the count.",
)
def test_flax_param_count(student: Remote) -> None:
    _, variables = _flax_init(student)
    total = _count(variables.get("params", variables))
    shapes = sorted(
        (tuple(np.shape(leaf)) for leaf in jax.tree.leaves(variables)), key=len, reverse=True
    )
    if total != FLAX_PARAMS:
        raise fail(
            "the number of parameters of FlaxMLP (784 inputs)",
            expected=f"{FLAX_PARAMS:,} (kernels (784, 256), (256, 128), (128, 10) and their "
            "biases)",
            observed=f"{total:,}; leaf shapes {shapes}",
            cause=_flax_count_cause(variables),
            fix="nn.Dense(256) -> relu -> nn.Dense(128) -> relu -> nn.Dense(10)",
        )


@check(
    "FlaxMLP applies relu between its layers and none on the logits",
    points=2,
    hint="Where does `nn.relu` go: after each hidden Dense, after every Dense, or nowhere?",
    spec="Dense 256 -> relu -> Dense 128 -> relu -> Dense 10",
    nudge="The activation is a function applied between layers in __call__ (nn.relu after each hidden Dense); the last Dense gives the logits as they are.",
)
def test_flax_relu(student: Remote) -> None:
    model, variables = _flax_init(student)
    denses = _flax_layers(variables)
    missing = [i + 1 for i, d in enumerate(denses) if "bias" not in d]
    if missing:
        raise fail(
            "the Dense layers of FlaxMLP",
            expected="a kernel and a bias in each Dense layer",
            observed=f"no bias in {_layers_named(missing)} of {len(denses)}",
            cause="the layer is built without a bias (nn.Dense(..., use_bias=False))",
            fix="`nn.Dense(features)`: it keeps its bias by default",
        )
    layers = [(d["kernel"], d["bias"]) for d in denses]
    if len(layers) != 3:
        raise fail(
            "the Dense layers of FlaxMLP",
            expected="3 Dense layers chained 784 -> 10",
            observed=f"{len(layers)} found by shape",
            fix="Dense 256 -> relu -> Dense 128 -> relu -> Dense 10",
        )
    x = _batch(_N, seed=1) - 0.5  # mixed signs: relu matters at every layer
    out = model.apply(variables, x)
    cause = ""
    if values.difference(out, _np_forward(layers, x), **FLOAT32) is not None:
        batches = (x, _batch(_N + 3, seed=3) - 0.5)  # two sizes: a cause holds on both

        def run(x: Any) -> Any:
            return model.apply(variables, x)

        cause = _relu_cause(run, layers, batches) or _activation_cause(run, layers, batches)
    values.assert_close(
        out,
        _np_forward(layers, x),
        what="FlaxMLP().apply(variables, x)",
        **FLOAT32,
        cause=cause,
        fix="`x = nn.relu(nn.Dense(256)(x))`, `x = nn.relu(nn.Dense(128)(x))`, "
        "`return nn.Dense(10)(x)`",
    )


@check(
    "FlaxMLP: init depends on the key only, apply is pure and compiles under jax.jit",
    points=1,
    hint="Do init's weights come from the key you pass, and is apply a pure function of "
    "(variables, x), with no Python side effect that happens only while jit traces it?",
    requires=("test_flax_relu",),
    spec="Random-valued outputs (inits, splits, noise, dropout masks, training runs) are judged statistically and by key use ... Every function that is meant to be jittable is checked both eagerly and under `jax.jit` ... purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
    nudge="A linen module holds no state: init draws every weight from the key it is given, and apply is a pure function of (variables, x) that jax.jit can compile.",
)
def test_flax_keys_and_jit(student: Remote) -> None:
    model = student.FlaxMLP()
    x = jnp.ones((1, 784))
    keys.assert_deterministic(lambda k: model.init(k, x), lambda k: (k,), what="FlaxMLP().init")
    keys.assert_varies_with_key(lambda k: model.init(k, x), lambda k: (k,), what="FlaxMLP().init")
    _, variables = _flax_init(student)
    jit.assert_jittable(model.apply, (variables, _batch()), what="FlaxMLP().apply", **FLOAT32)
    purity.assert_pure(
        model.apply, (variables, _batch()), what="FlaxMLP().apply(variables, x)", module=student
    )
    purity.assert_no_trace_side_effects(
        model.apply, (variables, _batch()), what="FlaxMLP().apply(variables, x)", module=student
    )


# -- Equinox ------------------------------------------------------------------------------------


def _equinox_model(student: Remote) -> Any:
    """make_equinox_mlp(key 0), built once per student and read by every check."""
    _equinox_programs_cached()
    return once(student, "equinox_model", lambda: student.make_equinox_mlp(jax.random.key(0)))


def _equinox_module(student: Remote) -> Any:
    """make_equinox_mlp(key 0), failing where it is not an Equinox module (a function, a
    class): its layers and parameters are read only from a module."""
    model = _equinox_model(student)
    seen = _types(model)
    if seen["is_class"] or not _derives(seen, eqx.Module):
        raise fail(
            "make_equinox_mlp(key)",
            expected="an equinox Module (eqx.nn.MLP)",
            observed=f"a {seen['type']}",
            cause=_not_a_module_cause(model, seen),
            fix="`return eqx.nn.MLP(in_size=784, out_size=10, width_size=256, depth=2, "
            "activation=jax.nn.relu, key=key)`",
        )
    return model


def _not_a_module_cause(model: Any, seen: Any) -> str:
    """A returned function that maps batches of two sizes to their logits: the model
    wrapped for batches. Else what it is."""
    if not seen["is_class"]:
        try:
            shapes = [np.shape(model(_batch(n))) for n in (2, 3)]
        except Exception:
            shapes = []
        if shapes == [(2, 10), (3, 10)]:
            return (
                f"make_equinox_mlp returns a {seen['type']} that maps a batch (n, 784) to "
                "(n, 10), not the module: the model wrapped for batches (`jax.vmap(model)`) "
                "is no Equinox module and has no layers; batching belongs where the model is run"
            )
    return f"make_equinox_mlp returns a {seen['type']}, not the Equinox module it builds"


def _linears(model: Any) -> Any:
    """The model's eqx.nn.Linear layers as {"weight", "bias"} (read in the sandbox)."""
    return client.probe(inputs.linear_layers, model)


def _arrays(model: Any) -> Any:
    """`jax.tree.leaves(eqx.filter(model, eqx.is_array))` (read in the sandbox)."""
    return client.probe(inputs.array_leaves, model)


@check(
    "make_equinox_mlp returns an Equinox module mapping one example (784,) to (10,)",
    points=2,
    hint="Does an Equinox model take a batch or one example, and how do you run it on a batch?",
    spec="`make_equinox_mlp(key)` (an `eqx.nn.MLP` 784 -> 10, width 256, depth 2, relu) ... output shapes",
    nudge="An Equinox model is a pytree object called on ONE example; a batch goes through jax.vmap(model).",
)
def test_equinox_output_shape(student: Remote) -> None:
    model = _equinox_module(student)
    values.assert_shape(
        model(_batch(1)[0]), (10,), what="model(x) for one example x of shape (784,)"
    )
    values.assert_shape(
        client.vmap(model)(_batch(_N_EQX)),
        (_N_EQX, 10),
        what=f"jax.vmap(model)(x of shape ({_N_EQX}, 784))",
    )


@check(
    "the Equinox MLP has 269,322 parameters: width 256, depth 2",
    points=3,
    hint="In eqx.nn.MLP, how many hidden layers does `depth` count, and how wide is each of them?",
    spec="an `eqx.nn.MLP` 784 -> 10, width 256, depth 2, relu) ... parameter counts (... Equinox 269,322)",
    nudge="eqx.nn.MLP's in_size, out_size, width_size and depth fix every layer: depth counts the hidden layers, each width_size wide.",
)
def test_equinox_param_count(student: Remote) -> None:
    model = _equinox_module(student)
    total = _count(_arrays(model))
    if total != EQUINOX_PARAMS:
        linears = _linears(model)
        shapes = [tuple(np.shape(layer["weight"])) for layer in linears]
        raise fail(
            "the number of parameters of make_equinox_mlp(key)",
            expected=f"{EQUINOX_PARAMS:,} (weights (256, 784), (256, 256), (10, 256) and biases)",
            observed=f"{total:,}; Linear weights {shapes}",
            cause=_equinox_count_cause(linears, shapes),
            fix="`eqx.nn.MLP(in_size=784, out_size=10, width_size=256, depth=2, ...)`",
        )


_EQUINOX_SHAPES = [(256, 784), (256, 256), (10, 256)]


def _equinox_count_cause(linears: Any, shapes: list[tuple[int, ...]]) -> str:
    """What the Linear layers show about a wrong parameter count: how many there are, which
    have no bias, or their weights' shapes; "" where they are right (parameters elsewhere)."""
    if len(shapes) != 3:
        return (
            f"the model has {len(shapes)} Linear layers where depth=2 gives three: depth "
            "counts the HIDDEN layers, each width_size wide, and the output layer comes on top"
        )
    if shapes != _EQUINOX_SHAPES:
        return (
            f"the Linear weights are {shapes} where in_size=784, width_size=256 and "
            f"out_size=10 give {_EQUINOX_SHAPES}"
        )
    missing = [i + 1 for i, layer in enumerate(linears) if layer["bias"] is None]
    if missing:
        return f"Linear layer(s) {', '.join(map(str, missing))} of 3 have no bias (use_bias=False)"
    return ""


@check(
    "the Equinox MLP applies relu between its layers and none on the logits",
    points=2,
    hint="Which argument of eqx.nn.MLP sets the hidden activation, and which one the "
    "activation after the last layer?",
    spec="an `eqx.nn.MLP` 784 -> 10, width 256, depth 2, relu)",
    nudge="eqx.nn.MLP has one argument for the hidden layers' activation and another for the output's, whose default is the identity.",
)
def test_equinox_relu(student: Remote) -> None:
    model = _equinox_module(student)
    layers = [
        (
            np.asarray(lin["weight"]).T,
            np.zeros(np.shape(lin["weight"])[0])
            if lin["bias"] is None
            else np.asarray(lin["bias"]),
        )
        for lin in _linears(model)
    ]
    x = _batch(_N_EQX, seed=2) - 0.5
    out = client.vmap(model)(x)
    cause = ""
    if values.difference(out, _np_forward(layers, x), **FLOAT32) is not None:
        batches = (x, _batch(_N_EQX + 3, seed=4) - 0.5)  # two sizes: a cause holds on both

        def run(x: Any) -> Any:
            return client.vmap(model)(x)

        cause = _relu_cause(run, layers, batches) or _activation_cause(run, layers, batches)
    values.assert_close(
        out,
        _np_forward(layers, x),
        what="jax.vmap(model)(x)",
        **FLOAT32,
        cause=cause,
        fix="`activation=jax.nn.relu` and the default final_activation (identity)",
    )


@check(
    "make_equinox_mlp builds its weights from the key it is given",
    points=1,
    hidden=True,
    hint="Is the `key` argument passed on to eqx.nn.MLP, or is a fixed key used?",
    requires=("test_equinox_output_shape", "test_equinox_param_count"),
    spec="Random-valued outputs (inits, splits, noise, dropout masks, training runs) are judged statistically and by key use",
    nudge="eqx.nn.MLP draws its initial weights from the key passed to it, so make_equinox_mlp must hand it its own key argument.",
)
def test_equinox_keys(student: Remote) -> None:
    def weights(k: Any) -> Any:
        return _arrays(student.make_equinox_mlp(k))

    keys.assert_deterministic(weights, lambda k: (k,), what="make_equinox_mlp(key)")
    keys.assert_varies_with_key(weights, lambda k: (k,), what="make_equinox_mlp(key)")
    keys.assert_accepts_raw_keys(weights, lambda k: (k,), what="make_equinox_mlp(key)")
