"""The course's solutions graded once before a class: the programs they compile, shared.

A correct lesson file's grading is mostly XLA compiling, and most of what one student's
judges and sandboxes compile, every other student's compile too (the judge's references and
inputs, the probes, eager operations, training steps written the lesson's way). Before the
class, `grade batch` grades the course's own solutions (trusted code) on warm workers of
their own, the judges caching in a folder of that grading and each worker's sandboxes in a
folder of their worker (`engine.Pool(sandbox_caches=)`); what they compiled becomes one
store (`grader.sandbox.shared_programs`) that every worker of the class loads. A student's
grading then loads a program the solutions compiled instead of compiling it; it never adds
to the store, so no student's program reaches another's grading, at any isolation level.

Done only where it pays: local workers (not a cluster), at least `MIN_STUDENTS` students to
grade, and a solutions folder with a lesson file the class is graded on. Whatever goes wrong
here (the solutions fail, a folder cannot be written) leaves the class to be graded as
before, compiling everything, and says why.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from grader import catalog
from grader.errors import GraderError
from grader.runner import engine, policy
from grader.runner.submission import SubmissionError, find
from grader.sandbox import shared_programs

MIN_STUDENTS = 4
"""Fewer students than this are graded without the solutions first: grading the solutions
costs about one student, and saves 36-47% of each student's CPU (13 cores; 17% for three
students of four files on 2 cores, where the wall time was the same:
docs/measurements/2026-12-06-shared-programs.md)."""
SUFFIX = "-cache"
"""JAX's cache files: the key, then this (`jax._src.lru_cache`)."""


HELP = (
    f"the course's solutions, graded before a class of {MIN_STUDENTS} or more students: "
    "every student's grading loads what they compiled instead of compiling it (default: "
    "solutions/ of the working folder, when there; 'none': no such grading)"
)


class NoSolutions(GraderError):
    """`--solutions` names no folder."""


def solutions(given: str | None) -> Path | None:
    """`grade batch --solutions`: the folder given ('none': no folder), else solutions/ of
    the working folder when there."""
    if given is None:
        default = Path("solutions")
        return default if default.is_dir() else None
    if given.strip().lower() == "none":
        return None
    if not Path(given).is_dir():
        raise NoSolutions(
            f"--solutions {given}: no such folder (give the course's solutions/, or 'none')"
        )
    return Path(given)


def entries(*folders: Path) -> Iterator[tuple[str, bytes]]:
    """(JAX cache key, compiled program) of every cache file in `folders` and the folders in
    them, each key once."""
    seen: set[str] = set()
    for folder in folders:
        for path in sorted(folder.rglob(f"*{SUFFIX}")):
            key = path.name[: -len(SUFFIX)]
            if key in seen or path.is_symlink() or not path.is_file():
                continue
            seen.add(key)
            yield key, path.read_bytes()


def store(
    solutions: Path,
    specs: list[catalog.ExerciseSpec],
    options: policy.Options,
    workers: int,
    scratch: Path,
    say: Callable[[str], None] = lambda text: None,
    known: Mapping[str, float] | None = None,
) -> str:
    """Grade the lesson files of `solutions` among `specs` on `workers` warm workers of their
    own, the longest first (`known`: lesson -> seconds a file took before, else its time
    limit), and write what they compiled as a store in `scratch`: "PATH SHA256" for
    `engine.Pool(shared=)`, or "" (said why) when there is nothing to share."""
    names = [s.name for s in specs]
    if not any(
        (solutions / f"{n}{suffix}").is_file() for n in names for suffix in (".py", ".ipynb")
    ):
        return ""  # not this course's solutions (or none of the class's lesson files)
    try:
        submission = find(solutions, names)
    except SubmissionError as exc:
        say(f"grade batch: the solutions are not graded first ({exc}): every program is compiled")
        return ""
    graded = [s for s in specs if s.name in submission.files]
    seconds = known or {}
    graded.sort(key=lambda s: -seconds.get(s.name, options.timeout_s or s.timeout_s))
    if not graded:
        return ""
    judge = scratch / "judge"
    sandboxes = scratch / "sandboxes"
    for folder in (judge, sandboxes):
        folder.mkdir(mode=0o711)  # the sandbox's users reach their own folders (`user`)
        os.chmod(folder, 0o711)
    # Its files at once, one per worker (a batch grades each student's files one at a time).
    trusted = dataclasses.replace(options, cache_dir=str(judge), jobs=workers)
    say(
        f"Grading the solutions' {len(graded)} lesson file(s) first: what they compile is "
        "shared with every student's grading ..."
    )
    preload = engine.preload_for(graded)
    with engine.Pool(workers, preload, sandbox_caches=str(sandboxes)) as pool:
        engine.grade(graded, submission, trusted, pool=pool)
    path = scratch / "programs"
    sha256 = shared_programs.write(entries(judge, sandboxes), str(path))
    shutil.rmtree(judge, ignore_errors=True)
    shutil.rmtree(sandboxes, ignore_errors=True)
    return f"{path} {sha256}"


def scratch() -> Path:
    """A folder for `store` (traversable, not listable: at `user` each sandbox reaches its
    own cache folder in it); the caller removes it."""
    folder = Path(tempfile.mkdtemp(prefix="grade-warm-"))
    os.chmod(folder, 0o711)
    return folder
