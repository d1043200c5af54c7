"""A `%grade` verdict as the notebook shows it: rich HTML under the cell, plain text in a terminal.

`Inline` is what the magic displays. Jupyter, VS Code and Colab take its `_repr_html_`:
the lesson file's line, its first problems (the check, what was expected and observed,
the student's line, the question, and the nudge or fix once revealed), notes on the cells,
the `Next:` line and a folded list of the checks that passed. It is rendered from
`notebook.html.j2` in the HTML report's environment (`grader.reports.html.environment`:
autoescape on, control characters made visible) with the report's labels and grouping, so
what a submission printed or raised is shown as text; the fragment has no script, and its
styles are scoped to its own `<div>`. A terminal IPython takes the plain text
(`_repr_pretty_`): the file's line and its first problem as `grade watch` draws them
(`grader.reports.terminal`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2

from grader.model import CheckResult, ExerciseResult
from grader.reports import controls, groups, html, labels, terminal

TEMPLATE = "notebook.html.j2"
MAX_PROBLEMS = 3
"""Failing checks shown in full: the first ones, which the student fixes first."""


@dataclass(frozen=True)
class Inline:
    """What one `%grade` shows (`exercise` None: only a message, e.g. nothing to grade)."""

    exercise: ExerciseResult | None = None
    next: str = ""  # what to do now, without the "Next: "
    notes: str = ""  # on the cells: left out, names never defined
    revealed: str = ""  # what `--hint` revealed, or why nothing
    message: str = ""
    footer: str = ""  # where the code came from, the seed, the isolation
    todo: tuple[str, int, str] | None = None  # an untouched file's first TODO

    def _repr_html_(self) -> str:
        return render_html(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(render_text(self))

    def __str__(self) -> str:
        return render_text(self)


def problems(exercise: ExerciseResult) -> list[groups.Entry]:
    """The failing checks a student should look at, in the order `grade` lists them."""
    if exercise.status == "error" and exercise.message:
        return []  # the file's own problem stops its checks: it is the one shown
    return [
        entry
        for entry in groups.entries(exercise)
        if entry.check.status in labels.PROBLEM_STATUSES
        and not labels.is_consequence(exercise, entry.check)
    ]


def passed(exercise: ExerciseResult) -> list[CheckResult]:
    return [c for c in exercise.checks if c.status == "passed"]


def _template_source() -> str:
    try:
        return resources.files("grader.templates").joinpath(TEMPLATE).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        return (html.SOURCE_TEMPLATES / TEMPLATE).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = html.environment()
    env.globals.update(
        points=labels.points,
        exercise_phrase=labels.EXERCISE_PHRASES,
        check_phrase=labels.CHECK_PHRASES,
        cause_headline=groups.cause_headline,
        waits_for=groups.waits_for,
        share_note=groups.share_note,
    )
    return env.from_string(_template_source())


def render_html(view: Inline) -> str:
    found = problems(view.exercise) if view.exercise is not None else []
    return _template().render(
        view=view,
        problems=found[:MAX_PROBLEMS],
        more=max(0, len(found) - MAX_PROBLEMS),
        passed=passed(view.exercise) if view.exercise is not None else [],
        todo=view.todo,
    )


def render_text(view: Inline) -> str:
    """The plain form: `grade watch`'s screen for the file, then notes, next, footer."""
    lines: list[str] = []
    exercise = controls.visible_in(view.exercise) if view.exercise is not None else None
    if exercise is not None:
        lines.append(terminal.done_line(exercise))
        if exercise.message and exercise.status != "passed":
            lines += ["", *terminal.problem_lines(exercise)]
        elif exercise.status == "not_attempted":
            lines += ["", "Not attempted yet: the functions still raise NotImplementedError."]
            if view.todo is not None:
                where, line, code = view.todo
                lines.append(f"{terminal.INDENT}start at {where}, line {line}: {code}")
        found = problems(exercise)
        if found:
            lines += ["", *terminal.problem_lines(exercise, found[0])]
            if len(found) > 1:
                lines.append(f"({len(found) - 1} more problem(s) after this one)")
        shown = passed(exercise)
        if shown and found:
            lines += ["", f"{len(shown)} check(s) passed."]
        unstarted = sum(c.status == "not_attempted" for c in exercise.checks)
        if unstarted and exercise.status == "failed":
            lines += [
                "",
                f"Not started yet, not failed: {unstarted} check(s) wait for functions that "
                "still raise NotImplementedError.",
            ]
    for text in (view.revealed, controls.visible(view.notes), view.message):
        if text:
            lines += ["", text]
    if view.next:
        lines += ["", f"Next: {view.next}"]
    if view.footer:
        lines += ["", view.footer]
    return "\n".join(lines).strip("\n")
