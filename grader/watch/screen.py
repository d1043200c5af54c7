"""What `grade watch` draws after each save.

    grade watch · exercises/ · save a lesson file to grade it · q quits

    FAIL        7/21  03_jit (4.1 s)

    03_jit > running_sum uses jax.lax.scan (0/2)
        the jaxpr of running_sum
          expected: a scan primitive ...
        in your code: 03_jit.py:14: for x in xs:
        hint: How does jax.lax.scan carry a value from one step to the next?
        2 more checks wait for this one (not judged until it passes):
          - running_sum compiles under jax.jit (0/1, waits for: ...)

    Next: fix "running_sum uses jax.lax.scan" in 03_jit.py and save.

The file's line is `grade`'s own (`terminal.done_line`); then only the first
problem, grouped by root cause (`reports.groups`), since the student fixes one
thing at a time; then one line on what to do next. Everything a submission
produced is made visible (`controls.visible_in`) before it is drawn, and drawn
as plain text (no markup), so it cannot restyle or move the screen.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.text import Text

from grader.model import CheckResult, ExerciseResult
from grader.reports import console as consoles
from grader.reports import controls, groups, labels, terminal
from grader.watch.source import SyntaxProblem

INDENT = terminal.INDENT


def header(path: str, *, single: bool = False) -> Text:
    what = "save it" if single else "save a lesson file"
    return Text(f"grade watch · {path} · {what} to grade it · q quits", style="bold")


def draw(console: Console, *parts: Text) -> None:
    """Redraw the whole screen on a terminal; elsewhere, print the parts after a rule."""
    if consoles.is_live(console):
        console.clear()
    else:
        console.print("-" * 40)
    for part in parts:
        console.print(part)


def first_problem(exercise: ExerciseResult) -> groups.Entry | None:
    """The first failing check (with those sharing its cause or waiting for it)."""
    for entry in groups.entries(exercise):
        check = entry.check
        if check.status in labels.PROBLEM_STATUSES and not labels.is_consequence(exercise, check):
            return entry
    return None


def result(exercise: ExerciseResult) -> Text:
    """The file's line and its first problem."""
    exercise = controls.visible_in(exercise)
    lines = [Text.from_ansi(terminal.done_line(exercise, color=True))]
    if exercise.status == "not_attempted":
        lines += [Text(), Text("Not attempted yet: the file still raises NotImplementedError.")]
        return Text("\n").join(lines)
    if exercise.message and exercise.status != "passed":
        lines += [Text(), *_exercise_problem(exercise)]
    entry = first_problem(exercise)
    if entry is not None and exercise.status != "error":
        lines += [Text(), *_check_problem(exercise, entry)]
    return Text("\n").join(lines)


def _exercise_problem(exercise: ExerciseResult) -> list[Text]:
    phrase = labels.EXERCISE_PHRASES[exercise.status]
    lines = [Text(f"{exercise.name} ({phrase})", style="bold")]
    lines += [Text(INDENT + line) for line in _capped(exercise.message)]
    where = next(
        (
            labels.location_text(c)
            for c in exercise.checks
            if c.location is not None and labels.is_consequence(exercise, c)
        ),
        "",
    )
    if where:
        lines.append(Text(INDENT) + Text("in your code: ", style="cyan") + where)
    return lines


def _check_problem(exercise: ExerciseResult, entry: groups.Entry) -> list[Text]:
    check = entry.check
    lines: list[Text] = []
    head, body = "", INDENT
    if entry.grouped:
        lines.append(Text(f"{exercise.name} > {groups.cause_headline(exercise, entry)}:", "bold"))
        head, body = INDENT, INDENT * 2
    else:
        head = f"{exercise.name} > "
    lines.append(_check_head(check, head, bold_prefix=not entry.grouped))
    message = check.message or labels.CHECK_PHRASES[check.status]
    lines += [Text(body + line) for line in _capped(message)]
    where = labels.location_text(check)
    if where:
        lines.append(Text(body) + Text("in your code: ", style="cyan") + where)
    lines += _help(check, body)
    if entry.same_cause:
        lines.append(Text(INDENT + groups.same_cause_headline(entry) + " (same message):"))
        lines += [_item(c) for c in entry.same_cause]
    if entry.waiting:
        lines.append(Text(INDENT + groups.waiting_headline(entry) + ":"))
        for c in entry.waiting:
            waits = groups.waits_for(exercise, c) if entry.grouped else ""
            lines.append(_item(c, f"waits for: {waits}" if waits else ""))
    return lines


