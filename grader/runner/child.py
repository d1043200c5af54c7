"""What runs in the forked child: one exercise's suite, bounded and isolated.

The child is a fork of the warm worker. Before any student code runs it:
- starts a new session, so the worker can kill it and all it starts at once;
- sends stdout/stderr to the worker's capped pipe and closes stdin;
- caps its address space (memory), file sizes and core dumps;
- moves into a private temp folder and sees only the private copy of the
  lesson files: no `conftest.py`, ini file, `sitecustomize.py`, `.pth` or
  `jax.py` from the submission can load (the worker imported JAX before the
  submission existed, and pytest runs with `--noconftest`, no plugin
  autoloading and an ini file of ours);
- sets the number of simulated CPU devices before JAX's backend starts;
- points JAX's persistent compilation cache at the judge's folder
  (`grader.runner.cache`), which its sandbox never uses.
A notebook lesson is run in a kernel (started here, so bounded the same way)
and turned into the module the suite imports (`grader.notebooks.grading_step`).
Then it runs pytest on the suite with `grader.plugin` (the judge: it forks the
sandbox that imports the lesson file, at the isolation level the parent
detected, and writes its records to the worker's pipe) and exits with
`os._exit`, never returning into the worker's loop.
"""

from __future__ import annotations

import os
import resource
import sys
import traceback
from typing import NoReturn

from grader.protocol.worker_messages import Request
from grader.sandbox import descriptors

FILE_SIZE_LIMIT = 256 << 20
SANDBOX_CACHE_ENV = "GRADE_SESSION_SANDBOX_CACHE"
"""Set by `handle.WorkerHandle(sandbox_cache=...)` alone (one student's `grade watch` session): the
folder every sandbox of the session caches its programs in (`grader.runner.cache.session_dir`),
so a regrading loads what the previous one compiled. Removed from the judge's environment
before the suite runs; never inherited from the grader's own environment."""


def _limit(kind: int, value: int) -> None:
    _soft, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, hard if hard != resource.RLIM_INFINITY else value))


def _sandboxes_cache_in(folder: str) -> None:
    """Every sandbox this judge starts caches its programs in `folder` (the session's)."""
    import functools

    from grader.sandbox import launch

    launch.start = functools.partial(launch.start, own_cache=folder)


def pytest_args(request: Request, records_fd: int) -> list[str]:
    work = request.workdir
    return [
        request.suite,
        "-c",
        os.path.join(work, "pytest.ini"),
        "--rootdir",
        work,
        "--noconftest",
        # the suite is imported from its own path, whatever `grader` is installed: a course's
        # suites in its working tree (`--suites PATH`) are graded as they are there
        "--import-mode=importlib",
        "-p",
        "grader.plugin",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:terminal",
        "-p",
        "no:faulthandler",
        "-p",
        "no:stepwise",
        "-s",
        "--basetemp",
        os.path.join(work, "tmp"),
        "--lesson-dir",
        request.lesson_dir,
        "--grader-records-fd",
        str(records_fd),
        "--grader-seed",
        str(request.seed),
        "--grader-isolation",
        request.isolation,
        "--grader-timeout",
        str(request.timeout_s),
        *(["--grader-notebook"] if request.notebook else []),
        *(["--maxfail", str(request.maxfail)] if request.maxfail else []),
        *(["--grader-sandbox-dir", request.sandbox_dir] if request.sandbox_dir else []),
        *(["--grader-check-share", str(request.check_share_s)] if request.check_share_s else []),
        *_names("--grader-only", request.only),
        *_names("--grader-passed", request.passed),
        *_names("--grader-unjudged", request.unjudged),
        *_names("--grader-stopped", request.stopped),
        *_names("--grader-retried", request.retried),
    ]


def _names(option: str, names: tuple[str, ...]) -> list[str]:
    return [option, ",".join(names)] if names else []


def _own_streams(out_fd: int, records_fd: int) -> None:
    """Standard input from /dev/null, output to the worker's capped pipe `out_fd`, and no
    other descriptor but `records_fd`: nothing of the worker's, its reply pipe to `grade`
    above all (`grader.sandbox.descriptors`)."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.close(out_fd)
    os.close(devnull)
    descriptors.keep_only({0, 1, 2, records_fd})
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115


def run(request: Request, out_fd: int, records_fd: int, base_vm: int) -> NoReturn:
    """`records_fd` is the write end of the worker's record pipe: the judge's alone."""
    code = 70
    try:
        os.setsid()
        _own_streams(out_fd, records_fd)
        _limit(resource.RLIMIT_AS, base_vm + request.memory_bytes)
        _limit(resource.RLIMIT_FSIZE, FILE_SIZE_LIMIT)
        _limit(resource.RLIMIT_CORE, 0)

        work = request.workdir
        with open(os.path.join(work, "pytest.ini"), "w", encoding="utf-8") as ini:
            ini.write("[pytest]\naddopts =\npython_files = test_*.py\n")
        os.makedirs(os.path.join(work, "cwd"), exist_ok=True)
        os.chdir(os.path.join(work, "cwd"))
        os.environ.update(
            {
                "HOME": os.path.join(work, "cwd"),
                "TMPDIR": os.path.join(work, "tmp"),
                "MPLBACKEND": "Agg",
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                "JAX_PLATFORMS": "cpu",
            }
        )
        os.makedirs(os.environ["TMPDIR"], exist_ok=True)
        # Only the interpreter's own paths: no '' (cwd), no submission folder.
        sys.path[:] = [p for p in sys.path if p and os.path.isabs(p) and p != os.getcwd()]

        import jax

        if request.devices > 1:
            jax.config.update("jax_num_cpu_devices", request.devices)  # type: ignore[no-untyped-call]
        session_cache = os.environ.pop(SANDBOX_CACHE_ENV, "")
        if request.cache_dir:  # the judge's alone: its sandbox turns it off (grader.runner.cache)
            from grader.sandbox import jax_cache

            jax_cache.configure(request.cache_dir)
            if session_cache:
                _sandboxes_cache_in(session_cache)
        else:  # no folder (a batch below `user`): the class's shared programs, if any
            from grader.sandbox import jax_cache, shared_programs

            if shared_programs.loaded():
                jax_cache.in_memory()

        import pytest

        # A notebook is run in the sandbox, before its module is imported (grader.plugin).
        code = int(pytest.main(pytest_args(request, records_fd)))
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
