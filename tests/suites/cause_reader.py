"""Reading, with `ast`, the likely-cause texts a module of the grader writes.

Two readings, each tested where it is used:

- `literals(path)`: every literal passed as `cause=` in a suite (a plain string, an
  f-string with its fields as {}, a module constant, a sum of those, each branch of an
  `if`/`or`): tests/suites/test_cause_literals.py.
- `texts(path)`: every cause text a module builds anywhere, and every place a cause comes
  from that this reading cannot follow (`Texts.unread`): tests/suites/test_cause_texts.py,
  whose docstring states the rule.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# a name that holds or returns cause text: `cause`, `_shape_cause`, `CAUSES`, `_COUNT_CAUSE`,
# `_zero_run_causes`
CAUSEY = re.compile(r"(^|_)causes?$", re.IGNORECASE)
# the module whose causes are confirmed against the reference (docs/causes.md's first tables)
CONFIRMED = ("diagnose", "_causes")  # diagnose, and the words it shares with its tiers


def _joined(parts: list[list[str] | None]) -> list[str] | None:
    """Every concatenation of one text from each part; None if a part is unreadable."""
    out = [""]
    for part in parts:
        if part is None:
            return None
        out = [left + right for left in out for right in part]
    return out


def _texts_of(node: ast.expr, constants: dict[str, str]) -> list[str] | None:
    """The texts a string expression can take: a literal, an f-string (its fields as {}), a
    module constant, a sum of those, each branch of an `if`/`or` within a sum; None for
    anything computed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)]
    if isinstance(node, ast.Name):
        return [constants[node.id]] if node.id in constants else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _joined([_texts_of(node.left, constants), _texts_of(node.right, constants)])
    if isinstance(node, (ast.IfExp, ast.BoolOp)):
        leaves = [_texts_of(leaf, constants) for leaf in branches(node)]
        return None if None in leaves else [t for leaf in leaves for t in leaf or []]
    return None


def text(node: ast.expr, constants: dict[str, str]) -> str | None:
    """The text of a string literal, an f-string (its fields as {}), a module constant or a
    sum of those; None for anything computed (or an expression of several texts)."""
    found = _texts_of(node, constants)
    return found[0] if found is not None and len(found) == 1 else None


