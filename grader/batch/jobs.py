"""One student's grading, as `grade batch` runs it locally and `cluster` on dask workers.

Both import this module, and neither imports the other at module level: a
`Job` is all a grader (local pool or remote worker) needs, and a `Grader`
turns jobs into outcomes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from grader import audience, catalog
from grader.model import Report
from grader.runner import engine, policy
from grader.runner.submission import Submission


@dataclass(frozen=True)
class Job:
    """One student's grading: everything a worker (local or remote) needs."""

    student: str
    root: str  # the folder graded, as shown in the report: "submissions/alice"
    files: tuple[tuple[str, str], ...]  # (lesson name, path of its file)

    def submission(self) -> Submission:
        return Submission(Path(self.root), {name: Path(path) for name, path in self.files})


Outcome = tuple[Job, Report | None, str]  # the report, or the grader's own error
Grader = Callable[[list[Job], list[catalog.ExerciseSpec], policy.Options], Iterator[Outcome]]


def grade_job(job: Job, specs: list[catalog.ExerciseSpec], options: policy.Options) -> Report:
    # A class report shows fixes only when the course always shows them (no student revealed any).
    return audience.for_class(engine.grade(specs, job.submission(), options))
