"""The mutants of one lesson file: every site every operator matches, with a stable id.

    mutants = generate(source, "03_jit")         # all of them, in file order
    chosen = select(mutants, limit=20)           # a spread over the operators

A mutant's id is `operator:function:hash`, the hash taken over the lines its diff
removes and adds (and which of several identical edits in that function it is), so
ids survive edits elsewhere in the file and line moves: `equivalent.toml` can name
them. A mutant whose source equals an earlier one's is dropped. Nothing under
`if __name__ == "__main__":`, no import and no docstring is mutated.
"""

from __future__ import annotations

import difflib
import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from grader.mutate.operators import HELPERS, IMPORTS, OPERATORS, Context, Operator, Replacement


@dataclass(frozen=True)
class Mutant:
    id: str
    lesson: str
    operator: str
    function: str
    line: int
    source: str  # the whole mutated file, helpers appended
    diff: str  # unified diff of the defect itself (appended helpers and imports not shown)
    needs: tuple[str, ...] = ()  # helpers and imports appended to the file


@dataclass(frozen=True)
class _Site:
    node: cst.CSTNode
    replacement: Replacement
    operator: Operator
    context: Context
    line: int


def _params(function: cst.FunctionDef) -> tuple[str, ...]:
    p = function.params
    every = [*p.posonly_params, *p.params, *p.kwonly_params]
    if isinstance(p.star_arg, cst.Param):
        every.append(p.star_arg)
    if p.star_kwarg is not None:
        every.append(p.star_kwarg)
    return tuple(param.name.value for param in every)


def _assigned(function: cst.FunctionDef) -> frozenset[str]:
    names: set[str] = set()

    class _Targets(cst.CSTVisitor):
        def _add(self, target: cst.BaseExpression) -> None:
            if isinstance(target, cst.Name):
                names.add(target.value)
            elif isinstance(target, cst.Tuple | cst.List):
                for element in target.elements:
                    self._add(element.value)
            elif isinstance(target, cst.StarredElement):
                self._add(target.value)

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self._add(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._add(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self._add(node.target)

        def visit_For(self, node: cst.For) -> None:
            self._add(node.target)

    function.body.visit(_Targets())
    return frozenset(names)


def _is_main_guard(node: cst.If) -> bool:
    test = node.test
    return (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and test.left.value == "__name__"
    )


class _Collector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, operators: Sequence[Operator]) -> None:
        super().__init__()
        self.operators = operators
        self.sites: list[_Site] = []
        self.contexts: list[Context] = [Context()]
        self.slices = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Import | cst.ImportFrom | cst.Annotation):
            return False
        if isinstance(node, cst.If) and _is_main_guard(node):
            return False
        if isinstance(node, cst.Expr) and isinstance(
            node.value, cst.SimpleString | cst.ConcatenatedString
        ):
            return False  # a docstring
        context = self.contexts[-1]
        if isinstance(node, cst.FunctionDef):
            outer = context.function
            name = node.name.value if outer == "<module>" else f"{outer}.{node.name.value}"
            context = Context(name, _params(node), _assigned(node))
        if self.slices and not context.in_slice:
            context = Context(context.function, context.params, context.reassigned, True)
        line = self.get_metadata(PositionProvider, node).start.line
        for operator in self.operators:
            for replacement in operator.propose(node, context):
                self.sites.append(_Site(node, replacement, operator, context, line))
        if isinstance(node, cst.FunctionDef):
            self.contexts.append(context)
        if isinstance(node, cst.SubscriptElement):
            self.slices += 1
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, cst.FunctionDef):
            self.contexts.pop()
        if isinstance(original_node, cst.SubscriptElement):
            self.slices -= 1


def _module_names(module: cst.Module) -> set[str]:
    """Names bound at the top level by imports (`import jax.numpy as jnp` binds jnp)."""
    names: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        names.add(alias.asname.name.value)
                    else:
                        names.add((cst.Module(body=[]).code_for_node(alias.name)).split(".")[0])
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    bound = alias.asname.name if alias.asname is not None else alias.name
                    if isinstance(bound, cst.Name):
                        names.add(bound.value)
    return names


def _appendix(needs: Iterable[str], bound: set[str]) -> str:
    parts = ["\n\n# --- appended by grade mutate ---"]
    for need in needs:
        if need in IMPORTS and need not in bound:
            parts.append(IMPORTS[need])
    for need in needs:
        if need in HELPERS:
            parts.append(HELPERS[need].rstrip())
    return "\n".join(parts) + "\n" if len(parts) > 1 else ""


def _diff(before: str, after: str, path: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            f"a/{path}",
            f"b/{path}",
            n=1,
        )
    )


def _changed_lines(diff: str) -> str:
    return "\n".join(
        line
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


def generate(
    source: str, lesson: str, operators: Sequence[Operator] = OPERATORS, path: str = ""
) -> list[Mutant]:
    """Every mutant of `source` (the lesson file `lesson`), in file order."""
    path = path or f"solutions/{lesson}.py"
    wrapper = MetadataWrapper(cst.parse_module(source))
    collector = _Collector(operators)
    wrapper.visit(collector)
    module = wrapper.module
    bound = _module_names(module)
    seen_sources = {source}
    occurrences: Counter[str] = Counter()
    mutants: list[Mutant] = []
    for site in collector.sites:
        try:
            mutated = module.deep_replace(site.node, site.replacement.node)
            code = mutated.code if isinstance(mutated, cst.Module) else ""
        except Exception:  # a replacement libcst cannot render is no mutant
            continue
        if not code or code in seen_sources:
            continue
        seen_sources.add(code)
        diff = _diff(source, code, path)
        key = f"{site.operator.name}|{site.context.function}|{_changed_lines(diff)}"
        occurrences[key] += 1
        digest = hashlib.sha1(f"{key}|{occurrences[key]}".encode()).hexdigest()[:8]
        needs = tuple(dict.fromkeys(site.replacement.needs))
        mutants.append(
            Mutant(
                id=f"{site.operator.name}:{site.context.function}:{digest}",
                lesson=lesson,
                operator=site.operator.name,
                function=site.context.function,
                line=site.line,
                source=code + _appendix(needs, bound),
                diff=diff,
                needs=needs,
            )
        )
    return mutants


def select(mutants: Sequence[Mutant], limit: int | None) -> list[Mutant]:
    """At most `limit` mutants, spread over the operators: round-robin in operator order,
    each operator's mutants in a fixed order of their ids (so a limit picks the same ones
    on every run). Returned in file order."""
    if limit is None or len(mutants) <= limit:
        return list(mutants)
    by_operator: dict[str, list[Mutant]] = defaultdict(list)
    for mutant in sorted(mutants, key=lambda m: hashlib.sha1(m.id.encode()).hexdigest()):
        by_operator[mutant.operator].append(mutant)
    order = [op.name for op in OPERATORS if op.name in by_operator]
    order += sorted(set(by_operator) - set(order))
    chosen: list[Mutant] = []
    depth = 0
    while len(chosen) < limit:
        for name in order:
            if depth < len(by_operator[name]) and len(chosen) < limit:
                chosen.append(by_operator[name][depth])
        depth += 1
    keep = {m.id for m in chosen}
    return [m for m in mutants if m.id in keep]
