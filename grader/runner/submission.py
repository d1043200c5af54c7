"""A submission: the lesson files found at the path a user gave.

Only files named after a lesson (`03_jit.py`, `ex2_per_example_grads.py`, or
the same stems as `.ipynb`) count; everything else in the folder is ignored and
never copied into a grading run.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from grader.errors import GraderError

MAX_LESSON_BYTES = 2_000_000
MAX_NOTEBOOK_BYTES = 50_000_000  # saved outputs (figures) make notebooks large; they are not graded
LESSON_SUFFIXES = (".py", ".ipynb")


class SubmissionError(GraderError):
    """The path given to `grade` cannot be graded; the message says what to do."""


@dataclass(frozen=True)
class Submission:
    root: Path  # the folder (or the file's folder)
    files: dict[str, Path]  # lesson name -> file
    single: str | None = None  # set when the user named one file

    def has(self, lesson: str) -> bool:
        return lesson in self.files


def refuse_link(path: Path) -> None:
    """`SubmissionError` when `path` (a submission's folder, its `exercises/`, a lesson file)
    is a symbolic link: a link is never followed, since it may lead anywhere the grader can
    read (a student repository holding `exercises -> ../../solutions` would be graded on
    the course's own solutions). The message names where it points."""
    if path.is_symlink():
        try:
            target = os.readlink(path)
        except OSError:
            target = "somewhere the grader cannot read"
        raise SubmissionError(
            f"{path} is a symlink to {target}: the grader does not follow symlinks to lesson "
            "folders or files. Put the lesson files themselves there (git keeps symlinks as "
            "links: commit the files), or grade the folder the symlink points to by its path."
        )


def find(path: Path, lessons: Iterable[str]) -> Submission:
    known = set(lessons)
    refuse_link(path)
    if not path.exists():
        raise SubmissionError(
            f"{path} does not exist. Give a folder of lesson files (default: exercises/) "
            "or one lesson file, e.g. `grade exercises/03_jit.py`."
        )
    if path.is_file():
        if path.suffix not in LESSON_SUFFIXES or path.stem not in known:
            raise SubmissionError(
                f"{path.name} is not a lesson file of this course. Lesson files are: "
                + ", ".join(f"{n}.py" for n in sorted(known))
            )
        return Submission(path.parent, {path.stem: path}, single=path.stem)
    files: dict[str, Path] = {}
    for entry in sorted(path.iterdir()):
        if entry.stem in known and entry.suffix in LESSON_SUFFIXES and entry.is_file():
            if entry.stem in files and entry.suffix == ".ipynb":
                continue  # a .py beside a notebook of the same name wins
            files[entry.stem] = entry
    if not files:
        raise SubmissionError(
            f"{path} holds no lesson files (looked for {', '.join(sorted(known)[:3])}, ...). "
            "Point `grade` at the folder with your edited lesson files, e.g. `grade exercises/`."
        )
    return Submission(path, files)


def over_limit(path: Path) -> str:
    """Why the lesson file at `path` is too large to grade ("" when it is not): its size, the
    limit, and what to do. A file over the limit is not copied (`copy_lessons`)."""
    notebook = path.suffix == ".ipynb"
    limit = MAX_NOTEBOOK_BYTES if notebook else MAX_LESSON_BYTES
    size = path.stat().st_size
    if size <= limit:
        return ""
    what, fix = (
        (
            "a notebook",
            "saved outputs and figures make a notebook large: clear its outputs "
            "(Edit > Clear All Outputs in Jupyter) and save it again",
        )
        if notebook
        else ("a lesson file", "keep data out of the source: compute it or load it from a file")
    )
    return (
        f"{path.name} is {size / 1e6:.1f} MB, over the {limit / 1e6:g} MB {what} may be, so it "
        f"was not graded; {fix}."
    )


def copy_lessons(submission: Submission, dest: Path) -> None:
    """Copy the lesson files, and nothing else, into `dest` (a private folder).

    A notebook is copied as it is: it is read and run inside the grading child
    (`grader.notebooks.grading_step`), never here.
    """
    dest.mkdir(parents=True, exist_ok=True)
    for name, src in submission.files.items():
        if src.suffix not in LESSON_SUFFIXES or src.is_symlink():
            continue
        if over_limit(src):
            continue
        shutil.copyfile(src, dest / f"{name}{src.suffix}")
