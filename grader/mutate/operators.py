"""Mutation operators for JAX lesson code, on libcst's concrete syntax trees.

An operator looks at one node of the tree (with the function it is in) and proposes
replacements for that node: each replacement is one mutant. Replacing a node keeps
the rest of the file byte for byte (libcst round-trips formatting and comments), so
a mutant's diff shows only the defect.

JAX-aware operators (the defects a lesson's students make):

    cond_to_where      lax.cond(p, t, f, x)       -> jnp.where(p, t(x), f(x))
    cond_to_if         lax.cond(p, t, f, x)       -> (t(x) if p else f(x))
    loop_to_python     lax.scan/fori_loop/while_loop -> a Python loop (helpers appended)
    vmap_to_loop       jax.vmap(f, in_axes=...)   -> a Python loop over the batch, stacked
    split_dropped      jax.random.split(k, n)     -> n copies of k
    key_reused         jax.random.normal(sub, ..) -> jax.random.normal(key, ..); fold_in(k, i) -> k
    axis_changed       axis=0 -> axis=1, in_axes=(None, 0) -> (0, 0) ...
    jnp_to_np          jnp.f(...)                 -> np.f(...)
    static_removed     jax.jit(f, static_argnames=...) -> jax.jit(f)
    jit_removed        @jax.jit / jax.jit(f)      -> plain Python
    update_dropped     x = f(x, ...)              -> pass; a, s = g(s) -> a, _ = g(s)
    state_returned     return g(state, ...), ...  -> return state, ...  (the input state)
    api_swapped        pmean <-> psum, mean <-> sum, argmax -> argmin, std -> var, ...

Generic operators:

    sign_flipped       -x -> x, a + b <-> a - b
    arith_changed      a * b <-> a / b, a ** b -> a * b
    off_by_one         range/fori_loop bounds, slice bounds, enumerate start
    constant_changed   ints + 1, floats doubled (0 -> 1), True <-> False
    comparison_changed < -> <=, > -> >=, == <-> != ...
    call_dropped       f(x) -> x for one-argument library calls (jax.nn.relu, jnp.sqrt, float)
    args_swapped       f(a, b) -> f(b, a) (optax.chain's order), f(p=a, q=b) -> f(p=b, q=a)
    kwarg_dropped      f(x, axis=-1) -> f(x) (the default used)
    statement_dropped  a call statement or a `raise` -> pass
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import libcst as cst

KEY_PARAMS = frozenset({"key", "rng", "rng_key", "prng_key", "prngkey"})
RANDOM_DRAWS = frozenset(
    {
        "normal",
        "uniform",
        "bernoulli",
        "permutation",
        "choice",
        "categorical",
        "randint",
        "truncated_normal",
        "gumbel",
        "split",
    }
)
API_SWAPS: dict[str, str] = {
    "pmean": "psum",
    "psum": "pmean",
    "mean": "sum",
    "sum": "mean",
    "argmax": "argmin",
    "argmin": "argmax",
    "std": "var",
    "log_softmax": "softmax",
    "adamw": "adam",
    "jacrev": "jacfwd",
    "max": "min",
    "min": "max",
}
"""Library functions whose last name is swapped (`jax.lax.pmean` -> `jax.lax.psum`)."""
SWAP_ROOTS = ("jnp.", "jax.", "np.", "optax.", "lax.")

HELPERS: dict[str, str] = {
    "_mutant_scan": """
def _mutant_scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    import jax
    import jax.numpy as jnp

    n = length if xs is None else len(jax.tree.leaves(xs)[0])
    carry, ys = init, []
    for i in reversed(range(n)) if reverse else range(n):
        x = None if xs is None else jax.tree.map(lambda a: a[i], xs)
        carry, y = f(carry, x)
        ys.append(y)
    ys = ys[::-1] if reverse else ys
    return carry, (jax.tree.map(lambda *a: jnp.stack(a), *ys) if ys else None)
