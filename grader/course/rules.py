"""The rules a lesson must follow: one list, which `grade verify` checks and
docs/authoring.md shows (tests/commands/test_new.py holds the page to `markdown()`).

Each rule has a name (shown before each violation: `[nudge] ex6 > ...: no nudge`), one line
saying what it asks, and `find`, which returns its violations for what `grade verify`
looks at (`Evidence`). Rules marked `graded` need the gradings of the solutions and the
stubs; the others read files only, and run first.

`selected` (`grade verify --only`): only the lesson files named are looked at, so the rules
about the course as a whole (a solution no suite grades, an orphan module of public inputs)
are not checked.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from grader import catalog
from grader import spec as lesson_spec
from grader.course import assign
from grader.course.layout import Course
from grader.model import Report, without_timings
from grader.reports import json_report, labels

PLACEHOLDER = "<FILL IN"  # what `grade new` leaves for the author: `<FILL IN: the hint>`


@dataclass(frozen=True)
class Evidence:
    """What the rules look at: the course, its suites (or those `--only` selected), and
    after grading, the solutions' runs and the stubs' report."""

    course: Course
    specs: Sequence[catalog.ExerciseSpec]
    selected: bool = False
    runs: Sequence[Report] = ()
    stubs: Report | None = None

    @cached_property
    def names(self) -> set[str]:
        return {s.name for s in self.specs}

    @cached_property
    def spec_text(self) -> str | OSError:
        try:
            return self.course.spec.read_text(encoding="utf-8")
        except OSError as exc:
            return exc


@dataclass(frozen=True)
class Rule:
    name: str
    says: str  # one line: what the rule asks of a lesson
    find: Callable[[Evidence], list[str]]
    graded: bool = False  # needs `Evidence.runs` and `Evidence.stubs`

    def problems(self, evidence: Evidence) -> list[str]:
        """The violations, each headed by the rule's name (sub-lines, indented, as they are)."""
        return [p if p.startswith("    ") else f"[{self.name}] {p}" for p in self.find(evidence)]


# -- files -----------------------------------------------------------------------------------


def _files(ev: Evidence) -> list[str]:
    problems = []
    for spec in ev.specs:
        for folder in (ev.course.solutions, ev.course.exercises):
            if not (folder / spec.filename).is_file():
                problems.append(f"{spec.name}: {folder / spec.filename} is missing")
    return problems


def _suite(ev: Evidence) -> list[str]:
    if ev.selected:
        return []
    return [
        f"{ev.course.solutions / lesson}.py: no suite grades this lesson file (add "
        f"{ev.course.suites.name}/test_{lesson}.py, e.g. with `grade new {lesson}`)"
        for lesson in ev.course.lessons()
        if lesson not in ev.names
    ]


def _markers(ev: Evidence) -> list[str]:
    lessons = sorted(ev.names) if ev.selected else ev.course.lessons()
    problems = []
    for lesson in lessons:
        path = ev.course.solutions / f"{lesson}.py"
        if path.is_file():
            try:
                assign.blocks(path.read_text(encoding="utf-8"), str(path))
            except assign.MarkerError as exc:
                problems.append(f"the solution markers are malformed: {exc}")
    return problems


def _in_sync(ev: Evidence) -> list[str]:
    only = {s.filename for s in ev.specs} if ev.selected else None
    try:
        return assign.differences(ev.course.solutions, ev.course.exercises, only)
    except assign.MarkerError:
        return []  # the markers rule names the file and line


# -- the suite -------------------------------------------------------------------------------


def _points(ev: Evidence) -> list[str]:
    return [
        f"{s.name}: the suite's checks are worth no points" for s in ev.specs if s.max_score <= 0
    ]


def _hints(ev: Evidence) -> list[str]:
    return [
        f"{s.name} > {c.name}: no hint" for s in ev.specs for c in s.checks if not c.hint.strip()
    ]


def _nudges(ev: Evidence) -> list[str]:
    return [
        f"{s.name} > {c.name}: no nudge (the second level of help)"
        for s in ev.specs
        for c in s.checks
        if not c.nudge.strip()
    ]


def _citations(ev: Evidence) -> list[str]:
    text = ev.spec_text
    if isinstance(text, OSError):
        return [
            f"{ev.course.spec}: the lesson spec cannot be read ({text.strerror}): the checks' "
            "citations are not verified; pass --spec FILE"
        ]
    return lesson_spec.citation_problems(lesson_spec.parse(text), ev.specs)


def _avoided(ev: Evidence) -> list[str]:
    from grader.course import penalised

    return [p for s in ev.specs for p in penalised.help_problems(s)]


