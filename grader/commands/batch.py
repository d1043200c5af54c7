"""Grade a class: every submission, in parallel, into per-student reports and a gradebook.

    grade batch SUBMISSIONS --out DIR [--jobs N] [--student NAME] [--scheduler tcp://HOST:PORT]

SUBMISSIONS holds one folder per student (the folder's name is the student's
name) with their lesson files, `.py` or `.ipynb`, either directly or in an
`exercises/` folder inside it. Each student is graded independently, exactly
as `grade` grades one folder (the engine isolates every lesson file in a
bounded child process), by N local workers or, with --scheduler, by a
dask.distributed cluster (`pip install 'jax-lesson-grader[cluster]'`); both
give identical results. A broken or hostile submission only affects its own
report.

DIR gets:
    students/NAME.json   the results JSON (as `grade --json`)
    students/NAME.html   the student's HTML report
    hints/NAME.json      the hints the student revealed, as the `.grade/hints.json` of their
                         submission says (`grade hint` wrote it on their machine and the
                         release's .gitignore keeps it: self-reported, nothing checks it)
    gradebook.csv        a row of maxima, then per student: total, max, percent, one column
                         per lesson file, status, hints revealed (self-reported), time of
                         grading
    similarity.csv       pairs of students whose files of a lesson are alike (MOSS-like,
                         the stubs in --stubs subtracted), most alike first
    summary.html         who needs attention and the roster, the class's misconceptions,
                         the similar pairs, the score distribution, every check's pass rate

`--student NAME` (repeatable) regrades only those students and rebuilds the
gradebook, the similar pairs (from every student's files) and the summary from
every student's results. Exit 0 when every
student was graded (whatever their scores), 1 when the grader itself failed
for a student (see students/NAME.error.txt), 2 on bad options. Student code
runs as a user of its own at least: below `--require-isolation` (default
`user`) nothing is graded.

Local students share one pool of N warm workers (`engine.Pool`), so the class
pays JAX's import N times, not once per student; on a cluster each dask worker
process keeps one warm worker (`cluster`). The judges' compilation cache
(`grader.runner.cache`) serves every student; a batch forced below `user`
grades without it (a student could write it for the next).

On a terminal a live line says how many students are done and, for local workers,
which student's lesson file is being graded and the time its limit leaves ("alice:
03_jit 0:41 left"); each graded student gets a line. In a pipe or a file (a CI log)
only the lines, `[i/N] alice: 100.0%`, no redrawing. The reports follow the course's
policy on fixes for a class (`hints.for_class`: only with `show_fixes = true`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import traceback
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path

from grader import catalog, hints
from grader.classroom import roster, similarity
from grader.commands import gradebook, shared
from grader.commands.jobs import Grader, Job, Outcome
from grader.model import Report
from grader.reports import console, controls, html, results
from grader.runner import engine
from grader.runner.submission import SubmissionError, find

IGNORED_FOLDERS = ("__MACOSX",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "submissions",
        metavar="SUBMISSIONS_DIR",
        help="a folder with one folder of lesson files per student",
    )
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="where the reports and the gradebook go"
    )
    shared.add_jobs_option(parser, what="students", workers_alias=True)
    parser.add_argument(
        "--student",
        action="append",
        default=[],
        metavar="NAME",
        help="grade only this student (repeatable) and update the gradebook",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="grade on a dask.distributed cluster, e.g. tcp://10.0.0.5:8786",
    )
    parser.add_argument(
        "--stubs",
        metavar="DIR",
        default=shared.DEFAULT_LESSONS,
        help="the stubs handed out (default: exercises/): their code is not counted when "
        "comparing students' files",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    shared.add_grading_options(parser, require="user")


def students(submissions: Path) -> list[str]:
    return sorted(
        p.name
        for p in submissions.iterdir()
        if p.is_dir() and not p.name.startswith((".", "_")) and p.name not in IGNORED_FOLDERS
    )


def job_for(submissions: Path, student: str, lessons: list[str]) -> Job:
    folder = submissions / student
    for candidate in (folder, folder / "exercises"):
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
        jobs: list[Job], specs: list[catalog.ExerciseSpec], options: engine.Options
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
    options: engine.Options,
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


def run(args: argparse.Namespace) -> int:
    submissions, out = Path(args.submissions), Path(args.out)
    if not submissions.is_dir():
        raise shared.UsageError(
            f"{submissions}: no such folder (give the folder holding one folder per student)"
        )
    specs = shared.specs(args)
    everyone = students(submissions)
    chosen = [n for arg in args.student for n in arg.split(",") if n]
    unknown = sorted(set(chosen) - set(everyone))
    if unknown:
        raise shared.UsageError(f"--student: no folder {', '.join(unknown)} in {submissions}")
    names = sorted(set(chosen)) if chosen else everyone
    if not names:
        raise shared.UsageError(f"{submissions} holds no student folders")
    if out.exists() and not out.is_dir():
        raise shared.UsageError(f"--out {out} is a file; give a folder")
    lessons = [s.name for s in specs]
    jobs = [job_for(submissions, n, lessons) for n in names]
    pairs = similar_pairs([job_for(submissions, n, lessons) for n in everyone], Path(args.stubs))
    options = shared.options(args)
    private = [(submissions, "the class's folders"), (out, "the output folder")]
    # on a cluster, each worker checks again
    level = shared.check_isolation(options, specs, private).level
    if level == "basic":  # a student could write the judge's cache for the next one
        options = dataclasses.replace(options, cache_dir="")
    live = Live()
    if args.scheduler:
        from grader.commands import cluster

        grader = cluster.grade_on(args.scheduler)
        where = f"the dask cluster at {args.scheduler}"
    else:
        workers = shared.jobs(args).count
        grader = grade_locally(workers, live)
        where = f"{min(workers, len(jobs))} local worker(s)"
    if not args.quiet:
        print(
            f"Grading {len(jobs)} student(s) x {len(specs)} lesson file(s) on {where} "
            f"(seed {args.seed}, isolation {level}) ...",
            file=sys.stderr,
            flush=True,
        )
    try:
        everybody, problems = batch(
            jobs, specs, options, out, grader, quiet=args.quiet, pairs=pairs, live=live
        )
    except ConnectionError as exc:  # the scheduler (cluster) could not be reached
        raise shared.UsageError(str(exc)) from None
    counts: dict[str, int] = {}
    for student in everybody:
        counts[student.status] = counts.get(student.status, 0) + 1
    print(
        f"graded {len(jobs)} student(s); the class has {len(everybody)}: "
        + ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in sorted(counts.items()))
    )
    alike = [p for p in pairs if p.suspicious]
    print(
        f"gradebook:  {out / gradebook.GRADEBOOK}\nsimilarity: {out / gradebook.SIMILARITY} "
        f"({len(alike)} pair(s) alike"
        + (
            controls.visible(
                f", the most: {alike[0].first} and {alike[0].second} in {alike[0].lesson}"
            )
            if alike
            else ""
        )
        + f")\nsummary:    {out / gradebook.SUMMARY}"
    )
    for problem in problems:
        print(f"grade batch: {controls.visible(problem)}", file=sys.stderr)
    return 1 if any(p for p in problems) else 0
