"""Hidden checks for 05_pytrees.py: pytrees.

The references walk the containers by explicit recursion (dict, list, tuple,
namedtuple, None), so they agree with `jax.tree` by construction of the test
data, not by calling the same library. Generated trees nest all four container
kinds up to a few levels deep.
"""

import importlib
from typing import Any

import jax
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.authoring import check
from grader.checks import diagnose, jit, purity, values
from grader.checks.failure import CheckFailure, fail
from grader.sandbox.client import Remote, StudentError
from grader.suites._shared import mlp_params

LESSON = "05_pytrees"
TITLE = "pytrees"

_QUARTERS = st.integers(-12, 12).map(lambda k: k / 4)

# The namedtuple of the generated trees: public, so judge and sandbox share its class.
Pair = importlib.import_module("grader.inputs.05_pytrees").Pair


# -- references: explicit recursion over the containers ------------------------------


def _ref_map(f: Any, tree: Any, *rest: Any) -> Any:
    if tree is None:
        return None
    if isinstance(tree, dict):
        return {k: _ref_map(f, tree[k], *(r[k] for r in rest)) for k in tree}
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(_ref_map(f, *xs) for xs in zip(tree, *rest, strict=True)))
    if isinstance(tree, list | tuple):
        return type(tree)(_ref_map(f, *xs) for xs in zip(tree, *rest, strict=True))
    return f(tree, *rest)


def _ref_leaves(tree: Any) -> Any:
    if tree is None:
        return []
    if isinstance(tree, dict):
        return [leaf for k in tree for leaf in _ref_leaves(tree[k])]
    if isinstance(tree, list | tuple):
        return [leaf for child in tree for leaf in _ref_leaves(child)]
    return [tree]


def _ref_count(tree: Any) -> Any:
    return sum(int(np.prod(np.shape(leaf))) for leaf in _ref_leaves(tree))


def _ref_sgd(params: Any, grads: Any, lr: Any) -> Any:
    def step(p: Any, g: Any) -> Any:
        return (np.asarray(p, np.float64) - lr * np.asarray(g, np.float64)).astype(np.float32)

    return _ref_map(step, params, grads)


def _ref_norm(tree: Any) -> Any:
    return np.sqrt(
        sum(float(np.sum(np.asarray(leaf, np.float64) ** 2)) for leaf in _ref_leaves(tree))
    )


def _ref_shapes(tree: Any) -> Any:
    return _ref_map(lambda leaf: tuple(np.shape(leaf)), tree)


# what layer_shapes may have put in each leaf's place instead of its shape tuple, and the
# cause each names: one is named only when it, mapped over the same tree, gives the result
_SHAPE_MISTAKES = (
    (
        lambda leaf: list(np.shape(leaf)),
        "each shape is a list: the result must have params' structure with shape tuples (not "
        "lists or arrays) as leaves",
    ),
    (
        lambda leaf: int(np.size(leaf)),
        "each leaf became its size (the number of its elements, np.size), not its shape tuple",
    ),
    (
        lambda leaf: int(np.ndim(leaf)),
        "each leaf became its number of dimensions (np.ndim), not its shape tuple",
    ),
    (
        lambda leaf: tuple(np.shape(leaf))[::-1],
        "each shape tuple is reversed: a (784, 256) weight comes back as (256, 784), its "
        "axes in the opposite order (a `[::-1]`, or the shape of its transpose `.T`)",
    ),
)


def _shapes_cause(got: Any, tree: Any) -> str:
    """The cause a mistake of _SHAPE_MISTAKES confirms (mapped over `tree`, it gives `got`
    exactly, containers included), or ""."""
    for mistake, cause in _SHAPE_MISTAKES:
        try:
            if type(got) is type(tree) and bool(got == _ref_map(mistake, tree)):
                return cause
        except (TypeError, ValueError):  # arrays among the leaves: no mistake of ours
            continue
    return ""


# The lesson's MLP; its params (`mlp_params(..., exact=True)`) are quarters in [-1, 1], so
# sums stay exact in float32.
_LESSON_SIZES = (784, 256, 128, 10)


