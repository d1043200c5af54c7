"""The run history: each lesson file's score, run after run, kept in the working folder.

`grade` appends one JSON line per run to `.grade/history.jsonl`: when it ran (UTC), the seed,
and each graded lesson file's score and maximum. The HTML report draws the last runs as a
small chart. The file is the student's: it may be edited, truncated or damaged, so `load`
skips every line it cannot read, and `record` never raises (a history that cannot be written
must not cost a grading run). Only the last `KEEP` runs are kept.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from grader.model import Report

FOLDER = ".grade"
FILE = "history.jsonl"
KEEP = 50  # runs kept (and drawn)
# Read at most this much of the end of the file: a damaged or padded history stays cheap.
READ_LIMIT = 512 * 1024
NAME_LIMIT = 100  # a lesson file's name longer than this is not one of ours


@dataclass(frozen=True)
class FileScore:
    name: str  # the lesson file's stem: "03_jit"
    score: float
    max_score: float


@dataclass(frozen=True)
class Run:
    time: str  # ISO 8601, UTC: "2026-12-03T15:50:12Z"
    seed: int
    files: tuple[FileScore, ...]  # the lesson files graded in this run, in report order

    def to_json(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "seed": self.seed,
            "files": {f.name: [f.score, f.max_score] for f in self.files},
        }

    @classmethod
    def from_json(cls, doc: object) -> Run | None:
        """The run a line holds, or None when it is not one (any damage at all)."""
        if not isinstance(doc, dict):
            return None
        time, seed, files = doc.get("time"), doc.get("seed"), doc.get("files")
        if not isinstance(time, str) or len(time) > 40:
            return None
        if not isinstance(seed, int) or isinstance(seed, bool) or not isinstance(files, dict):
            return None
        scores = []
        for name, value in files.items():
            score = _score(name, value)
            if score is None:
                return None
            scores.append(score)
        return cls(time=time, seed=seed, files=tuple(scores))


def _score(name: object, value: object) -> FileScore | None:
    if not isinstance(name, str) or not name or len(name) > NAME_LIMIT:
        return None
    if not isinstance(value, list) or len(value) != 2:
        return None
    score, max_score = value
    numbers = (score, max_score)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
        return None
    if not all(math.isfinite(v) for v in numbers) or max_score < 0:
        return None
    return FileScore(name, float(score), float(max_score))


def path(folder: str | Path) -> Path:
    return Path(folder) / FOLDER / FILE


def run_of(report: Report, now: datetime | None = None) -> Run:
    """The history line for `report` (graded now, unless `now` says when)."""
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return Run(
        time=moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        seed=report.seed,
        files=tuple(FileScore(e.name, e.score, e.max_score) for e in report.exercises),
    )


def _open(file: Path, flags: int) -> int:
    """A descriptor for `file`, which must be a regular file in a real folder.

    Not through a link (a link planted in the working folder must not make the grader write
    elsewhere, say into a results file), and not a FIFO or a device (which would block or
    never end)."""
    if file.parent.is_symlink():
        raise OSError(errno.ELOOP, "the history folder is a link", str(file.parent))
    fd = os.open(file, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "the history is not a regular file", str(file))
    return fd


def _tail(fd: int) -> list[str]:
    """The lines of the last `READ_LIMIT` bytes (the first of them dropped if it was cut)."""
    size = os.fstat(fd).st_size
    start = max(0, size - READ_LIMIT)
    data = os.pread(fd, READ_LIMIT, start)
    lines = data.decode("utf-8", errors="replace").splitlines()
    return lines[1:] if start else lines


def _parse(line: str) -> Run | None:
    try:
        return Run.from_json(json.loads(line))
    except ValueError:  # not JSON (json.JSONDecodeError is a ValueError)
        return None
    except RecursionError:  # "[[[[...": deeply nested garbage
        return None


def load(folder: str | Path) -> list[Run]:
    """The recorded runs, oldest first, at most `KEEP`; [] when there is no history or it
    cannot be read. Lines that are not a run are skipped."""
    try:
        fd = _open(path(folder), os.O_RDONLY)
    except OSError:
        return []
    try:
        lines = _tail(fd)
    except OSError:
        return []
    finally:
        os.close(fd)
    runs = [run for run in map(_parse, lines) if run is not None]
    return runs[-KEEP:]


def record(report: Report, folder: str | Path, now: datetime | None = None) -> None:
    """Add this run to the history in `folder` (`.grade/history.jsonl`); never raises.

    Appends one line; once the file holds more than `KEEP` lines (or more than `READ_LIMIT`
    bytes) it is rewritten, through a temporary file and a rename, with the last `KEEP` runs
    that could be read.
    """
    if not report.exercises:
        return
    file = path(folder)
    try:
        line = json.dumps(run_of(report, now).to_json(), separators=(",", ":"), allow_nan=False)
        file.parent.mkdir(exist_ok=True)
        fd = _open(file, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = "\n" + line  # a line cut short stays alone, and is skipped
            os.write(fd, (line + "\n").encode("utf-8"))
            lines = _tail(fd)
            too_big = os.fstat(fd).st_size > READ_LIMIT
        finally:
            os.close(fd)
        if len(lines) > KEEP or too_big:
            _rewrite(file, [run for run in map(_parse, lines) if run is not None][-KEEP:])
    except (OSError, ValueError):
        return  # a history that cannot be written must not cost the grading run


def _rewrite(file: Path, runs: list[Run]) -> None:
    """Replace the file with `runs`, all at once (a reader never sees half a file). Two
    gradings trimming at the same moment may lose one of their lines: a history, not a record
    of marks."""
    temporary = file.with_name(f"{FILE}.{os.getpid()}.tmp")
    text = "".join(json.dumps(run.to_json(), separators=(",", ":")) + "\n" for run in runs)
    fd = _open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
        os.replace(temporary, file)
    finally:
        temporary.unlink(missing_ok=True)
