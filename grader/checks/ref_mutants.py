"""Mutants of the reference: the judge's own reference function rewritten with one small
mistake each, for `diagnose.across`'s last tier.

A mistake particular to one function (an index one off, a mean where a sum belongs, a
suffix sum for a prefix sum, `<` for `<=`, a reduction along the other axis) is the reference
with one small edit. Where no earlier tier confirmed a cause, `across` offers each mutant as
a diagnostic whose alternative is the mutant applied to that input's arguments, and holds it
to its usual rule: named only when the mutant reproduces the student's values on every
failing input tried, one of them of other argument sizes, and only when one text remains.

    found = ref_mutants.mutants(reference)     # () for a lambda, a builtin, a frozen install
    budget = ref_mutants.Budget()              # one per failing check: BUDGET_S of wall time
    found[0].bound(budget)(*args)              # raises once the budget is spent

The reference's source is read with `inspect.getsource` (the judge's own installed suite
file) and rewritten with the standard library's `ast` only; each mutant is compiled in the
reference's own globals (a copy: the module is never touched) and closure. After the
reference's own edits come those of each module-level `_ref_*` function it calls by name, one
level deep: the reference's code runs with that name bound to the edited helper. Mutants never
run student code: they are the judge's references, called with the judge's inputs. The
edits are made in one fixed order (the nodes in `ast.walk`'s order, each operator's edits in
a fixed order), so verdicts are reproducible. Each operator has one text, written about the
student's values: "your values equal the right computation's with <the edit>".
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import textwrap
import time
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

# at most this many mutants of one reference (the first in the fixed order), and this many
# seconds of wall time for the whole tier on one failing check
MAX_MUTANTS = 60
BUDGET_S = 1.5

_START = "your values equal the right computation's with "

# one text per operator, {fields} filled from the edit
TEXTS = {
    "index": _START + "an index one {step} ({new} where it takes {old})",
    "slice": _START + "a slice bound one {step} ({new} where it has {old})",
    "range": _START + "a range() bound one {step} ({new} where it has {old})",
    "bound": _START + "the bound of a comparison one {step} ({new} where it compares with {old})",
    "exponent": _START + "the power {new} where it raises to the power {old}",
    "keyword": _START + "{name}={new} where it passes {name}={old}",
    "integer": _START + "a whole-number constant one {step} ({new} where it has {old})",
    "axis": _START + "the operation along axis {new} where it goes along axis {old}",
    "add": _START + "a subtraction in place of one of its additions",
    "subtract": _START + "an addition in place of one of its subtractions",
    "multiply": _START + "a division in place of one of its multiplications",
    "divide": _START + "a multiplication in place of one of its divisions",
    "negate": _START + "the minus sign of one of its negations dropped",
    "reduce": _START + "{new} in place of its {old}",
    "cumulative": _START
    + "its cumulative {what} taken from the end: each entry is the {what} from it to the "
    "last element, where the right one runs from the first element to it",
    "compare": _START + "`{new}` in place of its `{old}`: values equal to the bound fall on "
    "the other side",
    "constant": _START + "its constant {old} {how} ({new})",
    "dropped": _START + "its {what} left out",
}

# a reduction and what it is swapped for (in this order)
_REDUCTIONS = {
    "sum": ("mean", "prod"),
    "mean": ("sum",),
    "prod": ("sum",),
    "var": ("std",),
    "std": ("var",),
    "max": ("min",),
    "min": ("max",),
    "amax": ("amin",),
    "amin": ("amax",),
    "argmax": ("argmin",),
    "argmin": ("argmax",),
}
# each reduction's words: as the student's (with an article), and as the right one's
_REDUCTION_WORDS = {
    "sum": ("a sum", "sum"),
    "mean": ("a mean", "mean"),
    "prod": ("a product", "product"),
    "var": ("a variance", "variance"),
    "std": ("a standard deviation", "standard deviation"),
    "max": ("a maximum", "maximum"),
    "min": ("a minimum", "minimum"),
    "amax": ("a maximum", "maximum"),
    "amin": ("a minimum", "minimum"),
    "argmax": ("an argmax", "argmax"),
    "argmin": ("an argmin", "argmin"),
}
_CUMULATIVE = {"cumsum": "sum", "cumprod": "product"}
# a cumulative reduction and the other one, with the words of each (as above)
_CUMULATIVE_SWAP = {
    "cumsum": ("cumprod", "a cumulative product", "cumulative sum"),
    "cumprod": ("cumsum", "a cumulative sum", "cumulative product"),
}
# one-argument elementwise functions whose call may be left out: f(x) -> x
_ELEMENTWISE = {
    "sqrt": "square root",
    "exp": "exponential",
    "abs": "absolute value",
    "absolute": "absolute value",
    "log": "logarithm",
    "square": "square",
    "tanh": "tanh",
}
_MODULES = frozenset({"np", "jnp", "numpy", "onp", "math"})
_COMPARISONS: dict[type[ast.cmpop], tuple[type[ast.cmpop], str]] = {
    ast.Lt: (ast.LtE, "<"),
    ast.LtE: (ast.Lt, "<="),
    ast.Gt: (ast.GtE, ">"),
    ast.GtE: (ast.Gt, ">="),
}
_SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_OPERATORS: dict[type[ast.operator], tuple[type[ast.operator], str]] = {
    ast.Add: (ast.Sub, "add"),
    ast.Sub: (ast.Add, "subtract"),
    ast.Mult: (ast.Div, "multiply"),
    ast.Div: (ast.Mult, "divide"),
}
# the name the reversing helper of a cumulative edit has in the mutant's globals
_FLIP = "_mutant_flip_"


class Budget:
    """The wall time left to the tier on one failing check. `refused` records that a mutant
    was not run for want of time: a mutant not held to every input could leave one text
    standing where two hold, so the tier then names nothing."""

    def __init__(self, seconds: float | None = None) -> None:
        self.deadline = time.monotonic() + (BUDGET_S if seconds is None else seconds)
        self.refused = False

    def spent(self) -> bool:
        if time.monotonic() > self.deadline:
            self.refused = True
        return self.refused


class OverBudget(Exception):
    """The tier's time on this failing check is spent: the mutant is not run."""


