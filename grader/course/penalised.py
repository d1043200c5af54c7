"""What a lesson file's checks penalise, and whether a piece of help recommends it.

A lesson file penalises a construct in two ways, and `grade verify` (`help_problems`) holds
every hint, nudge, fix and JAX explanation of the file against both:

- its suite says so: `AVOID = {"jnp.where": "why"}` (a rule of the spec that no primitive
  shows, or any construct the author wants kept out of the help);
- one of its checks requires a primitive that the construct does not compile to
  (`primitives.assert_contains(student.piecewise, ..., "cond")`: `jnp.where` computes the
  same values without a `cond`, and costs that check's points), or forbids a primitive
  the construct compiles to (`primitives.assert_lacks(..., "select_n")`).

Help recommends a construct when it names it outside a negated clause: "branch with
`jax.lax.cond` (or `jnp.where` ...)" recommends `jnp.where`; "`jax.lax.cond`, not
`jnp.where`" and "`jnp.where` would compute both branches" (the construct said not to do
what the exercise asks) warn against it, and are help a student needs.
"""

from __future__ import annotations

import ast
import contextlib
import re
from pathlib import Path

from grader import catalog, explain

# The constructs that compute a primitive's values without compiling to it: a check that
# requires the primitive fails them.
WITHOUT: dict[str, tuple[str, ...]] = {
    "cond": ("jnp.where", "jnp.select", "lax.select"),
    "scan": ("jnp.cumsum",),
}
# The constructs that compile to a primitive: a check that forbids the primitive fails them.
GIVES: dict[str, tuple[str, ...]] = {
    "select_n": ("jnp.where", "jnp.select", "lax.select"),
    "cond": ("lax.cond", "lax.switch"),
    "scan": ("lax.scan",),
    "while": ("lax.while_loop", "lax.fori_loop"),
}

_REQUIRE, _FORBID = "assert_contains", "assert_lacks"

# A clause ends at a sentence's or a clause's punctuation, or a parenthesis.
_CLAUSE_END = re.compile(r"[.;:!?()\n]|,\s(?:but|or|and)\b|\s-\s")
_NEGATED_BEFORE = re.compile(
    r"\b(?:not|never|no|nor|avoid|avoids|without|unlike|instead of|rather than|don't|do not|"
    r"does not|is not)\b",
    re.IGNORECASE,
)
_NEGATED_AFTER = re.compile(
    r"^\W*(?:[\w/.`'\"]+\s+){0,3}"
    r"(?:would not|does not|doesn't|will not|won't|cannot|can't|is not|isn't|never|costs?|"
    r"fails?|computes both|evaluates both|loses|penalised|penalized)\b",
    re.IGNORECASE,
)


def recommends(text: str, construct: str) -> bool:
    """Whether `text` recommends `construct`: names it at least once outside a negated
    clause (see the module's docstring)."""
    for found in re.finditer(re.escape(construct), text):
        before = _CLAUSE_END.split(text[: found.start()])[-1]
        after = _CLAUSE_END.split(text[found.end() :])[0]
        if _NEGATED_BEFORE.search(before) or _NEGATED_AFTER.search(after):
            continue
        return True
    return False


def by_checks(suite: Path) -> dict[str, str]:
    """The constructs the suite's checks penalise through the primitives they require or
    forbid: construct -> which check and why."""
    tree = ast.parse(suite.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for test in tree.body:
        if not (isinstance(test, ast.FunctionDef) and test.name.startswith("test_")):
            continue
        for node in ast.walk(test):
            if not isinstance(node, ast.Call):
                continue
            called = node.func
            name = called.attr if isinstance(called, ast.Attribute) else ""
            if name not in (_REQUIRE, _FORBID) or len(node.args) < 3:
                continue
            for primitive in _strings(node.args[2]):
                table = WITHOUT if name == _REQUIRE else GIVES
                verb = "requires" if name == _REQUIRE else "forbids"
                for construct in table.get(primitive, ()):
                    found.setdefault(
                        construct,
                        f"{test.name} {verb} `{primitive}` in the compiled program, and "
                        f"`{construct}` {'does not compile to' if name == _REQUIRE else 'compiles to'}"
                        " it",
                    )
    return found


def _strings(node: ast.expr) -> list[str]:
    """The primitive names a call gives: a string, or a tuple or list of strings."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


def help_problems(spec: catalog.ExerciseSpec) -> list[str]:
    """Help that recommends what the lesson file penalises (its
    suite's `AVOID`, and what its checks' required or forbidden primitives rule out): a
    hint, a nudge or a fix of the suite (`fix=` arguments, literal or module constants), or
    a JAX error's explanation as this file shows it (`grader.explain`, which leaves out only
    what `AVOID` names). `grade hint 03_jit` told a student to branch with `jnp.where`,
    which costs 2 points in the same file."""
    declared = dict(spec.avoid)
    avoided = {**by_checks(spec.suite), **declared}
    texts = [(f"{c.name}: the hint", c.hint) for c in spec.checks]
    texts += [(f"{c.name}: the nudge", c.nudge) for c in spec.checks]
    texts += [(f"line {line}: a fix", text) for line, text in _suite_fixes(spec.suite)]
    explained = [("an explanation's fix", fix) for fix in explain.every_fix(declared)]
    problems: list[str] = []
    for construct, why in sorted(avoided.items()):
        for where, text in texts + explained:
            if not recommends(text, construct):
                continue
            problem = (
                f"{spec.name} > {where} recommends `{construct}`, which this file's checks "
                f"penalise ({why}): {text[:160]}"
            )
            if construct not in declared and (where, text) in explained:
                problem += "; name it in the suite's AVOID to keep it out of explanations"
            problems.append(problem)
    return problems


def _suite_fixes(suite: Path) -> list[tuple[int, str]]:
    """(line, text) of every `fix=` a suite passes: string literals, f-strings' literal
    parts and the module-level string constants it names."""
    tree = ast.parse(suite.read_text(encoding="utf-8"))
    constants: dict[str, str] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            with contextlib.suppress(ValueError, SyntaxError):
                value = ast.literal_eval(statement.value)
                if isinstance(target, ast.Name) and isinstance(value, str):
                    constants[target.id] = value
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        for keyword in getattr(node, "keywords", ()):
            if keyword.arg != "fix":
                continue
            value = keyword.value
            if isinstance(value, ast.Name) and value.id in constants:
                found.append((value.lineno, constants[value.id]))
            else:
                parts = [n.value for n in ast.walk(value) if isinstance(n, ast.Constant)]
                found.append((value.lineno, " ".join(p for p in parts if isinstance(p, str))))
    return found
