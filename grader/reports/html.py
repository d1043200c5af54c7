"""The HTML report: one self-contained page, from a `Report`.

Rendered from `report.html.j2` (Jinja2, autoescape on, so everything a
submission prints or raises is shown as text, its control characters made
visible as in every report). The page carries its own CSS, embeds images as
`data:` URIs and needs no network and no JavaScript; its Content-Security-Policy
allows exactly that (no script at all, images only from `data:`), so even a
mistake in escaping could not run anything. The same report gives the same
bytes (no timestamps).

The template is loaded from the installed package `grader.templates`, or from
the checkout's `templates/` folder when the package is not installed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jinja2
import markupsafe

from grader import atomic, invocations
from grader.model import ExerciseResult, NextStep, Report
from grader.reports import controls, groups, history_chart, labels
from grader.reports.history import Run

TEMPLATE = "report.html.j2"
SOURCE_TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
# Every page is self-contained: inline CSS (a <style> block and style attributes),
# images as data: URIs, no script, no fetch, no form, no <base>.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
    "base-uri 'none'; form-action 'none'"
)


def template_source() -> str:
    """The template's text: the installed copy if there is one, else the checkout's."""
    try:
        return resources.files("grader.templates").joinpath(TEMPLATE).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        return (SOURCE_TEMPLATES / TEMPLATE).read_text(encoding="utf-8")


def _metric(value: float) -> str:
    return f"{value:.4g}" if math.isfinite(value) else str(value)


def _shown(value: object) -> object:
    """Every `{{ ... }}` on a page: text with its control characters made visible."""
    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return controls.visible(value)
    return value  # numbers, and markup we made (a macro's output, the summary's chart)


def environment(loader: jinja2.BaseLoader | None = None) -> jinja2.Environment:
    """The Jinja settings every HTML page of the grader is rendered with.

    Autoescape is on for every template, whatever its name; pages put
    `content_security_policy` in a `<meta http-equiv>` at the top of `<head>`.
    """
    env = jinja2.Environment(
        loader=loader,
        autoescape=True,
        finalize=_shown,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["number"] = labels.number
    # A file's badge says what the terminal's word says (`labels.shown_status`).
    env.globals.update(shown_status=labels.shown_status, exercise_badge=labels.exercise_badge)
    env.globals["content_security_policy"] = CONTENT_SECURITY_POLICY
    return env


@functools.lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = environment()
    env.filters["metric"] = _metric
    env.globals.update(
        points=labels.points,
        percent=labels.percent,
        check_phrase=labels.CHECK_PHRASES,
        problem_statuses=labels.PROBLEM_STATUSES,
        is_consequence=labels.is_consequence,
        entries=groups.entries,
        cause_headline=groups.cause_headline,
        same_cause_headline=groups.same_cause_headline,
        share_note=groups.share_note,
        waiting_headline=groups.waiting_headline,
        waits_for=groups.waits_for,
        unfolded=unfolded,
    )
    return env.from_string(template_source())


# Badge words for a check status or, for a problem of a whole file, an exercise status.
_PHRASES: dict[str, str] = {
    str(status): phrase
    for table in (labels.EXERCISE_PHRASES, labels.CHECK_PHRASES)
    for status, phrase in table.items()
}


@dataclass(frozen=True)
class Fix:
    """One line of the page's "What to fix" summary: a link to where the problem is shown."""

    anchor: str  # the id of the element it links to
    status: str  # a check status, or an exercise status for a problem of the whole file
    what: str  # the check's name, or what the checks it stands for have in common
    note: str  # what else it stands for ("2 more checks wait for it"), or ""
    points: float  # the points it stands for (not earned yet)

    @property
    def phrase(self) -> str:
        """The badge's words: `failed`, `timed out`, `not attempted`."""
        return _PHRASES.get(self.status, self.status)


@dataclass(frozen=True)
class FileFixes:
    exercise: ExerciseResult
    fixes: tuple[Fix, ...]


def _checks(n: int) -> str:
    return f"{n} check{'' if n == 1 else 's'}"


