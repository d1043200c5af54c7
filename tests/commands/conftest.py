"""Fixtures for the command tests: a tiny course (two lesson files, plain-Python suites
with hidden checks) and a class of submissions, broken and hostile ones included.

    fixtures/suites/       test_01_sums.py, test_02_words.py (one hidden check each)
    fixtures/solutions/    marked solutions; fixtures/exercises/ is generated from them
    fixtures/submissions/  alice (right), bob (partly wrong), carol (syntax error, written
                           at test time so linters never see it), dave (os._exit at import),
                           erin (an endless loop), frank (no lesson files), gina (a notebook)
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from grader import cli

FIXTURES = Path(__file__).parent / "fixtures"
SUITES = FIXTURES / "suites"
ROOT = Path(__file__).resolve().parents[2]
BROKEN = {"carol/01_sums.py": "def add(a, b)\n    return a + b\n"}


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A writable copy of the fixture course: suites/, solutions/, exercises/, submissions/."""
    root = tmp_path / "course"
    shutil.copytree(FIXTURES, root, ignore=shutil.ignore_patterns("__pycache__"))
    for rel, text in BROKEN.items():
        (root / "submissions" / rel).write_text(text)
    return root


@pytest.fixture
def grade(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., tuple[int, str]]:
    """`grade(*argv, cwd=...)` runs the CLI in this process: (exit code, stdout + stderr)."""

    def run(*argv: str, cwd: Path | None = None) -> tuple[int, str]:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        capsys.readouterr()
        code = cli.main(list(argv))
        captured = capsys.readouterr()
        return code, captured.out + captured.err

    return run
