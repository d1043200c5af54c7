"""Fixtures for the report tests: the hand-built sample Report (see report_samples)."""

from __future__ import annotations

import pytest
from report_samples import sample_report

from grader.model import Report


@pytest.fixture(scope="session")
def report() -> Report:
    return sample_report()