def branches(node: ast.expr) -> list[ast.expr]:
    """`a if c else b` and `a or b` give each of their texts."""
    if isinstance(node, ast.IfExp):
        return branches(node.body) + branches(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [leaf for value in node.values for leaf in branches(value)]
    return [node]


def module_constants(tree: ast.Module) -> dict[str, str]:
    """The module's constants that are texts, by name."""
    constants: dict[str, str] = {}
    for node in tree.body:
        target = _single_target(node)
        if isinstance(target, ast.Name) and node.value is not None:  # type: ignore[attr-defined]
            found = text(node.value, {})  # type: ignore[attr-defined]
            if found is not None:
                constants[target.id] = found
    return constants


def _single_target(node: ast.stmt) -> ast.expr | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return node.targets[0]
    if isinstance(node, ast.AnnAssign):
        return node.target
    return None


def _fold(found: str) -> str:
    return " ".join(found.split())


def literals(path: Path) -> list[tuple[int, str]]:
    """(line, text with its whitespace folded) of each literal cause in the suite at `path`."""
    tree = ast.parse(path.read_text())
    constants = module_constants(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg != "cause":
                continue
            for branch in branches(keyword.value):
                literal = text(branch, constants)
                if literal and literal.strip():
                    found.append((branch.lineno, _fold(literal)))
    return found


# -- every cause text a module writes ---------------------------------------------------------


@dataclass
class Texts:
    """What `texts` read in one module: `found`, (line, function, text) of each cause text
    (`function` is the enclosing function, or the constant, or "" at module level);
    `unread`, (line, function, source) of each place a cause comes from that the reading cannot
    follow."""

    found: list[tuple[int, str, str]] = field(default_factory=list)
    unread: list[tuple[int, str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Site:
    node: ast.expr
    owner: str  # the enclosing function or constant
    element: int | None = None  # the element of a (cause, fix) tuple that is the cause
    field: bool = False  # a value put in a text's f-string field: what is not text is data


class _Module:
    """One module's functions, parameters and constants, and the cause sites in it."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.constants = module_constants(tree)
        self.values: dict[str, ast.expr] = {}  # every module-level assignment, by name
        for node in tree.body:
            target = _single_target(node)
            value = getattr(node, "value", None)
            if isinstance(target, ast.Name) and value is not None:
                self.values[target.id] = value
        self.functions: dict[str, ast.FunctionDef] = {
            node.name: node
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        }  # type: ignore[misc]
        # the position of a `cause` parameter or field, by callable (`Difference(e, o, c)`)
        self.cause_at: dict[str, int] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                fields = [
                    s.target.id
                    for s in node.body
                    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                ]
                if "cause" in fields:
                    self.cause_at[node.name] = fields.index("cause")
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node

    def owner(self, node: ast.AST) -> ast.FunctionDef | None:
        """The function `node` is in, or None at module level."""
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node  # type: ignore[return-value]
        return None

    def scopes(self, function: ast.FunctionDef) -> Iterator[ast.FunctionDef]:
        """The function and the functions it is defined in, innermost first."""
        scope: ast.FunctionDef | None = function
        while scope is not None:
            yield scope
            scope = self.owner(scope)

    def owner_name(self, node: ast.AST) -> str:
        """The enclosing function's name, or at module level the constant assigned."""
        function = self.owner(node)
        if function is not None:
            return function.name
        while node in self.parents and self.parents[node] is not self.tree:
            node = self.parents[node]
        target = _single_target(node) if isinstance(node, ast.stmt) else None
        return target.id if isinstance(target, ast.Name) else ""

    def calls_of(self, name: str) -> Iterator[ast.Call]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and _called(node) == name:
                yield node

    def sites(self) -> Iterator[_Site]:
        """Where a cause is written: a `cause=` keyword, a cause passed by position to a
        class of this module with a `cause` field, the return value of a function named
        for causes, a name for causes assigned (a local `cause`, a module `CAUSES`)."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if keyword.arg == "cause":
                        yield _Site(keyword.value, self.owner_name(node))
                if _called(node) in {f"{c}.Cause" for c in CONFIRMED} and len(node.args) > 1:
                    yield _Site(node.args[1], self.owner_name(node))  # a suite's own Cause
                at = self.cause_at.get(_called(node) or "")
                if at is not None and len(node.args) > at:
                    yield _Site(node.args[at], self.owner_name(node))
            elif isinstance(node, ast.Dict):  # {"cause": ..., "fix": ...}
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "cause":
                        yield _Site(value, self.owner_name(node))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if CAUSEY.search(node.name) and not _returns_failure(node):
                    yield from self.returns(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                target, value = _single_target(node), node.value
                if isinstance(target, ast.Name) and value is not None and CAUSEY.search(target.id):
                    owner = self.owner_name(node) or target.id
                    yield from self._values_of(value, owner)
                elif isinstance(target, ast.Tuple) and value is not None:
                    yield from self._unpacked(node, target, value)
            elif isinstance(node, ast.For) and isinstance(node.target, ast.Tuple):
                each = ast.copy_location(ast.Starred(node.iter), node.iter)
                yield from self._unpacked(node, node.target, each)

    def _unpacked(self, node: ast.stmt, target: ast.Tuple, value: ast.expr) -> Iterator[_Site]:
        """`cause, fix = pair`: the pair's element that the cause is."""
        for index, name in enumerate(target.elts):
            if isinstance(name, ast.Name) and CAUSEY.search(name.id):
                yield _Site(value, self.owner_name(node), index)

    def returns(
        self, function: ast.FunctionDef, element: int | None = None, field: bool = False
    ) -> Iterator[_Site]:
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Return)
                and node.value is not None
                and self.owner(node) is function
            ):
                yield _Site(node.value, function.name, element, field)

    def _values_of(self, value: ast.expr, owner: str) -> Iterator[_Site]:
        """A dict's values, a tuple's or list's elements (diagnostics, texts), else itself."""
        if isinstance(value, ast.Dict):
            for item in value.values:
                yield _Site(item, owner)
        elif isinstance(value, (ast.Tuple, ast.List)):
            for item in value.elts:
                yield _Site(item, owner)
        else:
            yield _Site(value, owner)


def _returns_failure(function: ast.FunctionDef) -> bool:
    """`def _with_cause(failure, cause) -> CheckFailure`: it returns a failure (built with
    its `cause=`, a site), not a text."""
    return function.returns is not None and ast.unparse(function.returns) == "CheckFailure"


def _called(call: ast.Call) -> str | None:
    """`f` for `f(...)`, `m.f` for `m.f(...)`."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
        return f"{call.func.value.id}.{call.func.attr}"
    return None


def texts(path: Path) -> Texts:
    """Every cause text the module at `path` writes, followed from each site (`_Module.sites`)
    to its texts, and every source of a cause it cannot follow (test_cause_texts.py's rule)."""
    module = _Module(ast.parse(path.read_text()))
    out = Texts()
    todo = list(module.sites())
    seen: set[tuple[int, int | None]] = set()
    while todo:
        site = todo.pop()
        key = (id(site.node), site.element)
        if key in seen:
            continue
        seen.add(key)
        todo.extend(_follow(module, site, out))
    out.found.sort()
    out.unread.sort()
    return out


def _follow(module: _Module, site: _Site, out: Texts) -> list[_Site]:
    """Records the texts of one site in `out`; returns the sites it leads to."""
    node, owner, element = site.node, site.owner, site.element
    if element is not None and isinstance(node, (ast.IfExp, ast.BoolOp)):
        return [_Site(leaf, owner, element, field=site.field) for leaf in branches(node)]
    if element is not None:  # one element of a (cause, fix) pair
        if isinstance(node, ast.Tuple) and len(node.elts) > element:
            return [_Site(node.elts[element], owner, field=site.field)]
        if isinstance(node, ast.Starred):  # `for key, cause, fix in PAIRS`: each of PAIRS
            pairs = node.value
            if isinstance(pairs, ast.Name) and pairs.id in module.values:
                pairs = module.values[pairs.id]
            if isinstance(pairs, (ast.Tuple, ast.List)):
                return [_Site(pair, owner, element, field=site.field) for pair in pairs.elts]
        if isinstance(node, ast.Name) and node.id in module.values:
            return [_Site(module.values[node.id], node.id, element, field=site.field)]
        return _from_name_or_call(module, site, out)
    found = _texts_of(node, module.constants)
    if found is not None:
        for each in found:
            # in a field, a text of fewer than three words is formatting ("({},)", " and ")
            if each.strip() and (not site.field or len(re.findall(r"[a-z]{2,}", each)) > 2):
                out.found.append((node.lineno, owner, _fold(each)))
        return list(_fields(module, node))
    if isinstance(node, ast.Lambda):  # a text built for a size (diagnose's factor readings)
        return [_Site(node.body, owner, element, field=site.field)]
    if isinstance(node, (ast.IfExp, ast.BoolOp)):
        return [_Site(leaf, owner, field=site.field) for leaf in branches(node)]
    if isinstance(node, ast.Constant) and node.value is None:
        return []
    if isinstance(node, ast.Attribute) and node.attr in ("cause", "text"):
        return []  # a cause kept in a finding, a Difference, an Explanation or a Diagnostic
    if isinstance(node, ast.Subscript) and _causey_name(node.value):
        return []  # an entry of a dict of causes (its values are sites)
    if isinstance(node, ast.Subscript) and ast.unparse(node.slice) == "'cause'":
        return []  # parts["cause"]: a dict's "cause" entries are sites
    if isinstance(node, ast.Call) and any(k.arg == "cause" for k in node.keywords):
        return []  # a failure built with its cause= (a site) returned by a `_with_cause`
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # a text and a clause
        return [_Site(part, owner, element, field=site.field) for part in (node.left, node.right)]
    if element is None and isinstance(node, (ast.Tuple, ast.List)):
        return [_Site(item, owner, field=site.field) for item in node.elts]  # diagnostics
    if isinstance(node, ast.Attribute) and ast.unparse(node.value) in CONFIRMED:
        return []  # diagnose's own texts (NOT_WRITTEN: a returned None)
    called = (_called(node) or "") if isinstance(node, ast.Call) else ""
    if called.endswith(".get") and CAUSEY.search(called.split(".")[0]):
        # CAUSES.get(kind, default): the default is a site
        return [_Site(arg, owner, field=site.field) for arg in node.args[1:]]  # type: ignore[attr-defined]
    return _from_name_or_call(module, site, out)


def _fields(module: _Module, node: ast.expr) -> Iterator[_Site]:
    """The clauses an f-string's fields add to the text: what a function of this module
    called in a field returns (`{_mismatch(shapes, code)}`)."""
    for value in ast.walk(node):
        if isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Call):
            called = _called(value.value) or ""
            if called in module.functions:
                yield from module.returns(module.functions[called], field=True)


def _causey_name(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and bool(CAUSEY.search(node.id))


def _from_name_or_call(module: _Module, site: _Site, out: Texts) -> list[_Site]:
    """A name (a parameter, a name for causes, a name bound from a pair) or a call (a
    function of this module, one named for causes, `diagnose`'s)."""
    node, element = site.node, site.element
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        table = module.values.get(node.value.id)
        if isinstance(table, ast.Dict):  # an entry of a module's dict: each of its values
            return [
                _Site(value, node.value.id, element, field=site.field) for value in table.values
            ]
    if isinstance(node, ast.Call):
        called = _called(node) or ""
        if called.split(".")[0] in CONFIRMED or CAUSEY.search(called.split(".")[-1]):
            return []  # confirmed causes; a function named for causes (its returns are sites)
        if called in module.functions:
            return list(module.returns(module.functions[called], element))
        if called in module.cause_at:  # a Difference, a Diagnostic...: its cause is a site
            return []
    if isinstance(node, ast.Name):
        function = module.owner(node)
        if element is None and CAUSEY.search(node.id):
            return []  # its assignments are sites
        if function is not None:
            bound = _bound(function, node.id)
            if bound is not None:
                source, index = bound
                return [
                    _Site(
                        source, site.owner, index if element is None else element, field=site.field
                    )
                ]
            if node.id in _parameters(function):
                return list(_arguments(module, function, node.id, element))
            for inner in ast.walk(function):  # a diagnostic defined inside
                if (
                    isinstance(inner, ast.FunctionDef)
                    and inner.name == node.id
                    and inner is not function
                    and module.owner(inner) is function
                ):
                    return list(module.returns(inner, element))
            assigned = [
                value for scope in module.scopes(function) for value in _assigned(scope, node.id)
            ]  # in the function, or a closure's enclosing one
            if assigned:
                return [_Site(value, site.owner, element, field=site.field) for value in assigned]
    if not site.field:
        out.unread.append((node.lineno, site.owner, ast.unparse(node)))
    return []


def _parameters(function: ast.FunctionDef) -> list[str]:
    a = function.args
    return [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]]


def _assigned(function: ast.FunctionDef, name: str) -> Iterator[ast.expr]:
    """The values a local `name` is given (`text = ...`) and added to (`text += ...`)."""
    for node in ast.walk(function):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            target = _single_target(node) if not isinstance(node, ast.AugAssign) else node.target
            if isinstance(target, ast.Name) and target.id == name and node.value is not None:
                yield node.value


def _bound(function: ast.FunctionDef, name: str) -> tuple[ast.expr, int] | None:
    """(the source, the index) where `name` is one of a tuple target (`cause, fix = why`,
    `for key, expected, cause, fix in _SIDE_EFFECTS` gives each element of the constant)."""
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, source = node.targets[0], node.value
        elif isinstance(node, ast.For):
            target, source = node.target, node.iter
            if isinstance(target, ast.Tuple):
                names = [e.id for e in target.elts if isinstance(e, ast.Name)]
                if name in names:
                    if isinstance(source, ast.Name):  # a local list of pairs
                        source = next(_assigned(function, source.id), source)
                    each = ast.copy_location(ast.Starred(source), source)
                    return each, names.index(name)  # each element of it
            continue
        else:
            continue
        if isinstance(target, ast.Tuple):
            names = [e.id if isinstance(e, ast.Name) else "" for e in target.elts]
            if name in names:
                return source, names.index(name)
    return None


def _arguments(
    module: _Module, function: ast.FunctionDef, parameter: str, element: int | None
) -> Iterator[_Site]:
    """What the callers in this module pass for `parameter` (a public check kind's `cause=`
    comes from the suites, where their own reading finds it)."""
    position = _parameters(function).index(parameter)
    for call in module.calls_of(function.name):
        owner = module.owner_name(call)
        for keyword in call.keywords:
            if keyword.arg == parameter:
                yield _Site(keyword.value, owner, element)
        if position < len(call.args) and not isinstance(call.args[position], ast.Starred):
            yield _Site(call.args[position], owner, element)
