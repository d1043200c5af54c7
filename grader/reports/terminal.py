"""The terminal summary, and the lines the runner prints while it works.

    PASS       10/10  01_arrays  jax.numpy and immutability
    FAIL      7.5/10  03_jit     jit and structured control flow
    TODO         0/8  06_random  explicit PRNG keys

    What to fix first:

    03_jit > running_sum uses lax.scan (0/2)
        the jaxpr of running_sum
          expected: a scan primitive
          ...
        in your code: 03_jit.py:14: for x in xs:
        hint: How does jax.lax.scan carry a value from one step to the next?

    Not attempted yet (still raising NotImplementedError): 06_random

    Next: stuck on 03_jit? `grade hint 03_jit` shows more help for its first failing check.
    Next: start 06_random at 06_random.py line 23: # TODO: split the key
          then run `grade exercises/06_random.py`

    Total 17.5/28 (62%) · seed 1234
    Isolation: strict

Honest and compact: every exercise gets exactly one line; then at most
`MAX_FAILURES` problems: exercise-level ones (an import error, a crash) said
once, and failed checks with their message (at most `MAX_MESSAGE_LINES` lines
each), the student's own line and the help the model holds (the hint; the
nudge and the fix only where `grader.hints` let them through); untouched stubs
and skipped exercises in one line each; what to do next (`next_lines`: where
to ask for more help, an untouched file's first TODO, the next lesson file at
full marks); then the total and the seed, and how far the student's code was
kept apart from the grader (the isolation level). Only the checks' messages
are shown, never tracebacks.

Colours are rich's (`Style.render`): the summary stays a string, which
`grader.reports.console` prints as it is.

Everything here may hold what a submission printed or raised: control
characters in it are made visible (`controls.visible_in`) before the summary
is composed and coloured, so a submission cannot recolour, retitle or
overwrite it; the only escape sequences in the output are our own colours.
"""

from __future__ import annotations

from rich.color import ColorSystem
from rich.style import Style

from grader import invocations
from grader.model import CheckResult, ExerciseResult, ExerciseStatus, Report
from grader.reports import controls, groups, labels

MAX_FAILURES = 5
MAX_MESSAGE_LINES = 12
INDENT = "    "

_BOLD = "bold"
_DIM = "dim"
_RED = "red"
_GREEN = "green"
_YELLOW = "yellow"
_CYAN = "cyan"

_EXERCISE_COLORS: dict[ExerciseStatus, str] = {
    "passed": _GREEN,
    "failed": _RED,
    "error": f"{_BOLD} {_RED}",
    "not_attempted": _YELLOW,
    "skipped": _DIM,
}