@dataclass(frozen=True)
class Mutant:
    """One edit of the reference: `function` is the edited reference, `text` says what the
    edit is (in the student's terms), `kind` tells this mutant from the others."""

    function: Callable[..., Any]
    text: str
    kind: str

    def bound(self, budget: Budget) -> Callable[..., Any]:
        """The mutant as a function that raises `OverBudget` once `budget` is spent, and
        raises for a warning (numpy's floating-point ones are silenced: not a warning)."""

        def run(*args: Any) -> Any:
            if budget.spent():
                raise OverBudget
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("error")
                return self.function(*args)

        return run


def mutants(reference: Callable[..., Any]) -> tuple[Mutant, ...]:
    """The mutants of `reference` (at most MAX_MUTANTS, in a fixed order), or () where its
    source cannot be read and rebuilt: a lambda, a builtin or a NumPy ufunc, a method, a
    decorated function, a frozen install. A `functools.partial` of a function is mutated
    in its function, with the same arguments bound."""
    if isinstance(reference, functools.partial):
        bound = reference.args, reference.keywords
        return tuple(
            Mutant(functools.partial(m.function, *bound[0], **bound[1]), m.text, m.kind)
            for m in mutants(reference.func)
        )
    if not inspect.isfunction(reference) or reference.__name__ == "<lambda>":
        return ()
    try:
        return _cached(reference)
    except TypeError:  # an unhashable function object
        return _mutants(reference)


@functools.lru_cache(maxsize=64)
def _cached(reference: Callable[..., Any]) -> tuple[Mutant, ...]:
    return _mutants(reference)


def _mutants(reference: Callable[..., Any]) -> tuple[Mutant, ...]:
    """The reference's own edits first, then those of each module-level `_ref_*` helper it
    calls (one level deep: the reference as it is, calling the edited helper), MAX_MUTANTS in
    all."""
    function = _parsed(reference)
    if function is None:
        return ()
    found: list[Mutant] = []
    number = 0
    for name, helper, parsed in [(None, reference, function), *_helpers(reference, function)]:
        for position, edit, text in _edits(parsed):
            if len(found) >= MAX_MUTANTS:
                return tuple(found)
            edited = copy.deepcopy(parsed)
            _apply(edited, position, edit)
            built = _build(helper, edited)
            if built is not None and name is not None:
                built = _calling(reference, name, built)
            if built is not None:
                found.append(Mutant(built, text, f"mutant{number}"))
            number += 1
    return tuple(found)


