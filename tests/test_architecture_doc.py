"""docs/architecture.md is drawn from the code as it is: every module and package of
`grader/` is named in its map (a new module is placed there, a removed one leaves it)."""

from __future__ import annotations

import re
from pathlib import Path

import grader

PACKAGE = Path(grader.__file__).resolve().parent
DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def names_in_code(package: Path) -> set[str]:
    """`pkg/` for each package, `module` for each module (the suites' and inputs' files and
    the private `_x` ones are their package's business)."""
    found: set[str] = set()
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).parts
        if "__pycache__" in parts or path.name in {"__init__.py", "__main__.py"}:
            continue
        if len(parts) > 1 and parts[0] in {"suites", "inputs"}:
            continue
        if path.stem.startswith("_"):
            continue
        found.add(path.stem)
    found |= {p.name + "/" for p in package.iterdir() if (p / "__init__.py").is_file()}
    return found


def missing_from(doc: str, names: set[str]) -> list[str]:
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*/?", doc))
    words |= {w.removesuffix(".py") for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*\.py", doc)}
    return sorted(n for n in names if n not in words)


def test_every_module_of_the_grader_is_on_the_map() -> None:
    assert missing_from(DOC.read_text(encoding="utf-8"), names_in_code(PACKAGE)) == []


def test_a_module_missing_from_the_map_is_named(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "feature").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "feature" / "__init__.py").write_text("")
    (package / "feature" / "thing.py").write_text("")
    (package / "top.py").write_text("")
    assert missing_from("feature/ holds thing; top.py", names_in_code(package)) == []
    assert missing_from("feature/ holds it", names_in_code(package)) == ["thing", "top"]
