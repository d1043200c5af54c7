"""A check's help in levels, revealed on request, and the one policy on what reports show.

Every check's help is levelled data:

    level 0  question  the check's `hint` (a question, literal in the suite): shown with
                       every failure
    level 1  nudge     the check's `nudge` (literal in the suite, optional); without one,
                       where the failure points: the student's line and the likely cause
    level 2  fix       the failure's `fix` (from the check that failed): often the code

`grade hint LESSON [CHECK]` reveals the next level for the first failing check of the
last grading of that lesson (`grader.ladder` picks the check and reveals it). What a student revealed is
remembered in `.grade/hints.json` (`{lesson: {check id: level}}`) and counted in the
results (`hints_revealed`, per check and in total), so an instructor sees how much help
was asked for. `grade` keeps the last results of each lesson (with their help, before
the policy) in `.grade/last.json`, for `grade hint`.

That state belongs to the graded folder, not to the folder `grade` runs in
(`state_folder`): lesson files in `exercises/` or `notebooks/` (a student repository's
layout) keep it in the folder above, the student's repository, any other folder in
itself; so an instructor grading `submissions/alice` from the course's root leaves the
course's own `.grade/` alone. The student release's `.gitignore` ignores `.grade/` but
for `hints.json`, which goes with the student's work: `grade batch` reads it
(`revealed_in`) and shows it in the gradebook as self-reported (the student's machine
wrote it; nothing checks it).

The course decides whether fixes are ever shown: `[tool.grade] show_fixes` in the
`pyproject.toml` of the working folder (or the nearest folder above it that has one):

    show_fixes = "on-request"   (the default) a fix is shown once revealed by `grade hint`
    show_fixes = true           every failure shows its fix at once
    show_fixes = false          never: `grade hint` stops at the nudge, no report shows a fix

The course may also ask for whole points: `[tool.grade] round = 1` rounds each check's
score down to a whole point (`grader.rounding`), applied here with the help policy so that
every report of a grading shows the same points.

`apply` is the one place that decides what of the help a report holds: every report
(terminal, HTML, JSON, Gradescope, JUnit) renders what the model has, so none shows
more than it allows. A result straight from the runner holds all of the help;
`after_grading` is what `grade` runs on it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from grader import catalog, next_step, rounding
from grader.errors import GraderError
from grader.model import CheckResult, ExerciseResult, Report
from grader.runner.submission import Submission

ShowFixes = Literal["always", "on-request", "never"]
SHOW_FIXES: tuple[ShowFixes, ...] = ("always", "on-request", "never")
DEFAULT_SHOW_FIXES: ShowFixes = "on-request"

STATE_DIR = ".grade"
REVEALED_FILE = "hints.json"
LAST_FILE = "last.json"
REVEALED_LIMIT = 1 << 20  # bytes: a larger hints.json is no one's record of hints

QUESTION, NUDGE, FIX = 0, 1, 2
LEVEL_NAMES = ("question", "nudge", "fix")

Revealed = dict[str, dict[str, int]]  # lesson -> check id -> deepest level revealed


class SettingError(GraderError, ValueError):
    """The course's `[tool.grade]` setting is malformed: the message says where and how."""


# -- the course setting ---------------------------------------------------------------


def _pyproject(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        path = candidate / "pyproject.toml"
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


def _settings_in(text: str) -> dict[str, object]:
    """The `[tool.grade]` table of a pyproject: with tomllib where there is one (Python
    3.11), else read line by line (the keys of that section are all we need)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        section, found = "", {}
        for line in text.splitlines():
            header, key = _SECTION.match(line), _KEY.match(line)
            if header:
                section = header["name"].strip()
            elif key and section == "tool.grade":
                found[key["key"]] = _fallback_value(key["value"])
        return found
    tool = tomllib.loads(text).get("tool", {})
    grade = tool.get("grade", {}) if isinstance(tool, dict) else {}
    return grade if isinstance(grade, dict) else {}


def _setting(folder: Path, key: str) -> tuple[Path | None, object]:
    """The course's `[tool.grade] <key>` (None if unset) and the pyproject it is read from
    (the working folder's, or the nearest folder's above it)."""
    path = _pyproject(folder.resolve())
    if path is None:
        return None, None
    try:
        return path, _settings_in(path.read_text(encoding="utf-8")).get(key)
    except (OSError, ValueError) as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise SettingError(f"{path} could not be read: {exc}") from None


def show_fixes(folder: Path) -> ShowFixes:
    """The course's `[tool.grade] show_fixes` (see the module's docstring)."""
    path, value = _setting(folder, "show_fixes")
    if value is None:
        return DEFAULT_SHOW_FIXES
    if value is True:
        return "always"
    if value is False:
        return "never"
    for setting in SHOW_FIXES:
        if isinstance(value, str) and value.replace("_", "-") == setting:
            return setting
    raise SettingError(
        f'{path}: [tool.grade] show_fixes = {value!r}: give true, false or "on-request"'
    )


def round_step(folder: Path) -> float | None:
    """The course's `[tool.grade] round`: the step each check's score is rounded down to
    (`grader.rounding`), None for scores as the checks give them (the default)."""
    path, value = _setting(folder, "round")
    try:
        return rounding.step_of(value)
    except ValueError as exc:
        raise SettingError(f"{path}: [tool.grade] round = {value!r}: {exc}") from None


def rounded_for(report: Report, folder: Path) -> Report:
    """`report`'s points as the course of `folder` counts them (`round_step`)."""
    return rounding.rounded(report, _round_step_or_none(folder))


def _round_step_or_none(folder: Path) -> float | None:
    """The course's rounding; a malformed setting is said once and read as none."""
    try:
        return round_step(folder)
    except SettingError as exc:
        print(f"grade: warning: {exc}; scores are not rounded", file=sys.stderr)
        return None


