"""What grading may do on this machine: the options asked for, the isolation in force, the
suites kept from other users, and where the warm worker imports from.

The isolation level (`grader.sandbox.isolation`) is detected once per process, in a
throwaway child, and sent with every request; `Options` may force a level or require one,
and every `Report` says which was in force (`grader.runner.engine`).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from grader.catalog import ExerciseSpec
from grader.errors import GraderError
from grader.runner import cache
from grader.sandbox import exposure, isolation
from grader.sandbox.isolation import Isolation, Level

IsolationChoice = Literal["auto", "strict", "user", "basic"]
ISOLATION_CHOICES: tuple[IsolationChoice, ...] = ("auto", "strict", "user", "basic")

# The options' defaults: `Options` and every command that declares an option (its help too)
# read them here.
DEFAULT_SEED = 0
DEFAULT_MEMORY_GIB = 4  # address space a grading process may add to the warm worker's
DEFAULT_ISOLATION: IsolationChoice = "auto"  # the strongest level this machine allows
DEFAULT_REQUIRED: Level = "basic"  # refuse to grade below this level
CLASS_REQUIRED: Level = "user"  # ... when grading others' work: a class, a Gradescope course


@dataclass(frozen=True)
class Options:
    seed: int = DEFAULT_SEED
    timeout_s: float | None = None  # overrides each suite's TIMEOUT
    memory_bytes: int = DEFAULT_MEMORY_GIB << 30  # what a child may add to the worker's
    output_cap: int = 32 << 10
    jobs: int = 1
    isolation: IsolationChoice = DEFAULT_ISOLATION
    require_isolation: Level = DEFAULT_REQUIRED
    maxfail: int = 0  # stop a file's suite after this many failed checks (0: run them all)
    check_share: float = 0.25  # of the file's limit, each check's CPU time (0: no share)
    cache_dir: str | None = None  # the judge's compilation cache: None the default folder
    # (grader.runner.cache.default_dir), "" none


# -- isolation --------------------------------------------------------------------------

FEATURES: dict[Level, str] = {
    "user": "a user of its own for the sandbox",
    "strict": "namespaces of its own for the sandbox (PID, network, mount)",
}
"""What each level adds to the one below it."""


class IsolationUnavailable(GraderError):
    """The isolation asked for (or required) is more than this machine allows."""


@functools.cache
def detected() -> Isolation:
    """The strongest level this machine allows (a throwaway child tries it, once per process)."""
    return isolation.detect()


def isolation_for(options: Options, found: Isolation | None = None) -> Isolation:
    """The level grading runs at, and what is missing, given the strongest level this machine
    allows (`found`; default: `detected()`); `IsolationUnavailable` when `options` force or
    require more than that."""
    found = detected() if found is None else found
    chosen = found
    if options.isolation != "auto" and options.isolation != found.level:
        wanted: Level = options.isolation
        if not isolation.at_least(found.level, wanted):
            raise IsolationUnavailable(
                f"--isolation {wanted}: this machine allows only '{found.level}' isolation; "
                f"missing: {'; '.join(found.missing)}"
            )
        above = isolation.LEVELS[
            isolation.LEVELS.index(wanted) + 1 : isolation.LEVELS.index(found.level) + 1
        ]
        turned_off = tuple(f"{FEATURES[level]} (not used: --isolation {wanted})" for level in above)
        chosen = Isolation(wanted, turned_off + found.missing)
    if chosen.level == "user" and os.geteuid() == 0:
        chosen = _user_reaches(chosen, found, options)
    required = options.require_isolation
    if not isolation.at_least(chosen.level, required):
        what = "detected" if chosen is found else "chosen"
        raise IsolationUnavailable(
            f"--require-isolation {required}: the {what} isolation is '{chosen.level}', below "
            f"'{required}'; missing: {'; '.join(chosen.missing)}. Grade where the grader may "
            "switch users (as root, in a container) or lower --require-isolation."
        )
    return chosen


def _user_reaches(chosen: Isolation, found: Isolation, options: Options) -> Isolation:
    """`chosen` (`user`) once a user of its own was seen to reach what a sandbox needs
    (`isolation.closed_to_sandbox`): the installation (`detect` tried it where it found
    `user`; tried here when `user` is forced below `strict`: `IsolationUnavailable` naming
    the folder that stops it), and the judge's compilation cache (where it cannot, a word
    in `missing`: each sandbox compiles the judge's programs again, nothing else changes)."""
    if found.level != "user":
        closed = isolation.closed_to_sandbox(isolation.sandbox_reads())
        if closed is not None:
            raise IsolationUnavailable(f"--isolation user: {closed}; fix: {closed.fix}.")
    wanted = cache.default_dir() if options.cache_dir is None else options.cache_dir
    folder = _nearest_existing(wanted) if wanted else ""
    closed = isolation.closed_to_sandbox(enter=(folder,)) if folder else None
    if closed is None:
        return chosen
    note = (
        f"a compilation cache the sandbox can read ({closed}: each sandbox compiles "
        f"the judge's programs again; ${cache.ENV} may name a folder other users may enter)"
    )
    return Isolation(chosen.level, (*chosen.missing, note))


def _nearest_existing(path: str) -> str:
    """`path`, or its nearest folder that exists (the cache's is made when grading starts)."""
    while path and not os.path.isdir(path):
        parent = os.path.dirname(path)
        if parent == path:
            return ""
        path = parent
    return path


def guard_suites(
    found: Isolation, specs: Iterable[ExerciseSpec], *also: exposure.Guard
) -> list[str]:
    """At `user` without Landlock, close the hidden suites to other users (the sandbox's uid)
    and refuse the `also` folders that are open to them (`grader.sandbox.exposure`); what
    this process writes from then on is closed to them too (umask 077). Returns the notes of what was closed; `IsolationUnavailable` naming what stays open."""
    if not exposure.applies(found):
        return []
    os.umask(os.umask(0) | 0o077)  # what the grading writes from now on (reports) stays closed
    folders = sorted({s.suite.parent for s in specs})
    guards = [exposure.Guard(f, "the hidden suites", repair=True) for f in folders]
    try:
        return exposure.secure([*guards, *also])
    except exposure.Exposed as exc:
        raise IsolationUnavailable(str(exc)) from None


# -- the compilation cache and the imports ----------------------------------------------


def cache_dir(options: Options) -> str:
    """The compilation cache the judges use ("" for none: turned off, or a folder that is
    not safely the grader's own; see `grader.runner.cache`)."""
    wanted = cache.default_dir() if options.cache_dir is None else options.cache_dir
    return cache.prepare(wanted)[0]


def import_path() -> list[str]:
    """Where the worker imports from: the grader's own source root, then this process's
    `sys.path` (PYTHONPATH, `.pth` files and user site included: the worker runs isolated,
    `-I`, so it would see none of them), without '' and the working folder, where a
    submission may be."""
    here = os.path.realpath(os.getcwd())
    paths = [str(Path(__file__).resolve().parents[2])]
    for entry in sys.path:
        usable = entry and os.path.isabs(entry) and os.path.realpath(entry) != here
        if usable and entry not in paths:
            paths.append(entry)
    return paths