# -- generated trees -------------------------------------------------------------------

# Leaf shapes come from a small fixed set (the smallest first, as Hypothesis shrinks towards
# it): each new shape costs the student's eager operations a compile in the sandbox. Leaves
# go to the device with `jax.device_put`: `jnp.asarray` compiles a program per shape in the
# judge.
_LEAF_SHAPES = st.sampled_from(((), (1,), (3,), (2, 3)))
_LEAVES = hnp.arrays(np.float32, _LEAF_SHAPES, elements=_QUARTERS).map(jax.device_put)


def _containers(children: Any) -> Any:
    return st.one_of(
        st.lists(children, min_size=1, max_size=3),
        st.lists(children, min_size=1, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from("abcwxyz"), children, min_size=1, max_size=3),
        st.builds(Pair, children, children),
    )


# Always a container at the top: a bare array is a pytree too, but a poor example to show.
_TREES = _containers(st.recursive(_LEAVES, _containers, max_leaves=4))


@st.composite
def _sgd_args(draw: Any) -> Any:
    params = draw(_TREES)
    leaves, treedef = jax.tree.flatten(params)
    grads = treedef.unflatten(  # type: ignore[attr-defined]  # PyTreeDef is untyped in jax's stubs
        [
            jax.device_put(draw(hnp.arrays(np.float32, np.shape(p), elements=_QUARTERS)))
            for p in leaves
        ]
    )
    return params, grads, draw(st.sampled_from([1.0, 0.5, 0.25, 0.1]))


def _ones(*shape: Any) -> Any:
    return jax.device_put(np.ones(shape, np.float32))


def _zeros(*shape: Any) -> Any:
    return jax.device_put(np.zeros(shape, np.float32))


_NESTED = {
    "encoder": [Pair(_ones(2, 3), _zeros(3)), (_ones(4), jax.device_put(np.float32(2.0)))],
    "head": Pair(first={"w": _ones(3, 1)}, second=[_zeros(1)]),
}
_NESTED_SHAPES = {
    "encoder": [Pair((2, 3), (3,)), ((4,), ())],
    "head": Pair(first={"w": (3, 1)}, second=[(1,)]),
}


def _count_diagnostics(args: Any) -> Any:
    """count_params' confirmable mistakes: the leaves counted, their dimensions added up
    (len(leaf.shape), np.ndim) or their first-axis lengths (len(leaf), offered where no leaf
    is a scalar) instead of their sizes (the mistakes agree on some trees, every leaf
    one-dimensional: the other inputs then decide)."""
    leaves = _ref_leaves(args[0])
    return (
        diagnose.matches(
            len(leaves),
            "the result is the number of leaves, not the number of scalars in them",
            kind="leaves",
        ),
        diagnose.matches(
            sum(int(np.ndim(leaf)) for leaf in leaves),
            "the result is the leaves' numbers of dimensions added up (len(leaf.shape), "
            "np.ndim), not the number of scalars in them (leaf.size)",
            kind="ndim",
        ),
        *(
            ()
            if any(np.ndim(leaf) == 0 for leaf in leaves)  # len() of a scalar leaf raises
            else (
                diagnose.matches(
                    sum(int(np.shape(leaf)[0]) for leaf in leaves),
                    "the result is the leaves' first-axis lengths (`len(leaf)`) added up, not "
                    "the numbers of scalars in them (`leaf.size`)",
                    kind="first_axis",
                ),
            )
        ),
    )


def _sgd_diagnostics(args: Any) -> Any:
    """tree_sgd's confirmable mistakes: the step added (a flipped sign), the two trees in
    each other's place, the step alone (params left out), lr left out."""
    params, grads, lr = args
    uphill = _ref_sgd(params, jax.tree.map(np.negative, grads), lr)
    swapped = _ref_sgd(grads, params, lr)
    found = [
        diagnose.matches(
            uphill,
            "the values are params + lr * grads: the step is added instead of subtracted",
            kind="sign",
        ),
        diagnose.matches(
            swapped,
            "the values are grads - lr * params: params and grads are passed to "
            "`jax.tree.map` in each other's place (the function's first argument takes "
            "the first tree's leaves)",
            kind="swapped_trees",
        ),
        diagnose.matches(
            jax.tree.map(lambda g: -lr * np.asarray(g, np.float64), grads),
            "the values are -lr * grads, the step alone: params are never added to it (the "
            "result is params - lr * grads)",
            kind="step_only",
        ),
    ]
    if lr != 1.0:
        found.append(
            diagnose.matches(
                _ref_sgd(params, grads, 1.0),
                "the values are params - grads: the learning rate is not applied",
                kind="no_lr",
            )
        )
    return found