def _placeholders(ev: Evidence) -> list[str]:
    problems = []
    sections: Mapping[str, str] = {}
    if isinstance(ev.spec_text, str):
        sections = lesson_spec.parse(ev.spec_text).sections
    for spec in ev.specs:
        files = ev.course.lesson(spec.name)
        paths = [files.solution, spec.suite, files.tests]
        paths += [files.fixtures / v / spec.filename for v in files.variants()]
        for path in paths:
            lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
            problems += [
                f"{files.shown(path)}:{n}: still to fill in: {line.strip()[:120]}"
                for n, line in enumerate(lines, start=1)
                if PLACEHOLDER in line
            ]
        if PLACEHOLDER in sections.get(spec.name, ""):
            problems.append(f"{ev.course.spec}: the section of {spec.filename} is still to fill in")
    return problems


# -- fixtures and their tests ----------------------------------------------------------------


def _fixtures(ev: Evidence) -> list[str]:
    if not ev.course.keeps_tests:
        return []
    problems = []
    for spec in ev.specs:
        files = ev.course.lesson(spec.name)
        if not files.variants():
            problems.append(
                f"{spec.name}: no fixture submission "
                f"({files.shown(files.fixtures)}/<variant>/{spec.filename})"
            )
        if not files.tests.is_file():
            problems.append(f"{spec.name}: no test of its suite ({files.shown(files.tests)})")
    return problems


def _words(paths: Sequence[Path]) -> set[str]:
    words: set[str] = set()
    for path in paths:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            words.update(re.findall(r"[A-Za-z0-9_]+", path.read_text(encoding="utf-8")))
    return words


def _fixtures_graded(ev: Evidence) -> list[str]:
    if not ev.course.keeps_tests:
        return []
    # a test names the fixture, or a table a test reads does (docs/causes.md)
    named = _words(
        sorted(ev.course.suite_tests.glob("*.py")) + sorted((ev.course.root / "docs").rglob("*.md"))
    )
    problems = []
    for spec in ev.specs:
        files = ev.course.lesson(spec.name)
        problems += [
            f"{files.shown(files.fixtures / v)}: no test under {files.shown(ev.course.suite_tests)}/ "
            f"grades this fixture (name it: `graded({v!r})` in {files.shown(files.tests)})"
            for v in files.variants()
            if v not in named
        ]
    return problems


def _inputs(ev: Evidence) -> list[str]:
    if ev.selected or not ev.course.inputs.is_dir():
        return []
    lessons = set(ev.course.lessons())
    return [
        f"{path}: public inputs named after no lesson (rename it to the lesson whose suite uses it)"
        for path in sorted(ev.course.inputs.glob("*.py"))
        if path.stem != "__init__" and path.stem not in lessons
    ]


# -- the gradings ----------------------------------------------------------------------------


def solution_problems(report: Report) -> list[str]:
    problems = []
    for exercise in report.exercises:
        if exercise.status == "skipped":
            problems.append(
                f"solutions/{exercise.name}.py could not be verified: {exercise.message}"
            )
            continue
        if exercise.status != "passed" or exercise.score != exercise.max_score:
            problems.append(
                f"solutions/{exercise.name}.py scores {labels.points(exercise.score, exercise.max_score)}"
                f" ({exercise.status}), not 100%"
                + (f": {labels.headline(exercise.message, 200)}" if exercise.message else "")
            )
        for check in exercise.checks:
            if check.status not in ("passed", "skipped"):
                problems.append(
                    f"    {exercise.name} > {check.name}: {check.status}: "
                    f"{labels.headline(check.message, 200)}"
                )
    return problems


