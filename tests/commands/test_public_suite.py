"""Cutting hidden checks out of a suite's source (grader.course.public_suite)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT, SUITES

from grader import catalog
from grader.course import public_suite

SUITE = '''
"""A suite."""

import math
import os, sys

import pytest
from grader.checks.failure import fail
from grader.authoring import check

LESSON = "01_demo"
TITLE = "demo"


def _shared(x):
    return x


def _only_secret(x):
    return _deeper(x)


def _deeper(x):
    return math.sqrt(x)


@pytest.fixture
def secret_data():
    return [1, 2]


@pytest.fixture(autouse=True)
def _always():
    yield


# The secret one: checks the square root.
@check("secret check", points=3, hidden=True,
       hint="Ask yourself.")
def test_secret(student, secret_data):
    assert student.f(_only_secret(4)) == _shared(2)


@check("public check", points=2, hint="Hm?")
def test_public(student):
    if student.f(sys.maxsize) != _shared(sys.maxsize):
        raise fail("f", expected="x", observed="y")
'''


def cut(tmp_path: Path, source: str = SUITE) -> public_suite.PublicSuite:
    path = tmp_path / "test_01_demo.py"
    path.write_text(textwrap.dedent(source))
    return public_suite.public_suite(path)


def test_hidden_checks_and_what_only_they_used_are_removed(tmp_path: Path) -> None:
    result = cut(tmp_path)
    text = result.source
    assert result.hidden_ids == ("test_secret",) and result.hidden_points == 3.0
    for gone in (
        "test_secret",
        "secret check",
        "_only_secret",
        "_deeper",
        "secret_data",
        "import math",
        "The secret one",
        "Ask yourself",
    ):
        assert gone not in text, gone
    for kept in (
        "def _shared",
        "def test_public",
        "def _always",
        "import sys",
        "from grader.checks.failure import fail",
    ):
        assert kept in text, kept
    assert "import os" not in text  # `import os, sys` keeps only sys
    ast.parse(text)


def test_released_suite_carries_the_hidden_count_for_the_catalog(tmp_path: Path) -> None:
    out = tmp_path / "released" / "test_01_demo.py"
    out.parent.mkdir()
    out.write_text(cut(tmp_path).source)
    spec = catalog.read_suite(out)
    assert [c.id for c in spec.checks] == ["test_public"]
    assert (spec.hidden_checks, spec.hidden_points) == (1, 3.0)
    assert 'TITLE = "demo"\nHIDDEN = {"checks": 1, "points": 3}' in out.read_text()


def test_a_suite_without_hidden_checks_is_unchanged(tmp_path: Path) -> None:
    source = SUITE.replace("points=3, hidden=True,", "points=3,")
    assert cut(tmp_path, source).source == textwrap.dedent(source)


def test_a_docstring_that_names_a_hidden_check_stops_the_release(tmp_path: Path) -> None:
    with pytest.raises(public_suite.PublicSuiteError, match=r"'secret check'.*reword"):
        cut(tmp_path, SUITE.replace('"""A suite."""', '"""A suite; see the secret check."""'))


def test_a_suite_of_only_hidden_checks_still_catalogs(tmp_path: Path) -> None:
    source = SUITE.replace(
        '@check("public check", points=2,', '@check("public check", points=2, hidden=True,'
    )
    out = tmp_path / "released" / "test_01_demo.py"
    out.parent.mkdir()
    out.write_text(cut(tmp_path, source).source)
    spec = catalog.read_suite(out)
    assert spec.checks == () and (spec.hidden_checks, spec.hidden_points) == (2, 5.0)


@pytest.mark.parametrize(
    "suite", sorted(p.name for p in (ROOT / "grader" / "suites").glob("test_*.py"))
)
def test_every_real_suite_can_be_cut(suite: str) -> None:
    result = public_suite.public_suite(ROOT / "grader" / "suites" / suite)
    ast.parse(result.source)
    for hidden in result.hidden_ids:
        assert f"def {hidden}(" not in result.source


def test_fixture_suites_are_cut(tmp_path: Path) -> None:
    result = public_suite.public_suite(SUITES / "test_01_sums.py")
    assert result.hidden_ids == ("test_total_empty_secret",)
    assert "_secret_fsum_reference" not in result.source and "import math" not in result.source
    assert "_ref_add" in result.source
