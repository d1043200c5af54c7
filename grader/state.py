"""What `grade` remembers in a graded folder's `.grade/`: the help revealed and the last
results of each lesson.

    .grade/hints.json   `{lesson: {check id: level}}`: the help levels the student revealed
                        (`grade hint`, `%grade --hint`), counted in the results
                        (`hints_revealed`)
    .grade/last.json    each lesson's last results, all their help included (before the
                        policy of `grader.hints`), for `grade hint`

That state belongs to the graded folder, not to the folder `grade` runs in
(`state_folder`): lesson files in `exercises/` or `notebooks/` (a student repository's
layout) keep it in the folder above, the student's repository, any other folder in
itself; so an instructor grading `submissions/alice` from the course's root leaves the
course's own `.grade/` alone. The student release's `.gitignore` ignores `.grade/` but
for `hints.json`, which goes with the student's work: `grade batch` reads it
(`revealed_in`) and shows it in the gradebook as self-reported (the student's machine
wrote it; nothing checks it). The run history beside them is `grader.reports.history`'s.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from grader.hints import FIX
from grader.model import ExerciseResult, Report
from grader.settings import ShowFixes

STATE_DIR = ".grade"
REVEALED_FILE = "hints.json"
LAST_FILE = "last.json"
REVEALED_LIMIT = 1 << 20  # bytes: a larger hints.json is no one's record of hints
EXERCISES, NOTEBOOKS = "exercises", "notebooks"  # a student repository's lesson files
LAYOUT_FOLDERS = (EXERCISES, NOTEBOOKS)

Revealed = dict[str, dict[str, int]]  # lesson -> check id -> deepest level revealed


def state_folder(root: Path) -> Path:
    """The folder whose `.grade/` keeps the state of a grading of the lesson files in
    `root` (see the module's docstring): `root`'s parent when `root` is the `exercises/`
    or `notebooks/` of a repository, else `root` itself."""
    absolute = root.resolve()
    if absolute.name in LAYOUT_FOLDERS and absolute.parent != absolute:
        return absolute.parent
    return absolute


def state_folder_here(cwd: Path | None = None) -> Path:
    """The state folder of what `grade` grades by default in `cwd` (the working folder):
    `cwd` itself when it holds `exercises/`, else `state_folder(cwd)` (`grade` run inside
    `exercises/` keeps its state in the repository above)."""
    here = (Path.cwd() if cwd is None else cwd).resolve()
    if (here / LAYOUT_FOLDERS[0]).is_dir():
        return here
    return state_folder(here)


def revealed_path(folder: Path) -> Path:
    """`.grade/hints.json` of the state folder `folder`: what the student revealed."""
    return folder / STATE_DIR / REVEALED_FILE


def count(revealed: Mapping[str, Mapping[str, int]]) -> int:
    """The help levels beyond the question revealed in all (as `hints_revealed` counts)."""
    return sum(level for checks in revealed.values() for level in checks.values())


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def _write_json(path: Path, doc: Any) -> None:
    """Write atomically: a run interrupted halfway never leaves half a file. Not into a
    `.grade` that is a link (the graded folder is the student's: a link planted there must
    not make the grader write elsewhere); a link at `path` is replaced, not followed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.parent.is_symlink():
        raise OSError(errno.ELOOP, "the grading state's folder is a link", str(path.parent))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(doc, out, sort_keys=True, indent=2, ensure_ascii=False)
            out.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_revealed(folder: Path) -> Revealed:
    """What the student revealed so far (an unreadable file counts as nothing revealed)."""
    return revealed_in(revealed_path(folder)) or {}


def revealed_in(path: Path) -> Revealed | None:
    """The levels in a `hints.json` at `path`, only well-formed entries kept; None when
    there is no such file or it is not a JSON object (a student's file is read as data:
    `grade batch` reads each student's: a link or a file over `REVEALED_LIMIT` is not)."""
    try:
        plain = not path.is_symlink() and path.is_file()
        doc = _read_json(path) if plain and path.stat().st_size <= REVEALED_LIMIT else None
    except OSError:
        doc = None
    if not isinstance(doc, dict):
        return None
    out: Revealed = {}
    for lesson, checks in doc.items():
        if isinstance(lesson, str) and isinstance(checks, dict):
            out[lesson] = {
                cid: min(max(level, 0), FIX)
                for cid, level in checks.items()
                if isinstance(cid, str) and isinstance(level, int) and not isinstance(level, bool)
            }
    return out


def save_revealed(folder: Path, lesson: str, check_id: str, level: int) -> None:
    revealed = load_revealed(folder)
    revealed.setdefault(lesson, {})[check_id] = level
    _write_json(revealed_path(folder), revealed)


def remember(report: Report, folder: Path, setting: ShowFixes) -> None:
    """Keep each graded lesson's results, all their help included, for `grade hint`.

    Lessons graded earlier and not now are kept. Under `show_fixes = false` the fixes
    are not kept either."""
    path = folder / STATE_DIR / LAST_FILE
    doc = _read_json(path)
    lessons: dict[str, Any] = doc if isinstance(doc, dict) else {}
    for exercise in report.exercises:
        if setting == "never":
            exercise = dataclasses.replace(
                exercise, checks=tuple(dataclasses.replace(c, fix="") for c in exercise.checks)
            )
        lessons[exercise.name] = exercise.to_json()
    _write_json(path, lessons)


def last_lessons(folder: Path) -> list[str]:
    """The lessons with a last result in `folder`, in catalog order (01_... before ex1_...)."""
    doc = _read_json(folder / STATE_DIR / LAST_FILE)
    names = [name for name in doc if isinstance(name, str)] if isinstance(doc, dict) else []
    return sorted(names, key=lambda name: (name.startswith("ex"), name))


def last_result(folder: Path, lesson: str) -> ExerciseResult | None:
    """The lesson's result from the last `grade` run in `folder`, with all its help."""
    doc = _read_json(folder / STATE_DIR / LAST_FILE)
    entry = doc.get(lesson) if isinstance(doc, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("checks"), list):
        return None
    return dataclasses.replace(ExerciseResult.from_json(entry), name=lesson)
