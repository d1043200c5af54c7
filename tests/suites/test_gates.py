"""Gates: a property check earns its points only when the values it stands on are right.

A small suite (`tests/runner/submissions/gate_suites/test_gated.py`) graded in a real
judge and sandbox against a right submission, one whose `double` compiles but returns
the wrong values, and an untouched stub.
"""

import pytest
from harness import REPO, grade

from grader.catalog import CatalogError, read_suite

pytestmark = pytest.mark.slow

SUBMISSIONS = REPO / "tests" / "runner" / "submissions"
SUITE = SUBMISSIONS / "gate_suites" / "test_gated.py"
_CACHE = {}


def graded(name):
    if name not in _CACHE:
        _CACHE[name] = grade(SUBMISSIONS / name, "gated", suite=SUITE)
    return _CACHE[name]


def test_right_values_open_every_gate():
    g = graded("gated_right")
    g.assert_statuses()
    assert all(r.get("blocked_by") is None for r in g.results.values())


def test_wrong_values_close_the_gate_of_the_property_that_would_pass():
    g = graded("gated_const")
    g.assert_statuses(
        failed={"test_double_values", "test_double_jit", "test_both_jit", "test_double_vector"}
    )
    jitted = g.results["test_double_jit"]
    assert jitted["blocked_by"] == "test_double_values" and jitted["fraction"] == 0.0
    assert "values are wrong" in jitted["message"]
    assert "fix the values first: see 'double(x) is 2 * x'" in jitted["message"]
    assert not jitted["not_implemented"]
    both = g.results["test_both_jit"]  # per case: halve's half is earned, double's is not
    assert both["fraction"] == pytest.approx(0.5)
    assert "double: " in both["message"] and "fix the values first" in both["message"]


def test_required_checks_run_first_whatever_their_place_in_the_file():
    g = graded("gated_const")
    order = [r["id"] for r in g.records if r["type"] == "start"]
    assert order.index("test_halve_values") < order.index("test_both_jit")
    assert order.index("test_double_values") < order.index("test_double_jit")


def test_a_stub_stays_not_attempted_behind_a_gate():
    g = graded("gated_stub")
    g.assert_all_not_implemented()
    assert all(r["not_implemented"] for r in g.results.values())
    assert g.results["test_double_jit"]["blocked_by"] == "test_double_values"


def _suite(tmp_path, body):
    path = tmp_path / "test_x.py"
    path.write_text('LESSON = "x"\nTITLE = "x"\nfrom grader.authoring import check\n' + body)
    return path


def test_the_catalog_reads_requirements_and_refuses_unknown_or_circular_ones(tmp_path):
    spec = read_suite(SUITE)
    assert {c.id: c.requires for c in spec.checks}["test_double_jit"] == ("test_double_values",)
    unknown = _suite(
        tmp_path,
        '@check("a", points=1, hint="h", requires=("test_nope",))\ndef test_a(student): pass\n',
    )
    with pytest.raises(CatalogError, match="unknown checks"):
        read_suite(unknown)
    circular = _suite(
        tmp_path,
        '@check("a", points=1, hint="h", requires=("test_b",))\n'
        "def test_a(student): pass\n"
        '@check("b", points=1, hint="h", requires=("test_a",))\n'
        "def test_b(student): pass\n",
    )
    with pytest.raises(CatalogError, match="requires itself"):
        read_suite(circular)


def test_failures_raised_at_one_student_line_share_a_root_cause():
    g = graded("gated_raise")
    g.assert_statuses(failed=set(g.results))
    double, halve = g.results["test_double_values"], g.results["test_halve_values"]
    assert double["root_cause"] == halve["root_cause"]
    assert g.results["test_double_vector"]["root_cause"] == double["root_cause"]  # raise ... from
    kind, path, line, function = double["root_cause"].split("|")
    assert (kind, path, line, function) == ("TypeError", "gated.py", "5", "_scale")
    assert g.results["test_double_jit"]["root_cause"] is None  # not run: behind the gate
