"""The judge's compilation cache: JAX's persistent cache, in a folder only the judge writes.

Every judge (one per lesson file, a fork of the warm worker) compiles the same
reference programs: the suites' references, the inputs it generates, the
comparisons. JAX's persistent compilation cache keeps the compiled programs on
disk, so a later file, run or student of a batch loads them instead of
compiling again (`configure`, called in the judge before its suite runs).

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
cache of its own (`private`, below), never into the judge's folder. A
submission that turns writing to the judge's folder back on, or writes into it
directly, is stopped by the isolation level:
- `strict`: the folder is bound read-only into the sandbox's filesystem;
- `user`: the sandbox runs as another user, and the folder is its owner's
  alone to write (the sandbox reads it only where it can reach it: not under a
  private home such as `/root`);
- `basic`: the sandbox is the grader's own user, who can write the folder (as
  they can write the grader's installation): the cache there protects nothing
  and risks nothing beyond that user's own gradings. `grade batch` below `user`
  grades without the cache, so one student cannot plant a program for another.

The sandbox's own cache (`private`). A student's program compiled again and
again within one grading (a `jax.jit` applied inside the function a check calls
several times: a new function object each call, the same program) is compiled
once and loaded afterwards. Each sandbox caches in a folder of its own,
`<the sandbox's workdir>/xla` (`private_dir`): the judge creates it empty when it
starts the sandbox, it is writable by the sandbox alone (`strict`: bound
read-write into its filesystem, the only place beside its lesson and scratch
folders; `user`: owned by the sandbox's user, mode 0700),
and it is deleted with that workdir when the sandbox is closed
(`grader.plugin`'s `stop_sandbox`). It holds under a megabyte (seen here: 03_jit
about 25 entries, 0.1 MB; ex4 0.5 MB; ex5 0.44 MB; ex2 up to 195 entries, 0.62 MB). What a
submission writes there is loaded by that same sandbox only: never by the
judge (which caches in its own folder and never opens this one), another
student's sandbox or a later grading. It is on exactly when the judge's cache
is (`$GRADE_COMPILATION_CACHE=off` and `grade batch` below `user` turn both off).
One exception may be wired by `grade watch`: a folder for the whole session of
one student (`session_dir`), so that a regrading loads what the previous
grading of the same student's files compiled.

How the two are layered: JAX takes one cache folder, so the sandbox installs
its own cache object (`Layered`: `get` looks in the private folder, then in the
judge's; `put` writes the private folder only) in place of the one JAX would
build. Chosen over a private folder seeded with symlinks to the judge's entries
because it costs nothing at start (a link per entry: 618 links took 50-64 ms per
sandbox here, under load, plus a chown each at `user`),
sees the entries the judge adds while the sandbox runs, and never opens a path
in the judge's folder for writing (JAX's `LRUCache.put` checks `exists()` then
`write_bytes`, which follows a link that dangles once the judge's entry is
gone). It uses JAX's private API (`jax._src.compilation_cache._cache`); where
that is missing, the sandbox caches in its private folder alone (a plain
`jax_compilation_cache_dir`, without the judge's entries).
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

ENV = "GRADE_COMPILATION_CACHE"
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


NO_XLA_CACHES = "none"
"""`jax_persistent_cache_enable_xla_caches` for the judge and the sandbox: by default JAX
also points XLA's GPU autotuning cache into the cache folder, and that folder's path then
enters every program's key: a sandbox caching in a folder of its own would find none of
the judge's programs (and on a GPU, XLA would write there beside JAX's entries)."""


def configure(path: str) -> None:
    """In the judge, before its suite runs (and before it compiles anything): cache every
    program JAX compiles in `path`, whatever its size or compile time."""
    import jax

    update = jax.config.update
    update("jax_compilation_cache_dir", path)  # type: ignore[no-untyped-call]
    update("jax_enable_compilation_cache", True)  # type: ignore[no-untyped-call]
    update("jax_persistent_cache_min_compile_time_secs", 0.0)  # type: ignore[no-untyped-call]
    update("jax_persistent_cache_min_entry_size_bytes", -1)  # type: ignore[no-untyped-call]
    update("jax_persistent_cache_enable_xla_caches", NO_XLA_CACHES)  # type: ignore[no-untyped-call]


PRIVATE = "xla"
"""The sandbox's own cache: this folder in its workdir (`private_dir`)."""


