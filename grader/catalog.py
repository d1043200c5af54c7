"""What the grader can grade: the exercises and their checks, read from the suites.

Each suite (`grader/suites/test_<lesson>.py`) is the manifest entry of its
lesson file: module constants name the lesson and its settings, `@check(...)`
decorators give each check's name, points, hint, nudge and visibility. This module
reads them from the source with `ast`, so the parent process knows every
check and every point without importing a suite (and so without JAX), and a
submission can never change what a check is worth.

Module constants of a suite:
    LESSON = "07_pmap"          # the lesson file's stem (required)
    TITLE = "..."               # shown in reports (required)
    DEVICES = 8                 # simulated CPU devices for this file (default 1)
    REQUIRES = ("flax",)        # optional packages; without them the file is skipped
    TIMEOUT = 240               # default per-exercise timeout in seconds
    HIDDEN = {"checks": 9, "points": 30}  # written by `grade release` into a released
                                # (public) suite: the hidden checks cut out of it
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from grader.errors import GraderError
from grader.model import Visibility

SUITES_DIR = Path(__file__).parent / "suites"
DEFAULT_TIMEOUT_S = 180.0
MANIFEST_KEYS = frozenset({"LESSON", "TITLE", "DEVICES", "REQUIRES", "TIMEOUT", "HIDDEN", "AVOID"})


class CatalogError(GraderError):
    """A suite's manifest data is malformed (a course-author error)."""


@dataclass(frozen=True)
class CheckSpec:
    id: str
    name: str
    points: float
    hint: str
    visibility: Visibility
    line: int
    requires: tuple[str, ...] = ()  # checks whose values must be right before this one counts
    nudge: str = ""  # the second level of help (grader.hints); optional
    spec: str = ""  # the words of the lesson spec this check enforces (grader.spec)


@dataclass(frozen=True)
class ExerciseSpec:
    name: str
    title: str
    suite: Path
    checks: tuple[CheckSpec, ...]
    devices: int = 1
    requires: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S
    hidden_checks: int = 0  # checks removed from this (released, public) suite
    hidden_points: float = 0.0
    imports: tuple[str, ...] = ()  # modules the suite imports: the warm worker preloads them
    avoid: tuple[tuple[str, str], ...] = ()  # (construct, why): what this file's checks
    # penalise, so no help of this file may recommend it (`AVOID`; `grade verify`, `explain`)

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.checks)

    @property
    def filename(self) -> str:
        return f"{self.name}.py"