""",
    "_mutant_fori_loop": """
def _mutant_fori_loop(lower, upper, body, init, **_):
    value = init
    for i in range(int(lower), int(upper)):
        value = body(i, value)
    return value
""",
    "_mutant_while_loop": """
def _mutant_while_loop(cond, body, init):
    value = init
    while cond(value):
        value = body(value)
    return value
""",
    "_mutant_vmap": """
def _mutant_vmap(f, in_axes=0, out_axes=0, **_):
    import jax
    import jax.numpy as jnp

    def batched(*args):
        axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
        moved = [
            a if ax is None else jax.tree.map(lambda leaf, ax=ax: jnp.moveaxis(leaf, ax, 0), a)
            for a, ax in zip(args, axes)
        ]
        n = next(len(jax.tree.leaves(a)[0]) for a, ax in zip(moved, axes) if ax is not None)
        outs = [
            f(*(a if ax is None else jax.tree.map(lambda leaf, i=i: leaf[i], a)
                for a, ax in zip(moved, axes)))
            for i in range(n)
        ]
        return jax.tree.map(lambda *o: jnp.moveaxis(jnp.stack(o), 0, out_axes), *outs)

    return batched
""",
}
"""Python stand-ins for the lax primitives a mutant replaces, appended to the mutant."""

IMPORTS: dict[str, str] = {
    "jnp": "import jax.numpy as jnp",
    "np": "import numpy as np",
    "jax": "import jax",
}
"""Module names a replacement may use, and the import appended when the file lacks it."""


@dataclass(frozen=True)
class Context:
    """Where a node is: its function (dotted for nested ones), and that function's facts."""

    function: str = "<module>"
    params: tuple[str, ...] = ()
    reassigned: frozenset[str] = frozenset()
    in_slice: bool = False


@dataclass(frozen=True)
class Replacement:
    """One proposed mutant: the node that replaces the original, and what it needs."""

    node: cst.CSTNode
    needs: tuple[str, ...] = ()  # names from IMPORTS and HELPERS the replacement uses


@dataclass(frozen=True)
class Operator:
    name: str
    description: str
    propose: Callable[[cst.CSTNode, Context], Iterator[Replacement]] = field(repr=False)


# -- small tree helpers -------------------------------------------------------------------


