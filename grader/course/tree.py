"""The grader's own files, as `grade release` and `grade gradescope-bundle` ship them.

Both write an installable copy of the grader that runs them, whether it was installed
with `pip install .` or is a source checkout installed editable:

    grader/            the package, with a chosen set of suites
    grader/templates/  its Jinja templates (package data, as in the installed wheel)
    pyproject.toml     written from the installed distribution's metadata (name, version,
                       dependencies, extras, the `grade` script) and the course's
                       `[tool.grade]` settings (`show_fixes`, and `round` where set)

Nothing but those settings is read from the course repository: the grader's files come
from the package, so an instructor who installed the grader can release from any clone.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Collection, Iterable
from importlib import metadata
from pathlib import Path

import jinja2

from grader import settings
from grader.errors import GraderError

DISTRIBUTION = "jax-lesson-grader"
PACKAGE = Path(__file__).resolve().parents[1]
SOURCE_TEMPLATES = PACKAGE.parent / "templates"  # a source checkout's, outside the package
SKIPPED = ("__pycache__", "*.pyc", ".mypy_cache", ".pytest_cache")
BUILD_REQUIRES = ["setuptools>=68"]
PACKAGE_DATA = ["*.j2", "*.json", "*.toml", "py.typed"]
_EXTRA = re.compile(r"""\s*(?:and\s+)?extra\s*==\s*["'](?P<name>[^"']+)["']\s*(?:and\s+)?""")


class TreeError(GraderError):
    """The grader's own files cannot be found; the message says what is missing."""


def templates_dir() -> Path:
    """`grader/templates/` of an installed grader, or a source checkout's `templates/`."""
    for folder in (PACKAGE / "templates", SOURCE_TEMPLATES):
        if (folder / "report.html.j2").is_file():
            return folder
    raise TreeError(
        f"the grader's templates are missing (neither {PACKAGE / 'templates'} nor "
        f"{SOURCE_TEMPLATES}): reinstall the grader (`pip install .` in its repository)"
    )