def private_dir(workdir: str) -> str:
    """In the judge, when it starts a sandbox: create the sandbox's own cache folder (empty,
    mode 0700) in the sandbox's `workdir` and return it; the sandbox is given it to write."""
    path = os.path.join(workdir, PRIVATE)
    os.makedirs(path, mode=0o700)
    return path


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


def private(own: str, judge: str) -> str:
    """In the sandbox, after its privileges are dropped: cache every program JAX compiles
    in `own` (the sandbox's folder), and load from the judge's folder `judge` too when this
    process may reach it ("" for none). Returns how: "layered" (both), "private" (JAX's
    private API is missing: `own` alone), "" (no cache: `own` is not given)."""
    if not own:
        return ""
    import jax

    update = jax.config.update
    update("jax_compilation_cache_dir", own)  # type: ignore[no-untyped-call]
    update("jax_enable_compilation_cache", True)  # type: ignore[no-untyped-call]
    update("jax_persistent_cache_min_compile_time_secs", 0.0)  # type: ignore[no-untyped-call]
    update("jax_persistent_cache_min_entry_size_bytes", -1)  # type: ignore[no-untyped-call]
    update("jax_persistent_cache_enable_xla_caches", NO_XLA_CACHES)  # type: ignore[no-untyped-call]
    reachable = judge if judge and os.access(judge, os.X_OK) else ""
    return "layered" if _install_layered(own, reachable) else "private"


def _install_layered(own: str, judge: str) -> bool:
    """Put a `Layered` cache in place of the one JAX would build from its configuration."""
    try:
        from jax._src import compilation_cache as jax_cache
        from jax._src import lru_cache
        from jax._src.compilation_cache_interface import CacheInterface

        mutex = jax_cache._cache_initialized_mutex
        suffix = str(getattr(lru_cache, "_CACHE_SUFFIX", "-cache"))
        jax_cache.reset_cache()
    except (ImportError, AttributeError):
        return False

    class Layered(CacheInterface):
        """Reads the sandbox's folder, then the judge's; writes the sandbox's only."""

        def __init__(self) -> None:
            self._own = lru_cache.LRUCache(own, max_size=-1)
            self._path = self._own._path
            self._judge = Path(judge) if judge else None

        def get(self, key: str) -> bytes | None:
            found = self._own.get(key)
            if found is None and self._judge is not None:
                try:
                    found = (self._judge / f"{key}{suffix}").read_bytes()
                except OSError:
                    return None
            return found

        def put(self, key: str, value: bytes) -> None:
            self._own.put(key, value)

    try:
        layered = Layered()
    except Exception:  # another JAX's LRUCache: JAX builds its own cache from the config
        return False
    with mutex:
        jax_cache._cache = layered
        jax_cache._cache_initialized = True
    return True


def disable() -> None:
    """In the sandbox, before the student's module is imported: no persistent cache."""
    import sys

    jax = sys.modules.get("jax")
    if jax is None:
        return
    jax.config.update("jax_compilation_cache_dir", None)
    jax.config.update("jax_enable_compilation_cache", False)


def configured_dir() -> str:
    """The folder this process's JAX caches in ("" when none), without importing JAX."""
    import sys

    jax = sys.modules.get("jax")
    if jax is None:
        return ""
    try:
        value = jax.config.jax_compilation_cache_dir
    except AttributeError:
        return ""
    return str(value) if value else ""


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