def dotted(node: cst.BaseExpression) -> str | None:
    """`jax.lax.cond` for the expression `jax.lax.cond`; None for anything but names."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def _is(call: cst.Call, *names: str) -> bool:
    """Is `call` a call of one of `names` (matched on the dotted name's tail: `lax.cond`
    matches `lax.cond` and `jax.lax.cond`)?"""
    name = dotted(call.func)
    return name is not None and any(name == n or name.endswith("." + n) for n in names)


def _expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def _names_in(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)
            return False  # `x.attr`: attr is not a variable

    node.visit(_Names())
    return found


def _apply(fn: cst.BaseExpression, operands: Sequence[cst.Arg]) -> str:
    """`(fn)(a, b)` as code, parenthesised so a lambda can be called."""
    inner = _code(fn)
    callee = inner if isinstance(fn, cst.Name | cst.Attribute) else f"({inner})"
    return f"{callee}({', '.join(_code(a.value) for a in operands)})"


def _no_kwargs(call: cst.Call) -> bool:
    return all(a.keyword is None and not a.star for a in call.args)


# -- JAX-aware operators ------------------------------------------------------------------


def _cond_to_where(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.Call) and _is(node, "lax.cond") and _no_kwargs(node):
        args = node.args
        if len(args) >= 3:
            pred, true_fn, false_fn, operands = args[0], args[1], args[2], args[3:]
            yield Replacement(
                _expr(
                    f"jnp.where({_code(pred.value)}, {_apply(true_fn.value, operands)}, "
                    f"{_apply(false_fn.value, operands)})"
                ),
                ("jnp",),
            )


def _cond_to_if(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.Call) and _is(node, "lax.cond") and _no_kwargs(node):
        args = node.args
        if len(args) >= 3:
            pred, true_fn, false_fn, operands = args[0], args[1], args[2], args[3:]
            yield Replacement(
                _expr(
                    f"({_apply(true_fn.value, operands)} if {_code(pred.value)} "
                    f"else {_apply(false_fn.value, operands)})"
                )
            )


_LOOPS = {"lax.scan": "_mutant_scan", "lax.fori_loop": "_mutant_fori_loop"}
_LOOPS["lax.while_loop"] = "_mutant_while_loop"


def _loop_to_python(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.Call):
        for primitive, helper in _LOOPS.items():
            if _is(node, primitive):
                yield Replacement(node.with_changes(func=cst.Name(helper)), (helper,))


def _vmap_to_loop(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if (
        isinstance(node, cst.Call)
        and _is(node, "jax.vmap")
        and all(a.keyword is None or a.keyword.value in ("in_axes", "out_axes") for a in node.args)
    ):
        yield Replacement(node.with_changes(func=cst.Name("_mutant_vmap")), ("_mutant_vmap",))


def _split_dropped(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.Call) and _is(node, "random.split"):
        positional = _positional(node)
        if not positional or len(node.args) > 2:
            return
        key = _code(positional[0].value)
        count = "2"
        if len(node.args) == 2:
            count = _code(node.args[1].value)
        yield Replacement(_expr(f"jnp.stack([{key}] * ({count}))"), ("jnp",))


def _key_reused(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if not isinstance(node, cst.Call):
        return
    if _is(node, "random.fold_in"):
        positional = _positional(node)
        if positional:
            yield Replacement(positional[0].value)
        return
    parent_keys = [p for p in ctx.params if p.lower() in KEY_PARAMS and p not in ctx.reassigned]
    name = dotted(node.func) or ""
    if not parent_keys or not name.startswith(("jax.random.", "random.")):
        return
    if name.rsplit(".", 1)[-1] not in RANDOM_DRAWS:
        return
    positional = _positional(node)
    if positional and isinstance(positional[0].value, cst.Name):
        first = positional[0].value.value
        if first not in parent_keys:
            args = list(node.args)
            index = args.index(positional[0])
            args[index] = args[index].with_changes(value=cst.Name(parent_keys[0]))
            yield Replacement(node.with_changes(args=args))


def _other_axis(value: int) -> int:
    return {0: 1, 1: 0, -1: 0}.get(value, 0)


def _axis_changed(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if not isinstance(node, cst.Arg) or node.keyword is None:
        return
    keyword, value = node.keyword.value, node.value
    if keyword in ("axis", "axes"):
        number = _int_of(value)
        if number is not None:
            yield Replacement(node.with_changes(value=_expr(str(_other_axis(number)))))
    elif keyword == "in_axes" and isinstance(value, cst.Tuple):
        for i, element in enumerate(value.elements):
            swapped: str | None = None
            if isinstance(element.value, cst.Name) and element.value.value == "None":
                swapped = "0"
            elif _int_of(element.value) is not None:
                swapped = "None"
            if swapped is not None:
                elements = list(value.elements)
                elements[i] = element.with_changes(value=_expr(swapped))
                yield Replacement(node.with_changes(value=value.with_changes(elements=elements)))
    elif keyword == "in_axes" and _int_of(value) is not None:
        yield Replacement(node.with_changes(value=_expr("None")))


def _int_of(value: cst.BaseExpression) -> int | None:
    if isinstance(value, cst.Integer):
        return int(value.value)
    if (
        isinstance(value, cst.UnaryOperation)
        and isinstance(value.operator, cst.Minus)
        and isinstance(value.expression, cst.Integer)
    ):
        return -int(value.expression.value)
    return None


def _jnp_to_np(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        func = node.func
        if isinstance(func.value, cst.Name) and func.value.value == "jnp":
            import numpy

            if hasattr(numpy, func.attr.value):
                yield Replacement(
                    node.with_changes(func=func.with_changes(value=cst.Name("np"))), ("np",)
                )


def _static_removed(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.Call) and (
        _is(node, "jax.jit") or (_is(node, "partial") and node.args and _jit_arg(node.args[0]))
    ):
        kept = [
            a
            for a in node.args
            if a.keyword is None or a.keyword.value not in ("static_argnames", "static_argnums")
        ]
        if len(kept) < len(node.args):
            yield Replacement(node.with_changes(args=_last_comma(kept, node.args)))


def _last_comma(kept: list[cst.Arg], before: Sequence[cst.Arg]) -> list[cst.Arg]:
    """`kept` with the original last argument's comma (and its line break) on its last one."""
    if kept and kept[-1] is not before[-1]:
        kept[-1] = kept[-1].with_changes(comma=before[-1].comma)
    return kept


