"""Build a Gradescope autograder bundle (the zip Gradescope's "Zip file upload" takes).

    grade gradescope-bundle autograder.zip [--only LESSONS] [--extras frameworks]
                            [--timeout S] [--seed N] [--require-isolation LEVEL]
                            [--course PATH] [--wheelhouse DIR]

`--only 03_jit` makes the autograder of a one-lesson assignment: only that
lesson's suite goes into the bundle, so an upload is graded (and its maximum
counted) on that lesson file alone.

The zip holds, at its root:
- `requirements.lock`: every package the grading environment holds, pinned (with
  hashes when `--wheelhouse` holds the wheels): the course's committed
  `requirements.lock`, or one made from the environment this command runs in, with
  `--extras` (`grader.course.lock` says how);
- `setup.sh`: run once by Gradescope; installs the Python the lock was made for
  (apt-get) and, into /autograder/venv, the lock's packages without resolving any
  (`--no-deps`), then the grader from the bundle, then `pip check`: a new JAX release
  changes no grade mid-term;
- `run_autograder`: run per submission; grades /autograder/submission (or its
  exercises/ folder when a whole repository was uploaded) with every check,
  hidden ones included, and writes /autograder/results/results.json
  (`grade --gradescope`). An upload is matched to the lesson files by name despite a
  browser's suffix (`03_jit (1).py`, `03_jit-2.py`, `03_jit(2).py` is graded as
  `03_jit.py`, and the results say so); when nothing matches, the results name the
  files received and the names expected (`grader.course.uploads`). Hidden checks are
  shown to students after grades are published. It refuses to grade below
  `--require-isolation` (default `user`: student code runs as a user of its own;
  Gradescope runs the autograder as root). If grading cannot start it still writes a
  results file saying why;
- the grader itself, from the installed grader: `grader/` with the full
  suites and its templates (not `grade mutate`, whose `equivalent.toml` describes the
  solutions), a `pyproject.toml` (carrying the course's `[tool.grade]`) and a README
  naming the lesson files. No solutions.

`setup.sh` honours AUTOGRADER_ROOT and AUTOGRADER_BASE_PYTHON, `run_autograder`
AUTOGRADER_ROOT, AUTOGRADER_PYTHON and AUTOGRADER_ARGS, so both can be tried locally
(tests/commands/test_gradescope_setup.py runs them); the zip is reproducible (sorted,
fixed dates) for the same lock.
"""

from __future__ import annotations

import shlex
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader import catalog
from grader.course import lock, tree
from grader.errors import GraderError
from grader.reports import labels
from grader.runner import policy
from grader.sandbox.isolation import Level

EXECUTABLE = {"setup.sh", "run_autograder"}
# Instructors' only: `grade mutate` (its equivalent.toml describes the solutions).
LEFT_OUT = ("mutate", "commands/mutate.py")
README = """# Gradescope autograder: Introduction to JAX

Built by `grade gradescope-bundle`. Upload this zip as the autograder of a
Gradescope programming assignment; `setup.sh` installs the grader and the
packages pinned in `requirements.lock`, and `run_autograder` grades each
submission.

Lesson files graded ({points} points in all): {lessons}.
"""
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def grade_args(
    timeout: float | None, seed: int | None, require_isolation: Level = policy.CLASS_REQUIRED
) -> str:
    args = ["--require-isolation", require_isolation]
    if timeout is not None:
        args += ["--timeout", f"{timeout:g}"]
    if seed is not None:
        args += ["--seed", str(seed)]
    return "".join(" " + shlex.quote(a) for a in args)


def build(
    out: Path,
    suites_dir: Path,
    *,
    extras: str = "frameworks",
    timeout: float | None = None,
    seed: int | None = None,
    require_isolation: Level = policy.CLASS_REQUIRED,
    specs: Sequence[catalog.ExerciseSpec] | None = None,
    course_dir: Path = Path("."),
    wheelhouse: Path | None = None,
) -> Built:
    """Write the zip of the suites of `specs` (default: every suite in `suites_dir`), with
    the course's lock (`lock.for_course`); returns its member names and where the lock
    came from. Raises one of `ERRORS`."""
    if specs is None:  # refuse malformed suites now, not on Gradescope
        specs = catalog.exercises(suites_dir)
    wanted = tuple(e.strip() for e in extras.split(",") if e.strip())
    pinned, lock_note = lock.for_course(course_dir, wanted, wheelhouse)
    with tempfile.TemporaryDirectory(prefix="grade-bundle-") as tmp:
        root = Path(tmp)
        suites = tree.suite_sources(suites_dir, {s.suite.name for s in specs})
        tree.copy_grader(root, suites, course=course_dir, leave_out=LEFT_OUT)
        (root / lock.LOCK_FILE).write_text(pinned.text, encoding="utf-8")
        readme = README.format(
            points=labels.number(sum(s.max_score for s in specs)),
            lessons=", ".join(s.filename for s in specs),
        )
        (root / "README.md").write_text(readme, encoding="utf-8")
        (root / "setup.sh").write_text(
            tree.render(
                "gradescope-setup.sh.j2",
                python=pinned.python,
                hashed=" and hash-checked" if "--hash=" in pinned.text else "",
            ),
            encoding="utf-8",
        )
        (root / "run_autograder").write_text(
            tree.render(
                "gradescope-run_autograder.j2",
                grade_args=grade_args(timeout, seed, require_isolation),
            ),
            encoding="utf-8",
        )
        names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
            for name in names:
                info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
                info.external_attr = (0o100755 if name in EXECUTABLE else 0o100644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                bundle.writestr(info, (root / name).read_bytes())
    return Built(names, lock_note)


@dataclass(frozen=True)
class Built:
    names: list[str]  # the zip's members
    lock: str  # where its requirements.lock came from


class BundleError(GraderError):
    """Where the bundle would go is wrong (its name, a file there, a missing folder)."""


def check_target(out: Path, suites_dir: Path, force: bool) -> None:
    """`BundleError` unless `out` is a .zip to write (`force`: over one there) and
    `suites_dir` a folder."""
    if out.suffix != ".zip":
        raise BundleError(f"{out}: give a file name ending in .zip")
    if out.exists() and not force:
        raise BundleError(f"{out} exists; pass --force to overwrite it")
    if not out.parent.is_dir():
        raise BundleError(f"{out.parent} does not exist; create it first")
    if not suites_dir.is_dir():
        raise BundleError(f"--suites {suites_dir}: no such folder")


def summary(out: Path, built: Built) -> str:
    """What `grade gradescope-bundle` says it wrote, and what to do with it."""
    suites = sum(n.startswith("grader/suites/test_") for n in built.names)
    return (
        f"wrote {out}: {len(built.names)} files, {suites} suite(s) with their hidden checks; "
        f"setup.sh {built.lock}; "
        "upload it as the assignment's autograder (Configure Autograder > Zip file upload)"
    )


# What `build` raises: each message says what to fix.
ERRORS = (BundleError, tree.TreeError, catalog.CatalogError, lock.LockError)