def _norm_diagnostics(args: Any) -> Any:
    """tree_global_norm's confirmable mistakes: no square, no square root, means of squares,
    a sum of per-leaf norms."""
    leaves = [np.asarray(leaf, np.float64) for leaf in _ref_leaves(args[0])]
    mean_squares = (
        "the value is the square root of MEANS of squares (`jnp.mean` where the global norm "
        "sums): the squares are divided by how many there are, the norm never is"
    )
    total = sum(float(np.sum(leaf)) for leaf in leaves)
    # the square root of the plain sum, where that sum is not negative (below zero it has no
    # square root: such an input cannot tell this mistake, and is left out)
    unsquared = (
        (
            diagnose.matches(
                np.sqrt(total),
                "the value is the square root of the leaves' plain sum: their values are "
                "added, not their squares",
                kind="no_square",
            ),
        )
        if total >= 0
        else ()
    )
    return (
        *unsquared,
        diagnose.matches(
            np.sqrt(sum(float(np.mean(leaf**2)) for leaf in leaves if leaf.size)),
            mean_squares,
            kind="mean_squares",
        ),
        diagnose.matches(
            np.sqrt(
                sum(float(np.sum(leaf**2)) for leaf in leaves) / max(1, sum(x.size for x in leaves))
            ),
            mean_squares,
            kind="mean_squares",
        ),
        diagnose.matches(
            sum(float(np.sum(leaf**2)) for leaf in leaves),
            "the value is the sum of squares itself: the square root is missing",
            kind="no_sqrt",
        ),
        diagnose.matches(
            sum(float(np.sqrt(np.sum(leaf**2))) for leaf in leaves),
            "the value is the sum of the leaves' own norms: each leaf got its square root "
            "before the sum, where the global norm takes one square root of the total",
            kind="sum_of_norms",
        ),
        *_first_leaf_unsquared(leaves),
    )


def _first_leaf_unsquared(leaves: list[Any]) -> tuple[diagnose.Diagnostic, ...]:
    """A reduce without an initial value: the first leaf itself, then each other leaf's sum of
    squares added to it (elementwise, so the result has the first leaf's shape), under one
    square root. Left out where that sum is negative somewhere (no square root to compare)."""
    if not leaves:
        return ()
    start = leaves[0] + sum(float(np.sum(leaf**2)) for leaf in leaves[1:])
    if np.any(start < 0):
        return ()
    return (
        diagnose.matches(
            np.sqrt(start),
            "the first leaf enters as it is, neither squared nor summed, and the other leaves' "
            "sums of squares are added to it: a reduce without an initial value starts from "
            "the first leaf itself (`jax.tree.reduce(f, tree)` and `functools.reduce(f, "
            "leaves)` take the value to start from, 0.0, as a third argument)",
            kind="first_leaf_unsquared",
        ),
    )


_STRUCTURE_FIX = (
    "use `jax.tree.map(...)`: it rebuilds the same containers (dicts, lists, tuples, namedtuples)"
)


# -- count_params ---------------------------------------------------------------------