def _jit_arg(arg: cst.Arg) -> bool:
    return dotted(arg.value) in ("jax.jit", "jit")


def _jit_removed(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.FunctionDef):
        for i, decorator in enumerate(node.decorators):
            expression = decorator.decorator
            if dotted(expression) in ("jax.jit", "jit") or (
                isinstance(expression, cst.Call)
                and (
                    _is(expression, "jax.jit")
                    or (
                        _is(expression, "partial")
                        and expression.args
                        and _jit_arg(expression.args[0])
                    )
                )
            ):
                decorators = [d for j, d in enumerate(node.decorators) if j != i]
                yield Replacement(node.with_changes(decorators=decorators))
    elif isinstance(node, cst.Call) and _is(node, "jax.jit"):
        positional = _positional(node)
        if positional:
            yield Replacement(positional[0].value)


def _update_dropped(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.AugAssign):
        yield Replacement(cst.Pass())
    elif isinstance(node, cst.Assign) and len(node.targets) == 1:
        target = node.targets[0].target
        used = _names_in(node.value)
        if isinstance(target, cst.Name) and target.value in used:
            yield Replacement(cst.Pass())
        elif isinstance(target, cst.Tuple):
            for i, element in enumerate(target.elements):
                if isinstance(element.value, cst.Name) and element.value.value in used:
                    elements = list(target.elements)
                    elements[i] = element.with_changes(value=cst.Name("_"))
                    new_target = node.targets[0].with_changes(
                        target=target.with_changes(elements=elements)
                    )
                    yield Replacement(node.with_changes(targets=[new_target]))
    elif isinstance(node, cst.Call) and _is(node, "optax.apply_updates"):
        positional = _positional(node)
        if positional:
            yield Replacement(positional[0].value)


