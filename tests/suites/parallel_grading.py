"""Grade several folders with one suite, two subprocesses at a time (the machine has two
cores), for a test module that asserts on all of them.

    graded = Gradings("04_vmap", ["alternative", "python_loop"])  # starts grading now
    graded("python_loop").assert_statuses(failed={"test_batch_predict_no_growth"})

"solution" and "stub" name `solutions/` and `exercises/`; any other name is a folder
under `tests/fixtures/<lesson>/`. Each folder is graded once, in its own subprocess
(see `lesson_grading.grade`), and the result is shared by every test that asks for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from lesson_grading import FIXTURES, REPO, Graded, grade

WORKERS = 2


def folder(lesson: str, name: str) -> Path:
    return {"solution": REPO / "solutions", "stub": REPO / "exercises"}.get(
        name, FIXTURES / lesson / name
    )


class Gradings:
    def __init__(self, lesson: str, names: Iterable[str]) -> None:
        self.lesson = lesson
        self._pool = ThreadPoolExecutor(max_workers=WORKERS)
        self._futures: dict[str, Future[Graded]] = {
            name: self._pool.submit(grade, folder(lesson, name), lesson) for name in names
        }

    def __call__(self, name: str) -> Graded:
        return self._futures[name].result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
