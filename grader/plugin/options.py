"""The judge's command-line options (declared in `grader.plugin.pytest_addoption`), read
once into a frozen value."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

from grader.plugin.gates import FIRST_RUN, Earlier
from grader.plugin.sandbox_session import lesson_from_args
from grader.sandbox import isolation


@dataclass(frozen=True)
class Options:
    """How this judge grades: the lesson (None: no lesson named, no sandbox) in its folder,
    the run's seed, where records go (a descriptor or a file; neither: nowhere), the
    sandbox's isolation, the file's time limit and each check's share of it (0: none), the
    folder sandboxes are made in, whether the lesson is a notebook, what is known of an
    earlier judge of this file and the student functions that stopped its sandbox."""

    lesson: str | None
    lesson_dir: str = "exercises"
    seed: int = 0
    records_fd: int | None = None
    records_path: str | None = None
    level: isolation.Level = "basic"
    timeout_s: float = 600.0
    check_share_s: float = 0.0
    sandboxes: str | None = None
    notebook: bool = False
    earlier: Earlier = FIRST_RUN
    stopped: frozenset[str] = frozenset()
    retried: frozenset[str] = frozenset()  # run again once after an outside signal already


def read(config: pytest.Config) -> Options:
    """The options `config` was given."""
    option = config.getoption
    fd = option("grader_records_fd")
    return Options(
        lesson=option("grader_lesson") or lesson_from_args(config.args),
        lesson_dir=os.path.realpath(option("lesson_dir") or "exercises"),
        seed=int(option("grader_seed")),
        records_fd=int(fd) if fd is not None else None,
        records_path=option("grader_records") or None,
        level=option("grader_isolation"),
        timeout_s=float(option("grader_timeout")),
        check_share_s=float(option("grader_check_share") or 0.0),
        sandboxes=option("grader_sandbox_dir") or None,
        notebook=bool(option("grader_notebook")),
        earlier=Earlier(
            only=names(option("grader_only")),
            passed=names(option("grader_passed")),
            unjudged=names(option("grader_unjudged")),
        ),
        stopped=names(option("grader_stopped")),
        retried=names(option("grader_retried")),
    )


def names(value: str | None) -> frozenset[str]:
    """The names of a comma-separated list (`--grader-only a,b`)."""
    return frozenset(n for n in (value or "").split(",") if n)
