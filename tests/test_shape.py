"""The code's shape: thin commands, short functions.

    grader/commands/   under 1000 lines in all: argument declarations and one call each
                       (the logic lives in the feature packages)
    any function       at most 60 lines (`end_lineno - lineno + 1`, decorators excluded),
                       outside the hidden suites (grader/suites/: checks read as prose)

Files are parsed, never imported. Both functions take the folder they look at, so each
rule is also tried on a small tree that breaks it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grader

PACKAGE = Path(grader.__file__).resolve().parent
MAX_FUNCTION_LINES = 60
MAX_COMMAND_LINES = 1000
EXEMPT = ("suites",)


def long_functions(package: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """'path:line name (N lines)' for every function over `limit` lines under `package`."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[0] in EXEMPT:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    where = path.relative_to(package.parent)
                    found.append(f"{where}:{node.lineno} {node.name} ({length} lines)")
    return found


def command_lines(commands: Path) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in commands.glob("*.py"))


def test_no_function_is_over_sixty_lines() -> None:
    assert long_functions(PACKAGE) == []


def test_the_commands_are_a_thin_layer() -> None:
    lines = command_lines(PACKAGE / "commands")
    assert 0 < lines < MAX_COMMAND_LINES, f"grader/commands/ is {lines} lines"


def _function(name: str, body_lines: int, indent: str = "") -> str:
    body = "".join(f"{indent}    x{i} = {i}\n" for i in range(body_lines))
    return f"{indent}def {name}():\n{body}"


def test_a_long_function_is_named_with_its_place(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "suites").mkdir(parents=True)
    (package / "ok.py").write_text(_function("short", 59), encoding="utf-8")
    (package / "long.py").write_text(
        "class Judge:\n" + _function("decide", 60, indent="    "), encoding="utf-8"
    )
    (package / "suites" / "test_lesson.py").write_text(_function("check", 200), encoding="utf-8")
    assert long_functions(package) == ["pkg/long.py:2 decide (61 lines)"]


def test_command_lines_count_every_module(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n" * 600, encoding="utf-8")
    (tmp_path / "b.py").write_text("y = 2\n" * 500, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("z\n" * 10_000, encoding="utf-8")
    assert command_lines(tmp_path) == 1100 > MAX_COMMAND_LINES
