"""A class graded in parallel (`grade batch`): the students found in the submissions, a
pool of warm workers grading them, and their files written (per-student reports, revealed
hints); the gradebook and the summary are rebuilt from those (`grader.batch.gradebook`).
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import atomic, audience, catalog, state
from grader.batch import gradebook, interrupt, resume
from grader.batch.jobs import Grader, Job, Outcome
from grader.classroom import causes, roster, similarity
from grader.model import ExerciseResult, Report
from grader.reports import console, controls, html, json_report
from grader.runner import engine, policy, schedule
from grader.runner.submission import SubmissionError, find, over_limit, refuse_link

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
    its limit) and done, and the time the batch has left (`left_s`, once it runs). Tells the
    `progress` of the batch running, if any."""

    def __init__(self) -> None:
        self.progress: console.Progress | None = None
        self.left_s: Callable[[], float] | None = None

    @staticmethod
    def name(student: str, lesson: str) -> str:
        return f"{student}: {lesson}"

    def start(self, student: str, lesson: str, limit_s: float) -> None:
        if self.progress is not None:
            self.progress.start(self.name(student, lesson), limit_s)

    def done(self, student: str, lesson: str) -> None:
        if self.progress is not None:
            self.progress.finish(self.name(student, lesson))

    def left(self) -> str:
        """ "about 3:10 left" for the gradings not finished ("" before the run, or none left)."""
        seconds = 0 if self.left_s is None else math.ceil(self.left_s())
        return f"about {seconds // 60}:{seconds % 60:02d} left" if seconds > 0 else ""


def grade_locally(
    workers: int,
    live: Live | None = None,
    known: Mapping[str, float] | None = None,
    shared: str = "",
) -> Grader:
    """The class's lesson files graded `workers` at once, on one pool of warm workers: JAX is
    imported once per worker for the whole class, not once per student (`engine.Pool`), and
    the workers take (student, lesson file) gradings from one list, the current student's
    longest file first (`grader.runner.schedule`): no worker waits while files are left, and
    no student waits for a second wave. `known`: lesson -> seconds a file took before, for
    the order. `live` hears of each lesson file started and done. `shared`: the programs
    the solutions compiled, which every worker loads (`grader.batch.warm`)."""

    def run(
        jobs: list[Job], specs: list[catalog.ExerciseSpec], options: policy.Options
    ) -> Iterator[Outcome]:
        return _pooled(jobs, specs, options, workers, live, known or {}, shared)

    return run


def _pooled(
    jobs: list[Job],
    specs: list[catalog.ExerciseSpec],
    options: policy.Options,
    workers: int,
    live: Live | None,
    known: Mapping[str, float],
    shared: str = "",
) -> Iterator[Outcome]:
    """`grade_locally`'s run: the jobs' outcomes as each student is done."""

    def started(index: int, lesson: str, limit_s: float) -> None:
        if live is not None:
            live.start(jobs[index].student, lesson, limit_s)

    def filed(index: int, result: ExerciseResult) -> None:
        if live is not None:
            live.done(jobs[index].student, result.name)

    with interrupt.scratch():
        warm = engine.Pool(workers, engine.preload_for(specs), shared=shared)
        pooled: schedule.Pooled | None = None
        try:
            pooled = schedule.Pooled(
                [j.submission() for j in jobs], specs, options, warm, known,
                on_start=started, on_file=filed,
            )  # fmt: skip
            if live is not None:
                live.left_s = pooled.left_s
            for done in pooled.run():
                yield jobs[done.index], done.report, done.error
        except BaseException:  # interrupted, or closed early: nothing starts or runs on
            engine.STOPPING.set()  # what the kills below end is the stop: no retry
            if pooled is not None:
                pooled.stop()
                interrupt.end_descendants(
                    until=lambda: not pooled.running(), within_s=interrupt.END_WITHIN_S
                )
            raise
        finally:
            if pooled is not None:
                pooled.join()
            if live is not None:
                live.left_s = None
            warm.close()


