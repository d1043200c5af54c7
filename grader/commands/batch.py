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
process keeps one warm worker (`grader.batch.cluster`). The judges' compilation cache
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
import sys
from pathlib import Path

from grader.batch import gradebook
from grader.batch.grading import Live, batch, grade_locally, job_for, similar_pairs, students
from grader.commands import shared
from grader.reports import controls


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
        from grader.batch import cluster

        try:
            grader = cluster.grade_on(args.scheduler)
        except cluster.ClusterUnavailable as exc:
            raise shared.UsageError(str(exc)) from None
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