@check(
    "count_params counts the lesson MLP's 235,146 parameters",
    points=1,
    hint="Is it the number of leaves, or the number of scalars in them? What does `.size` give?",
    nudge="Every leaf is an array: add up how many scalars each one holds, not how many leaves there are.",
    spec="`count_params(tree)` -> total number of scalars in all leaves",
)
def test_count_params_lesson(student: Remote) -> None:
    params = mlp_params(_LESSON_SIZES, exact=True)
    got = student.count_params(params)
    if isinstance(got, list | tuple):  # a container, not a count: say which
        sizes = sorted(int(np.size(leaf)) for leaf in jax.tree.leaves(params))
        counts = all(isinstance(item, int | np.integer) for item in got)
        raise fail(
            "count_params(params) for the lesson's 784-256-128-10 MLP",
            expected="235146, one Python int",
            observed=f"a {type(got).__name__} of {len(got)} items: {repr(got)[:120]}",
            cause="one count per leaf, not their total: the items are the sizes of the "
            "tree's leaves, which add up to 235146"
            if counts and sorted(int(item) for item in got) == sizes
            else "",
            fix="add up `leaf.size` over `jax.tree.leaves(tree)`",
        )
    if int(got) != 235_146:
        # a second, smaller MLP: a cause is named only when both sizes show it
        small = mlp_params((6, 5, 4), exact=True)
        seen = [
            ((params,), got, _ref_count(params)),
            ((small,), student.count_params(small), _ref_count(small)),
        ]
        raise fail(
            "count_params(params) for the lesson's 784-256-128-10 MLP",
            expected="235146 (784*256 + 256 + 256*128 + 128 + 128*10 + 10)",
            observed=repr(got),
            cause=diagnose.confirmed(seen, _count_diagnostics, reference=_ref_count),
            fix="add up `leaf.size` over `jax.tree.leaves(tree)`",
        )


@check(
    "count_params works on any nesting of dicts, lists, tuples and namedtuples",
    points=2,
    hint="Does your code walk the tree itself (and so only know dicts), or let jax.tree.leaves find every leaf?",
    nudge="Let JAX's pytree utilities find the leaves: they know every container kind, however deep.",
    spec="`count_params(tree)` -> total number of scalars in all leaves ... work on arbitrary nesting of dicts, lists, tuples and namedtuples",
)
def test_count_params_nested(student: Remote, seed: int) -> None:
    values.assert_matches_reference(
        student.count_params,
        _ref_count,
        st.tuples(_TREES),
        what="count_params(tree)",
        max_examples=25,
        seed=seed,
        diagnostics=_count_diagnostics,
        fix="`sum(leaf.size for leaf in jax.tree.leaves(tree))`",
    )


# -- tree_sgd ----------------------------------------------------------------------------


@check(
    "tree_sgd updates the lesson params leaf by leaf",
    points=2,
    hint="Which jax.tree function applies a two-argument function to matching leaves of two trees?",
    nudge="A tree map over two trees of the same structure calls your function on each pair of matching leaves and rebuilds the tree.",
    spec="`tree_sgd(params, grads, lr)` -> `params - lr * grads` leaf by leaf (`jax.tree.map`)",
)
def test_tree_sgd_lesson(student: Remote) -> None:
    # two lesson dicts of other sizes: a cause is named only when both show it
    seen = []
    for sizes in ((6, 5, 4, 3), (3, 2, 4)):
        params, grads = mlp_params(sizes, exact=True), mlp_params(sizes, 1, exact=True)
        expected = _ref_sgd(params, grads, 0.5)
        got = student.tree_sgd(params, grads, 0.5)
        values.assert_tree_structure(
            got, expected, what="tree_sgd(params, grads, 0.5)", fix=_STRUCTURE_FIX
        )
        seen.append(((params, grads, 0.5), got, expected))
    cause = diagnose.confirmed(seen, _sgd_diagnostics, reference=_ref_sgd)
    for _, got, expected in seen:
        values.assert_close(got, expected, what="tree_sgd(params, grads, 0.5)", cause=cause)


@check(
    "tree_sgd keeps any tree structure (lists, tuples, namedtuples, dicts)",
    points=2,
    hint="If you flatten the trees with jax.tree.leaves, how do you get the original containers back?",
    nudge="A tree map rebuilds whatever containers it was given; rebuilding them by hand only works for the kinds you thought of.",
    spec="`tree_sgd(params, grads, lr)` -> `params - lr * grads` leaf by leaf (`jax.tree.map`) ... work on arbitrary nesting of dicts, lists, tuples and namedtuples; structure preserved",
)
def test_tree_sgd_nested(student: Remote, seed: int) -> None:
    values.assert_matches_reference(
        # Eager: jitted, every generated tree would compile a program of its own; eagerly only
        # the few leaf shapes compile.
        student.tree_sgd,
        _ref_sgd,
        _sgd_args(),
        what="tree_sgd(params, grads, lr)",
        max_examples=20,
        seed=seed,
        diagnostics=_sgd_diagnostics,
        fix=_STRUCTURE_FIX,
    )


