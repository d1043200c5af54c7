"""Reveal the next level of help for a failing check of the last grading of a lesson.

    grade hint                               the first failing check of the first lesson
                                             file with one (in the last grading of each)
    grade hint 03_jit                        the first failing check of 03_jit
    grade hint 03_jit test_running_sum_scan  that check: its id, a part of it (test_scan,
                                             running_sum_scan) or words of its name
    grade hint solutions/03_jit.py           the last grading of the lesson files in solutions/

A check's help has up to three levels: the question (shown with every failure), a
nudge, then the fix. Each call shows what was revealed so far and one level more;
once a check's help is all shown, `grade hint` (without a check) moves on to the next
failing check that has help left, and a named check stops at its last level.

What you revealed is remembered in `.grade/hints.json` of the graded folder's state
(your repository: the folder above `exercises/`), goes with your work (the release's
`.gitignore` keeps it) and is counted in the results (`hints_revealed`): your instructor
sees it, as self-reported by your machine. Your course may never show fixes
(`[tool.grade] show_fixes = false` in its pyproject.toml): hints then stop at the nudge.
Run `grade` first: hints are for the checks of the last grading of the lesson.
"""

# The ladder of `grade hint` and `%grade --hint`: `choose` picks the check a call is about
# (the one named, else the first failing check with help left), `reveal` is `grade hint`;
# `grader/commands/hint.py` declares the arguments, the docstring above is its help.

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text

from grader import hints, invocations, settings, state
from grader.errors import GraderError
from grader.model import CheckResult, ExerciseResult
from grader.reports import controls, groups, labels

INDENT = "    "
# A check `grade hint` helps with: one that failed, and one whose function is not started yet
# (still the stub's NotImplementedError), after them.
NEEDS_HELP = labels.PROBLEM_STATUSES | {"not_attempted"}
_STYLES = {hints.QUESTION: "yellow", hints.NUDGE: "cyan", hints.FIX: "green"}


class NoSuchCheck(GraderError, ValueError):
    """The name given matches no check, or several: the message lists the candidates."""


class NothingGraded(GraderError, ValueError):
    """No grading is kept in the folder: run `grade` first."""


def lesson_name(text: str) -> str:
    """`03_jit` from `03_jit`, `03_jit.py` or `exercises/03_jit.ipynb`."""
    name = Path(text).name
    for suffix in (".py", ".ipynb"):
        name = name.removesuffix(suffix)
    return name


def failing(exercise: ExerciseResult) -> list[CheckResult]:
    """The checks that need help, in the order `grade` shows them: the failed ones, then
    those whose function is not started (not one waiting for another)."""
    shown = [
        e.check for e in groups.entries(exercise) if not labels.is_consequence(exercise, e.check)
    ]
    unstarted = [c for c in shown if c.status == "not_attempted" and c.blocked_by is None]
    return [c for c in shown if c.status in labels.PROBLEM_STATUSES] + unstarted


def has_more(check: CheckResult, seen: int, setting: settings.ShowFixes) -> bool:
    """Whether `check` has a level of help beyond the `seen` one."""
    return any(level.number > seen for level in hints.levels(check, setting))


def choose(
    exercise: ExerciseResult,
    wanted: str,
    revealed: Mapping[str, int] | None = None,
    setting: settings.ShowFixes = settings.DEFAULT_SHOW_FIXES,
) -> CheckResult | None:
    """The check to help with: `wanted` (id or name); else the first failing one with help
    left to reveal (`revealed`: check id -> level seen), so that the ladder moves on once a
    check's help is all shown; else the first failing one."""
    if not wanted:
        found = failing(exercise)
        seen = revealed or {}
        fresh = [c for c in found if has_more(c, seen.get(c.id, hints.QUESTION), setting)]
        return next(iter(fresh or found), None)
    return named(exercise, wanted)


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^0-9a-z]+", text.lower()) if w and w != "test"]