def known_times(out: Path) -> dict[str, float]:
    """lesson -> the median seconds its files took in the students' results already in OUT
    (an earlier run of this batch), for the order of this one; {} when there are none."""
    times: dict[str, list[float]] = {}
    folder = out / gradebook.STUDENTS
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            for exercise in data.get("exercises", []):
                times.setdefault(str(exercise["name"]), []).append(float(exercise["duration_s"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return {lesson: statistics.median(seconds) for lesson, seconds in times.items()}


def graded(path: Path) -> bool:
    """Whether the lesson file at `path` is one the grader grades: a file, not a link
    (`submission.refuse_link`), within the size limit (`submission.over_limit`)."""
    try:
        return not path.is_symlink() and path.is_file() and not over_limit(path)
    except OSError:
        return False


def similar_pairs(jobs: list[Job], stubs: Path) -> list[similarity.Pair]:
    """Pairs of students whose files of a lesson are alike (`grader.classroom.similarity`),
    the stubs in `stubs` (exercises/<lesson>.py) subtracted when they are there. A file the
    grader does not grade (`graded`) is not compared: it is not the student's graded work,
    and a 20 MB one would cost minutes."""
    files = {
        job.student: {
            lesson: similarity.source_of(Path(path))
            for lesson, path in job.files
            if graded(Path(path))
        }
        for job in jobs
    }
    lessons = {lesson for by_lesson in files.values() for lesson in by_lesson}
    given = {
        lesson: (stubs / f"{lesson}.py").read_text(encoding="utf-8")
        for lesson in lessons
        if (stubs / f"{lesson}.py").is_file()
    }
    return similarity.compare(files, given)


def reported_hints(job: Job) -> state.Revealed | None:
    """The `.grade/hints.json` of the student's submission (kept for the folder their
    lesson files are in: `state.state_folder`), read as data; None when there is none (or
    `.grade` is a link)."""
    if Path(job.root).is_symlink():  # a linked folder is not followed (`job_for`)
        return None
    folder = state.state_folder(Path(job.root)) / state.STATE_DIR
    return None if folder.is_symlink() else state.revealed_in(folder / state.REVEALED_FILE)


def write_hints(out: Path, job: Job) -> None:
    """OUT/hints/NAME.json: what the student's submission reports of the hints revealed
    (removed when it reports nothing); OSError when it cannot be written."""
    path = out / roster.HINTS / f"{job.student}.json"
    reported = reported_hints(job)
    if reported is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(exist_ok=True)
    atomic.write_text(path, json.dumps(reported, indent=2, sort_keys=True) + "\n")


def write_student(out: Path, job: Job, report: Report | None, error: str) -> None:
    """The student's files in OUT/students/, each whole or not at all (`grader.atomic`), and
    their report both or neither; OSError (`atomic.WriteError`: the path and why) when one
    cannot be written."""
    folder = out / gradebook.STUDENTS
    if report is None:
        atomic.write_text(
            folder / f"{job.student}.error.txt", f"the grader could not grade {job.root}:\n{error}"
        )
        stale = [folder / f"{job.student}.{k}" for k in ("json", "html")]
    else:
        written = [folder / f"{job.student}.{k}" for k in ("json", "html")]
        try:
            json_report.write(report, written[0])
            html.write(report, written[1])
        except BaseException:  # half a student is none: graded again by the next run
            for path in written:
                path.unlink(missing_ok=True)
            raise
        stale = [folder / f"{job.student}.error.txt"]
    for path in stale:
        path.unlink(missing_ok=True)


@dataclass
class Graded:
    """What `batch` did: the class as its files now have it, who was graded this time, the
    grader's own failures, and why it stopped early ("" when it did not)."""

    everybody: list[gradebook.Student]
    graded: list[str]
    problems: list[str]
    interrupted: str = ""  # the signal's name: SIGINT, SIGTERM
    write_failed: str = ""  # "could not write PATH: No space left on device"


def batch(
    jobs: list[Job],
    specs: list[catalog.ExerciseSpec],
    options: policy.Options,
    out: Path,
    grader: Grader,
    quiet: bool = True,
    pairs: list[similarity.Pair] | None = None,
    live: Live | None = None,
    *,
    stop: interrupt.Stop | None = None,
    keys: Mapping[str, dict[str, Any]] | None = None,
) -> Graded:
    """Grade `jobs`, write their files, rebuild the gradebook (with the similar `pairs`).
    `live`: what `grader` tells of each lesson file. `stop`: the signals that end the
    grading early (`grader.batch.interrupt`). `keys`: what each student is graded from,
    recorded once their files are written (`grader.batch.resume`). The first file that
    cannot be written stops the batch (`Graded.write_failed`); the class's files are then
    rebuilt if they can be, what was written before stays whole."""
    stop = stop or interrupt.Stop()
    done = Graded([], [], [])
    outcomes = grader(jobs, specs, options) if jobs else iter(())
    with console.Progress(
        len(jobs), console.stderr(), description="grading", unit="student", quiet=quiet
    ) as progress:
        if live is not None:
            live.progress = progress
        try:
            try:
                (out / gradebook.STUDENTS).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                done.write_failed = _failed_write(exc)
                outcomes = iter(())
            while True:
                with stop.waiting():
                    outcome = next(outcomes, None)
                if outcome is None:
                    break
                try:
                    report = _keep(out, *outcome, done, keys or {})
                except OSError as exc:
                    done.write_failed = _failed_write(exc)
                    break
                progress.advance(_done_line(outcome[0], report, live))
        except interrupt.Interrupted as exc:
            done.interrupted = str(exc)
        finally:
            close = getattr(outcomes, "close", None)  # a generator's: nothing left running
            if close is not None:
                close()
            if live is not None:
                live.progress = None
    try:
        done.everybody = gradebook.rebuild(out, pairs)
    except OSError as exc:  # the class's files as they were: whole, maybe behind
        done.write_failed = done.write_failed or _failed_write(exc)
        done.everybody = gradebook.load(out) if (out / gradebook.STUDENTS).is_dir() else []
    return done


def _done_line(job: Job, report: Report | None, live: Live | None) -> str:
    """`alice: 72.5% (about 2:10 left)`: a student graded, and the time the batch has left."""
    left = live.left() if live is not None else ""
    return f"{controls.visible(job.student)}: {student_line(report)}" + (
        f" ({left})" if left else ""
    )


def student_line(report: Report | None) -> str:
    """What the terminal says of a student graded: `72.5%`, and why a file was not graded
    on its merits when one was not (`0.0% - 03_jit oversize, not graded`, `causes`)."""
    why = causes.line(causes.of_student(None if report is None else report.to_json()))
    if report is None:
        return why
    score = f"{100 * report.fraction:.1f}%"
    return f"{score} - {controls.visible(why)}" if why else score


def _failed_write(exc: OSError) -> str:
    if isinstance(exc, atomic.WriteError):
        return str(exc)
    return f"could not write {exc.filename}: {exc.strerror or exc}"


def _keep(
    out: Path,
    job: Job,
    graded: Report | None,
    error: str,
    done: Graded,
    keys: Mapping[str, dict[str, Any]],
) -> Report | None:
    """Write one student's files (the class's policy on fixes: no student revealed any
    here) and what they were graded from; returns their report."""
    report = None if graded is None else audience.for_class(graded)
    if report is None:
        done.problems.append(f"{job.student}: the grader failed: {error.strip().splitlines()[-1]}")
    write_student(out, job, report, error)
    try:
        write_hints(out, job)
        if report is not None and job.student in keys:
            resume.record(out, job.student, keys[job.student])
    except BaseException:  # a student whose record is missing is none: graded again next run
        for kind in ("json", "html"):
            (out / gradebook.STUDENTS / f"{job.student}.{kind}").unlink(missing_ok=True)
        raise
    done.graded.append(job.student)
    return report
