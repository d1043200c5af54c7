"""Grader code the judge may ask the sandbox to run: observations, never verdicts.

A probe is a function in a check kind's module, registered with `@probe`. It runs
in the sandbox next to the student's code (tracing it, counting its traces,
snapshotting its module) and returns plain data; the judge decides what the
observation means. Student code shares the sandbox's process, so it can tamper
with what a probe observes: a probe's result is evidence about the student's own
functions, never about the references, which stay in the judge. Hence:

- the sandbox copies the registry before the student's module runs and looks probes up
  there (`server.serve`), and probes call the JAX functions they use through
  references bound when the grader was imported (`bound`), not through `jax.*`, which
  the module could reassign;
- the judge credits an observation only where its own reading of the lesson file finds
  nothing that could tamper with it (`grader.sandbox.screen`, `client.probe`);
- properties of the compiled program are not observed at all: the sandbox hands over
  the program (`grader.checks.exported`, a `judged` probe) and the judge checks it.

    @probe
    def count_traces(fn, arg_sets, static_argnames): ...      # in grader/checks/traces.py

    seen = client.probe(count_traces, student.newton_sqrt, arg_sets, ("n_iters",))
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


def load_all() -> None:
    """Import every check kind, so their probes are registered before the sandbox forks."""
    import grader.checks as pkg

    folder = os.path.dirname(pkg.__file__ or "")
    for mod in sorted(os.listdir(folder)):
        if mod.endswith(".py") and not mod.startswith("__"):
            importlib.import_module(f"grader.checks.{mod[:-3]}")
    importlib.import_module("grader.sandbox.public")
    import grader.inputs as inputs

    for mod in sorted(os.listdir(os.path.dirname(inputs.__file__ or ""))):
        if mod.endswith(".py") and not mod.startswith("__"):
            importlib.import_module(f"grader.inputs.{mod[:-3]}")