def _helpers(
    reference: Callable[..., Any], function: ast.FunctionDef
) -> list[tuple[str, Callable[..., Any], ast.FunctionDef]]:
    """(name, function, its parsed def) of each module-level `_ref_*` function the reference
    calls by its global name, in the order of its first call in `ast.walk`'s order: a plain
    function of readable source (not the reference itself, not a local or closure name)."""
    code = reference.__code__
    local = {*code.co_varnames, *code.co_freevars, *code.co_cellvars, reference.__name__}
    found: list[tuple[str, Callable[..., Any], ast.FunctionDef]] = []
    for node in ast.walk(function):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        name = node.func.id
        if not name.startswith("_ref_") or name in local or any(n == name for n, *_ in found):
            continue
        helper = reference.__globals__.get(name)
        if not inspect.isfunction(helper) or helper.__name__ != name:
            continue
        parsed = _parsed(helper)
        if parsed is not None:
            found.append((name, helper, parsed))
    return found


def _calling(reference: Callable[..., Any], name: str, helper: Callable[..., Any]) -> Any:
    """The reference's own code with its global `name` bound to `helper` (in a copy of its
    globals: the module is never touched)."""
    namespace = dict(reference.__globals__)
    namespace[name] = helper
    built = types.FunctionType(
        reference.__code__,
        namespace,
        reference.__name__,
        reference.__defaults__,
        reference.__closure__,
    )
    built.__kwdefaults__ = copy.copy(reference.__kwdefaults__)
    return built


def _parsed(reference: Callable[..., Any]) -> ast.FunctionDef | None:
    """The reference's def, its annotations stripped, or None where it cannot be read."""
    try:
        source = textwrap.dedent(inspect.getsource(reference))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    function = tree.body[0]
    if function.decorator_list or function.name != reference.__name__:
        return None
    for node in ast.walk(function):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.returns = None
        if isinstance(node, ast.arg):
            node.annotation = None
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            node.annotation = ast.Constant(None)
    return function


def _build(reference: Callable[..., Any], function: ast.FunctionDef) -> Callable[..., Any] | None:
    """The edited def compiled in a copy of the reference's globals, its free variables
    bound to the reference's closure cells' contents; None where it cannot be."""
    code = reference.__code__
    names = code.co_freevars
    cells = reference.__closure__ or ()
    try:
        values = [cell.cell_contents for cell in cells]
    except ValueError:  # an empty cell
        return None
    namespace = dict(reference.__globals__)
    namespace[_FLIP] = _flip
    body: list[ast.stmt] = [function]
    if names:  # the def inside a function of its free variables, which returns it
        maker = ast.FunctionDef(
            name="_mutant_maker_",
            args=ast.arguments(
                posonlyargs=[],
                args=[ast.arg(arg=name) for name in names],
                kwonlyargs=[],
                kw_defaults=[],
                defaults=[],
            ),
            body=[function, ast.Return(ast.Name(function.name, ast.Load()))],
            decorator_list=[],
        )
        if "type_params" in ast.FunctionDef._fields:  # Python 3.12 on
            setattr(maker, "type_params", [])  # noqa: B010 (a field 3.11's ast lacks)
        body = [maker]
    module = ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))
    try:
        exec(compile(module, code.co_filename, "exec", dont_inherit=True), namespace)
        built = namespace["_mutant_maker_"](*values) if names else namespace[function.name]
    except Exception:  # the edit does not compile or the def does not run
        return None
    return built if callable(built) else None


def judge_side(args: Any) -> bool:
    """No function among the arguments but the judge's own (the grader's, NumPy's, JAX's):
    a mutant is never handed student code to run."""
    items = list(args) if isinstance(args, tuple | list) else [args]
    for item in items:
        if callable(item) and not isinstance(item, np.ndarray | np.generic):
            module = getattr(item, "__module__", None) or ""
            if not module.startswith(("grader", "numpy", "jax", "optax")):
                return False
    return True


