"""A class graded in parallel (`grade batch`): the students found in the submissions, a
pool of warm workers grading them, and their files written (per-student reports, revealed
hints); the gradebook and the summary are rebuilt from those (`grader.batch.gradebook`).
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path

from grader import catalog, hints
from grader.batch import gradebook
from grader.batch.jobs import Grader, Job, Outcome
from grader.classroom import roster, similarity
from grader.model import Report
from grader.reports import console, controls, html, results
from grader.runner import engine, policy
from grader.runner.submission import SubmissionError, find, refuse_link

IGNORED_FOLDERS = ("__MACOSX",)


def students(submissions: Path) -> list[str]:
    return sorted(
        p.name
        for p in submissions.iterdir()
        if p.is_dir() and not p.name.startswith((".", "_")) and p.name not in IGNORED_FOLDERS
    )


def job_for(submissions: Path, student: str, lessons: list[str]) -> Job:
    """The student's lesson files: in their folder, or its `exercises/`. A folder that is a
    link is not followed (`submission.refuse_link`): said on stderr, and its lesson files are
    reported missing."""
    folder = submissions / student
    for candidate in (folder, folder / "exercises"):
        if candidate.is_symlink():
            try:
                refuse_link(candidate)
            except SubmissionError as exc:
                print(f"grade batch: warning: {controls.visible(str(exc))}", file=sys.stderr)
            break
        if candidate.is_dir():
            try:
                found = find(candidate, lessons)
            except SubmissionError:
                continue
            return Job(
                student, str(candidate), tuple((n, str(p)) for n, p in sorted(found.files.items()))
            )
    return Job(student, str(folder), ())  # no lesson files: every exercise is reported missing


class Live:
    """What local workers tell the progress line: each student's lesson file started (with
    its limit) and done. Tells the `progress` of the batch running, if any."""

    def __init__(self) -> None:
        self.progress: console.Progress | None = None

    @staticmethod
    def name(student: str, lesson: str) -> str:
        return f"{student}: {lesson}"

    def start(self, student: str, lesson: str, limit_s: float) -> None:
        if self.progress is not None:
            self.progress.start(self.name(student, lesson), limit_s)

    def done(self, student: str, lesson: str) -> None:
        if self.progress is not None:
            self.progress.finish(self.name(student, lesson))


def grade_locally(workers: int, live: Live | None = None) -> Grader:
    """Students graded `workers` at once, on one pool of warm workers: JAX is imported once
    per worker for the whole class, not once per student (`engine.Pool`). `live` hears of
    each lesson file started and done."""

    def run(
        jobs: list[Job], specs: list[catalog.ExerciseSpec], options: policy.Options
    ) -> Iterator[Outcome]:
        def one(job: Job) -> Report:
            if live is None:
                return engine.grade(specs, job.submission(), options, pool=warm)
            who = job.student
            return engine.grade(
                specs,
                job.submission(),
                options,
                lambda i, n, result: live.done(who, result.name),
                pool=warm,
                on_start=lambda lesson, limit_s: live.start(who, lesson, limit_s),
            )

        with (
            engine.Pool(workers, engine.preload_for(specs)) as warm,
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="batch") as pool,
        ):
            futures: dict[Future[Report], Job] = {pool.submit(one, j): j for j in jobs}
            for future in as_completed(futures):
                job = futures[future]
                try:
                    yield job, future.result(), ""
                except Exception:  # the grader's own failure: report it, grade the others
                    yield job, None, traceback.format_exc()

    return run


def similar_pairs(jobs: list[Job], stubs: Path) -> list[similarity.Pair]:
    """Pairs of students whose files of a lesson are alike (`grader.classroom.similarity`),
    the stubs in `stubs` (exercises/<lesson>.py) subtracted when they are there."""
    files = {
        job.student: {lesson: similarity.source_of(Path(path)) for lesson, path in job.files}
        for job in jobs
    }
    lessons = {lesson for by_lesson in files.values() for lesson in by_lesson}
    given = {
        lesson: (stubs / f"{lesson}.py").read_text(encoding="utf-8")
        for lesson in lessons
        if (stubs / f"{lesson}.py").is_file()
    }
    return similarity.compare(files, given)


def reported_hints(job: Job) -> hints.Revealed | None:
    """The `.grade/hints.json` of the student's submission (kept for the folder their
    lesson files are in: `hints.state_folder`), read as data; None when there is none (or
    `.grade` is a link)."""
    folder = hints.state_folder(Path(job.root)) / hints.STATE_DIR
    return None if folder.is_symlink() else hints.revealed_in(folder / hints.REVEALED_FILE)


def write_hints(out: Path, job: Job) -> list[str]:
    """OUT/hints/NAME.json: what the student's submission reports of the hints revealed
    (removed when it reports nothing); returns problems writing it."""
    path = out / roster.HINTS / f"{job.student}.json"
    reported = reported_hints(job)
    try:
        if reported is None:
            path.unlink(missing_ok=True)
            return []
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(reported, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    except OSError as exc:
        return [f"{job.student}: could not write the hints they reported: {exc}"]
    return []


def write_student(out: Path, job: Job, report: Report | None, error: str) -> list[str]:
    """The student's files in OUT/students/; returns problems writing them."""
    folder = out / gradebook.STUDENTS
    stale = (
        [folder / f"{job.student}.error.txt"]
        if report
        else [folder / f"{job.student}.{k}" for k in ("json", "html")]
    )
    for path in stale:
        path.unlink(missing_ok=True)
    try:
        if report is None:
            (folder / f"{job.student}.error.txt").write_text(
                f"the grader could not grade {job.root}:\n{error}", encoding="utf-8"
            )
            return []
        results.write(report, folder / f"{job.student}.json")
        html.write(report, folder / f"{job.student}.html")
    except OSError as exc:
        return [f"{job.student}: could not write the reports: {exc}"]
    return []


def batch(
    jobs: list[Job],
    specs: list[catalog.ExerciseSpec],
    options: policy.Options,
    out: Path,
    grader: Grader,
    quiet: bool = True,
    pairs: list[similarity.Pair] | None = None,
    live: Live | None = None,
) -> tuple[list[gradebook.Student], list[str]]:
    """Grade `jobs`, write their files, rebuild the gradebook (with the similar `pairs`);
    returns the class and the problems. `live`: what `grader` tells of each lesson file."""
    (out / gradebook.STUDENTS).mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    with console.Progress(
        len(jobs), console.stderr(), description="grading", unit="student", quiet=quiet
    ) as progress:
        if live is not None:
            live.progress = progress
        for job, graded, error in grader(jobs, specs, options):
            # The class's policy on fixes: no student revealed any here.
            report = None if graded is None else hints.for_class(graded)
            if report is None:
                problems.append(
                    f"{job.student}: the grader failed: {error.strip().splitlines()[-1]}"
                )
            problems += write_student(out, job, report, error)
            problems += write_hints(out, job)
            what = f"{100 * report.fraction:.1f}%" if report else "grader error"
            progress.advance(f"{controls.visible(job.student)}: {what}")
        if live is not None:
            live.progress = None
    return gradebook.rebuild(out, pairs), problems