def _matches(check: CheckResult, wanted: str) -> bool:
    """`wanted` names `check`: a part of its id, or its words each begin a word of its id or
    name, in order (`test_scan`, `sum scan`, `newton steps` for `test_newton_steps`)."""
    key = wanted.strip().lower()
    if key and key in check.id.lower():
        return True
    asked = _words(wanted)
    if not asked:
        return False
    for words in (_words(check.id), _words(check.name)):
        at = 0
        for word in asked:
            at = next((i + 1 for i in range(at, len(words)) if words[i].startswith(word)), -1)
            if at < 0:
                break
        else:
            return True
    return False


def named(exercise: ExerciseResult, wanted: str) -> CheckResult:
    """The check of `exercise` that `wanted` names: its id or name exactly (any case), else
    the one check `wanted` matches (`_matches`), else the one failing check among those it
    matches; `UsageError` listing the candidates otherwise."""
    key = wanted.strip().lower()
    for check in exercise.checks:
        if check.id.lower() in (key, f"test_{key}") or check.name.lower() == key:
            return check
    found = [c for c in exercise.checks if _matches(c, wanted)]
    problems = [c for c in found if c.status in NEEDS_HELP]
    if len(found) == 1 or len(problems) == 1:
        return found[0] if len(found) == 1 else problems[0]

    def listed(checks: list[CheckResult]) -> str:
        return "\n".join(f"  {c.id}  ({c.name}; {labels.CHECK_PHRASES[c.status]})" for c in checks)

    if found:
        raise NoSuchCheck(
            f"{wanted!r} could be any of {len(found)} checks of {exercise.name}; give more of "
            f"its id:\n{listed(found)}"
        )
    known = failing(exercise)
    raise NoSuchCheck(
        f"{exercise.name} has no check {wanted!r}. "
        + (f"Its failing checks:\n{listed(known)}" if known else "None of its checks fails.")
    )


def first_failing_lesson(folder: Path, setting: settings.ShowFixes) -> str:
    """The first lesson (catalog order) whose last grading has a failing check with help
    left to reveal; else the first with a failing check."""
    graded = state.last_lessons(folder)
    if not graded:
        raise NothingGraded("no grading in this folder yet: run `grade` first, then ask for a hint")
    revealed = state.load_revealed(folder)
    with_failures = []
    for lesson in graded:
        exercise = state.last_result(folder, lesson)
        if exercise is None or not failing(exercise):
            continue
        seen = revealed.get(lesson, {})
        if any(has_more(c, seen.get(c.id, hints.QUESTION), setting) for c in failing(exercise)):
            return lesson
        with_failures.append(lesson)
    return (with_failures or graded)[0]


# -- `grade hint` ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Help:
    """What `grade hint` prints, line by line; `wrap`: long lines wrap at the terminal's width."""

    lines: list[str | Text]
    wrap: bool = False


def state_folder(lesson: str) -> Path:
    """Where the last gradings are kept: the state folder of the lesson file's folder when
    `lesson` is a path (`solutions/03_jit.py`), else of what `grade` grades here."""
    parent = Path(lesson).parent
    return state.state_folder(parent) if str(parent) != "." else state.state_folder_here()


def reveal(lesson_given: str, check_given: str) -> Help:
    """The next level of help for the check named (`check_given` of `lesson_given`; the
    ladder's next when not), remembered as revealed; `NoSuchCheck`, `NothingGraded` or
    `settings.SettingError` say why there is none."""
    folder = state_folder(lesson_given)
    setting = settings.show_fixes(folder)
    lesson = lesson_name(lesson_given) if lesson_given else first_failing_lesson(folder, setting)
    exercise = state.last_result(folder, lesson)
    if exercise is None:
        raise NothingGraded(
            f"no grading of {lesson} in this folder yet: run `{_grade_command(folder, lesson)}` "
            "first, then ask for a hint"
        )
    exercise = controls.visible_in(exercise)
    revealed = state.load_revealed(folder).get(lesson, {})
    check = choose(exercise, check_given, revealed, setting)
    if check is None:
        return Help([_no_check(exercise)])
    if check.status not in NEEDS_HELP:
        phrase = labels.CHECK_PHRASES[check.status]
        return Help([f"{lesson} > {check.name}: {phrase}, nothing to hint."], wrap=True)
    available = hints.levels(check, setting)
    seen = revealed.get(check.id, hints.QUESTION)
    new = next((level for level in available if level.number > seen), None)
    if new is not None:
        state.save_revealed(folder, lesson, check.id, new.number)
        seen = new.number
    problems = failing(exercise)
    done = [] if check_given else problems[: problems.index(check)]
    lines: list[str | Text] = []
    if done:
        lines.append(
            f"All the help for {', '.join(f'`{c.name}`' for c in done)} is shown "
            f"(`grade hint {_asked(lesson_given, lesson)} {done[-1].id}` shows it again); the next "
            "failing check:"
        )
    lines += _account(exercise, check, [lv for lv in available if lv.number <= seen])
    after = [
        c
        for c in problems
        if c is not check and has_more(c, revealed.get(c.id, hints.QUESTION), setting)
    ]
    asked = _asked(lesson_given, lesson)
    footer = _footer(asked, check, available, seen, new is not None, setting)
    if any(level.number > seen for level in available):
        footer += (
            f" Grade again with `{_grade_command(folder, lesson)}` once you changed your code."
        )
    if not any(level.number > seen for level in available) and after:
        footer += f" `grade hint {asked}` again moves on to `{after[0].name}`."
    return Help([*lines, footer, Text(recorded(folder), "dim")])