def _flip(a: Any, axis: Any = None) -> Any:
    return np.flip(a) if axis is None else np.flip(a, axis)


# -- the edits -------------------------------------------------------------------------------
#
# An edit is (the node's position in ast.walk's order of the def, a function that edits that
# node of a copy and returns what replaces it, the text). Only the def's body is edited: its
# defaults are not (an edited default changes nothing where every argument is given).

Edit = Callable[[ast.AST], ast.AST]


def _edits(function: ast.FunctionDef) -> Iterator[tuple[int, Edit, str]]:
    parents = _parents(function)
    body_nodes = {id(node) for statement in function.body for node in ast.walk(statement)}
    docstring = _docstring(function)
    for position, node in enumerate(ast.walk(function)):
        if id(node) not in body_nodes or node is docstring:
            continue
        for edit, text in _node_edits(node, parents):
            yield position, edit, text


def _docstring(function: ast.FunctionDef) -> ast.AST | None:
    first = function.body[0] if function.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return first.value
    return None


def _parents(root: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(root) for child in ast.iter_child_nodes(node)}


def _apply(root: ast.AST, position: int, edit: Edit) -> None:
    """Edit the node at `position` (ast.walk's order) of `root`, in its parent's place."""
    target = next(node for number, node in enumerate(ast.walk(root)) if number == position)
    parent = _parents(root)[id(target)]
    replacement = edit(target)
    if replacement is target:
        return
    for field, value in ast.iter_fields(parent):
        if value is target:
            setattr(parent, field, replacement)
            return
        if isinstance(value, list):
            for index, item in enumerate(value):
                if item is target:
                    value[index] = replacement
                    return


def _node_edits(node: ast.AST, parents: dict[int, ast.AST]) -> Iterator[tuple[Edit, str]]:
    whole = _whole_number(node)
    if whole is not None and not _inside_whole_number(node, parents):
        yield from _integer_edits(node, whole, parents)
        return
    if isinstance(node, ast.Constant) and type(node.value) is float:
        yield from _float_edits(node.value)
    yield from _shift_edits(node, parents)
    if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _OPERATORS:
        operator, key = _OPERATORS[type(node.op)]
        yield _set_op(operator), TEXTS[key]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        yield (lambda n: n.operand if isinstance(n, ast.UnaryOp) else n), TEXTS["negate"]
    if isinstance(node, ast.Compare):
        for index, op in enumerate(node.ops):
            if type(op) in _COMPARISONS:
                other, old = _COMPARISONS[type(op)]
                new = _SYMBOL[other]
                yield _set_compare(index, other), TEXTS["compare"].format(new=new, old=old)
    if isinstance(node, ast.Call):
        yield from _call_edits(node)


def _whole_number(node: ast.AST) -> int | None:
    """The int a constant (or a minus sign and a constant) is, or None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _inside_whole_number(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """The constant of `-1`: the minus sign's node is the number."""
    parent = parents.get(id(node))
    return parent is not None and _whole_number(parent) is not None


def _integer_edits(
    node: ast.AST, value: int, parents: dict[int, ast.AST]
) -> Iterator[tuple[Edit, str]]:
    parent = parents.get(id(node))
    if isinstance(parent, ast.keyword) and parent.arg == "axis":
        for new in (0, 1, 2):
            if new != value:
                yield _constant(new), TEXTS["axis"].format(new=new, old=value)
        return
    bound = _offset_bound(node, parents)
    if bound is not None:  # `i + 1` as an index or a bound: the bound one off, as a whole
        where, expression = bound
        for step, word in ((1, "more"), (-1, "less")):
            if isinstance(expression.op, ast.Sub):  # `n - 1` to `n - 2` is one less
                word = "less" if word == "more" else "more"
            was, shown = _offset_texts(expression, node, value + step)
            yield _constant(value + step), TEXTS[where].format(step=word, new=shown, old=was)
        return
    context = _context(node, parent, parents)
    if context is None:
        return
    for step, word in ((1, "more"), (-1, "less")):
        new = value + step
        if context == "keyword":
            assert isinstance(parent, ast.keyword)
            text = TEXTS["keyword"].format(name=parent.arg, new=new, old=value)
        else:
            text = TEXTS[context].format(step=word, new=new, old=value)
        yield _constant(new), text


