"""Grader code the judge may ask the sandbox to run: observations, never verdicts.

A probe is a function of `grader.probes` (one module per check kind), registered with
`@probe`; the check kind's module in `grader.checks` asks for it and judges. It runs
in the sandbox next to the student's code (tracing it, counting its traces,
snapshotting its module) and returns plain data; the judge decides what the
observation means. Student code shares the sandbox's process, so it can tamper
with what a probe observes: a probe's result is evidence about the student's own
functions, never about the references, which stay in the judge. Hence:

- the sandbox copies the registry before the student's module runs and looks probes up
  there (`server.serve`), and probes call the JAX functions they use through
  references bound when the grader was imported (`grader.probes._bound`), not through
  `jax.*`, which the module could reassign;
- the judge credits an observation only where its own reading of the lesson file finds
  nothing that could tamper with it (`grader.sandbox.source_screen`, `client.probe`);
- properties of the compiled program are not observed at all: the sandbox hands over
  the program (`grader.probes.exported`, a `judged` probe) and the judge checks it
  (`grader.checks.exported`).

    @probe
    def compile_state(fn): ...                           # in grader/probes/traces.py

    seen = client.probe(compile_state, client.handle(student.train_step))  # grader/checks

The judge forks the sandbox after `load_all`: the probes, the public inputs and the
lessons' own public inputs and probes (`grader.inputs`); it imports no check kind's
module, so no judging code is there for the student's module to find
(`tests/runner/test_sandbox_modules.py` lists what the sandbox inherits).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

REGISTRY: dict[str, Callable[..., Any]] = {}
JUDGED: set[str] = set()
"""Probes whose result the judge verifies itself (a compiled program it runs against its
own values), credited whatever the student's module does (`client.probe`)."""


def name_of(fn: Callable[..., Any]) -> str:
    return f"{fn.__module__}:{fn.__qualname__}"


def probe(fn: F) -> F:
    """Register `fn` as a probe the judge may run in the sandbox by name."""
    REGISTRY[name_of(fn)] = fn
    return fn


def judged(fn: F) -> F:
    """Register `fn` as a probe whose result the judge verifies itself (see `JUDGED`)."""
    probe(fn)
    JUDGED.add(name_of(fn))
    return fn


PACKAGES = ("grader.probes", "grader.inputs")
"""What the sandbox may run: every module of these packages is imported by `load_all`."""


def load_all() -> None:
    """Import every probe and public input (`PACKAGES`, and `grader.sandbox.public_inputs`), so they
    are registered before the sandbox forks; nothing of the judge's side (`grader.checks`)."""
    importlib.import_module("grader.sandbox.public_inputs")
    for name in PACKAGES:
        pkg = importlib.import_module(name)
        for mod in sorted(os.listdir(os.path.dirname(pkg.__file__ or ""))):
            if mod.endswith(".py") and not mod.startswith("__"):
                importlib.import_module(f"{name}.{mod[:-3]}")