def _state_returned(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if not isinstance(node, cst.Return) or node.value is None:
        return
    inputs = [p for p in ctx.params if p not in ctx.reassigned and p != "self"]
    if not inputs:
        return
    value = node.value
    parts: list[cst.BaseExpression] = (
        [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
    )
    for i, part in enumerate(parts):
        if isinstance(part, cst.Name):
            continue
        used = [p for p in inputs if p in _names_in(part)]
        if not used:
            continue
        if isinstance(value, cst.Tuple):
            elements = list(value.elements)
            elements[i] = elements[i].with_changes(value=cst.Name(used[0]))
            yield Replacement(node.with_changes(value=value.with_changes(elements=elements)))
        else:
            yield Replacement(node.with_changes(value=cst.Name(used[0])))


def _api_swapped(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        name = dotted(node.func)
        last = node.func.attr.value
        if name and name.startswith(SWAP_ROOTS) and last in API_SWAPS:
            swapped = node.func.with_changes(attr=cst.Name(API_SWAPS[last]))
            yield Replacement(node.with_changes(func=swapped))


# -- generic operators --------------------------------------------------------------------


def _sign_flipped(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        if not isinstance(node.expression, cst.Integer | cst.Float):
            yield Replacement(node.expression)
    elif isinstance(node, cst.BinaryOperation) and not ctx.in_slice:
        if isinstance(node.operator, cst.Add) and not _is_text(node):
            yield Replacement(node.with_changes(operator=cst.Subtract()))
        elif isinstance(node.operator, cst.Subtract):
            yield Replacement(node.with_changes(operator=cst.Add()))


def _is_text(node: cst.BinaryOperation) -> bool:
    return any(
        isinstance(side, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString)
        for side in (node.left, node.right)
    )


def _arith_changed(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.BinaryOperation) and not _is_text(node):
        swaps: dict[type[cst.BaseBinaryOp], cst.BaseBinaryOp] = {
            cst.Multiply: cst.Divide(),
            cst.Divide: cst.Multiply(),
            cst.Power: cst.Multiply(),
            cst.FloorDivide: cst.Divide(),
        }
        new = swaps.get(type(node.operator))
        if new is not None:
            yield Replacement(node.with_changes(operator=new))


def _plus(expression: cst.BaseExpression, delta: int) -> cst.BaseExpression:
    number = _int_of(expression)
    if number is not None:
        return _expr(str(number + delta))
    sign = "+" if delta > 0 else "-"
    code = _code(expression)
    if not isinstance(expression, cst.Name | cst.Attribute | cst.Call | cst.Subscript):
        code = f"({code})"
    return _expr(f"{code} {sign} {abs(delta)}")


def _off_by_one(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.Call) and (_is(node, "range") or _is(node, "lax.fori_loop")):
        positional = _positional(node)
        bounds = positional[:1] if _is(node, "range") and len(positional) == 1 else positional[:2]
        for i, arg in enumerate(bounds):
            upper = i == len(bounds) - 1
            args = list(node.args)
            index = args.index(arg)
            args[index] = arg.with_changes(value=_plus(arg.value, -1 if upper else 1))
            yield Replacement(node.with_changes(args=args))
    elif isinstance(node, cst.Slice):
        if node.lower is not None:
            yield Replacement(node.with_changes(lower=_plus(node.lower, 1)))
        if node.upper is not None:
            yield Replacement(node.with_changes(upper=_plus(node.upper, -1)))
    elif (
        isinstance(node, cst.Arg)
        and node.keyword is not None
        and node.keyword.value == "start"
        and _int_of(node.value) is not None
    ):
        yield Replacement(node.with_changes(value=_plus(node.value, -1)))


def _constant_changed(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.Integer) and not ctx.in_slice:
        yield Replacement(cst.Integer(str(int(node.value, 0) + 1)))
    elif isinstance(node, cst.Float):
        value = float(node.value)
        yield Replacement(cst.Float(repr(value * 2 if value else 1.0)))
    elif isinstance(node, cst.Name) and node.value in ("True", "False"):
        yield Replacement(cst.Name("False" if node.value == "True" else "True"))


def _comparison_changed(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.ComparisonTarget):
        swaps: dict[type[cst.BaseCompOp], Callable[[], cst.BaseCompOp]] = {
            cst.LessThan: cst.LessThanEqual,
            cst.LessThanEqual: cst.LessThan,
            cst.GreaterThan: cst.GreaterThanEqual,
            cst.GreaterThanEqual: cst.GreaterThan,
            cst.Equal: cst.NotEqual,
            cst.NotEqual: cst.Equal,
        }
        new = swaps.get(type(node.operator))
        if new is not None:
            yield Replacement(node.with_changes(operator=new()))


_DROPPABLE_ROOTS = ("jnp.", "jax.", "np.", "optax.", "lax.", "nn.")


def _call_dropped(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if (
        isinstance(node, cst.Call)
        and len(node.args) == 1
        and _no_kwargs(node)
        and not isinstance(node.args[0].value, cst.Integer | cst.Float)
    ):
        name = dotted(node.func) or ""
        if name in ("float", "int") or (
            name.startswith(_DROPPABLE_ROOTS) and name not in ("jax.jit", "jax.vmap")
        ):
            yield Replacement(node.args[0].value)


def _args_swapped(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if not isinstance(node, cst.Call):
        return
    positional = _positional(node)
    for first, second in itertools.pairwise(positional):
        if _code(first.value) != _code(second.value):
            args = list(node.args)
            i, j = args.index(first), args.index(second)
            args[i] = first.with_changes(value=second.value)
            args[j] = second.with_changes(value=first.value)
            yield Replacement(node.with_changes(args=args))
    keywords = [a for a in node.args if a.keyword is not None]
    for first, second in itertools.pairwise(keywords):
        if _code(first.value) != _code(second.value):
            args = list(node.args)
            i, j = args.index(first), args.index(second)
            args[i] = first.with_changes(value=second.value)
            args[j] = second.with_changes(value=first.value)
            yield Replacement(node.with_changes(args=args))


def _kwarg_dropped(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if isinstance(node, cst.Call):
        for i, arg in enumerate(node.args):
            if arg.keyword is not None and arg.keyword.value not in (
                "static_argnames",
                "static_argnums",
            ):
                kept = [a for j, a in enumerate(node.args) if j != i]
                yield Replacement(node.with_changes(args=_last_comma(kept, node.args)))


def _statement_dropped(node: cst.CSTNode, ctx: Context) -> Iterator[Replacement]:
    if (isinstance(node, cst.Expr) and isinstance(node.value, cst.Call)) or isinstance(
        node, cst.Raise
    ):
        yield Replacement(cst.Pass())


OPERATORS: tuple[Operator, ...] = (
    Operator("cond_to_where", "lax.cond replaced by jnp.where of both branches", _cond_to_where),
    Operator("cond_to_if", "lax.cond replaced by a Python conditional", _cond_to_if),
    Operator(
        "loop_to_python", "lax.scan/fori_loop/while_loop replaced by a Python loop", _loop_to_python
    ),
    Operator("vmap_to_loop", "jax.vmap replaced by a Python loop over the batch", _vmap_to_loop),
    Operator("split_dropped", "jax.random.split returns copies of its key", _split_dropped),
    Operator("key_reused", "a draw uses the parent key; fold_in dropped", _key_reused),
    Operator("axis_changed", "axis= or in_axes= changed", _axis_changed),
    Operator("jnp_to_np", "a jnp call replaced by NumPy's", _jnp_to_np),
    Operator(
        "static_removed", "static_argnames/static_argnums removed from jax.jit", _static_removed
    ),
    Operator("jit_removed", "jax.jit removed (decorator or call)", _jit_removed),
    Operator("update_dropped", "a state update dropped (x = f(x) -> pass)", _update_dropped),
    Operator(
        "state_returned", "a returned value replaced by the input it came from", _state_returned
    ),
    Operator(
        "api_swapped", "a library function swapped for a sibling (pmean -> psum)", _api_swapped
    ),
    Operator("sign_flipped", "a sign flipped (-x -> x, + <-> -)", _sign_flipped),
    Operator("arith_changed", "an arithmetic operator changed (* <-> /, ** -> *)", _arith_changed),
    Operator("off_by_one", "a range, loop bound, slice bound or start moved by one", _off_by_one),
    Operator("constant_changed", "a number changed or a bool flipped", _constant_changed),
    Operator("comparison_changed", "a comparison changed (< -> <=, == -> !=)", _comparison_changed),
    Operator("call_dropped", "a one-argument library call replaced by its argument", _call_dropped),
    Operator(
        "args_swapped", "two neighbouring arguments swapped (chain order, x/y)", _args_swapped
    ),
    Operator("kwarg_dropped", "a keyword argument dropped (its default used)", _kwarg_dropped),
    Operator("statement_dropped", "a call statement or a raise removed", _statement_dropped),
)
BY_NAME: dict[str, Operator] = {op.name: op for op in OPERATORS}