def _literal(node: ast.AST, where: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError as exc:
        raise CatalogError(f"{where}: must be a literal value ({exc})") from None


def _check_of(fn: ast.FunctionDef, where: str) -> CheckSpec | None:
    for deco in fn.decorator_list:
        if isinstance(deco, ast.Call) and getattr(deco.func, "id", None) == "check":
            loc = f"{where}:{fn.lineno} {fn.name}"
            if len(deco.args) != 1:
                raise CatalogError(
                    f"{loc}: @check takes the check's name as its one positional argument"
                )
            kwargs = {k.arg: _literal(k.value, loc) for k in deco.keywords if k.arg}
            name = _literal(deco.args[0], loc)
            points, hint = kwargs.get("points"), kwargs.get("hint")
            if not isinstance(name, str) or not name:
                raise CatalogError(f"{loc}: the check name must be a non-empty string")
            if not isinstance(points, int | float) or points < 0:
                raise CatalogError(f"{loc}: points must be a non-negative number")
            if not isinstance(hint, str) or not hint.strip():
                raise CatalogError(f"{loc}: every check needs a hint")
            nudge = kwargs.get("nudge", "")
            if not isinstance(nudge, str):
                raise CatalogError(f"{loc}: a nudge is a string")
            spec = kwargs.get("spec", "")
            if not isinstance(spec, str):
                raise CatalogError(f"{loc}: spec is a string quoting the lesson spec")
            visibility: Visibility = "hidden" if kwargs.get("hidden") else "public"
            requires = kwargs.get("requires", ())
            if not isinstance(requires, tuple | list) or not all(
                isinstance(r, str) and r.startswith("test_") for r in requires
            ):
                raise CatalogError(
                    f"{loc}: requires must be a tuple of check ids like ('test_x_values',)"
                )
            return CheckSpec(
                fn.name,
                name,
                float(points),
                hint,
                visibility,
                fn.lineno,
                tuple(requires),
                nudge.strip(),
                " ".join(spec.split()),
            )
    return None


def read_suite(path: Path) -> ExerciseSpec:
    where = path.name
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    consts: dict[str, Any] = {}
    checks: list[CheckSpec] = []
    imports: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            imports.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imports.add(node.module)
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id in MANIFEST_KEYS:
                consts[target.id] = _literal(node.value, f"{where}:{node.lineno} {target.id}")
        elif isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            spec = _check_of(node, where)
            if spec is None:
                raise CatalogError(
                    f"{where}:{node.lineno} {node.name}: a test in a suite needs @check(...)"
                )
            checks.append(spec)
    if not isinstance(consts.get("LESSON"), str) or not isinstance(consts.get("TITLE"), str):
        raise CatalogError(f"{where}: a suite must define LESSON and TITLE as string literals")
    hidden = consts.get("HIDDEN", {})
    if not isinstance(hidden, dict) or not all(
        isinstance(hidden.get(k, 0), int | float) for k in ("checks", "points")
    ):
        raise CatalogError(f'{where}: HIDDEN must be a dict like {{"checks": 9, "points": 30}}')
    if not checks and not hidden.get("checks"):
        raise CatalogError(f"{where}: a suite must define at least one @check test")
    _check_requirements(checks, where, released=bool(hidden.get("checks")))
    avoid = consts.get("AVOID", {})
    if not isinstance(avoid, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in avoid.items()
    ):
        raise CatalogError(f'{where}: AVOID must be a dict like {{"jnp.where": "why"}}')
    return ExerciseSpec(
        name=consts["LESSON"],
        title=consts["TITLE"],
        suite=path.resolve(),  # the judge runs in a folder of its own
        checks=tuple(checks),
        devices=int(consts.get("DEVICES", 1)),
        requires=tuple(consts.get("REQUIRES", ())),
        timeout_s=float(consts.get("TIMEOUT", DEFAULT_TIMEOUT_S)),
        hidden_checks=int(hidden.get("checks", 0)),
        hidden_points=float(hidden.get("points", 0.0)),
        imports=tuple(sorted(imports)),
        avoid=tuple(sorted(avoid.items())),
    )


def _check_requirements(checks: list[CheckSpec], where: str, *, released: bool) -> None:
    """A check may require only other checks of its suite, and never (through others) itself.

    A released suite may require a hidden check that was cut out of it: the plugin then
    judges the check ungated (the student's copy cannot know the hidden verdict)."""
    ids = {c.id: c for c in checks}
    for c in checks:
        unknown = [r for r in c.requires if r not in ids]
        if unknown and not released:
            raise CatalogError(f"{where}:{c.line} {c.id}: requires unknown checks {unknown}")
        seen: set[str] = set()
        todo = list(c.requires)
        while todo:
            r = todo.pop()
            if r == c.id:
                raise CatalogError(
                    f"{where}:{c.line} {c.id}: requires itself through {sorted(seen)}"
                )
            if r in ids and r not in seen:
                seen.add(r)
                todo.extend(ids[r].requires)


@cache
def exercises(suites_dir: Path = SUITES_DIR) -> tuple[ExerciseSpec, ...]:
    """Every exercise, in lesson order (01_... to 11_..., then ex1_... to ex5_...)."""
    specs = [read_suite(p) for p in sorted(suites_dir.glob("test_*.py"))]
    names = [s.name for s in specs]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise CatalogError(f"more than one suite for {sorted(dupes)}")
    return tuple(sorted(specs, key=lambda s: (s.name.startswith("ex"), s.name)))


def by_name(suites_dir: Path = SUITES_DIR) -> dict[str, ExerciseSpec]:
    return {s.name: s for s in exercises(suites_dir)}
