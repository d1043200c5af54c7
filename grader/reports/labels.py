"""The words and numbers every report shows the same way.

Points read `7.5/10` everywhere; a status has one word in the terminal and one
phrase on the HTML page; a check's failure text (message, hint, the student's
own line) is composed once here so Gradescope, JUnit and the terminal agree.
"""

from __future__ import annotations

import math

from grader.model import CheckResult, CheckStatus, ExerciseResult, ExerciseStatus

# Short, fixed-width words for the terminal summary.
EXERCISE_WORDS: dict[ExerciseStatus, str] = {
    "passed": "PASS",
    "failed": "FAIL",
    "error": "ERROR",
    "not_attempted": "TODO",
    "skipped": "SKIP",
}
CHECK_WORDS: dict[CheckStatus, str] = {
    "passed": "PASS",
    "failed": "FAIL",
    "error": "ERROR",
    "timeout": "TIMEOUT",
    "not_attempted": "TODO",
    "skipped": "SKIP",
}

# Phrases for badges and headings.
EXERCISE_PHRASES: dict[ExerciseStatus, str] = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "not_attempted": "not attempted",
    "skipped": "skipped",
}
CHECK_PHRASES: dict[CheckStatus, str] = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "timeout": "timed out",
    "not_attempted": "not started",
    "skipped": "skipped",
}

# The HTML badge of a file begun where nothing failed and only functions not started are
# left: the terminal's TODO (`shown_status`), said as a phrase; "not attempted" would deny
# the work done.
BEGUN_PHRASE = "to do"


def shown_status(exercise: ExerciseResult) -> ExerciseStatus:
    """The status a report shows for a file: not_attempted (TODO), not failed, for a file
    begun where nothing failed and only functions not started are left (its other checks
    `not_attempted`); otherwise its own status."""
    left = {c.status for c in exercise.checks} - {"passed", "skipped"}
    return (
        "not_attempted"
        if exercise.status == "failed" and left == {"not_attempted"}
        else exercise.status
    )


def exercise_badge(exercise: ExerciseResult) -> str:
    """The HTML badge of a file, the same verdict as the terminal's word for it."""
    shown = shown_status(exercise)
    return BEGUN_PHRASE if shown != exercise.status else EXERCISE_PHRASES[shown]


# How the runner (grader/runner/results.py) begins the message of a check that
# never ran because of an earlier, exercise-level problem (an import error, a
# crash, a timeout): reports show that problem once, not once per check.
NOT_RUN = "not run:"

# Check statuses that are a problem of the student's code (shown as failures).
PROBLEM_STATUSES: frozenset[CheckStatus] = frozenset({"failed", "error", "timeout"})


def is_consequence(exercise: ExerciseResult, check: CheckResult) -> bool:
    """Whether a check only failed because of the exercise-level problem (shown once).

    True for the checks the runner marks "not run: ..." and for a check whose
    message is the exercise's own (the import error, the crash, the timeout, the
    reason the exercise was skipped).
    """
    message = check.message.strip()
    if check.status == "passed" or not message:
        return False
    if message.startswith(NOT_RUN):
        return True
    return bool(exercise.message and message in exercise.message)


def number(value: float) -> str:
    """A score as people write it: 10, 7.5, 0.33 (at most two decimals)."""
    if not math.isfinite(value):
        return str(value)
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def points(score: float, max_score: float) -> str:
    """`7.5/10`."""
    return f"{number(score)}/{number(max_score)}"


def percent(score: float, max_score: float) -> str:
    """`75%` (floored, so 99.6% never reads as 100%); `-` when nothing is graded."""
    if max_score <= 0:
        return "-"
    return f"{math.floor(100 * score / max_score + 1e-9)}%"


def first_line(text: str, limit: int = 200) -> str:
    """The first non-empty line, cut to `limit` characters (for one-line summaries)."""
    for line in text.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def headline(text: str, limit: int = 200) -> str:
    """A one-line gist: the first line, joined with the next when it ends in a colon.

    `04_vmap.py could not be imported:` / `SyntaxError: ...` reads as one line.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    head = lines[0]
    if head.endswith(":") and len(lines) > 1:
        head = f"{head} {lines[1]}"
    return first_line(head, limit)


def location_text(check: CheckResult) -> str:
    """`03_jit.py:14: for x in xs:` or empty."""
    loc = check.location
    if loc is None:
        return ""
    return f"{loc.path}:{loc.line}: {loc.code.strip()}"


def check_details(check: CheckResult, *, hint: bool = True) -> str:
    """The plain-text account of one check: status, message, the student's line, its help.

    Used where a report has one text field per check (Gradescope's `output`,
    JUnit's failure body). Empty for a plain pass. The help is what the model
    holds: the hint, and the nudge and fix only where `grader.hints` let them
    through. `hint=False` leaves the help out (for a check that never ran: it
    would not help).
    """
    parts: list[str] = []
    if check.status != "passed" or check.score < check.max_score:
        parts.append(
            f"{CHECK_PHRASES[check.status]} ({points(check.score, check.max_score)} points)"
        )
    if check.message:
        parts.append(check.message.rstrip())
    where = location_text(check)
    if where:
        parts.append(f"in your code: {where}")
    if hint and check.status != "passed":
        for label, text in (("hint", check.hint), ("nudge", check.nudge), ("fix", check.fix)):
            if text:
                parts.append(f"{label}: {text}")
    return "\n\n".join(parts)
