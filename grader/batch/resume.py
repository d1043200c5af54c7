"""Which students `grade batch` need not grade again: their results are for these files.

After a student's reports are written, OUT/resume/NAME.json records what they were graded
from (`key`): a content hash of their lesson files (names and bytes), the lesson files
asked for with a hash of each suite, the grader's version, the isolation level and the
options that change results (seed, limits, maxfail, check share). A later `grade batch`
keeps a student whose record equals the key of their files now and whose results are
readable (`kept`); `--regrade` grades everyone again. A student the grader could not grade
(NAME.error.txt) has no record: they are graded again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from grader import atomic, catalog
from grader.batch.jobs import Job
from grader.classroom import roster
from grader.runner import policy
from grader.version import __version__

RESUME = "resume"  # OUT/resume/NAME.json


def key(
    job: Job, specs: list[catalog.ExerciseSpec], options: policy.Options, level: str
) -> dict[str, Any]:
    """What the student's results depend on (the module's docstring)."""
    submission = hashlib.sha256()
    for lesson, path in job.files:
        submission.update(f"{lesson}\0{Path(path).name}\0".encode())
        try:
            submission.update(hashlib.sha256(Path(path).read_bytes()).digest())
        except OSError as exc:  # unreadable now: graded again, and told why by the grading
            submission.update(f"unreadable: {exc}".encode())
    return {
        "grader_version": __version__,
        "submission": submission.hexdigest(),
        "suites": {s.name: _digest(s.suite) for s in specs},
        "isolation": level,
        "options": {
            "seed": options.seed,
            "timeout_s": options.timeout_s,
            "memory_bytes": options.memory_bytes,
            "output_cap": options.output_cap,
            "maxfail": options.maxfail,
            "check_share": options.check_share,
        },
    }


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def path(out: Path, student: str) -> Path:
    return out / RESUME / f"{student}.json"


def kept(out: Path, student: str, wanted: dict[str, Any]) -> bool:
    """The student's results in OUT are readable and were graded from `wanted`."""
    try:
        recorded = json.loads(path(out, student).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    results = out / roster.STUDENTS / f"{student}.json"
    return (
        recorded == wanted
        and roster.unreadable(results) is None
        and (out / roster.STUDENTS / f"{student}.html").is_file()
    )


def record(out: Path, student: str, graded_from: dict[str, Any]) -> None:
    """Note what the student's results (just written) were graded from."""
    target = path(out, student)
    target.parent.mkdir(exist_ok=True)
    atomic.write_text(target, json.dumps(graded_from, indent=2, sort_keys=True) + "\n")
