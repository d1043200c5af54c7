"""Find the student's own code in a traceback; cut everything else.

Students see the line of their file that failed, never grader or JAX internals.
"""

from __future__ import annotations

import linecache
import os
import traceback
from collections.abc import Iterator

from grader.model import SourceLine


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def student_frames(exc: BaseException, lesson_dir: str) -> list[SourceLine]:
    """Frames of files under `lesson_dir`, outermost first, across chained exceptions."""
    root = os.path.realpath(lesson_dir) + os.sep
    frames: list[SourceLine] = []
    for link in _chain(exc):
        for summary in traceback.extract_tb(link.__traceback__):
            path = os.path.realpath(summary.filename)
            if path.startswith(root) and summary.lineno is not None:
                code = (summary.line or linecache.getline(path, summary.lineno)).strip()
                frames.append(SourceLine(path[len(root) :], summary.lineno, code))
        if frames:
            break
    return frames


def innermost_student_line(exc: BaseException, lesson_dir: str) -> SourceLine | None:
    frames = student_frames(exc, lesson_dir)
    return frames[-1] if frames else None


def raised_in_student_code(exc: BaseException, lesson_dir: str) -> bool:
    """True when the exception's innermost frame is the student's own line."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return False
    root = os.path.realpath(lesson_dir) + os.sep
    return os.path.realpath(last.tb_frame.f_code.co_filename).startswith(root)