def fixes(exercise: ExerciseResult) -> tuple[Fix, ...]:
    """What to fix in one lesson file, in the order the page shows it: a problem of the whole
    file first (it stops the checks after it), then each failed entry as `groups` arranges
    them (one line per root cause, the checks waiting for it counted with it)."""
    if exercise.status == "skipped":
        return ()
    missing = round(exercise.max_score - exercise.score, 6)
    if exercise.status == "not_attempted":
        step = exercise.next
        if step is None:
            what = "not attempted yet: start with its first TODO"
            return (Fix(f"ex-{exercise.name}", "not_attempted", what, "", missing),)
        todo = f", line {step.todo.line}" if step.todo else ""
        what = f"not attempted yet: start at its first TODO{todo}"
        return (Fix(f"next-{exercise.name}", "not_attempted", what, "", missing),)
    found: list[Fix] = []
    stopped = [c for c in exercise.checks if labels.is_consequence(exercise, c)]
    if exercise.message and exercise.status != "passed":
        note = f"{_checks(len(stopped))} not judged because of it" if stopped else ""
        lost = sum(c.max_score - c.score for c in stopped)
        what = "a problem stopped the grading of this file"
        found.append(Fix(f"ex-{exercise.name}", exercise.status, what, note, lost))
    for entry in groups.entries(exercise):
        c = entry.check
        if c.status not in labels.PROBLEM_STATUSES or labels.is_consequence(exercise, c):
            continue
        what = groups.cause_headline(exercise, entry) if entry.grouped else c.name
        waiting = len(entry.waiting)
        note = f"{waiting} more {'check waits' if waiting == 1 else 'checks wait'} for it"
        lost = sum(k.max_score - k.score for k in entry.checks if k.status != "passed")
        anchor = f"check-{exercise.name}-{c.id}"
        found.append(Fix(anchor, c.status, what, note if waiting else "", lost))
    unstarted = [c for c in exercise.checks if c.status == "not_attempted"]
    if unstarted:  # begun, not finished: told apart from the failures above
        first = exercise.next.todo if exercise.next else None
        at = f", line {first.line}" if first else ""
        what = f"not started yet: functions that still raise NotImplementedError{at}"
        lost = sum(c.max_score - c.score for c in unstarted)
        anchor = f"check-{exercise.name}-{unstarted[0].id}"
        found.append(Fix(anchor, "not_attempted", what, _checks(len(unstarted)), lost))
    return tuple(found)


def to_fix(report: Report) -> list[FileFixes]:
    """The lesson files with something to fix, in report order."""
    found = [FileFixes(e, fixes(e)) for e in report.exercises]
    return [f for f in found if f.fixes]


def stuck_on(report: Report) -> str:
    """The first lesson file with a failing check of its own, where `grade hint` helps."""
    return next(
        (
            e.name
            for e in report.exercises
            for c in e.checks
            if e.status == "failed"
            and c.status in labels.PROBLEM_STATUSES
            and not labels.is_consequence(e, c)
        ),
        "",
    )


def onward(report: Report) -> NextStep | None:
    """Once every lesson file graded passed (or was skipped): the next lesson file to work
    on, as the last file at full marks names it."""
    if not all(e.status in ("passed", "skipped") for e in report.exercises):
        return None
    steps = [e.next for e in report.exercises if e.next is not None and e.next.lesson]
    return steps[-1] if steps else None


def unfolded(exercise: ExerciseResult) -> bool:
    """Whether a lesson file's section starts open: it has something to fix. Files that
    passed (or were skipped) start folded, down to their one-line header."""
    return exercise.status in ("failed", "error", "not_attempted") or any(
        c.status in labels.PROBLEM_STATUSES for c in exercise.checks
    )


def render(report: Report, history: Sequence[Run] | None = None) -> str:
    """The page as text; `history` (the recorded runs, oldest first) adds the chart."""
    checks = [c for _, c in report.checks()]
    counts = {
        status: sum(1 for c in checks if c.status == status)
        for status in ("passed", "failed", "error", "timeout", "not_attempted", "skipped")
    }
    fraction = max(0.0, min(1.0, report.fraction))
    return _template().render(
        report=report,
        counts=counts,
        fraction=fraction,
        to_fix=to_fix(report),
        stuck=stuck_on(report),
        stuck_hint=invocations.hint_command(stuck_on(report), report.submission),
        onward=onward(report),
        chart=history_chart.chart(history or (), report),
    )


def write(report: Report, path: str | Path, history: Sequence[Run] | None = None) -> Path:
    target = Path(path)
    atomic.write_text(target, render(report, history))
    return target
