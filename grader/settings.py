"""The course's settings: the `[tool.grade]` table of its `pyproject.toml`.

The table is read from the `pyproject.toml` of the folder asked about, or of the nearest
folder above it that has one (the course's root, a student's repository):

    [tool.grade]
    show_fixes = "on-request"   (the default) a fix is shown once revealed by `grade hint`
    show_fixes = true           every failure shows its fix at once
    show_fixes = false          never: `grade hint` stops at the nudge, no report shows a fix
    round = 1                   each check's score rounded down to a whole point
                                (`grader.rounding`; the default: scores as the checks give them)
    release_url = "git+https://github.com/COURSE/RELEASE"
                                where the student release is published (`grade release --url`
                                records it; `grade notebooks` installs the grader from there)

A malformed setting is a `SettingError` naming the file and the value; where a grading
must go on, `show_fixes_or_never` and `round_step_or_none` say it once on stderr and read
it as the strictest policy (no fixes) and no rounding.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Literal

from grader import rounding
from grader.errors import GraderError

ShowFixes = Literal["always", "on-request", "never"]
SHOW_FIXES: tuple[ShowFixes, ...] = ("always", "on-request", "never")
DEFAULT_SHOW_FIXES: ShowFixes = "on-request"
PYPROJECT = "pyproject.toml"
TABLE = "tool.grade"
RELEASE_URL = "release_url"  # the key `grade release --url` writes


class SettingError(GraderError, ValueError):
    """The course's `[tool.grade]` setting is malformed: the message says where and how."""


def pyproject(folder: Path) -> Path | None:
    """The `pyproject.toml` of `folder`, else of the nearest folder above it with one."""
    for candidate in (folder, *folder.parents):
        path = candidate / PYPROJECT
        if path.is_file():
            return path
    return None


_SECTION = re.compile(r"^\s*\[(?P<name>[^\]]+)\]\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*(?P<key>[A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?P<value>[^#]*?)\s*(?:#.*)?$")


def _fallback_value(text: str) -> object:
    """A value as the line-by-line reading (Python 3.10) gives it: a boolean, a number or
    a string."""
    if text in ("true", "false"):
        return text == "true"
    try:
        return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        return text.strip("\"'")


def settings_in(text: str) -> dict[str, object]:
    """The `[tool.grade]` table of a pyproject's text: with tomllib where there is one
    (Python 3.11), else read line by line (the keys of that section are all we need)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        section, found = "", {}
        for line in text.splitlines():
            header, key = _SECTION.match(line), _KEY.match(line)
            if header:
                section = header["name"].strip()
            elif key and section == TABLE:
                found[key["key"]] = _fallback_value(key["value"])
        return found
    tool = tomllib.loads(text).get("tool", {})
    grade = tool.get("grade", {}) if isinstance(tool, dict) else {}
    return grade if isinstance(grade, dict) else {}


def setting(folder: Path, key: str) -> tuple[Path | None, object]:
    """The course's `[tool.grade] <key>` (None if unset) and the pyproject it is read from
    (the folder's, or the nearest folder's above it)."""
    path = pyproject(folder.resolve())
    if path is None:
        return None, None
    try:
        return path, settings_in(path.read_text(encoding="utf-8")).get(key)
    except (OSError, ValueError) as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise SettingError(f"{path} could not be read: {exc}") from None


def show_fixes(folder: Path) -> ShowFixes:
    """The course's `[tool.grade] show_fixes` (see the module's docstring)."""
    path, value = setting(folder, "show_fixes")
    if value is None:
        return DEFAULT_SHOW_FIXES
    if value is True:
        return "always"
    if value is False:
        return "never"
    for choice in SHOW_FIXES:
        if isinstance(value, str) and value.replace("_", "-") == choice:
            return choice
    raise SettingError(
        f'{path}: [tool.grade] show_fixes = {value!r}: give true, false or "on-request"'
    )


def round_step(folder: Path) -> float | None:
    """The course's `[tool.grade] round`: the step each check's score is rounded down to
    (`grader.rounding`), None for scores as the checks give them (the default)."""
    path, value = setting(folder, "round")
    try:
        return rounding.step_of(value)
    except ValueError as exc:
        raise SettingError(f"{path}: [tool.grade] round = {value!r}: {exc}") from None


def release_url(folder: Path) -> str:
    """The course's `[tool.grade] release_url` ("" when unset)."""
    path, value = setting(folder, RELEASE_URL)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise SettingError(
            f"{path}: [tool.grade] {RELEASE_URL} = {value!r}: give the URL as a string"
        )
    return value


def show_fixes_or_never(folder: Path, *, warn: bool = True) -> ShowFixes:
    """The course's `show_fixes`; a malformed one is read as the strictest ("never"), and
    said once on stderr when `warn` (the course meant to set something)."""
    try:
        return show_fixes(folder)
    except SettingError as exc:
        if warn:
            print(f"grade: warning: {exc}; fixes are not shown", file=sys.stderr)
        return "never"


def round_step_or_none(folder: Path) -> float | None:
    """The course's rounding; a malformed setting is said once on stderr and read as none."""
    try:
        return round_step(folder)
    except SettingError as exc:
        print(f"grade: warning: {exc}; scores are not rounded", file=sys.stderr)
        return None
