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
    resume/NAME.json     what the student was graded from (`grader.batch.resume`)

`--student NAME` (repeatable) grades only those students and rebuilds the
gradebook, the similar pairs (from every student's files) and the summary from
every student's results. A student whose results are for their lesson files as
they are now (same files, suites, grader version and options) is kept, not graded
again: an interrupted batch resumes where it stopped; `--regrade` grades them again.
The first Ctrl-C or SIGTERM stops the batch (no process of the grading left, the
class's files rebuilt from the students finished, exit 130); a second one ends it at
once (`grader.batch.interrupt`). Every file is written aside and renamed into place
(`grader.atomic`): the first that cannot be written stops the batch, exit 2. Exit 0
when every student was graded (whatever their scores), 1 when the grader itself
failed for a student (see students/NAME.error.txt), 2 on bad options. Student code
runs as a user of its own at least: below `--require-isolation` (default
`user`) nothing is graded.

Locally the class is one list of (student, lesson file) gradings that N warm
workers take from (`grader.runner.schedule`): the current student's longest file
first, so the students finish one after another, no worker idles while files are
left and the last student never waits for a second wave; the class pays JAX's
import N times, not once per student (`engine.Pool`). On a cluster each dask worker
process keeps one warm worker (`grader.batch.cluster`). The judges' compilation cache
(`grader.runner.cache`) serves every student; a batch forced below `user`
grades without it (a student could write it for the next). Before a class of
`warm.MIN_STUDENTS` or more on local workers, the course's solutions (`--solutions`,
default solutions/) are graded once, and what they compiled is loaded by every student's
grading at every level (`grader.batch.warm`): written from the solutions alone, never by a
student's grading.

On a terminal a live line says how many students are done and, for local workers,
which student's lesson file is being graded and the time its limit leaves ("alice:
03_jit 0:41 left"); each graded student gets a line, with the time the batch has
left by the files' times so far ("about 2:10 left"). In a pipe or a file (a CI log)
only the lines, `[i/N] alice: 100.0%`, no redrawing. The reports follow the course's
policy on fixes for a class (`audience.for_class`: only with `show_fixes = true`).
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import catalog, grading
from grader.batch import gradebook, interrupt, resume, warm
from grader.batch.jobs import Grader, Job
from grader.batch.pool import (
    Live,
    batch,
    grade_locally,
    job_for,
    known_times,
    similar_pairs,
    students,
)
from grader.classroom import roster, similarity
from grader.errors import GraderError
from grader.reports import controls
from grader.runner import policy


class BatchError(GraderError):
    """What keeps a class from being graded (a folder, a student, the cluster); the
    message says what to fix."""


@dataclass(frozen=True)
class Request:
    """What `grade batch` asks for."""

    submissions: Path  # one folder per student
    out: Path
    specs: list[catalog.ExerciseSpec]
    options: policy.Options
    stubs: Path  # subtracted when comparing students' files
    chosen: Sequence[str] = ()  # `--student`: only these (all when empty)
    scheduler: str | None = None  # a dask cluster's address, else local workers
    jobs: int = 1  # local workers
    quiet: bool = False
    regrade: bool = False  # grade again students whose results are for their files now
    solutions: Path | None = None  # graded first: their programs shared (`grader.batch.warm`)


@dataclass(frozen=True)
class Outcome:
    out: Path
    graded: int  # the students graded this time
    everybody: list[gradebook.Student]  # the class, as the gradebook has it
    pairs: list[similarity.Pair]
    problems: list[str]  # the grader's own failures
    kept: list[str] = dataclasses.field(default_factory=list)  # resumed: not graded again
    not_graded: list[str] = dataclasses.field(default_factory=list)  # stopped before them
    interrupted: str = ""  # the signal that stopped the batch: SIGINT, SIGTERM
    write_failed: str = ""  # the write that stopped it: "could not write PATH: why"


def _who(request: Request) -> tuple[list[str], list[str]]:
    """Every student of the class, and those to grade now; `BatchError` for a student or an
    output folder that cannot be."""
    submissions, out = request.submissions, request.out
    everyone = students(submissions)
    unknown = sorted(set(request.chosen) - set(everyone))
    if unknown:
        raise BatchError(f"--student: no folder {', '.join(unknown)} in {submissions}")
    names = sorted(set(request.chosen)) if request.chosen else everyone
    if not names:
        raise BatchError(f"{submissions} holds no student folders")
    if out.exists() and not out.is_dir():
        raise BatchError(f"--out {out} is a file; give a folder")
    return everyone, names


def run(
    request: Request,
    say: Callable[[str], None] = lambda text: None,
    stop: interrupt.Stop | None = None,
) -> Outcome:
    """Grade the students `request` names and rebuild the class's files (the module's
    docstring); `BatchError` or `policy.IsolationUnavailable` before anything is graded."""
    submissions, out, specs = request.submissions, request.out, request.specs
    everyone, names = _who(request)
    lessons = [s.name for s in specs]
    stop = stop or interrupt.Stop(on_exit=lambda: print(AT_ONCE, file=sys.stderr))
    with stop.handling():
        with stop.waiting():  # nothing graded yet: a signal ends it here
            everybody = [job_for(submissions, n, lessons) for n in everyone]
            jobs = [j for j in everybody if j.student in set(names)]
            pairs = similar_pairs(everybody, request.stubs)
            private = [(submissions, "the class's folders"), (out, "the output folder")]
            # on a cluster, each worker checks again
            level = grading.isolation(request.options, specs, private).level
        options = request.options
        if level == "basic":  # a student could write the judge's cache for the next one
            options = dataclasses.replace(options, cache_dir="")
        keys = {j.student: resume.key(j, specs, options, level) for j in jobs}
        kept = [] if request.regrade else [j.student for j in jobs if _kept(out, j, keys, say)]
        todo = [j for j in jobs if j.student not in kept]
        if kept:
            say(
                f"Kept {len(kept)} student(s) graded before from the same files and options "
                f"(--regrade grades them again): {controls.visible(', '.join(kept))}"
            )
        live = Live()
        scratch = warm.scratch()
        try:
            shared = _shared(request, todo, options, scratch, say)
            grader, where = _grader(request, live, len(todo) * len(specs), shared)
            say(
                f"Grading {len(todo)} student(s) x {len(specs)} lesson file(s) on {where} "
                f"(seed {options.seed}, isolation {level}) ..."
            )
            done = batch(
                todo, specs, options, out, grader, quiet=request.quiet, pairs=pairs, live=live,
                stop=stop, keys=keys,
            )  # fmt: skip
        except ConnectionError as exc:  # the scheduler (cluster) could not be reached
            raise BatchError(str(exc)) from None
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return Outcome(
        out,
        len(done.graded),
        done.everybody,
        pairs,
        done.problems,
        kept=kept,
        not_graded=[j.student for j in todo if j.student not in done.graded],
        interrupted=done.interrupted,
        write_failed=done.write_failed,
    )


AT_ONCE = (
    "grade batch: stopped at once (a second signal): every grading process ended; the "
    "students written so far are kept, run the same command again to grade the others"
)


def _kept(out: Path, job: Job, keys: dict[str, dict[str, Any]], say: Callable[[str], None]) -> bool:
    """The student's results in OUT are for their files now (`resume`); a results file that
    cannot be read is named, and its student graded again."""
    results = out / gradebook.STUDENTS / f"{job.student}.json"
    if results.exists() or results.is_symlink():
        why = roster.unreadable(results)
        if why is not None:
            say(
                f"grade batch: {controls.visible(why)}: {controls.visible(job.student)} is graded again"
            )
            return False
    return resume.kept(out, job.student, keys[job.student])


def _shared(
    request: Request,
    todo: list[Job],
    options: policy.Options,
    scratch: Path,
    say: Callable[[str], None],
) -> str:
    """The store of programs the solutions compile, for local workers grading at least
    `warm.MIN_STUDENTS` students ("" for none: `grader.batch.warm`)."""
    if request.scheduler or request.solutions is None or len(todo) < warm.MIN_STUDENTS:
        return ""
    wanted = {name for job in todo for name, _ in job.files}
    specs = [s for s in request.specs if s.name in wanted]
    known = known_times(request.out)
    return warm.store(request.solutions, specs, options, request.jobs, scratch, say, known)


def _grader(request: Request, live: Live, gradings: int, shared: str = "") -> tuple[Grader, str]:
    """The cluster at `request.scheduler`, else `request.jobs` local workers taking the
    class's `gradings` (student, lesson file) from one list, each loading the `shared`
    programs; and where."""
    if request.scheduler:
        from grader.batch import cluster

        try:
            return cluster.grade_on(request.scheduler), (f"the dask cluster at {request.scheduler}")
        except cluster.ClusterUnavailable as exc:
            raise BatchError(str(exc)) from None
    workers = request.jobs
    known = known_times(request.out)
    return grade_locally(workers, live, known, shared), f"{min(workers, gradings)} local worker(s)"


def summary(outcome: Outcome) -> str:
    """What `grade batch` says at the end: who was graded, where the class's files are."""
    counts: dict[str, int] = {}
    for student in outcome.everybody:
        counts[student.status] = counts.get(student.status, 0) + 1
    out = outcome.out
    alike = [p for p in outcome.pairs if p.suspicious]
    most = (
        controls.visible(f", the most: {alike[0].first} and {alike[0].second} in {alike[0].lesson}")
        if alike
        else ""
    )
    kept = f" ({len(outcome.kept)} kept from before)" if outcome.kept else ""
    missing = (
        "\nnot graded: " + controls.visible(", ".join(outcome.not_graded))
        if outcome.not_graded
        else ""
    )
    return (
        f"graded {outcome.graded} student(s){kept}; the class has {len(outcome.everybody)}: "
        + ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in sorted(counts.items()))
        + f"\ngradebook:  {out / gradebook.GRADEBOOK}\nsimilarity: {out / gradebook.SIMILARITY} "
        f"({len(alike)} pair(s) alike{most})\nsummary:    {out / gradebook.SUMMARY}" + missing
    )


def stopped(outcome: Outcome) -> str:
    """The line that says why the batch stopped early and how to go on ("" when it did not)."""
    again = "run the same command again"
    if outcome.write_failed:
        return (
            f"grade batch: {outcome.write_failed}; the students written before are kept: "
            f"make room and {again} to grade the rest"
        )
    if outcome.interrupted:
        return (
            f"grade batch: interrupted ({outcome.interrupted}): every grading process ended, "
            f"{outcome.graded + len(outcome.kept)} student(s) graded and kept, "
            f"{len(outcome.not_graded)} not graded: {again} to grade only those"
        )
    return ""
