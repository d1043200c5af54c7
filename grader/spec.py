"""The lesson spec as the checks cite it.

Every `@check` quotes, in `spec=`, the words of the lesson spec (`docs/lesson-spec.md`, the
student-facing contract) it enforces. A quote is verbatim up to line breaks and runs of
spaces; several excerpts may be joined with " ... ". It must come from the lesson file's own
section (`### 03_jit.py - ...`) or from the parts every file shares (the conventions before
"## Lesson concepts", "## Data"). `grade verify` runs `citation_problems` over the course's
spec, so a check cannot ask what the spec does not say without an instructor seeing it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from grader.catalog import ExerciseSpec

SEPARATOR = " ... "
SHARED = "(conventions)"
_FILE_HEADING = re.compile(r"^###\s+(\S+)\.py\b")


def normalise(text: str) -> str:
    """Whitespace runs (line breaks included) become one space."""
    return " ".join(text.split())


@dataclass(frozen=True)
class LessonSpec:
    """The spec's text, split into each lesson file's section and the shared parts."""

    sections: Mapping[str, str]  # lesson name -> normalised text of its section
    shared: str  # normalised text every lesson may cite

    def text_for(self, lesson: str) -> str:
        return self.sections.get(lesson, "")


def parse(markdown: str) -> LessonSpec:
    sections: dict[str, list[str]] = {}
    shared: list[str] = []
    current: list[str] = shared
    for line in markdown.splitlines():
        heading = _FILE_HEADING.match(line)
        if heading:
            current = sections.setdefault(heading.group(1), [])
        elif line.startswith("## ") or (line.startswith("### ") and current is not shared):
            # a new part that is not a lesson file's: shared (e.g. "## Data")
            current = shared
        current.append(line)
    return LessonSpec(
        {name: normalise("\n".join(lines)) for name, lines in sections.items()},
        normalise("\n".join(shared)),
    )


def excerpts(quote: str) -> list[str]:
    return [part.strip() for part in normalise(quote).split(SEPARATOR.strip()) if part.strip()]


def missing_excerpts(spec: LessonSpec, lesson: str, quote: str) -> list[str]:
    """The excerpts of `quote` found neither in `lesson`'s section nor in the shared parts."""
    own, shared = spec.text_for(lesson), spec.shared
    return [part for part in excerpts(quote) if part not in own and part not in shared]


def citation_problems(spec: LessonSpec, exercises: Iterable[ExerciseSpec]) -> list[str]:
    """One line per check that cites nothing, or cites words the spec does not hold."""
    problems = []
    for exercise in exercises:
        if exercise.name not in spec.sections:
            problems.append(
                f"{exercise.suite.name}: the spec has no section '### {exercise.name}.py', "
                "so its checks cite nothing they may ask"
            )
            continue
        for check in exercise.checks:
            where = f"{exercise.suite.name}:{check.line} {check.id}"
            if not check.spec:
                problems.append(f"{where}: cites no sentence of the spec (@check(..., spec=...))")
                continue
            for part in missing_excerpts(spec, exercise.name, check.spec):
                problems.append(
                    f"{where}: cites words not in the spec's {exercise.name}.py section "
                    f"or conventions: {part!r}"
                )
    return problems