def _asked(given: str, lesson: str) -> str:
    """How to name the lesson to `grade hint` again: as given when it was a path (its
    grading is kept beside that file, not where `grade hint 03_jit` looks), else its name."""
    return shlex.quote(given) if given and Path(given).parent != Path(".") else lesson


def _grade_command(folder: Path, lesson: str) -> str:
    """The command that grades `lesson` in the state folder `folder`, as it runs from here:
    `grade exercises/03_jit.py` from the repository, `grade 03_jit.py` inside exercises/."""
    for place in (folder / state.LAYOUT_FOLDERS[0], folder / state.LAYOUT_FOLDERS[1], folder):
        for suffix in (".py", ".ipynb"):
            if (place / f"{lesson}{suffix}").is_file():
                return invocations.command(place / f"{lesson}{suffix}")
    return f"grade --only {lesson}"


def recorded(folder: Path) -> str:
    """Where the levels revealed are kept, and that the instructor sees them as reported."""
    path = state.revealed_path(folder)
    try:
        shown = path.relative_to(Path.cwd().resolve())
    except ValueError:
        shown = path
    return (
        f"Hints revealed are recorded in {controls.visible(str(shown))}, which goes with your "
        "work: your instructor sees how many you revealed, self-reported by this machine."
    )


def _no_check(exercise: ExerciseResult) -> str:
    if exercise.status in ("passed", "skipped"):
        return f"Every check of {exercise.name} passed in its last grading: nothing to hint."
    problem = labels.headline(exercise.message, 200)
    return (
        f"{exercise.name} did not run its checks in its last grading"
        + (f" ({problem})" if problem else "")
        + ": fix that first, then grade again. Hints are for failing checks."
    )


def _account(exercise: ExerciseResult, check: CheckResult, shown: list[hints.Level]) -> list[Text]:
    lines = [
        Text.assemble(
            (f"{exercise.name} > {check.name}", "bold"),
            f" ({labels.points(check.score, check.max_score)})",
        )
    ]
    lines += [Text(INDENT + line) for line in check.message.rstrip().splitlines()]
    where = labels.location_text(check)
    if where:
        lines.append(Text.assemble(INDENT, ("in your code: ", "cyan"), where))
    for level in shown:
        label = f"{level.name} ({level.number + 1}/{len(hints.LEVEL_NAMES)}): "
        body = level.text.splitlines() or [""]
        lines.append(Text.assemble(INDENT, (label, _STYLES[level.number]), body[0]))
        lines += [Text(INDENT * 2 + rest) for rest in body[1:]]
    return lines


def _footer(
    lesson: str,
    check: CheckResult,
    available: list[hints.Level],
    seen: int,
    revealed_now: bool,
    setting: settings.ShowFixes,
) -> str:
    later = [level for level in available if level.number > seen]
    if later:
        return f"More help: `grade hint {lesson}` again shows the {later[0].name}."
    prefix = "" if revealed_now else "No more help: "
    if setting == "never":
        return prefix + "this course does not show fixes; that was the last hint for this check."
    return prefix + f"that is all the help for `{check.name}`."