@check(
    "tree_sgd is pure: params unchanged, no module state, nothing only at trace time",
    points=1,
    hint="Do you assign into params[...] (changing the caller's dict) or keep anything in a global?",
    requires=("test_tree_sgd_lesson",),
    nudge="Return a new tree built from the old leaves instead of assigning into the caller's containers.",
    spec="purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
)
def test_tree_sgd_pure(student: Remote) -> None:
    params = {
        "layer1": {"w": np.ones((3, 2), np.float32), "b": np.zeros(2, np.float32)},
        "layer2": {"w": np.ones((2, 1), np.float32), "b": np.zeros(1, np.float32)},
    }
    grads = jax.tree.map(lambda p: np.full_like(p, 0.5), params)
    purity.assert_pure(
        student.tree_sgd, (params, grads, 0.1), what="tree_sgd(params, grads, 0.1)", module=student
    )
    purity.assert_no_trace_side_effects(
        student.tree_sgd, (params, grads, 0.1), what="tree_sgd(params, grads, 0.1)", module=student
    )


@check(
    "tree_sgd compiles under jax.jit",
    points=1,
    hint="Under jit the leaves are tracers: does your code convert them to NumPy or Python numbers?",
    requires=("test_tree_sgd_lesson",),
    nudge="Under jit every leaf is a tracer: the update must stay a jax.numpy expression, with no conversion to NumPy or Python numbers.",
    spec="jittable where the output is an array",
)
def test_tree_sgd_jit(student: Remote) -> None:
    params = mlp_params((4, 3, 2), exact=True)
    grads = mlp_params((4, 3, 2), 1, exact=True)
    # The eager and the jitted call each get their own copy of the arguments in the sandbox:
    # an in-place update of params (judged by test_tree_sgd_pure) cannot change what the other sees.
    jit.assert_jittable(student.tree_sgd, (params, grads, 0.25), what="tree_sgd(params, grads, lr)")


# -- tree_global_norm ----------------------------------------------------------------


@check(
    "tree_global_norm is the L2 norm of all leaves together",
    points=2,
    hint="The global norm is not the sum of the leaves' norms: what do you add up before the one square root?",
    nudge="Sum the squares over every leaf first, then take a single square root of the total.",
    spec="`tree_global_norm(tree)` -> sqrt of the sum of squares of all leaves ... work on arbitrary nesting of dicts, lists, tuples and namedtuples",
)
def test_global_norm_values(student: Remote, seed: int) -> None:
    values.assert_matches_reference(
        student.tree_global_norm,  # eager, as tree_sgd above
        _ref_norm,
        st.tuples(_TREES),
        what="tree_global_norm(tree)",
        max_examples=20,
        seed=seed,
        diagnostics=_norm_diagnostics,
        fix="`jnp.sqrt(sum(jnp.sum(leaf ** 2) for leaf in jax.tree.leaves(tree)))`",
    )


@check(
    "tree_global_norm is pure and compiles under jax.jit",
    points=1,
    hint="Under jit the leaves are tracers: can float(), math.sqrt or np.* work on a value that is not "
    "known yet? And does the function touch anything besides its argument?",
    requires=("test_global_norm_values",),
    nudge="Under jit the leaves are tracers, so the sum and the square root must be jax.numpy operations, not float() or math.sqrt.",
    spec="jittable where the output is an array ... purity is checked (same inputs, same outputs; no mutation of arguments or module state; no global NumPy/`random` RNG; no Python side effects that only happen at trace time)",
)
def test_global_norm_jit(student: Remote) -> None:
    tree = mlp_params((5, 4, 3), exact=True)
    jit.assert_jittable(student.tree_global_norm, (tree,), what="tree_global_norm(tree)")
    purity.assert_pure(
        student.tree_global_norm, (tree,), what="tree_global_norm(tree)", module=student
    )
    purity.assert_no_trace_side_effects(
        student.tree_global_norm, (tree,), what="tree_global_norm(tree)", module=student
    )


