"""The bare-pytest floor: the lesson module named by each test, imported from $FLOOR_LESSONS.

    FLOOR_LESSONS=solutions python -m pytest -q -p no:cacheprovider tests/bench/floor

Value checks only, on the same functions and data as the grader's suites: what
a plain pytest assignment (no sandbox, no JAX-aware checks) costs. Run by
`tests/bench/bench_perf.py`; not part of the test run (no test_*.py names
match the repository's test paths: these are floor_*.py, collected only when
this folder is given with `-o python_files=floor_*.py`).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest


def lesson(name: str) -> ModuleType:
    folder = Path(os.environ.get("FLOOR_LESSONS", "solutions")).resolve()
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def jit03() -> ModuleType:
    return lesson("03_jit")


@pytest.fixture(scope="session")
def ex1() -> ModuleType:
    return lesson("ex1_dropout")


@pytest.fixture(scope="session")
def ex2() -> ModuleType:
    return lesson("ex2_per_example_grads")
