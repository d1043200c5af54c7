"""Which check the next hint is for: the ladder of `grade hint` and `%grade --hint`.

A check's help is revealed one level per call (`grader.hints`: question, nudge, fix);
`choose` picks the check a call is about: the one the student named (its id, a part of
it, or words of its name: `named`), else the first failing check with help left, so that
once a check's help is all shown the ladder moves on to the next failing one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from grader import hints
from grader.model import CheckResult, ExerciseResult
from grader.reports import groups, labels


class NoSuchCheck(ValueError):
    """The name given matches no check, or several: the message lists the candidates."""


class NothingGraded(ValueError):
    """No grading is kept in the folder: run `grade` first."""


def lesson_name(text: str) -> str:
    """`03_jit` from `03_jit`, `03_jit.py` or `exercises/03_jit.ipynb`."""
    name = Path(text).name
    for suffix in (".py", ".ipynb"):
        name = name.removesuffix(suffix)
    return name


def failing(exercise: ExerciseResult) -> list[CheckResult]:
    """The checks that need help, in the order `grade` shows them."""
    return [
        entry.check
        for entry in groups.entries(exercise)
        if entry.check.status in labels.PROBLEM_STATUSES
        and not labels.is_consequence(exercise, entry.check)
    ]


def has_more(check: CheckResult, seen: int, setting: hints.ShowFixes) -> bool:
    """Whether `check` has a level of help beyond the `seen` one."""
    return any(level.number > seen for level in hints.levels(check, setting))


def choose(
    exercise: ExerciseResult,
    wanted: str,
    revealed: Mapping[str, int] | None = None,
    setting: hints.ShowFixes = hints.DEFAULT_SHOW_FIXES,
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
    problems = [c for c in found if c.status in labels.PROBLEM_STATUSES]
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


def first_failing_lesson(folder: Path, setting: hints.ShowFixes) -> str:
    """The first lesson (catalog order) whose last grading has a failing check with help
    left to reveal; else the first with a failing check."""
    graded = hints.last_lessons(folder)
    if not graded:
        raise NothingGraded("no grading in this folder yet: run `grade` first, then ask for a hint")
    revealed = hints.load_revealed(folder)
    with_failures = []
    for lesson in graded:
        exercise = hints.last_result(folder, lesson)
        if exercise is None or not failing(exercise):
            continue
        seen = revealed.get(lesson, {})
        if any(has_more(c, seen.get(c.id, hints.QUESTION), setting) for c in failing(exercise)):
            return lesson
        with_failures.append(lesson)
    return (with_failures or graded)[0]
