"""The suite tests' old harness, now tests/suites/harness.py (kept for test_gates.py, which
grades a suite of its own with `grade(folder, lesson, suite=...)`): new tests take the
`graded` fixture (tests/suites/conftest.py) instead."""

from harness import FIXTURES, REPO, Graded, grade

__all__ = ["FIXTURES", "REPO", "Graded", "grade"]
