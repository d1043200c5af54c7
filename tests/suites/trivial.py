"""Trivial answers built from the stubs in `exercises/`: every function returns None, 0.0,
its first argument, or zeros shaped like its first argument.

A grader that pays for such answers pays for properties of code that computes nothing:
a constant is pure, compiles under `jit`, is traced once and consumes no key. The
variants keep each stub's imports and module-level names (a `# TODO` value stays the
stub's, as a student who filled nothing in leaves it), and rewrite the body of every
public function and of every method but `setup` (a Flax module still builds), so what is
graded is the answers, not an import error.
"""

from __future__ import annotations

import ast
from pathlib import Path

STUBS = Path(__file__).resolve().parents[2] / "exercises"

_BODIES = {
    "none": "return None",
    "zero": "return 0.0",
    "identity": "return {first}",
    "zeros_like": "return __import__('jax').tree.map(__import__('jax').numpy.zeros_like, {first})",
}
VARIANTS = tuple(_BODIES)


def _first_argument(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> str | None:
    args = [*fn.args.posonlyargs, *fn.args.args][1 if method else 0 :]
    return args[0].arg if args else None


def _rewrite(fn: ast.FunctionDef | ast.AsyncFunctionDef, variant: str, method: bool) -> None:
    first = _first_argument(fn, method)
    body = _BODIES[variant]
    if "{first}" in body:
        body = body.format(first=first) if first else "return None"
    fn.body = ast.parse(body).body


def trivial_source(source: str, variant: str) -> str:
    """`source` with every public function's (and method's) body replaced by `variant`."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith(
            "_"
        ):
            _rewrite(node, variant, method=False)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if (
                    isinstance(item, ast.FunctionDef)
                    and item.name != "setup"
                    and (item.name == "__call__" or not item.name.startswith("_"))
                ):
                    _rewrite(item, variant, method=True)
    return ast.unparse(tree) + "\n"


def write_trivial(folder: Path, variant: str, lessons: list[str] | None = None) -> Path:
    """Write the `variant` of every stub (or of `lessons`) into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted(STUBS.glob("*.py")):
        if lessons is None or path.stem in lessons:
            text = trivial_source(path.read_text(encoding="utf-8"), variant)
            (folder / path.name).write_text(text, encoding="utf-8")
    return folder
