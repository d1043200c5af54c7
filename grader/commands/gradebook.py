"""The class view of a batch: the gradebook CSV and the class summary page.

Both are pure functions of the per-student results in `OUT/students/`
(`NAME.json`, the results JSON of `grade --json`, or `NAME.error.txt` when the
grader itself could not grade that student), so regrading one student and
rebuilding gives the same files as grading the class again. Nothing here
depends on the clock: the same results give the same bytes.

    gradebook.csv   student, total, max, percent, one column per lesson file, status
    summary.html    score distribution (inline SVG), per-exercise and per-check
                    pass rates (the checks most students fail first), the students
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from grader.commands import tree
from grader.reports import html, labels

STUDENTS = "students"
GRADEBOOK = "gradebook.csv"
SUMMARY = "summary.html"
BINS = 10  # score distribution: 0-10%, ..., 90-100%


@dataclass(frozen=True)
class Student:
    name: str
    doc: dict[str, Any] | None  # the results JSON; None when grading failed
    error: str = ""

    @property
    def score(self) -> float:
        return float(self.doc["score"]) if self.doc else 0.0

    @property
    def max_score(self) -> float:
        return float(self.doc["max_score"]) if self.doc else 0.0

    @property
    def percent(self) -> float:
        return 100 * self.score / self.max_score if self.max_score else 0.0

    @property
    def exercises(self) -> dict[str, dict[str, Any]]:
        return {e["name"]: e for e in self.doc["exercises"]} if self.doc else {}

    @property
    def status(self) -> str:
        """passed (full marks), failed, error (an exercise crashed or timed out),
        not_attempted (nothing done or no lesson files), grader_error."""
        if self.doc is None:
            return "grader_error"
        statuses = {e["status"] for e in self.doc["exercises"]}
        if "error" in statuses:
            return "error"
        if statuses <= {"not_attempted", "skipped"}:
            return "not_attempted"
        return "passed" if statuses <= {"passed", "skipped"} else "failed"


@dataclass
class CheckRate:
    exercise: str
    check: str
    id: str
    visibility: str
    passed: int = 0
    statuses: Counter[str] = field(default_factory=Counter)

    @property
    def graded(self) -> int:
        return sum(self.statuses.values())

    @property
    def rate(self) -> float:
        return self.passed / self.graded if self.graded else 0.0

    @property
    def failures(self) -> str:
        """`failed 5, error 2`: how the others ended."""
        return ", ".join(f"{s} {n}" for s, n in sorted(self.statuses.items()) if s != "passed")


def load(out: Path) -> list[Student]:
    """Every student with results in OUT/students/, by name."""
    folder = out / STUDENTS
    found: dict[str, Student] = {}
    for path in sorted(folder.glob("*.json")):
        found[path.stem] = Student(path.stem, json.loads(path.read_text(encoding="utf-8")))
    for path in sorted(folder.glob("*.error.txt")):
        name = path.name.removesuffix(".error.txt")
        if name not in found:
            found[name] = Student(name, None, path.read_text(encoding="utf-8"))
    return [found[n] for n in sorted(found)]


def columns(students: list[Student]) -> list[tuple[str, str]]:
    """(name, title) of every lesson file, in the order the results list them."""
    seen: dict[str, str] = {}
    for student in students:
        for name, exercise in student.exercises.items():
            seen.setdefault(name, exercise["title"])
    return list(seen.items())


def csv_text(students: list[Student]) -> str:
    lessons = [name for name, _ in columns(students)]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", "total", "max", "percent", *lessons, "status"])
    for s in students:
        scores = [
            labels.number(s.exercises[n]["score"]) if n in s.exercises else "" for n in lessons
        ]
        writer.writerow(
            [
                s.name,
                labels.number(s.score),
                labels.number(s.max_score),
                f"{s.percent:.1f}",
                *scores,
                s.status,
            ]
        )
    return buffer.getvalue()


def check_rates(students: list[Student]) -> list[CheckRate]:
    """Per-check pass rates, lowest first (ties in lesson order)."""
    rates: dict[tuple[str, str], CheckRate] = {}
    for student in students:
        for exercise in student.exercises.values():
            for check in exercise["checks"]:
                if check["status"] == "skipped":
                    continue
                key = (exercise["name"], check["id"])
                rate = rates.setdefault(
                    key,
                    CheckRate(exercise["name"], check["name"], check["id"], check["visibility"]),
                )
                rate.statuses[check["status"]] += 1
                rate.passed += check["status"] == "passed"
    order = {key: i for i, key in enumerate(rates)}
    return sorted(rates.values(), key=lambda r: (r.rate, order[(r.exercise, r.id)]))


def exercise_rows(students: list[Student]) -> list[dict[str, Any]]:
    rows = []
    for name, title in columns(students):
        results = [s.exercises[name] for s in students if name in s.exercises]
        statuses = Counter(e["status"] for e in results)
        top = max((e["max_score"] for e in results), default=0.0)
        mean = statistics.fmean(e["score"] for e in results) if results else 0.0
        rows.append(
            {
                "name": name,
                "title": title,
                "mean": mean,
                "max": top,
                "statuses": dict(sorted(statuses.items())),
            }
        )
    return rows


def histogram_svg(percents: list[float], width: int = 560, height: int = 230) -> str:
    """The score distribution as an inline SVG bar chart (10 bins of 10%)."""
    counts = [0] * BINS
    for p in percents:
        counts[min(int(p // (100 / BINS)), BINS - 1)] += 1
    left, right, top, bottom = 44, 12, 34, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    tallest = max(counts) or 1
    bar_w = plot_w / BINS
    base = top + plot_h
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="score distribution">',
        f'<line x1="{left}" y1="{base}" x2="{left + plot_w}" y2="{base}" stroke="#59636e"/>',
        f'<text x="{left - 8}" y="12" font-size="11" text-anchor="start">students</text>',
    ]
    for i, n in enumerate(counts):
        h = plot_h * n / tallest
        x = left + i * bar_w
        parts.append(
            f'<rect x="{x + 2:.1f}" y="{base - h:.1f}" width="{bar_w - 4:.1f}" height="{h:.1f}" '
            f'fill="#3b6ea8"><title>{i * 10}-{(i + 1) * 10}%: {n} student(s)</title></rect>'
        )
        if n:
            parts.append(
                f'<text x="{x + bar_w / 2:.1f}" y="{base - h - 4:.1f}" font-size="11" '
                f'text-anchor="middle">{n}</text>'
            )
    for i in range(BINS + 1):
        x = left + i * bar_w
        parts.append(
            f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 4}" stroke="#59636e"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{base + 16}" font-size="10" text-anchor="middle">{i * 10}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" font-size="11" '
        'text-anchor="middle">score, % of the maximum</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts)


def summary_html(students: list[Student]) -> str:
    graded = [s for s in students if s.doc is not None]
    percents = [s.percent for s in graded]
    first = graded[0].doc if graded and graded[0].doc else {}
    stats = {
        "students": len(students),
        "graded": len(graded),
        "mean": statistics.fmean(percents) if percents else 0.0,
        "median": statistics.median(percents) if percents else 0.0,
        "lowest": min(percents, default=0.0),
        "highest": max(percents, default=0.0),
        "statuses": dict(sorted(Counter(s.status for s in students).items())),
    }
    env = html.environment(jinja2.FileSystemLoader(str(tree.templates_dir())))
    return env.get_template("class-summary.html.j2").render(
        stats=stats,
        students=students,
        exercises=exercise_rows(students),
        checks=check_rates(students),
        chart=markupsafe.Markup(histogram_svg(percents)),
        seed=first.get("seed", 0),
        grader_version=first.get("grader_version", ""),
    )


def rebuild(out: Path) -> list[Student]:
    """Write gradebook.csv and summary.html from OUT/students/; returns the students."""
    students = load(out)
    (out / GRADEBOOK).write_text(csv_text(students), encoding="utf-8")
    (out / SUMMARY).write_text(summary_html(students), encoding="utf-8")
    return students
