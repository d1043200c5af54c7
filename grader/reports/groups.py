"""One root cause, one message: an exercise's checks arranged for showing.

Two kinds of check are shown as one line each, under the check that explains them:

- checks that failed with the same exception at the same line of the student's code
  (the same `root_cause`): the first of them is shown in full, under a head such as
  "5 checks failed because `loss_fn` raised TypeError at line 54", and the others
  follow as "the same error also failed: ..." (one line each, with their points). A
  check of several parts that lost only some of its points belongs there too when every
  part that failed raised that exception (its credit carries the key): its line says
  what share it kept and why (`share_note`);
- checks that failed with the very same finding (the same checked, expected, observed and
  likely cause, word for word: a refused observation of the module, the same program
  refused), without an exception of the student's behind it: shown the same way, under
  "3 checks failed for the same reason";
- checks that were not judged because a value check they wait for failed (their
  `blocked_by` is that check's id): listed under it as "3 more checks wait for this one".

Points stay per check: every check keeps its own line and its own points. Checks that only
failed because of an exercise-level problem (`labels.is_consequence`) are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.model import CheckResult, ExerciseResult
from grader.reports import labels


@dataclass(frozen=True)
class RootCause:
    """A `root_cause` key (`TypeError|08_mlp.py|54|loss_fn`), read back."""

    kind: str
    path: str
    line: int
    function: str

    @classmethod
    def parse(cls, key: str | None) -> RootCause | None:
        if not key:
            return None
        parts = key.split("|")
        if len(parts) != 4:
            return None
        kind, path, line, function = parts
        try:
            number = int(line)
        except ValueError:
            return None
        return cls(kind, path, number, function)


@dataclass(frozen=True)
class Entry:
    """A check as shown at the top level of an exercise, with what is shown under it.

    `same_cause`: the other checks that failed with the same root cause (in check order);
    `waiting`: the checks that wait for this one or for one of `same_cause`.
    """

    check: CheckResult
    cause: RootCause | None = None
    same_cause: tuple[CheckResult, ...] = ()
    waiting: tuple[CheckResult, ...] = ()

    @property
    def grouped(self) -> bool:
        return bool(self.same_cause)

    @property
    def checks(self) -> tuple[CheckResult, ...]:
        """Every check this entry stands for: itself, the same-cause ones, the waiting ones."""
        return (self.check, *self.same_cause, *self.waiting)


def root_cause(check: CheckResult) -> str | None:
    return check.root_cause or None


_FINDING = "\n  expected: "  # a finding's message (`grader.protocol.failure.Finding.message`)


def _group_key(check: CheckResult) -> str | None:
    """What a check's failure is grouped by: its root cause, else its whole finding (a
    message with an expected line), else nothing."""
    key = root_cause(check)
    if key is not None:
        return "cause:" + key
    message = check.message.strip()
    if _FINDING in message and not check.blocked_by:
        return "finding:" + message
    return None


def blocked_by(check: CheckResult) -> str | None:
    return check.blocked_by or None


def _groupable(exercise: ExerciseResult, check: CheckResult) -> bool:
    return check.status in labels.PROBLEM_STATUSES and not labels.is_consequence(exercise, check)


def entries(exercise: ExerciseResult) -> list[Entry]:
    """The exercise's checks in order, grouped: followers and waiting checks are not listed
    at the top level but under the entry that explains them."""
    checks = exercise.checks
    by_id = {c.id: c for c in checks}
    ids = set(by_id)
    # Root-cause groups: the first problem check with a key leads, the rest follow it.
    lead_of: dict[str, str] = {}  # check id -> id of its group's lead
    members: dict[str, list[CheckResult]] = {}  # lead id -> followers
    first_with: dict[str, str] = {}  # root-cause key -> lead id
    for c in checks:
        key = _group_key(c)
        if key is None or not _groupable(exercise, c):
            continue
        lead = first_with.setdefault(key, c.id)
        lead_of[c.id] = lead
        if lead != c.id:
            members.setdefault(lead, []).append(c)
    # Gated checks: under the top-level entry of the check they wait for.
    gates: dict[str, str] = {}  # gated check id -> id of the check it waits for
    for c in checks:
        target = blocked_by(c)
        if target is None or target not in ids or target == c.id or c.status == "passed":
            continue
        if c.id not in lead_of and not labels.is_consequence(exercise, c):
            gates[c.id] = target
    waiting: dict[str, list[CheckResult]] = {}
    waits: set[str] = set()
    for c in checks:
        if c.id in gates:
            top = _top(gates[c.id], lead_of, gates)
            # Only under a check shown as a problem: else the waiting check speaks for itself.
            if top is not None and top != c.id and _groupable(exercise, by_id[top]):
                waiting.setdefault(top, []).append(c)
                waits.add(c.id)
    shown: list[Entry] = []
    for c in checks:
        if c.id in waits or lead_of.get(c.id, c.id) != c.id:
            continue
        followers = tuple(members.get(c.id, ()))
        shown.append(
            Entry(
                check=c,
                cause=RootCause.parse(root_cause(c)) if followers else None,
                same_cause=followers,
                waiting=tuple(waiting.get(c.id, ())),
            )
        )
    return shown


def _top(target: str, lead_of: dict[str, str], gates: dict[str, str]) -> str | None:
    """The id of the top-level entry `target` is shown in: its group's lead, or, for a check
    that itself waits for another, the entry of that one (None for a cycle)."""
    current = lead_of.get(target, target)
    seen = {current}
    while current in gates:
        current = lead_of.get(gates[current], gates[current])
        if current in seen:
            return None
        seen.add(current)
    return current


def cause_headline(exercise: ExerciseResult, entry: Entry) -> str:
    """`5 checks failed because `loss_fn` raised TypeError at line 54`."""
    count = 1 + len(entry.same_cause)
    cause = entry.cause
    if cause is None:
        return f"{count} checks failed for the same reason"
    who = f"`{cause.function}`" if cause.function else "your code"
    file = cause.path.replace("\\", "/").rsplit("/", 1)[-1]
    where = f"line {cause.line}" if file == f"{exercise.name}.py" else f"{file} line {cause.line}"
    return f"{count} checks failed because {who} raised {cause.kind} at {where}"


def waiting_headline(entry: Entry) -> str:
    """`3 more checks wait for this one (not judged until it passes)`."""
    n = len(entry.waiting)
    verb = "checks wait" if n != 1 else "check waits"
    if entry.grouped:
        return f"{n} more {verb} for these (not judged until they pass)"
    return f"{n} more {verb} for this one (not judged until it passes)"


def waits_for(exercise: ExerciseResult, check: CheckResult) -> str:
    """The name of the check `check` waits for (`loss_fn matches the reference`), or ""."""
    target = blocked_by(check)
    return next((c.name for c in exercise.checks if c.id == target), "")


def same_cause_headline(entry: Entry) -> str:
    n = len(entry.same_cause)
    what = "error" if entry.cause is not None else "finding"
    return f"the same {what} failed {n} more check{'s' if n != 1 else ''}"


def share_note(check: CheckResult) -> str:
    """Where a check's fractional score comes from, for a check listed in one line: the
    first line of its message when it kept part of its points (`2 of 3 passed (piecewise
    failed); each of the 3 parts is 1/3 of the points.`), else ""."""
    if not 0 < check.score < check.max_score:
        return ""
    return check.message.strip().splitlines()[0] if check.message.strip() else ""
