"""JAX's persistent compilation cache as the judge and the sandbox configure it.

Which folder is the judge's, and whether it is safely the grader's own, is
`grader.runner.cache`'s (the parent's side); this module is what the processes
that compile do with the folder they are given: the judge caches every program in
it (`configure`), and its sandbox turns it off before anything else (`disable`),
then caches in a folder of its own, reading the judge's entries (`private`).

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
In a batch, both `get`s (the folder's and the memory's) look last in the programs the
course's solutions compiled before the class (`grader.sandbox.shared_programs`), which the
warm worker loaded before the fork; no `put` reaches them.
One exception may be wired by `grade watch`: a folder for the whole session of
one student (`grader.runner.cache.session_dir`), so that a regrading loads what the
previous grading of the same student's files compiled.

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
import sys
from pathlib import Path

from grader.sandbox import shared_programs

ENV = "GRADE_COMPILATION_CACHE"
"""The variable naming the judge's folder (`grader.runner.cache.default_dir`); the sandbox
forgets it, with JAX's own, before anything else."""
FORGOTTEN = ("JAX_COMPILATION_CACHE_DIR", ENV)
"""Removed from the sandbox's environment first thing (`disable`)."""

NO_XLA_CACHES = "none"
"""`jax_persistent_cache_enable_xla_caches` for the judge and the sandbox: by default JAX
also points XLA's GPU autotuning cache into the cache folder, and that folder's path then
enters every program's key: a sandbox caching in a folder of its own would find none of
the judge's programs (and on a GPU, XLA would write there beside JAX's entries)."""


def configure(path: str) -> None:
    """In the judge, before its suite runs (and before it compiles anything): cache every
    program JAX compiles in `path`, whatever its size or compile time."""
    _cache_every_program(path)


def _cache_every_program(path: str | None) -> None:
    """JAX's persistent cache on, for every program whatever its size or compile time, in
    `path` (None: no folder, the cache object is installed by `in_memory`)."""
    import jax

    update = jax.config.update
    update("jax_compilation_cache_dir", path)  # type: ignore[no-untyped-call]
    update("jax_enable_compilation_cache", True)  # type: ignore[no-untyped-call]
    update("jax_persistent_cache_min_compile_time_secs", 0.0)  # type: ignore[no-untyped-call]
    update("jax_persistent_cache_min_entry_size_bytes", -1)  # type: ignore[no-untyped-call]
    update("jax_persistent_cache_enable_xla_caches", NO_XLA_CACHES)  # type: ignore[no-untyped-call]


def configured_dir() -> str:
    """The folder this process's JAX caches in ("" when none), without importing JAX."""
    jax = sys.modules.get("jax")
    if jax is None:
        return ""
    try:
        value = jax.config.jax_compilation_cache_dir
    except AttributeError:
        return ""
    return str(value) if value else ""


PRIVATE = "xla"
"""The sandbox's own cache: this folder in its workdir (`private_dir`)."""


def private_dir(workdir: str) -> str:
    """In the judge, when it starts a sandbox: create the sandbox's own cache folder (empty,
    mode 0700) in the sandbox's `workdir` and return it; the sandbox is given it to write."""
    path = os.path.join(workdir, PRIVATE)
    os.makedirs(path, mode=0o700)
    return path


def disable() -> None:
    """In the sandbox, before the student's module is imported: no persistent cache, and
    no variable naming one."""
    for name in FORGOTTEN:
        os.environ.pop(name, None)
    jax = sys.modules.get("jax")
    if jax is None:
        return
    jax.config.update("jax_compilation_cache_dir", None)
    jax.config.update("jax_enable_compilation_cache", False)


def private(own: str, judge: str) -> str:
    """In the sandbox, after its privileges are dropped: cache every program JAX compiles
    in `own` (the sandbox's folder), and load from the judge's folder `judge` too when this
    process may reach it ("" for none). Returns how: "layered" (both), "private" (JAX's
    private API is missing: `own` alone), "memory" (no folder is given: the programs are
    kept in this process's memory, `in_memory`), "" (no cache at all)."""
    if not own:
        return "memory" if in_memory() else ""
    configure(own)
    reachable = judge if judge and os.access(judge, os.X_OK) else ""
    return "layered" if _install_layered(own, reachable) else "private"


def in_memory() -> bool:
    """Cache the programs this process compiles in its own memory, and nowhere else.

    Where no folder may be given (the cache turned off, or `grade batch` below `user`,
    where every sandbox is the grader's own user and could write any folder another
    student's grading reads), a program a student's function compiles again within one
    grading (a `jax.jit` built inside the function a check calls several times: a new
    function object, the same program) is still compiled once: JAX's persistent-cache
    path keys it by the program, its options, the backend and JAX's version, and loads
    it from a dict of this process. Nothing is written to disk and no other process reads
    it: it ends with the process. Returns False where JAX's private API is missing."""
    try:
        from jax._src import compilation_cache as jax_cache
        from jax._src.compilation_cache_interface import CacheInterface

        mutex = jax_cache._cache_initialized_mutex
        jax_cache.reset_cache()
    except (ImportError, AttributeError):
        return False

    class Memory(CacheInterface):
        """Entries in a dict of this process: JAX's cache interface without a folder."""

        def __init__(self) -> None:
            self._path = Path("<memory>")  # JAX logs it when the cache is reset
            self._entries: dict[str, bytes] = {}

        def get(self, key: str) -> bytes | None:
            found = self._entries.get(key)
            return found if found is not None else shared_programs.get(key)

        def put(self, key: str, value: bytes) -> None:
            self._entries[key] = value

    _cache_every_program(None)
    with mutex:
        jax_cache._cache = Memory()
        jax_cache._cache_initialized = True
    return True


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
                    found = None
            return found if found is not None else shared_programs.get(key)

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
