"""The grader's own files, as `grade release` and `grade gradescope-bundle` ship them.

Both need an installable copy of the grader: the `grader/` package (with a
chosen set of suites), the Jinja templates and `pyproject.toml`. They come
from the course checkout this package runs from; an installed grader without
its checkout cannot release or bundle itself.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import jinja2

import grader

PACKAGE = Path(grader.__file__).resolve().parent
ROOT = PACKAGE.parent
TEMPLATES = ROOT / "templates"
PYPROJECT = ROOT / "pyproject.toml"
SKIPPED = ("__pycache__", "*.pyc", ".mypy_cache", ".pytest_cache")


class TreeError(Exception):
    """The checkout is incomplete; the message says what is missing."""


def checkout() -> Path:
    for needed in (PYPROJECT, TEMPLATES):
        if not needed.exists():
            raise TreeError(
                f"{needed} not found: run this command from the course repository "
                "(a checkout with pyproject.toml and templates/), not from an installed grader"
            )
    return ROOT


def copy_grader(dest: Path, suites: dict[str, str]) -> None:
    """`grader/` (without its suites), `templates/` and `pyproject.toml` into `dest`;
    then `suites` (file name -> source) as the package's suites."""
    checkout()
    shutil.copytree(PACKAGE, dest / "grader", ignore=shutil.ignore_patterns(*SKIPPED, "suites"))
    suites_dir = dest / "grader" / "suites"
    suites_dir.mkdir()
    init = PACKAGE / "suites" / "__init__.py"
    (suites_dir / "__init__.py").write_text(
        init.read_text(encoding="utf-8") if init.is_file() else ""
    )
    for name, text in sorted(suites.items()):
        (suites_dir / name).write_text(text, encoding="utf-8")
    shutil.copytree(TEMPLATES, dest / "templates", ignore=shutil.ignore_patterns(*SKIPPED))
    shutil.copyfile(PYPROJECT, dest / "pyproject.toml")


def suite_sources(suites_dir: Path) -> dict[str, str]:
    """Every suite (`test_*.py`) and helper module the suites share (`_shared.py`)."""
    return {
        p.name: p.read_text(encoding="utf-8")
        for p in sorted(suites_dir.glob("*.py"))
        if p.name != "__init__.py"
    }


def render(template: str, **values: object) -> str:
    """A text template from `templates/` (or the installed `grader.templates`), not HTML."""
    folders = [str(d) for d in (TEMPLATES, PACKAGE / "templates") if d.is_dir()]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folders),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # YAML, shell, Markdown: not HTML
    )
    return env.get_template(template).render(**values)
