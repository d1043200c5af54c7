"""JUnit XML: valid against the JUnit XSD, with the counts reporters show."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any
from xml.dom import minidom

import pytest
from report_samples import ESCAPES, SCHEMAS, hostile_report

from grader.model import CheckResult, ExerciseResult, Report
from grader.reports import junit


@pytest.fixture(scope="module")
def xsd() -> Any:
    """junit.xsd, loaded with xmlschema (a dev dependency)."""
    xmlschema = pytest.importorskip(
        "xmlschema",
        reason="validating against junit.xsd needs xmlschema (pip install xmlschema)",
    )
    return xmlschema.XMLSchema(str(SCHEMAS / "junit.xsd"))


@pytest.fixture(scope="module")
def root(report: Report) -> ET.Element:
    return ET.fromstring(junit.render(report).encode("utf-8"))


def _suite(root: ET.Element, name: str) -> ET.Element:
    found = root.find(f"testsuite[@name='{name}']")
    assert found is not None, name
    return found


def test_validates_against_junit_xsd(report: Report, xsd: Any, tmp_path: Any) -> None:
    path = junit.write(report, tmp_path / "junit.xml")
    xsd.validate(str(path))


def test_xsd_is_really_checking(xsd: Any) -> None:
    assert not xsd.is_valid("<testsuites><testsuite name='x'><testcase/></testsuite></testsuites>")


def test_one_suite_per_exercise_one_case_per_check(report: Report, root: ET.Element) -> None:
    assert [s.get("name") for s in root.findall("testsuite")] == [e.name for e in report.exercises]
    jit = _suite(root, "03_jit")
    cases = jit.findall("testcase")
    assert [c.get("classname") for c in cases] == ["03_jit"] * 4
    assert [c.get("name") for c in cases] == [c.name for c in report.exercises[1].checks]
    assert cases[0].get("time") == "0.012"


def test_outcome_elements(root: ET.Element) -> None:
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert list(cases["piecewise uses lax.cond"]) == []
    failure = cases["running_sum uses lax.scan"].find("failure")
    assert failure is not None
    assert failure.get("message") == "the jaxpr of running_sum(xs)"
    assert "<script>alert('pwned')</script>" in (failure.text or "")  # escaped in XML, text here
    assert "hint: How does jax.lax.scan" in (failure.text or "")
    error = cases["newton_sqrt traces once"].find("error")
    assert error is not None and error.get("type") == "timeout"
    assert cases["batched_dot traces once"].find("error") is not None
    assert cases["dropout uses its key"].find("failure") is not None
    skipped = cases["flax MLP matches"].find("skipped")
    assert skipped is not None and skipped.get("message") == "flax is not installed"


def test_counts(root: ET.Element) -> None:
    jit = _suite(root, "03_jit")
    assert (jit.get("tests"), jit.get("failures"), jit.get("errors"), jit.get("skipped")) == (
        "4",
        "2",
        "1",
        "0",
    )
    random = _suite(root, "06_random")
    assert (random.get("failures"), random.get("errors")) == ("2", "0")
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("13", "4", "3")


def test_exercise_level_message_goes_to_system_err(root: ET.Element) -> None:
    vmap = _suite(root, "04_vmap")
    assert vmap.findtext("system-err", "").startswith("04_vmap.py could not be imported")
    error = vmap.find("testcase/error")
    assert error is not None
    assert error.get("message") == (
        "04_vmap.py could not be imported: SyntaxError: invalid syntax (04_vmap.py, line 7)"
    )


def test_exercise_without_checks_gets_a_stand_in_case(xsd: Any) -> None:
    crashed = ExerciseResult(
        name="07_pmap",
        title="pmap",
        status="error",
        checks=(),
        message="the suite crashed:\n  boom",
    )
    untouched = ExerciseResult(name="08_mlp", title="mlp", status="skipped", checks=())
    text = junit.render(
        Report(exercises=(crashed, untouched), seed=3, submission=".", grader_version="0")
    )
    xsd.validate(text)
    root = ET.fromstring(text.encode("utf-8"))
    (case,) = _suite(root, "07_pmap").findall("testcase")
    assert (case.get("classname"), case.get("name")) == ("07_pmap", "07_pmap")
    error = case.find("error")
    assert error is not None and error.get("message") == "the suite crashed: boom"
    assert _suite(root, "08_mlp").find("testcase/skipped") is not None
    assert (root.get("tests"), root.get("errors")) == ("2", "1")


def test_score_properties(root: ET.Element) -> None:
    props = {p.get("name"): p.get("value") for p in _suite(root, "03_jit").iter("property")}
    assert props == {
        "title": "jit and structured control flow",
        "status": "failed",
        "score": "3.5",
        "max_score": "8",
        "seed": "1234",
    }


def test_control_characters_do_not_break_the_xml(root: ET.Element) -> None:
    out = _suite(root, "03_jit").findtext("system-out", "")
    assert out.startswith("iteration 0␀␛[31m red <b>bold</b>")
    assert "üñí done" in out


def test_hostile_names_stay_valid(xsd: Any) -> None:
    check = CheckResult(
        name='a "quoted" <name> & \x07bell',
        id="test_x",
        status="failed",
        score=0.0,
        max_score=1.0,
        visibility="public",
        message="line one\n\x00line two",
        hint="",
    )
    exercise = ExerciseResult(name="x&y", title="<t>", status="failed", checks=(check,))
    text = junit.render(Report(exercises=(exercise,), seed=7, submission=".", grader_version="0"))
    xsd.validate(text)
    case = ET.fromstring(text.encode("utf-8")).find("testsuite/testcase")
    assert case is not None and case.get("name") == 'a "quoted" <name> & ␇bell'


def test_empty_report_is_valid(xsd: Any) -> None:
    xsd.validate(junit.render(Report(exercises=(), seed=0, submission=".", grader_version="0")))


# What XML 1.0 forbids (all C0 controls but tab, newline, carriage return), and C1
# controls, which it allows but no reporter should be handed raw.
RAW_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _failing_with(message: str) -> Report:
    check = CheckResult("prints colours", "test_c", "failed", 0.0, 1.0, "public", message, "")
    exercise = ExerciseResult("03_jit", "jit", "failed", (check,), output=message)
    return Report(exercises=(exercise,), seed=1, submission=".", grader_version="0")


def test_escape_and_nul_in_a_message_give_well_formed_xml(xsd: Any) -> None:
    text = junit.render(_failing_with("\x1b[31mwrong\x1b[0m\x00 after NUL"))
    assert not RAW_CONTROLS.search(text)
    xsd.validate(text)
    minidom.parseString(text.encode("utf-8"))  # a second, independent XML parser
    root = ET.fromstring(text.encode("utf-8"))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == "␛[31mwrong␛[0m␀ after NUL"
    assert "␛[31mwrong␛[0m␀ after NUL" in (failure.text or "")
    assert root.findtext("testsuite/system-out") == "␛[31mwrong␛[0m␀ after NUL"


def test_what_xml_cannot_carry_at_all_is_written_as_an_escape() -> None:
    text = junit.render(_failing_with("lone \ud800 surrogate, \ufffe non-character"))
    out = ET.fromstring(text.encode("utf-8")).findtext("testsuite/system-out")
    assert out == "lone \\ud800 surrogate, \\ufffe non-character"


def test_a_hostile_report_stays_valid(xsd: Any) -> None:
    text = junit.render(hostile_report())
    assert not RAW_CONTROLS.search(text)
    xsd.validate(text)
    out = ET.fromstring(text.encode("utf-8")).findtext("testsuite[@name='03_jit']/system-out", "")
    assert "␛[31mred␛[0m ␛]0;pwned title␇" in out and ESCAPES not in out