class _Paint:
    """Text in a rich style, as the escape codes of the 8 standard colours (or plain)."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, style: str, text: str) -> str:
        if not self.color or not text:
            return text
        return Style.parse(style).render(text, color_system=ColorSystem.STANDARD)


def _word_width() -> int:
    return max(len(w) for w in labels.EXERCISE_WORDS.values())


def _shown_status(exercise: ExerciseResult) -> ExerciseStatus:
    return labels.shown_status(exercise)


def _exercise_line(exercise: ExerciseResult, name_width: int, paint: _Paint) -> str:
    shown = _shown_status(exercise)
    word = labels.EXERCISE_WORDS[shown]
    pts = labels.points(exercise.score, exercise.max_score)
    status = paint(_EXERCISE_COLORS[shown], word.ljust(_word_width()))
    line = f"{status}  {pts:>9}  {exercise.name.ljust(name_width)}  {exercise.title}"
    return line.rstrip()


def problem_lines(
    exercise: ExerciseResult, entry: groups.Entry | None = None, *, color: bool = False
) -> list[str]:
    """One problem as the summary shows it: the exercise's own (an import error, a crash)
    when `entry` is None, else the failed check of `entry` with the checks sharing its
    cause or waiting for it (`grade watch` draws the first one)."""
    paint = _Paint(color)
    if entry is None:
        return _exercise_problem(exercise, paint)
    return _failure_block(exercise, entry.check, paint, entry)


def _capped_lines(text: str, limit: int) -> list[str]:
    lines = text.rstrip().splitlines()
    if len(lines) <= limit:
        return lines
    hidden = len(lines) - limit
    return [*lines[:limit], f"[... {hidden} more line(s): see the HTML report]"]


def _failure_block(
    exercise: ExerciseResult, check: CheckResult, paint: _Paint, entry: groups.Entry | None = None
) -> list[str]:
    lines = []
    if entry is not None and entry.grouped:
        lines.append(paint(_BOLD, f"{exercise.name} > {groups.cause_headline(exercise, entry)}:"))
        lines.append(_check_head(check, paint, indent=INDENT))
        body = INDENT * 2
    else:
        lines.append(_check_head(check, paint, prefix=exercise.name + " > "))
        body = INDENT
    for line in _capped_lines(
        check.message or labels.CHECK_PHRASES[check.status], MAX_MESSAGE_LINES
    ):
        lines.append(body + line)
    where = labels.location_text(check)
    if where:
        lines.append(body + paint(_CYAN, "in your code: ") + where)
    lines.extend(_help_lines(check, paint, body))
    if entry is not None and entry.same_cause:
        lines.append(INDENT + groups.same_cause_headline(entry) + " (same message, see above):")
        lines.extend(
            _check_item(c, paint) + (f": {note}" if (note := groups.share_note(c)) else "")
            for c in entry.same_cause
        )
    if entry is not None and entry.waiting:
        lines.append(INDENT + groups.waiting_headline(entry) + ":")
        for c in entry.waiting:
            note = f"waits for: {groups.waits_for(exercise, c)}" if entry.grouped else ""
            lines.append(_check_item(c, paint, note))
    return lines


def _help_lines(check: CheckResult, paint: _Paint, indent: str) -> list[str]:
    """The help the model holds for `check`: the hint, then the nudge and fix if let through."""
    lines: list[str] = []
    for label, style, text in (
        ("hint: ", _YELLOW, check.hint),
        ("nudge: ", _CYAN, check.nudge),
        ("fix: ", _GREEN, check.fix),
    ):
        body = text.strip().splitlines()
        if body:
            lines.append(indent + paint(style, label) + body[0])
            lines.extend(indent + " " * len(label) + rest for rest in body[1:])
    return lines


def _check_head(check: CheckResult, paint: _Paint, *, prefix: str = "", indent: str = "") -> str:
    """`03_jit > running_sum uses lax.scan (0/2) [timed out]`."""
    status = "" if check.status == "failed" else f" [{labels.CHECK_PHRASES[check.status]}]"
    return (
        f"{indent}{paint(_BOLD, prefix + check.name)}"
        f" ({labels.points(check.score, check.max_score)}){paint(_RED, status)}"
    )


def _check_item(check: CheckResult, paint: _Paint, note: str = "") -> str:
    """One line for a check shown under another: `      - train_step is pure (0/1)`."""
    status = "" if check.status == "failed" else f" [{labels.CHECK_PHRASES[check.status]}]"
    pts = labels.points(check.score, check.max_score)
    return f"{INDENT}  - {check.name} ({pts}{', ' + note if note else ''}){paint(_RED, status)}"


def _exercise_problem(exercise: ExerciseResult, paint: _Paint) -> list[str]:
    """An exercise-level message (import error, crash, timeout) as a block."""
    lines = [paint(_BOLD, exercise.name) + f" ({labels.EXERCISE_PHRASES[exercise.status]})"]
    lines.extend(INDENT + line for line in _capped_lines(exercise.message, MAX_MESSAGE_LINES))
    # The line of the student's code it happened on travels on the check it stopped.
    where = next(
        (
            labels.location_text(c)
            for c in exercise.checks
            if c.location is not None and labels.is_consequence(exercise, c)
        ),
        "",
    )
    if where:
        lines.append(INDENT + paint(_CYAN, "in your code: ") + where)
    return lines


def _is_problem(exercise: ExerciseResult, check: CheckResult) -> bool:
    return check.status in labels.PROBLEM_STATUSES and not labels.is_consequence(exercise, check)


def _untouched(exercise: ExerciseResult) -> bool:
    """A stub nobody has started: said in one line, not one block per check."""
    return exercise.status == "not_attempted" and (
        not exercise.message or "NotImplementedError" in exercise.message
    )


def _problems(report: Report, paint: _Paint) -> list[str]:
    blocks: list[list[str]] = []
    untouched: list[str] = []
    skipped: list[str] = []
    for exercise in report.exercises:
        if _untouched(exercise):
            untouched.append(exercise.name)
            continue
        if exercise.status == "skipped":
            reason = labels.headline(exercise.message, 120)
            skipped.append(f"{exercise.name} ({reason})" if reason else exercise.name)
            continue
        if exercise.message and exercise.status != "passed":
            blocks.append(_exercise_problem(exercise, paint))
        if exercise.status == "not_attempted":
            continue
        for entry in groups.entries(exercise):
            if _is_problem(exercise, entry.check):
                blocks.append(_failure_block(exercise, entry.check, paint, entry))
    lines: list[str] = []
    if blocks:
        lines += ["", "What to fix first:"]
        for block in blocks[:MAX_FAILURES]:
            lines += ["", *block]
        if len(blocks) > MAX_FAILURES:
            more = len(blocks) - MAX_FAILURES
            lines += ["", f"... and {more} more problem(s): see the HTML report."]
    notes: list[str] = []
    if untouched:
        notes.append(
            "Not attempted yet (still raising NotImplementedError): " + ", ".join(untouched)
        )
    begun = [
        f"{e.name} ({n} check{'s' if n != 1 else ''})"
        for e in report.exercises
        if e.status != "not_attempted" and (n := sum(c.status == "not_attempted" for c in e.checks))
    ]
    if begun:
        notes.append(
            "Not started yet, not failed (functions still raising NotImplementedError): "
            + ", ".join(begun)
        )
    if skipped:
        notes.append("Skipped: " + ", ".join(skipped))
    if notes:
        lines += ["", *notes]
    after = next_lines(report, paint)
    if after:
        lines += ["", *after]
    return lines


def next_lines(report: Report, paint: _Paint | None = None) -> list[str]:
    """What to do next, in a line or two each (empty when the report says nothing more).

    Where to ask for more help when a check failed; the first TODO of the first untouched
    file and the command to run; when nothing failed and a file is at full marks, the next
    lesson file to work on."""
    paint = paint or _Paint(False)
    label = paint(_BOLD, "Next:")
    lines: list[str] = []
    stuck = next(
        (
            e
            for e in report.exercises
            for c in e.checks
            if e.status == "failed" and _is_problem(e, c)
        ),
        None,
    )
    if stuck is not None:
        lines.append(
            f"{label} stuck on {stuck.name}? `{invocations.hint_command(stuck.name, report.submission)}` "
            "shows more help for its first failing check."
        )
    untouched = next(
        (e for e in report.exercises if e.next and (e.status == "not_attempted" or e.next.todo)),
        None,
    )
    if untouched is not None and untouched.next is not None:
        todo = untouched.next.todo
        where = f" at {todo.path} line {todo.line}: {todo.code}" if todo else ""
        verb = "start" if untouched.status == "not_attempted" else "go on with"
        lines.append(f"{label} {verb} {untouched.name}{where}")
        lines.append(" " * len("Next: ") + f"then run `{untouched.next.command}`")
    if not lines and all(e.status in ("passed", "skipped") for e in report.exercises):
        done = [e for e in report.exercises if e.next and e.next.lesson]
        if done and done[-1].next is not None:
            step = done[-1].next
            lines.append(
                f"{label} {done[-1].name} is at full marks; go on with {step.lesson}: "
                f"`{step.command}`"
            )
    return lines


def hidden_line(report: Report, hidden_checks: int, hidden_points: float) -> str:
    """What a student repository does not grade: `public 12/12 passed; 9 hidden checks, ...`."""
    passed = sum(c.status == "passed" for _, c in report.checks())
    return (
        f"public {passed}/{len(report.checks())} passed; {hidden_checks} hidden check(s), "
        f"{labels.number(hidden_points)} point(s), run at grading (not in the total above)"
    )


def render(
    report: Report, *, color: bool, hidden_checks: int = 0, hidden_points: float = 0.0
) -> str:
    """The summary printed after a grading run (ends with a newline).

    `hidden_checks`/`hidden_points`: checks cut out of released suites (catalog `HIDDEN`).
    """
    report = controls.visible_in(report)
    paint = _Paint(color)
    width = max((len(e.name) for e in report.exercises), default=0)
    lines = [_exercise_line(e, width, paint) for e in report.exercises]
    if not report.exercises:
        lines.append("No exercises were graded.")
    lines += _problems(report, paint)
    total = (
        f"Total {labels.points(report.score, report.max_score)}"
        f" ({labels.percent(report.score, report.max_score)})"
    )
    lines += ["", f"{paint(_BOLD, total)} · seed {report.seed}"]
    if hidden_checks:
        lines.append(hidden_line(report, hidden_checks, hidden_points))
    if report.isolation is not None:
        lines.append(paint(_DIM, isolation_line(report)))
    return "\n".join(lines) + "\n"


def isolation_line(report: Report) -> str:
    """`Isolation: user (missing: namespaces)`: the level in force, the gist of what was missing."""
    if report.isolation is None:
        return ""
    gist = [item.split(" (")[0] for item in report.isolation.missing]
    return f"Isolation: {report.isolation.level}" + (
        f" (missing: {'; '.join(gist)})" if gist else ""
    )


def progress_line(index: int, total: int, exercise_name: str) -> str:
    """`[3/11] 03_jit ...`, printed when an exercise starts (index counts from 1)."""
    width = len(str(total))
    return f"[{index:>{width}}/{total}] {controls.visible(exercise_name)} ..."


def done_line(exercise: ExerciseResult, *, color: bool = False) -> str:
    """`PASS     10/10  03_jit (1.2 s)`, printed when an exercise is graded."""
    exercise = controls.visible_in(exercise)
    paint = _Paint(color)
    status = _shown_status(exercise)
    word = paint(_EXERCISE_COLORS[status], labels.EXERCISE_WORDS[status].ljust(_word_width()))
    pts = labels.points(exercise.score, exercise.max_score)
    line = f"{word}  {pts:>9}  {exercise.name} ({exercise.duration_s:.1f} s)"
    if exercise.status == "error" and exercise.message:
        line += f": {labels.headline(exercise.message, 120)}"
    return line