def _offset_bound(node: ast.AST, parents: dict[int, ast.AST]) -> tuple[str, ast.BinOp] | None:
    """(its context, the expression) where `node` is the whole number added to or taken
    from an index, a slice bound or a range() bound (the 1 of `x[: i + 1]`)."""
    parent = parents.get(id(node))
    if not (
        isinstance(parent, ast.BinOp)
        and isinstance(parent.op, ast.Add | ast.Sub)
        and node is parent.right
    ):
        return None
    context = _context(parent, parents.get(id(parent)), parents)
    if context == "bound" and not _compared_with(parent, parents):
        return None  # `i + 1 < n`: the left side is what is compared, not the bound
    return (context, parent) if context in ("index", "slice", "range", "bound") else None


def _compared_with(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """`node` is a bound of its comparison: one of its comparators (`n` of `i < n`)."""
    parent = parents.get(id(node))
    return isinstance(parent, ast.Compare) and any(node is c for c in parent.comparators)


def _offset_texts(expression: ast.BinOp, node: ast.AST, new: int) -> tuple[str, str]:
    """The expression as written, and with `node` (its right operand) made `new`."""
    edited = copy.deepcopy(expression)
    edited.right = _constant(new)(node)  # type: ignore[assignment]
    shown = ast.unparse(expression.left) if new == 0 else ast.unparse(edited)
    return ast.unparse(expression), shown


def _context(node: ast.AST, parent: ast.AST | None, parents: dict[int, ast.AST]) -> str | None:
    """Where a whole number stands: an index, a slice bound, a range() bound, the bound of a
    comparison, an exponent, a keyword's value, another constant; None for a slice's step."""
    if isinstance(parent, ast.Slice):
        return None if node is parent.step else "slice"
    if isinstance(parent, ast.Tuple) and isinstance(parents.get(id(parent)), ast.Subscript):
        return "index"
    if isinstance(parent, ast.Subscript) and node is parent.slice:
        return "index"
    if (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id == "range"
    ):
        return "range"
    if isinstance(parent, ast.Compare):
        return "bound"
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Pow) and node is parent.right:
        return "exponent"
    if isinstance(parent, ast.keyword) and parent.arg is not None:
        return "keyword"
    return "integer"


def _shift_edits(node: ast.AST, parents: dict[int, ast.AST]) -> Iterator[tuple[Edit, str]]:
    """An index, a slice bound, a range() bound or a comparison's bound that is an
    expression (`out[i]`, `x[:n]`, `range(len(xs))`, the `n` of `i < n`), one more and one
    less."""
    if not isinstance(node, ast.expr) or isinstance(
        node, ast.Constant | ast.Slice | ast.Tuple | ast.Starred
    ):
        return
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add | ast.Sub)
        and _whole_number(node.right) is not None
    ):
        return  # `i + 1`: its whole number's own edits are the bound one off
    context = _context(node, parents.get(id(node)), parents)
    if context not in ("index", "slice", "range", "bound"):
        return
    if context == "bound" and not _compared_with(node, parents):
        return
    old = ast.unparse(node)
    for operator, sign, word in ((ast.Add, "+", "more"), (ast.Sub, "-", "less")):
        new = f"{old} {sign} 1"
        yield _shift(operator), TEXTS[str(context)].format(step=word, new=new, old=old)


def _shift(operator: type[ast.operator]) -> Edit:
    def edit(node: ast.AST) -> ast.AST:
        assert isinstance(node, ast.expr)
        return ast.BinOp(node, operator(), ast.Constant(1))

    return edit


def _float_edits(value: float) -> Iterator[tuple[Edit, str]]:
    if value == 0.0 or not np.isfinite(value):
        return
    for factor, how in ((2.0, "doubled"), (0.5, "halved")):
        new = value * factor
        yield _constant(new), TEXTS["constant"].format(old=repr(value), how=how, new=repr(new))