def stub_problems(report: Report) -> list[str]:
    problems = []
    for exercise in report.exercises:
        if exercise.status == "skipped":
            continue
        if exercise.status != "not_attempted" or exercise.score != 0:
            problems.append(
                f"exercises/{exercise.name}.py: an untouched stub must import cleanly and score 0 "
                f"(not_attempted); it is {exercise.status} with "
                f"{labels.points(exercise.score, exercise.max_score)}"
                + (f": {labels.headline(exercise.message, 200)}" if exercise.message else "")
            )
            for check in exercise.checks:
                if check.status == "passed" or check.score > 0:
                    problems.append(
                        f"    {exercise.name} > {check.name}: earns "
                        f"{labels.points(check.score, check.max_score)} on the untouched stub"
                    )
                elif check.status in ("error", "timeout"):
                    problems.append(
                        f"    {exercise.name} > {check.name}: {check.status}: "
                        f"{labels.headline(check.message, 200)}"
                    )
    return problems


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The first place two JSON documents differ, as `exercises[2].checks[0].message`."""
    if type(a) is not type(b):
        return path or "(the whole document)"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}".lstrip(".")
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found.lstrip(".")
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else (path.lstrip(".") or "(the whole document)")


def comparable(doc: dict[str, Any]) -> Any:
    """What must repeat exactly: the document without timings, and images by title only
    (a timing chart's pixels, like the timings themselves, change from run to run)."""
    stable = without_timings(doc)
    for exercise in stable.get("exercises", []):
        exercise["artifacts"] = [a.get("title") for a in exercise.get("artifacts", [])]
    return stable


def stability_problems(documents: Sequence[dict[str, Any]]) -> list[str]:
    if not documents:
        return []
    first = comparable(documents[0])
    problems = []
    for run, doc in enumerate(documents[1:], start=2):
        where = first_difference(first, comparable(doc))
        if where:
            problems.append(
                f"the solutions' results differ between run 1 and run {run} at {where} "
                "(something depends on time, order or an unseeded random source)"
            )
    return problems


def _full_marks(ev: Evidence) -> list[str]:
    return solution_problems(ev.runs[0]) if ev.runs else []


def _stable(ev: Evidence) -> list[str]:
    return stability_problems([json_report.document(r) for r in ev.runs])


def _stubs_zero(ev: Evidence) -> list[str]:
    return stub_problems(ev.stubs) if ev.stubs is not None else []


# -- the list ----------------------------------------------------------------------------------

RULES: tuple[Rule, ...] = (
    Rule(
        "files",
        "every suite has its reference solution, `solutions/<lesson>.py`, and its stub, "
        "`exercises/<lesson>.py`",
        _files,
    ),
    Rule("suite", "every lesson file in `solutions/` has a suite, `test_<lesson>.py`", _suite),
    Rule(
        "markers",
        "the solution's `### BEGIN SOLUTION` / `### END SOLUTION` blocks are well formed: each "
        "right under a `# TODO:` comment, not empty, not nested; one outside a function "
        "spells out its stub with `### STUB: <line>`",
        _markers,
    ),
    Rule(
        "stub-in-sync",
        "`exercises/<lesson>.py` is exactly what `grade assign` writes from the solution",
        _in_sync,
    ),
    Rule("points", "the suite's checks are worth points", _points),
    Rule("hint", "every check has a hint (`hint=`): a question that leads to the fix", _hints),
    Rule("nudge", "every check has a nudge (`nudge=`): the second level of help", _nudges),
    Rule(
        "spec",
        "the lesson spec has a section `### <lesson>.py`, and every check quotes (`spec=`) "
        "words of that section or of the spec's conventions, verbatim",
        _citations,
    ),
    Rule(
        "avoid",
        "no hint, nudge or `fix=` of a suite, nor a JAX explanation it shows, recommends what "
        "its checks penalise (`AVOID`)",
        _avoided,
    ),
    Rule(
        "placeholders",
        f"nothing `grade new` left to write (`{PLACEHOLDER}: ...>`) remains in the lesson's "
        "solution, suite, fixtures, test or spec section",
        _placeholders,
    ),
    Rule(
        "fixtures",
        "where the course tests its suites (`tests/suites/`): every lesson has fixture "
        "submissions, `tests/fixtures/<lesson>/<variant>/<lesson>.py`, and its test, "
        "`tests/suites/test_suite_<lesson>.py`",
        _fixtures,
    ),
    Rule(
        "fixtures-graded",
        "every fixture folder is named by a test under `tests/suites/`, or by a document in "
        "`docs/` that one reads (a fixture no test grades proves nothing)",
        _fixtures_graded,
    ),
    Rule(
        "inputs",
        "every module of public inputs, `grader/inputs/<name>.py`, is named after a lesson",
        _inputs,
    ),
    Rule("full-marks", "the reference solutions score 100%", _full_marks, graded=True),
    Rule(
        "stable",
        "the solutions' results, timings aside, are identical over `--runs` gradings",
        _stable,
        graded=True,
    ),
    Rule(
        "stubs-zero",
        "every untouched stub imports cleanly and scores 0 (not attempted)",
        _stubs_zero,
        graded=True,
    ),
)
BY_NAME = {rule.name: rule for rule in RULES}


def problems(evidence: Evidence, *, graded: bool) -> list[str]:
    """The violations of every rule that reads files (`graded=False`) or of every rule that
    needs the gradings (`graded=True`), in the list's order."""
    return [p for rule in RULES if rule.graded == graded for p in rule.problems(evidence)]


def markdown() -> str:
    """The rules as docs/authoring.md lists them."""
    return "".join(
        f"- **{rule.name}**{' (graded)' if rule.graded else ''}: {rule.says}\n" for rule in RULES
    )