def _metadata() -> metadata.PackageMetadata:
    try:
        return metadata.metadata(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise TreeError(
            f"the {DISTRIBUTION} distribution is not installed, so its dependencies are "
            "unknown: install the grader (`pip install .` in its repository) and run `grade` "
            "from that install"
        ) from None


def _requirements(meta: metadata.PackageMetadata) -> tuple[list[str], dict[str, list[str]]]:
    """The dependencies, and the extras' own, from the `Requires-Dist` lines."""
    plain: list[str] = []
    extras: dict[str, list[str]] = {name: [] for name in meta.get_all("Provides-Extra") or []}
    for line in meta.get_all("Requires-Dist") or []:
        requirement, _, marker = (part.strip() for part in line.partition(";"))
        found = _EXTRA.search(marker)
        if found is None:
            plain.append(line.strip())
            continue
        rest = (marker[: found.start()] + " " + marker[found.end() :]).strip()
        extras.setdefault(found["name"], []).append(
            f"{requirement}; {rest}" if rest else requirement
        )
    return plain, extras


def _field(meta: metadata.PackageMetadata, key: str) -> str:
    return next(iter(meta.get_all(key) or []), "")


def _toml(value: object) -> str:
    """A TOML value: strings as basic strings (JSON's escapes are TOML's), lists of them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value))


def _packages(dest: Path) -> list[str]:
    found = {
        ".".join(p.parent.relative_to(dest).parts) for p in (dest / "grader").rglob("__init__.py")
    }
    return sorted(found | {"grader.templates"})


def pyproject(dest: Path, show_fixes: settings.ShowFixes, round_step: float | None = None) -> str:
    """The `pyproject.toml` of the grader copied into `dest` (see the module's docstring),
    with the course's `[tool.grade]` settings (`round` only where the course sets it)."""
    meta = _metadata()
    summary, python = (_field(meta, key) for key in ("Summary", "Requires-Python"))
    dependencies, extras = _requirements(meta)
    scripts = sorted(
        (e.name, e.value)
        for e in metadata.distribution(DISTRIBUTION).entry_points
        if e.group == "console_scripts"
    )
    lines = [
        f"# Written by `grade` from the installed grader ({DISTRIBUTION} {meta['Version']}).",
        "[build-system]",
        f"requires = {_toml(BUILD_REQUIRES)}",
        'build-backend = "setuptools.build_meta"',
        "",
        "[project]",
        f"name = {_toml(meta['Name'])}",
        f"version = {_toml(meta['Version'])}",
        f"description = {_toml(summary)}",
        *([f"requires-python = {_toml(python)}"] if python else []),
        "dependencies = [",
        *(f"    {_toml(d)}," for d in dependencies),
        "]",
        "",
        "[project.optional-dependencies]",
        *(f"{name} = {_toml(reqs)}" for name, reqs in extras.items()),
        "",
        "[project.scripts]",
        *(f"{name} = {_toml(value)}" for name, value in scripts),
        "",
        "[tool.setuptools]",
        f"packages = {_toml(_packages(dest))}",
        "",
        "[tool.setuptools.package-data]",
        f'"*" = {_toml(PACKAGE_DATA)}',
        "",
        "[tool.grade]",
        "show_fixes = " + {"always": "true", "never": "false"}.get(show_fixes, _toml(show_fixes)),
        *([f"round = {round_step:g}"] if round_step is not None else []),
    ]
    return "\n".join(lines) + "\n"


def copy_grader(
    dest: Path,
    suites: dict[str, str],
    *,
    course: Path,
    leave_out: Iterable[str] = (),
    templates: Collection[str] | None = None,
) -> None:
    """The grader's package (its suites replaced by `suites`, file name -> source; the paths
    in `leave_out`, relative to the package, left out), its templates (those named in
    `templates`, or all) and a `pyproject.toml` carrying the `[tool.grade]` setting of
    `course` into `dest`."""
    try:
        setting = settings.show_fixes(course)
        round_step = settings.round_step(course)
    except settings.SettingError as exc:
        raise TreeError(str(exc)) from None
    left_out = {PACKAGE / p for p in leave_out}

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = shutil.ignore_patterns(*SKIPPED)(folder, names)
        if Path(folder) == PACKAGE:
            skipped |= {"suites", "templates"}
        return skipped | {n for n in names if Path(folder) / n in left_out}

    shutil.copytree(PACKAGE, dest / "grader", ignore=ignore)
    suites_dir = dest / "grader" / "suites"
    suites_dir.mkdir()
    init = PACKAGE / "suites" / "__init__.py"
    (suites_dir / "__init__.py").write_text(
        init.read_text(encoding="utf-8") if init.is_file() else ""
    )
    for name, text in sorted(suites.items()):
        (suites_dir / name).write_text(text, encoding="utf-8")
    (dest / "grader" / "templates").mkdir()
    for template in sorted(templates_dir().glob("*.j2")):
        if templates is None or template.name in templates:
            shutil.copyfile(template, dest / "grader" / "templates" / template.name)
    (dest / "pyproject.toml").write_text(pyproject(dest, setting, round_step), encoding="utf-8")


def suite_sources(suites_dir: Path, only: Collection[str] | None = None) -> dict[str, str]:
    """Every suite (`test_*.py`), or only the suite files named in `only`, and every helper
    module the suites share (`_shared.py`)."""
    return {
        p.name: p.read_text(encoding="utf-8")
        for p in sorted(suites_dir.glob("*.py"))
        if p.name != "__init__.py"
        and (only is None or not p.name.startswith("test_") or p.name in only)
    }


def render(template: str, **values: object) -> str:
    """A text template of the grader's (see `templates_dir`), not HTML."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # YAML, shell, Markdown: not HTML
    )
    return env.get_template(template).render(**values)