def _call_edits(node: ast.Call) -> Iterator[tuple[Edit, str]]:
    name, module_call = _called(node)
    if name in _REDUCTIONS and (isinstance(node.func, ast.Attribute) or name in ("max", "min")):
        for other in _REDUCTIONS[name]:  # (a method, a module's function, the builtins max, min)
            new, old = _REDUCTION_WORDS[other][0], _REDUCTION_WORDS[name][1]
            yield _rename(other), TEXTS["reduce"].format(new=new, old=old)
    if name in _CUMULATIVE and isinstance(node.func, ast.Attribute):
        yield _reverse_cumulative(module_call), TEXTS["cumulative"].format(what=_CUMULATIVE[name])
        other, new, old = _CUMULATIVE_SWAP[name]
        yield _rename(other), TEXTS["reduce"].format(new=new, old=old)
    if (
        name in _ELEMENTWISE
        and (module_call or (name == "abs" and isinstance(node.func, ast.Name)))
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    ):
        yield _first_argument, TEXTS["dropped"].format(what=_ELEMENTWISE[name])
    if name == "maximum" and module_call and len(node.args) == 2 and not node.keywords:
        for index in (0, 1):
            if _is_zero(node.args[1 - index]):
                yield (
                    _argument(index),
                    TEXTS["dropped"].format(what="cut at 0 (a maximum with 0)"),
                )


def _called(node: ast.Call) -> tuple[str | None, bool]:
    """The called function's name, and whether it is a module's (np.sum) rather than a
    method (x.sum()) or a builtin (max)."""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id, False
    if isinstance(func, ast.Attribute):
        module_call = isinstance(func.value, ast.Name) and func.value.id in _MODULES
        return func.attr, module_call
    return None, False


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 0


def _constant(value: int | float) -> Edit:
    def edit(node: ast.AST) -> ast.AST:
        if value < 0:
            return ast.UnaryOp(ast.USub(), ast.Constant(-value))
        return ast.Constant(value)

    return edit


def _set_op(op: type[ast.operator]) -> Edit:
    def edit(node: ast.AST) -> ast.AST:
        assert isinstance(node, ast.BinOp | ast.AugAssign)
        node.op = op()
        return node

    return edit


def _set_compare(index: int, op: type[ast.cmpop]) -> Edit:
    def edit(node: ast.AST) -> ast.AST:
        assert isinstance(node, ast.Compare)
        node.ops[index] = op()
        return node

    return edit


def _rename(name: str) -> Edit:
    def edit(node: ast.AST) -> ast.AST:
        assert isinstance(node, ast.Call)
        if isinstance(node.func, ast.Attribute):
            node.func.attr = name
        elif isinstance(node.func, ast.Name):
            node.func.id = name
        return node

    return edit


def _first_argument(node: ast.AST) -> ast.AST:
    assert isinstance(node, ast.Call)
    return node.args[0]


def _argument(index: int) -> Edit:
    def edit(node: ast.AST) -> ast.AST:
        assert isinstance(node, ast.Call)
        return node.args[index]

    return edit


def _reverse_cumulative(module_call: bool) -> Edit:
    """np.cumsum(a, axis) -> flip(np.cumsum(flip(a, axis), axis), axis), and a.cumsum(axis)
    -> flip(flip(a, axis).cumsum(axis), axis): the sums from each entry to the end."""

    def edit(node: ast.AST) -> ast.AST:
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        axis = _axis_of(node, 1 if module_call else 0)
        if module_call:
            if not node.args:
                return node
            node.args[0] = _flip_call(node.args[0], axis)
        else:
            node.func.value = _flip_call(node.func.value, axis)
        return _flip_call(node, axis)

    return edit


def _axis_of(node: ast.Call, position: int) -> ast.expr:
    for keyword in node.keywords:
        if keyword.arg == "axis":
            return copy.deepcopy(keyword.value)
    if len(node.args) > position and not isinstance(node.args[position], ast.Starred):
        return copy.deepcopy(node.args[position])
    return ast.Constant(None)


def _flip_call(value: ast.expr, axis: ast.expr) -> ast.expr:
    return ast.Call(ast.Name(_FLIP, ast.Load()), [value, copy.deepcopy(axis)], [])
