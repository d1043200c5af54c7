"""A Gradescope upload, matched to the lesson files: what `run_autograder` grades.

    python -m grader.course.uploads stage SUBMISSION STAGED NOTES
    python -m grader.course.uploads annotate RESULTS NOTES

Students upload lesson files (`03_jit.py`, or the notebook `03_jit.ipynb`) or their
whole repository (then its `exercises/` is graded). A browser that downloaded a file
twice names the second copy `03_jit (1).py`, `03_jit(2).py` or `03_jit-2.py`: such a
file is graded as the lesson file its name leaves once the suffix is taken off, when
no file has the exact name (the exact name wins; two suffixed copies of one lesson are
not guessed between). `stage` copies the files graded, under their lesson names, into
STAGED and writes what it did into NOTES, which `annotate` puts at the top of the
results' output. When no file matches a lesson, `stage` exits 3 and NOTES says which
files were received and which names are expected: `run_autograder` writes that as the
results, score 0.

Only regular files are staged: a link is not followed, and the notes name its target.
"""

from __future__ import annotations

import json
import re
import shutil
import stat
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grader import catalog

NO_MATCH = 3  # `stage`'s exit status when nothing in the upload is a lesson file
SUFFIXES = (".py", ".ipynb")
# `NAME (1)`, `NAME(2)`, `NAME-2`: what browsers make of a second download of NAME
_COPY = re.compile(r"^(?P<stem>.+?)(?:\s*\(\d+\)|-\d+)$")
SHOWN = 20  # names listed in a message at most


@dataclass
class Matched:
    graded: dict[str, Path] = field(default_factory=dict)  # lesson file name -> upload
    notes: list[str] = field(default_factory=list)


def lesson_of(name: str, lessons: Collection[str]) -> str | None:
    """The lesson file name (`03_jit.py`) an uploaded file's `name` stands for, or None."""
    path = Path(name)
    if path.suffix not in SUFFIXES:
        return None
    if path.stem in lessons:
        return path.name
    copy = _COPY.match(path.stem)
    if copy and copy["stem"].strip() in lessons:
        return copy["stem"].strip() + path.suffix
    return None


def _received(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir()) if folder.is_dir() else []


def folder_of(submission: Path, lessons: Collection[str]) -> Path:
    """`submission`, or its `exercises/` when a repository was uploaded (no lesson file at
    the top, an exercises/ folder)."""
    inner = submission / "exercises"
    top = [p for p in _received(submission) if lesson_of(p.name, lessons)]
    return inner if not top and inner.is_dir() and not inner.is_symlink() else submission


def match(files: Sequence[Path], lessons: Collection[str]) -> Matched:
    """Which of the uploaded `files` is graded as which lesson file, and why."""
    found = Matched()
    claims: dict[str, list[Path]] = {}
    for path in files:
        lesson = lesson_of(path.name, lessons)
        if lesson is None:
            continue
        if path.is_symlink():
            continue  # `links` says so
        if not stat.S_ISREG(path.lstat().st_mode):
            found.notes.append(f"{path.name} is not graded: not a plain file")
            continue
        claims.setdefault(lesson, []).append(path)
    for lesson, paths in sorted(claims.items()):
        exact = [p for p in paths if p.name == lesson]
        if exact:
            found.graded[lesson] = exact[0]
            found.notes += [
                f"{p.name} is not graded: {lesson} was uploaded too"
                for p in paths
                if p not in exact
            ]
        elif len(paths) == 1:
            found.graded[lesson] = paths[0]
            found.notes.append(
                f"{paths[0].name} is graded as {lesson} (the name it was uploaded with)"
            )
        else:
            names = ", ".join(p.name for p in paths)
            found.notes.append(
                f"none of {names} is graded: each could be {lesson}; upload one, named {lesson}"
            )
    return found


def links(received: Sequence[Path]) -> list[str]:
    """A note for each link received: never followed (the target is not the student's)."""
    return [
        f"{p.name} is a symlink to {p.readlink()}: the grader does not follow symlinks; "
        "upload the files themselves"
        for p in received
        if p.is_symlink()
    ]


def nothing_matched(received: Sequence[Path], lessons: Collection[str], within: str = "") -> str:
    names = [within + p.name + ("/" if p.is_dir() else "") for p in received][:SHOWN]
    more = len(received) - len(names)
    got = ", ".join(names) + (f" and {more} more" if more > 0 else "") if names else "no files"
    expected = ", ".join(sorted(f"{n}.py" for n in lessons)[:SHOWN])
    return (
        f"No lesson file to grade: received {got}. Upload your lesson files, named as in "
        f"exercises/ ({expected}; or the notebooks, .ipynb), or your repository."
    )


def stage(submission: Path, staged: Path, notes: Path, suites: Path) -> int:
    """Copy the upload's lesson files into `staged` under their lesson names; 0, or
    `NO_MATCH` (the notes then say what was received and what is expected)."""
    lessons = {s.name for s in catalog.exercises(suites)}
    folder = folder_of(submission, lessons)
    received = _received(folder)
    found = match(received, lessons)
    found.notes += links(_received(submission) if folder != submission else [])
    found.notes += links(received)
    staged.mkdir(parents=True, exist_ok=True)
    for lesson, path in found.graded.items():
        shutil.copyfile(path, staged / lesson)
    if not found.graded:
        within = "" if folder == submission else f"{folder.name}/"
        found.notes.insert(0, nothing_matched(received, lessons, within))
    notes.write_text("".join(f"{n}\n" for n in found.notes), encoding="utf-8")
    return 0 if found.graded else NO_MATCH


def annotate(results: Path, notes: Path, score_zero: bool = False) -> None:
    """Put `notes` at the top of the results' output (`score_zero`: write results of
    their own, score 0, when there are none)."""
    said = notes.read_text(encoding="utf-8").strip() if notes.is_file() else ""
    if score_zero:
        doc: dict[str, object] = {"score": 0.0, "visibility": "visible", "tests": [], "output": ""}
    else:
        doc = json.loads(results.read_text(encoding="utf-8"))
    if said:
        doc["output"] = (said + "\n\n" + str(doc.get("output") or "")).strip()
    results.write_text(json.dumps(doc), encoding="utf-8")


def main(argv: Sequence[str]) -> int:
    suites = Path(__file__).resolve().parent.parent / "suites"
    if len(argv) == 4 and argv[0] == "stage":
        return stage(Path(argv[1]), Path(argv[2]), Path(argv[3]), suites)
    if len(argv) == 3 and argv[0] in ("annotate", "nothing-graded"):
        annotate(Path(argv[1]), Path(argv[2]), score_zero=argv[0] == "nothing-graded")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
