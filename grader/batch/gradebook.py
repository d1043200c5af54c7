"""The class view of a batch: the gradebook, the class summary, similar pairs.

All are functions of the per-student results in `OUT/students/` (`NAME.json`,
the results JSON of `grade --json`, or `NAME.error.txt` when the grader itself
could not grade that student; `grader.classroom.roster`), plus the pairs of
similar files `grade batch` found in the submissions, so regrading one student
and rebuilding gives the same files as grading the class again. Only the time
of grading (each results file's modification time) comes from the clock.

    gradebook.csv   student, total, max, percent, one column per lesson file, status,
                    hints revealed (self-reported: from the student's own `.grade/hints.json`,
                    empty when their submission has none), time of grading; its first row
                    the maxima;
                    every text cell spreadsheet-safe (`grader.classroom.spreadsheet`)
    similarity.csv  pairs of students whose files of one lesson are alike, most alike
                    first (`grader.classroom.similarity`)
    summary.html    the roster and who needs attention, the class's misconceptions
                    (`grader.classroom.misconceptions`), the similar pairs, the score
                    distribution (inline SVG), per-check pass rates (the checks most
                    students fail first; work not started counted apart)
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from grader import atomic
from grader.classroom import causes, misconceptions, similarity
from grader.classroom.roster import STUDENTS, Student, columns, load, maxima
from grader.classroom.spreadsheet import cell, csv_text
from grader.course import tree
from grader.reports import html, labels

__all__ = ["STUDENTS", "Student", "columns", "load", "rebuild"]

GRADEBOOK = "gradebook.csv"
SIMILARITY = "similarity.csv"
SUMMARY = "summary.html"
BINS = 10  # score distribution: 0-10%, ..., 90-100%
MAXIMUM = "maximum"  # the gradebook's first row: what each column can reach
HINTS_COLUMN = "hints_revealed_self_reported"  # what the student's machine says they revealed
LOW_PERCENT = 50.0  # a graded student below this needs attention


@dataclass
class CheckRate:
    exercise: str
    check: str
    id: str
    visibility: str
    passed: int = 0
    not_attempted: int = 0  # the work was not started: not counted in the rate
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


def gradebook_csv(students: list[Student]) -> str:
    """gradebook.csv: a header, the maxima, one row per student."""
    tops = maxima(students)
    header = ["student", "total", "max", "percent", *tops, "status", HINTS_COLUMN, "graded_at"]
    total = sum(tops.values())
    top_row = [MAXIMUM, labels.number(total), labels.number(total), "100.0"]
    rows = [header, [*top_row, *(labels.number(m) for m in tops.values()), "", "", ""]]
    for s in students:
        scores = [labels.number(s.exercises[n]["score"]) if n in s.exercises else "" for n in tops]
        rows.append(
            [
                cell(s.name),
                labels.number(s.score),
                labels.number(s.max_score),
                f"{s.percent:.1f}",
                *scores,
                s.status,
                "" if s.doc is None or s.hints_revealed is None else str(s.hints_revealed),
                s.graded_at,
            ]
        )
    rows[0] = [cell(c) for c in header]
    return csv_text(rows)


def similarity_csv(pairs: Sequence[similarity.Pair]) -> str:
    header = [
        "lesson",
        "student_a",
        "student_b",
        "score",
        "overlap",
        "shared",
        "a_fingerprints",
        "b_fingerprints",
    ]
    rows = [
        [
            cell(p.lesson),
            cell(p.first),
            cell(p.second),
            f"{p.score:.3f}",
            f"{p.overlap:.3f}",
            str(p.shared),
            str(p.first_size),
            str(p.second_size),
        ]
        for p in pairs
    ]
    return csv_text([header, *rows])


def check_rates(students: list[Student]) -> list[CheckRate]:
    """Per-check pass rates over the students who started the work, lowest first (ties in
    lesson order); checks of an untouched file or function counted as not attempted."""
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
                if check["status"] != "passed" and misconceptions.not_started(exercise, check):
                    rate.not_attempted += 1
                    continue
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


@dataclass(frozen=True)
class Attention:
    """A student the instructor should look at, and why (one line per reason)."""

    student: Student
    index: int  # their row in the roster (1-based): the link's target
    reasons: tuple[str, ...]


def attention(students: list[Student], pairs: Sequence[similarity.Pair] = ()) -> list[Attention]:
    """Who needs attention: grading failed, a file not graded on its merits and why
    (`causes`: too large, a symlink, its encoding, a syntax error, not attempted, the
    grader's error, a crash, out of time), nothing started, a low score, a file
    suspiciously like another student's."""
    alike: dict[str, list[str]] = {}
    for p in pairs:
        if p.suspicious:
            alike.setdefault(p.first, []).append(f"{p.lesson} like {p.second}'s ({p.score:.2f})")
            alike.setdefault(p.second, []).append(f"{p.lesson} like {p.first}'s ({p.score:.2f})")
    found = []
    for index, s in enumerate(students, 1):
        reasons = []
        if s.doc is None:
            reasons.append("the grader could not grade them")
        else:
            if s.status == "not_attempted":
                reasons.append("nothing started")
            # an untouched file shows as such in the roster; the others are said here
            why = {n: c for n, c in causes.of_student(s.doc).items() if c != "not attempted"}
            reasons += causes.grouped(why)
            if s.status != "not_attempted" and s.percent < LOW_PERCENT:
                reasons.append(f"below {LOW_PERCENT:.0f}%")
        if s.name in alike:
            reasons.append("similar: " + "; ".join(alike[s.name]))
        if reasons:
            found.append(Attention(s, index, tuple(reasons)))
    return found


def summary_html(students: list[Student], pairs: Sequence[similarity.Pair] | None = None) -> str:
    """The class summary page; `pairs` None: similarity was not computed."""
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
        "causes": causes.counts(causes.of_student(s.doc) for s in students),
    }
    rows = {s.name: i for i, s in enumerate(students, 1)}
    insight = misconceptions.of_class((s.name, s.doc) for s in graded if s.doc)
    env = html.environment(jinja2.FileSystemLoader(str(tree.templates_dir())))
    return env.get_template("class-summary.html.j2").render(
        stats=stats,
        students=students,
        lessons=columns(students),
        rows=rows,
        attention=attention(students, pairs or ()),
        insight=insight,
        pairs=None if pairs is None else [p for p in pairs if p.suspicious],
        reported=0 if pairs is None else len(pairs),
        suspicious=similarity.SUSPICIOUS,
        reported_from=similarity.REPORTED,
        min_shared=similarity.MIN_SHARED,
        read_cap_kb=similarity.MAX_BYTES // 1000,
        cause_of=causes.of_exercise,
        cause_words=causes.WORDS,
        exercises=exercise_rows(students),
        checks=check_rates(students),
        chart=markupsafe.Markup(histogram_svg(percents)),
        seed=first.get("seed", 0),
        grader_version=first.get("grader_version", ""),
    )


def rebuild(out: Path, pairs: Sequence[similarity.Pair] | None = None) -> list[Student]:
    """Write gradebook.csv, summary.html and (given `pairs`) similarity.csv from
    OUT/students/, each whole or not at all (`grader.atomic`); returns the students."""
    students = load(out)
    atomic.write_text(out / GRADEBOOK, gradebook_csv(students))
    if pairs is not None:
        atomic.write_text(out / SIMILARITY, similarity_csv(pairs))
    atomic.write_text(out / SUMMARY, summary_html(students, pairs))
    return students
