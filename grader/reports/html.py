"""The HTML report: one self-contained page, from a `Report`.

Rendered from `report.html.j2` (Jinja2, autoescape on, so everything a
submission prints or raises is shown as text). The page carries its own CSS,
embeds images as `data:` URIs and needs no network and no JavaScript; the same
report gives the same bytes (no timestamps).

The template is loaded from the installed package `grader.templates`, or from
the checkout's `templates/` folder when the package is not installed.
"""

from __future__ import annotations

import functools
import math
from importlib import resources
from pathlib import Path

import jinja2

from grader.model import Report
from grader.reports import labels

TEMPLATE = "report.html.j2"
SOURCE_TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def template_source() -> str:
    """The template's text: the installed copy if there is one, else the checkout's."""
    try:
        return resources.files("grader.templates").joinpath(TEMPLATE).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        return (SOURCE_TEMPLATES / TEMPLATE).read_text(encoding="utf-8")


def _metric(value: float) -> str:
    return f"{value:.4g}" if math.isfinite(value) else str(value)


def environment(loader: jinja2.BaseLoader | None = None) -> jinja2.Environment:
    """The Jinja settings every HTML page of the grader is rendered with."""
    env = jinja2.Environment(
        loader=loader,
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["number"] = labels.number
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
