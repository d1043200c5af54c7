"""The judge's compilation cache: JAX's persistent cache, in a folder only the judge writes.

Every judge (one per lesson file, a fork of the warm worker) compiles the same
reference programs: the suites' references, the inputs it generates, the
comparisons. JAX's persistent compilation cache keeps the compiled programs on
disk, so a later file, run or student of a batch loads them instead of
compiling again (`grader.sandbox.jax_cache.configure`, called in the judge before its
suite runs).

Where it lives: `$GRADE_COMPILATION_CACHE` when set (a folder; `off` or an
empty value turns the cache off), else `$XDG_CACHE_HOME/jax-lesson-grader/xla`,
else `~/.cache/jax-lesson-grader/xla`. The grader creates the folder owned by
its own user with mode 0711 (`MODE`) and uses it only when no one else owns
or may write it: a folder another user owns, a symlink or one that others may
write is not used (grading goes on without a cache). It holds one file per
compiled program, a few kilobytes each; JAX keys them by the program, the
compile options, the backend and the JAX version, so an upgrade starts new
entries beside the old ones. Clear it by deleting the folder (`clear`);
nothing else refers to it.

Who may write it: only the judge. A cached program is machine code the next
judge would load and run, so whoever can write the folder decides what later
gradings run. The sandbox turns the cache off before anything else, and once
its privileges are dropped reads the judge's entries (a `jnp.sin` the judge
compiled is loaded, not compiled again) and writes its own programs into a
cache of its own (`grader.sandbox.jax_cache.private`), never into the judge's folder. A
submission that turns writing to the judge's folder back on, or writes into it
directly, is stopped by the isolation level:
- `strict`: the folder is bound read-only into the sandbox's filesystem;
- `user`: the sandbox runs as another user, and the folder is its owner's
  alone to write (the sandbox reads it only where it can reach it: not under a
  private home such as `/root`);
- `basic`: the sandbox is the grader's own user, who can write the folder (as
  they can write the grader's installation): the cache there protects nothing
  and risks nothing beyond that user's own gradings. `grade batch` below `user`
  grades without the cache, so one student cannot plant a program for another
  (each sandbox then keeps its own programs in its memory alone,
  `grader.sandbox.jax_cache.in_memory`), loading only what the course's solutions
  compiled before the class (`grader.sandbox.shared_programs`, `grader.batch.warm`).

What the judge and the sandbox do with the folder they are given (cache in it; turn it
off, then cache in a folder of the sandbox's own that reads the judge's entries) is
`grader.sandbox.jax_cache`'s, below this module: the sandbox imports nothing of the runner.
One exception may be wired by `grade watch`: a folder for the whole session of one
student (`session_dir`), so that a regrading loads what the previous grading of the same
student's files compiled.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from grader.sandbox.jax_cache import ENV as ENV  # the variable that names the folder
from grader.sandbox.jax_cache import PRIVATE

OFF = ("", "off", "0", "none")
SUBFOLDER = ("jax-lesson-grader", "xla")
MODE = 0o711
"""The folder's mode: only its owner lists or writes it; others may read an entry whose
name they know (a hash of the program), which tells them nothing they did not have."""


def default_dir() -> str:
    """The cache folder this process would use ("" when turned off by `$GRADE_COMPILATION_CACHE`)."""
    chosen = os.environ.get(ENV)
    if chosen is not None:
        return "" if chosen.strip().lower() in OFF else os.path.abspath(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(os.path.abspath(base), *SUBFOLDER)


def unsafe(path: str) -> str:
    """Why `path` may not serve as the judge's cache ("" when it may): it must be a real
    folder (no symlink) owned by this user and writable by no one else."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a folder"
    if info.st_uid != os.geteuid():
        return f"{path} belongs to another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} may be written by other users (mode {stat.S_IMODE(info.st_mode):o})"
    return ""


def prepare(path: str) -> tuple[str, str]:
    """Create the cache folder (mode 0700) if needed; returns (the folder to use, "") or
    ("", why it is not used)."""
    if not path:
        return "", "turned off"
    try:
        os.makedirs(path, mode=MODE, exist_ok=True)
    except OSError as exc:
        return "", f"{path}: {exc.strerror}"
    why = unsafe(path)
    if why:
        return "", why
    if stat.S_IMODE(os.lstat(path).st_mode) != MODE:
        os.chmod(path, MODE)
    return path, ""


def session_dir(root: str) -> str:
    """For the owner of `grade watch`: a cache folder for one student's watch session, in the
    session's own scratch folder `root` (created, mode 0700; deleted with `root`). Passed to
    each sandbox of the session (`grader.sandbox.launch.start(own_cache=...)`) in place of a
    fresh folder, it lets a regrading load the programs the previous grading compiled. Only
    for one student's own session: never for a batch, or any folder that two students'
    gradings, or a later grading of another submission, would share."""
    path = os.path.join(root, PRIVATE)
    os.makedirs(path, mode=0o700, exist_ok=True)
    why = unsafe(path)
    if why:
        raise OSError(why)
    return path


@dataclass(frozen=True)
class Size:
    entries: int
    bytes: int


def size(path: str) -> Size:
    """How many compiled programs the folder holds, and their bytes."""
    entries, total = 0, 0
    try:
        with os.scandir(path) as found:
            for entry in found:
                if entry.is_file(follow_symlinks=False) and entry.name.endswith("-cache"):
                    entries += 1
                    total += entry.stat(follow_symlinks=False).st_size
    except OSError:
        pass
    return Size(entries, total)


def clear(path: str) -> None:
    """Delete the cache folder and everything in it (the next grading compiles again)."""
    if path and Path(path).is_dir() and not Path(path).is_symlink():
        shutil.rmtree(path)