def _help(check: CheckResult, indent: str) -> list[Text]:
    """The help the model holds (the hint; the nudge and the fix only where
    `grader.hints` let them through)."""
    lines = []
    for label, style, text in (
        ("hint: ", "yellow", check.hint),
        ("nudge: ", "cyan", check.nudge),
        ("fix: ", "green", check.fix),
    ):
        body = text.strip().splitlines()
        if body:
            lines.append(Text(indent) + Text(label, style=style) + body[0])
            lines += [Text(indent + " " * len(label) + rest) for rest in body[1:]]
    return lines


def _capped(text: str) -> list[str]:
    lines = text.rstrip().splitlines()
    limit = terminal.MAX_MESSAGE_LINES
    if len(lines) <= limit:
        return lines
    return [*lines[:limit], f"[... {len(lines) - limit} more line(s): see the HTML report]"]


def _check_head(check: CheckResult, prefix: str, *, bold_prefix: bool) -> Text:
    status = "" if check.status == "failed" else f" [{labels.CHECK_PHRASES[check.status]}]"
    name = (
        Text(prefix + check.name, style="bold")
        if bold_prefix
        else Text(prefix) + Text(check.name, style="bold")
    )
    return name + f" ({labels.points(check.score, check.max_score)})" + Text(status, style="red")


def _item(check: CheckResult, note: str = "") -> Text:
    pts = labels.points(check.score, check.max_score)
    return Text(f"{INDENT}  - {check.name} ({pts}{', ' + note if note else ''})")


def syntax(problem: SyntaxProblem) -> Text:
    """A syntax error, shown at once (nothing was graded)."""
    where = f" line {problem.line}" if problem.line else ""
    lines = [
        Text("SYNTAX", style="bold red") + f"  {problem.file}{where}: {problem.message}",
    ]
    if problem.code:
        code = controls.visible(problem.code.expandtabs(4))
        lines += [Text(), Text(INDENT + code)]
        if problem.column:
            lines.append(Text(INDENT + " " * (problem.column - 1) + "^", style="red"))
    return Text("\n").join(lines)


def grading(file: str) -> Text:
    return Text(f"grading {file} ...", style="dim")


def next_step(exercise: ExerciseResult, file: Path) -> Text:
    """One line on what to do next after a graded save (`exercise.next` is
    `grader.next_step`'s: an untouched file's first TODO, the lesson after a file at
    full marks)."""
    name, step = file.name, exercise.next
    if exercise.status == "passed" and step is not None and step.lesson:
        text = f"{name} is at full marks. Next: go on with {step.lesson}, and save it to grade it."
    elif exercise.status == "passed":
        text = f"{name} passes every check. Next: save another lesson file to grade it."
    elif exercise.status == "not_attempted" and step is not None and step.todo is not None:
        todo = step.todo
        text = f"Next: start at {todo.path} line {todo.line}: {todo.code} (then save)."
    elif exercise.status == "skipped":
        text = "Next: install what the message above names, then save again."
    elif exercise.status == "failed" and (entry := first_problem(exercise)) is not None:
        text = (
            f'Next: fix "{entry.check.name}" in {name} and save; stuck? '
            f"`grade hint {exercise.name}` shows more help."
        )
    else:
        text = f"Next: fix the problem above in {name} and save."
    return Text(controls.visible(text), style="bold")


def syntax_next(problem: SyntaxProblem) -> Text:
    where = f"line {problem.line} of " if problem.line else ""
    return Text(f"Next: fix {where}{problem.file} and save (nothing was graded).", style="bold")
