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
from importlib import resources
from pathlib import Path

import jinja2
import markupsafe

from grader.model import Report
from grader.reports import controls, groups, labels

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
    env.globals["content_security_policy"] = CONTENT_SECURITY_POLICY
    return env


@functools.lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = environment()
    env.filters["metric"] = _metric
    env.globals.update(
        points=labels.points,
        percent=labels.percent,
        exercise_phrase=labels.EXERCISE_PHRASES,
        check_phrase=labels.CHECK_PHRASES,
        problem_statuses=labels.PROBLEM_STATUSES,
        is_consequence=labels.is_consequence,
        entries=groups.entries,
        cause_headline=groups.cause_headline,
        same_cause_headline=groups.same_cause_headline,
        waiting_headline=groups.waiting_headline,
        waits_for=groups.waits_for,
    )
    return env.from_string(template_source())


def render(report: Report) -> str:
    """The page as text."""
    checks = [c for _, c in report.checks()]
    counts = {
        status: sum(1 for c in checks if c.status == status)
        for status in ("passed", "failed", "error", "timeout", "skipped")
    }
    fraction = max(0.0, min(1.0, report.fraction))
    return _template().render(report=report, counts=counts, fraction=fraction)


def write(report: Report, path: str | Path) -> Path:
    target = Path(path)
    target.write_text(render(report), encoding="utf-8")
    return target
