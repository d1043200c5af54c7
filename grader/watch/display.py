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

from grader import invocations
from grader.model import ExerciseResult
from grader.reports import console as consoles
from grader.reports import controls, groups, labels, terminal
from grader.watch.syntax import SyntaxProblem

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
        lines += [Text(), *_ansi(terminal.problem_lines(exercise, color=True))]
    entry = first_problem(exercise)
    if entry is not None and exercise.status != "error":
        lines += [Text(), *_ansi(terminal.problem_lines(exercise, entry, color=True))]
    unstarted = sum(c.status == "not_attempted" for c in exercise.checks)
    if unstarted and exercise.status == "failed":
        lines += [
            Text(),
            Text(
                f"Not started yet, not failed: {unstarted} check(s) wait for functions that "
                "still raise NotImplementedError."
            ),
        ]
    return Text("\n").join(lines)


def partial(exercise: ExerciseResult) -> Text:
    """The verdict so far (`grader.watch.regrader.preview`): the file fails, and its first
    problem; the line says that the other checks are still running."""
    exercise = controls.visible_in(exercise)
    run = [c for c in exercise.checks if c.status != "skipped"]
    word = labels.EXERCISE_WORDS[exercise.status]
    pts = labels.points(exercise.score, exercise.max_score)
    head = Text(word, style="bold red") + Text(
        f"  {pts} so far  {exercise.name} ({len(run)} of {len(exercise.checks)} checks run, "
        "the others still running ...)"
    )
    lines = [head]
    if exercise.message:
        lines += [Text(), *_ansi(terminal.problem_lines(exercise, color=True))]
    else:
        entry = first_problem(exercise)
        if entry is not None:
            lines += [Text(), *_ansi(terminal.problem_lines(exercise, entry, color=True))]
    return Text("\n").join(lines)


def partial_next(exercise: ExerciseResult, file: Path) -> Text:
    entry = None if exercise.message else first_problem(exercise)
    what = f'"{entry.check.name}"' if entry is not None else "the problem above"
    text = f"Next: fix {what} in {file.name} and save (no need to wait for the other checks)."
    return Text(controls.visible(text), style="bold")


def _ansi(lines: list[str]) -> list[Text]:
    """The summary's own lines (its only escape codes are its colours; the console drops
    them where colour is off)."""
    return [Text.from_ansi(line) for line in lines]


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


def next_step(exercise: ExerciseResult, file: Path, *, single: bool = False) -> Text:
    """One line on what to do next after a graded save (`exercise.next` is
    `grader.next_step`'s: an untouched file's first TODO, the lesson after a file at
    full marks). `single`: the watch follows this one file, so saving another does
    nothing: the next file is offered as the command that watches it."""
    name, step = file.name, exercise.next
    if exercise.status == "passed" and step is not None and step.lesson and single:
        watch = step.command.replace("grade ", "grade watch ", 1)
        text = f"{name} is at full marks. Next: go on with {step.lesson}: `{watch}`."
    elif exercise.status == "passed" and step is not None and step.lesson:
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
            f"`{invocations.hint_command(exercise.name, str(file))}` shows more help."
        )
    elif exercise.status == "failed" and step is not None and step.todo is not None:
        todo = step.todo  # begun, nothing failed: the next function not started
        text = f"Next: go on at {todo.path} line {todo.line}: {todo.code} (then save)."
    else:
        text = f"Next: fix the problem above in {name} and save."
    return Text(controls.visible(text), style="bold")


def syntax_next(problem: SyntaxProblem) -> Text:
    where = f"line {problem.line} of " if problem.line else ""
    return Text(f"Next: fix {where}{problem.file} and save (nothing was graded).", style="bold")
