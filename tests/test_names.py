"""One meaning per name: no two modules of `grader/` share a file name, so a name found in a
traceback, an import or docs/architecture.md says which module it is.

Two names may repeat, because each pair is one concept seen from two sides:

    commands/X.py  beside one feature module X.py   `grade X`'s arguments (commands/) and its
                                                    logic (course/, batch/, ...)
    checks/X.py    beside probes/X.py               a check kind as the judge decides it and
                                                    as its probe observes it in the sandbox

and `failure.py`, which `grader.checks.failure` re-exports from `grader.protocol.failure`
(`fail` beside the `CheckFailure` it raises). Package files (`__init__.py`, `__main__.py`)
are not names of their own. Files are listed, never imported; `shared_names` takes the
package's folder, so the rule is also tried on a small tree that breaks it.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import grader

PACKAGE = Path(grader.__file__).resolve().parent
PACKAGE_FILES = frozenset({"__init__.py", "__main__.py"})
SAME_CONCEPT = {"failure.py": frozenset({"checks/failure.py", "protocol/failure.py"})}
"""File name -> the exact set of modules that share it as one concept."""


def _one_concept(name: str, paths: frozenset[str]) -> bool:
    folders = sorted(p.split("/")[0] for p in paths)
    if SAME_CONCEPT.get(name) == paths:
        return True
    if len(paths) != 2 or any(p.count("/") != 1 for p in paths):
        return False
    return folders == ["checks", "probes"] or ("commands" in folders and len(set(folders)) == 2)


def shared_names(package: Path) -> list[str]:
    """'name: path, path' for each file name that modules under `package` share as different
    concepts (paths relative to `package`)."""
    by_name: dict[str, set[str]] = defaultdict(set)
    for path in package.rglob("*.py"):
        if "__pycache__" in path.parts or path.name in PACKAGE_FILES:
            continue
        by_name[path.name].add(path.relative_to(package).as_posix())
    return sorted(
        f"{name}: {', '.join(sorted(paths))}"
        for name, paths in by_name.items()
        if len(paths) > 1 and not _one_concept(name, frozenset(paths))
    )


def test_no_two_modules_share_a_name() -> None:
    assert shared_names(PACKAGE) == []


def _tree(tmp_path: Path, files: list[str]) -> Path:
    package = tmp_path / "grader"
    for name in files:
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text("", encoding="utf-8")
    return package


def test_a_name_with_two_meanings_is_named(tmp_path: Path) -> None:
    package = _tree(
        tmp_path,
        [
            "__init__.py",
            "grading.py",
            "batch/__init__.py",
            "batch/grading.py",  # a class graded, not one grading run
            "watch/screen.py",
            "sandbox/screen.py",  # the terminal display and the source screen
            "commands/release.py",
            "course/release.py",
            "batch/release.py",  # a command beside two feature modules: which is its logic?
            "checks/jit.py",
            "sandbox/jit.py",  # a check kind's name on a module that is not its probe
            "checks/failure.py",
            "runner/failure.py",  # not the pair SAME_CONCEPT names
        ],
    )
    assert shared_names(package) == [
        "failure.py: checks/failure.py, runner/failure.py",
        "grading.py: batch/grading.py, grading.py",
        "jit.py: checks/jit.py, sandbox/jit.py",
        "release.py: batch/release.py, commands/release.py, course/release.py",
        "screen.py: sandbox/screen.py, watch/screen.py",
    ]


def test_one_concept_on_two_sides_shares_its_name(tmp_path: Path) -> None:
    package = _tree(
        tmp_path,
        [
            "__init__.py",
            "__main__.py",
            "batch/__init__.py",
            "watch/__init__.py",
            "commands/__init__.py",
            "commands/release.py",
            "course/release.py",
            "commands/export.py",
            "batch/export.py",
            "checks/jit.py",
            "probes/jit.py",
            "checks/failure.py",
            "protocol/failure.py",
            "watch/display.py",
            "sandbox/source_screen.py",
            "batch/__pycache__/display.py",
        ],
    )
    assert shared_names(package) == []
