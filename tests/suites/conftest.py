"""The `graded` fixture of the lesson suites' tests (the harness: tests/suites/harness.py).

A module sets `LESSON` and its tests call `graded(variant)`; a module of several lessons
calls `graded(lesson, variant)` and lists them in `VARIANTS` as (lesson, variant) pairs.
`EXTRA_ENV` maps a variant to the environment it is graded in (a fresh subprocess).

The variants a module's selected tests will ask for are graded ahead when the first of
them asks for `graded`: `VARIANTS` when the module sets it (in that order), else the
variant names the tests use (their parameters, and the strings in their bodies that name
a variant of the lesson), in test order. A name missed here is graded when asked.
"""

from __future__ import annotations

import types
from collections.abc import Iterator

import pytest
from harness import Gradings, Key, lesson_files


def _strings(code: types.CodeType) -> Iterator[str]:
    for const in code.co_consts:
        if isinstance(const, str):
            yield const
        elif isinstance(const, (tuple, frozenset)):
            yield from (c for c in const if isinstance(c, str))
        elif isinstance(const, types.CodeType):
            yield from _strings(const)


def _wanted(session: pytest.Session, module: types.ModuleType) -> list[Key]:
    declared = getattr(module, "VARIANTS", None)
    lesson = getattr(module, "LESSON", None)
    if declared is not None:
        return [key if isinstance(key, tuple) else (lesson, key) for key in declared]
    if lesson is None:
        return []
    known = {"solution", "stub", *lesson_files(lesson).variants()}
    wanted: dict[Key, None] = {}
    for item in session.items:
        if not isinstance(item, pytest.Function) or item.module is not module:
            continue
        if "graded" not in item.fixturenames:
            continue
        callspec = getattr(item, "callspec", None)
        params = callspec.params.values() if callspec else ()
        names = [p for p in params if isinstance(p, str)]
        names += list(_strings(item.function.__code__))
        wanted.update(((lesson, n), None) for n in names if n in known)
    return list(wanted)


@pytest.fixture(scope="module")
def graded(request: pytest.FixtureRequest) -> Iterator[Gradings]:
    module = request.module
    gradings = Gradings(getattr(module, "LESSON", None), getattr(module, "EXTRA_ENV", None))
    gradings.prefetch(_wanted(request.session, module))
    yield gradings
    gradings.close()