# -- layer_shapes ------------------------------------------------------------------


@check(
    "layer_shapes gives the lesson params' shapes, compared with ==",
    points=2,
    hint="Which function maps every leaf to something else but keeps the dict-of-dicts around it?",
    nudge="A tree map can replace each leaf by anything, here its shape, and keeps the dict-of-dicts around it.",
    spec="`layer_shapes(params)` -> the same tree structure with each leaf replaced by its shape tuple (tuples are pytrees themselves: compare with `==`)",
)
def test_layer_shapes_lesson(student: Remote) -> None:
    params = mlp_params(_LESSON_SIZES, exact=True)
    expected = {
        "layer1": {"w": (784, 256), "b": (256,)},
        "layer2": {"w": (256, 128), "b": (128,)},
        "layer3": {"w": (128, 10), "b": (10,)},
    }
    got = student.layer_shapes(params)
    if got != expected:
        raise fail(
            "layer_shapes(params) == the expected shapes, for the lesson's MLP",
            expected=repr(expected),
            observed=repr(got),
            cause=_shapes_cause(got, params),
            fix="`jax.tree.map(lambda leaf: leaf.shape, params)`",
        )


def _walk_cause(student: Remote) -> str:
    """Where layer_shapes raised on the nested tree: named when it is right on the lesson's
    dict of dicts (so the containers or depth of the other tree are what it cannot walk)."""
    params = mlp_params((6, 5, 4), exact=True)
    try:
        got = student.layer_shapes(params)
    except StudentError:  # the student's error: the observed line shows the nested tree's
        return ""
    try:
        if not bool(got == _ref_shapes(params)):
            return ""
    except (TypeError, ValueError):  # arrays among the leaves: not right
        return ""
    return (
        "layer_shapes is right on a dict of dicts like the lesson's and raises on this tree of "
        "lists, tuples, a namedtuple and dicts at other depths: it walks only the containers "
        "it expects"
    )


@check(
    "layer_shapes keeps any nesting (dicts, lists, tuples, namedtuples)",
    points=2,
    hidden=True,
    hint="Does your code assume a dict of dicts? What handles every kind of container for you?",
    nudge="Let a tree map walk the containers: it rebuilds lists, tuples, namedtuples and dicts as they were, with a shape tuple per leaf.",
    spec="`layer_shapes(params)` -> the same tree structure with each leaf replaced by its shape tuple ... work on arbitrary nesting of dicts, lists, tuples and namedtuples; structure preserved",
)
def test_layer_shapes_nested(student: Remote, seed: int) -> None:
    try:
        got = student.layer_shapes(_NESTED)
    except (AttributeError, KeyError, TypeError) as exc:
        raise CheckFailure(
            "layer_shapes(tree) for a tree of dicts, lists, tuples and a namedtuple",
            expected=repr(_NESTED_SHAPES),
            observed=f"{type(exc).__name__}: {exc}",
            cause=_walk_cause(student),
            fix="`jax.tree.map(lambda leaf: leaf.shape, params)` handles every kind of container",
        ) from None
    if got != _NESTED_SHAPES:
        raise fail(
            "layer_shapes(tree) == the expected shapes, for a tree of dicts, lists, tuples and a namedtuple",
            expected=repr(_NESTED_SHAPES),
            observed=repr(got),
            cause=_shapes_cause(got, _NESTED),
            fix="`jax.tree.map(lambda leaf: leaf.shape, params)`",
        )
    values.assert_matches_reference(
        student.layer_shapes,
        _ref_shapes,
        st.tuples(_TREES),
        what="layer_shapes(tree)",
        max_examples=20,
        seed=seed,
        fix="`jax.tree.map(lambda leaf: leaf.shape, params)`",
    )