# -- the levels -----------------------------------------------------------------------


@dataclass(frozen=True)
class Level:
    number: int  # QUESTION, NUDGE or FIX: what `hints_revealed` counts
    name: str
    text: str


def fallback_nudge(check: CheckResult) -> str:
    """Level 1 for a check without an authored nudge: the line to look at, asked as a
    question (the likely cause is in the failure's message already; never repeated here).
    Nothing without a line: the next level is then the fix."""
    where = check.location
    if where is None:
        return ""
    return (
        f"Look at {where.path} line {where.line} (`{where.code.strip()}`): what does it do with "
        "the input shown above, against what the check expected?"
    )


def levels(check: CheckResult, setting: ShowFixes = DEFAULT_SHOW_FIXES) -> list[Level]:
    """The help a failed check has, level by level (empty levels left out)."""
    found = [
        Level(QUESTION, "question", check.hint.strip()),
        Level(NUDGE, "nudge", (check.nudge or fallback_nudge(check)).strip()),
        Level(FIX, "fix", "" if setting == "never" else check.fix.strip()),
    ]
    return [level for level in found if level.text]


# -- the policy -----------------------------------------------------------------------


def shown(check: CheckResult, revealed: int, setting: ShowFixes) -> CheckResult:
    """`check` holding only the help the student may see, and how much they revealed."""
    revealed = min(max(revealed, QUESTION), FIX)
    show_fix = setting == "always" or (setting == "on-request" and revealed >= FIX)
    return dataclasses.replace(
        check,
        nudge=check.nudge if revealed >= NUDGE else "",
        fix=check.fix if show_fix else "",
        hints_revealed=revealed,
    )


def apply(report: Report, revealed: Mapping[str, Mapping[str, int]], setting: ShowFixes) -> Report:
    """The one policy: `report` with each check's nudge and fix kept only where allowed."""
    exercises = tuple(
        dataclasses.replace(
            e,
            checks=tuple(
                shown(c, revealed.get(e.name, {}).get(c.id, 0), setting) for c in e.checks
            ),
        )
        for e in report.exercises
    )
    return dataclasses.replace(report, exercises=exercises)


# -- what is remembered in the graded folder ---------------------------------------------

LAYOUT_FOLDERS = ("exercises", "notebooks")  # a student repository's folders of lesson files


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


def hint_command(lesson: str, graded: str, cwd: Path | None = None) -> str:
    """The command that shows more help for `lesson` of a grading of `graded` (the path
    `grade` graded: a folder or a lesson file; "" for what it grades by default), as it
    runs from `cwd`: `grade hint 03_jit` where `grade hint` finds that grading from there,
    else `grade hint` with the lesson file's path, whose state it then reads."""
    here = (Path.cwd() if cwd is None else cwd).resolve()
    given = here / graded if graded else here
    is_file = given.suffix in (".py", ".ipynb")
    folder = given.parent if is_file else given
    try:
        if state_folder(folder) == state_folder_here(here):
            return f"grade hint {lesson}"
    except (OSError, ValueError):  # a path no file can have (a NUL in a report read back)
        return f"grade hint {lesson}"
    file = given if is_file else folder / f"{lesson}.py"
    return f"grade hint {shlex.quote(next_step.shown(file, here))}"


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


# -- what `grade` runs after grading ------------------------------------------------------


def after_grading(
    report: Report,
    submission: Submission,
    *,
    suites: Path | None = None,
    folder: Path | None = None,
) -> Report:
    """What a student sees of a grading run, its state kept in `folder` (default: the
    graded folder's, `state_folder(submission.root)`).

    Names each file's next step (the next lesson file in the catalog order of `suites`,
    default the installed suites), keeps the results for `grade hint` in `.grade/`, and
    applies the policy with the course's setting and what the student revealed. A
    folder that cannot be written to only loses the `grade hint` memory."""
    folder = state_folder(submission.root) if folder is None else folder
    setting = _setting_or_never(folder)
    order = [spec.name for spec in catalog.exercises(suites or catalog.SUITES_DIR)]
    report = next_step.fill(report, submission, order)
    report = rounded_for(report, folder)
    with contextlib.suppress(OSError):
        remember(report, folder, setting)
    return apply(report, load_revealed(folder), setting)


def for_course(
    report: Report,
    submission: Submission,
    *,
    suites: Path | None = None,
    course: Path | None = None,
) -> Report:
    """What a submission graded for the course shows (Gradescope): next steps, and the
    policy with the course's setting (the `pyproject.toml` of `course`, default the working
    folder: the course's source) and nothing revealed. Nothing of the submission's counts,
    neither its own `[tool.grade]` nor its `.grade/`, and nothing is written into it."""
    order = [spec.name for spec in catalog.exercises(suites or catalog.SUITES_DIR)]
    report = next_step.fill(report, submission, order)
    course = Path.cwd() if course is None else course
    report = rounded_for(report, course)
    return apply(report, {}, _setting_or_never(course))


def for_class(report: Report, folder: Path | None = None) -> Report:
    """The policy for a report no student revealed help in (`grade batch`, a class):
    fixes only when the course shows them always; points rounded as the course asks."""
    folder = Path.cwd() if folder is None else folder
    return apply(rounded_for(report, folder), {}, _setting_or_never(folder))


def _setting_or_never(folder: Path) -> ShowFixes:
    """The course's setting; a malformed one is said once and read as the strictest."""
    try:
        return show_fixes(folder)
    except SettingError as exc:  # the course meant to set something
        print(f"grade: warning: {exc}; fixes are not shown", file=sys.stderr)
        return "never"
