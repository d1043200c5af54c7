"""What the class as a whole got wrong: failures grouped by cause across students.

Each student's results JSON says, per check, how it failed. Failures of one
check with one cause are one *misconception*, however many students share it:
"3 students: running_sum's jaxpr ... : a Python loop unrolled while tracing".
The cause of a failure is, in order:

    the message's `likely cause:` line      what the check diagnosed (`loop unrolled`)
    its `root_cause`, read back             the exception and the student's function
                                            ("raised TypeError in loss_fn"; the line
                                            differs between students and is left out)
    a timeout or an error                   "ran out of time", "raised an error"
    otherwise                               "wrong values" (the check's own words
                                            say what was compared)

Numbers in a cause are ignored when grouping ("up to x8" and "up to x32" are
one cause). Checks that wait for a failed value check (`blocked_by`, or a gate
inside the check: "values are wrong: fix the values first") are its
consequences, not misconceptions of their own, and are left out.

Work not started is not a misconception: a lesson file still untouched
(`not_attempted`) and a function that still raises NotImplementedError are
counted apart, per lesson file, as "not attempted".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from grader.reports.groups import RootCause

LIKELY_CAUSE = re.compile(r"^\s*likely cause:\s*(.+?)\s*$", re.MULTILINE)
NOT_IMPLEMENTED = re.compile(r"is not implemented yet|NotImplementedError")
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")
FAILED = ("failed", "error", "timeout")
GATED = "values are wrong: fix the values first"


def cause_of(check: Mapping[str, Any]) -> str:
    """The cause of a failed check, in words (see the module's docstring)."""
    message = str(check.get("message") or "")
    found = LIKELY_CAUSE.search(message)
    if found:
        return found.group(1)
    parsed = RootCause.parse(check.get("root_cause"))
    if parsed is not None:
        where = f" in {parsed.function}" if parsed.function not in ("", "<module>") else ""
        return f"raised {parsed.kind}{where}"
    if check.get("status") == "timeout":
        return "ran out of time"
    if check.get("status") == "error":
        return "raised an error"
    return "wrong values"


def not_started(exercise: Mapping[str, Any], check: Mapping[str, Any]) -> bool:
    """Whether a failure only says the work was not started."""
    if exercise.get("status") == "not_attempted":
        return True
    parsed = RootCause.parse(check.get("root_cause"))
    if parsed is not None and parsed.kind == "NotImplementedError":
        return True
    return bool(NOT_IMPLEMENTED.search(str(check.get("message") or "").split("\n", 1)[0]))


@dataclass
class Misconception:
    """One check failed for one cause by `students` (in name order)."""

    lesson: str
    check_id: str
    check: str  # the check's name, in words
    cause: str  # as the first student's message words it
    hidden: bool
    students: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.students)


@dataclass(frozen=True)
class NotAttempted:
    """A lesson file's students who had not started it (whole file) or part of it."""

    lesson: str
    whole: tuple[str, ...]  # the file is the untouched stub
    partly: tuple[str, ...]  # some function still raises NotImplementedError


@dataclass(frozen=True)
class Insight:
    misconceptions: tuple[Misconception, ...]  # the most common first
    not_attempted: tuple[NotAttempted, ...]  # lesson files in results order


def _key(cause: str) -> str:
    return _NUMBER.sub("#", cause.lower())


def of_class(results: Iterable[tuple[str, Mapping[str, Any]]]) -> Insight:
    """Misconceptions and work not started, from (student, results JSON) pairs."""
    groups: dict[tuple[str, str, str], Misconception] = {}
    order: dict[tuple[str, str], int] = {}
    whole: dict[str, list[str]] = {}
    partly: dict[str, set[str]] = {}
    for student, doc in sorted(results, key=lambda item: item[0]):
        for exercise in doc.get("exercises", []):
            lesson = str(exercise.get("name", ""))
            whole.setdefault(lesson, [])
            if exercise.get("status") == "not_attempted":
                whole[lesson].append(student)
                continue
            for check in exercise.get("checks", []):
                order.setdefault((lesson, str(check.get("id"))), len(order))
                if check.get("status") not in FAILED or check.get("blocked_by"):
                    continue
                if not_started(exercise, check):
                    partly.setdefault(lesson, set()).add(student)
                    continue
                cause = cause_of(check)
                if cause.startswith(GATED):
                    continue  # a gate inside the check: the value check's failure says why
                key = (lesson, str(check.get("id")), _key(cause))
                group = groups.setdefault(
                    key,
                    Misconception(
                        lesson,
                        str(check.get("id")),
                        str(check.get("name") or check.get("id")),
                        cause,
                        check.get("visibility") == "hidden",
                    ),
                )
                if student not in group.students:
                    group.students.append(student)
    ranked = sorted(
        groups.values(), key=lambda m: (-m.count, order[(m.lesson, m.check_id)], m.cause)
    )
    started = tuple(
        NotAttempted(lesson, tuple(names), tuple(sorted(partly.get(lesson, set()) - set(names))))
        for lesson, names in whole.items()
    )
    return Insight(tuple(ranked), tuple(n for n in started if n.whole or n.partly))
