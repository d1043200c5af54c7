"""Gradescope results.json: valid per Gradescope's documented format, honest about visibility."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from report_samples import SCAN_MESSAGE, SCHEMAS

from grader.model import Report
from grader.reports import gradescope


@pytest.fixture(scope="module")
def doc(report: Report) -> dict[str, Any]:
    return gradescope.document(report)


def _tests_by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in doc["tests"]}


def test_validates_against_gradescope_format(report: Report, tmp_path: Any) -> None:
    schema = json.loads((SCHEMAS / "gradescope-results.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    path = gradescope.write(report, tmp_path / "results.json")
    jsonschema.Draft202012Validator(schema).validate(json.loads(path.read_text(encoding="utf-8")))


def test_score_is_the_reports(report: Report, doc: dict[str, Any]) -> None:
    assert doc["score"] == report.score == 13.5
    assert sum(t["score"] for t in doc["tests"]) == pytest.approx(report.score)
    assert sum(t["max_score"] for t in doc["tests"]) == pytest.approx(report.max_score)
    assert doc["extra_data"]["max_score"] == report.max_score


def test_one_test_per_check_in_order(report: Report, doc: dict[str, Any]) -> None:
    assert [t["name"] for t in doc["tests"]] == [f"{e.name}: {c.name}" for e, c in report.checks()]
    numbers = [t["number"] for t in doc["tests"]]
    assert numbers[:4] == ["1.1", "1.2", "1.3", "2.1"]
    assert len(set(numbers)) == len(numbers)


def test_visibility_public_visible_hidden_after_published(doc: dict[str, Any]) -> None:
    tests = _tests_by_name(doc)
    assert tests["01_arrays: set_element returns a new array"]["visibility"] == "visible"
    assert tests["01_arrays: standardize is jittable"]["visibility"] == "after_published"
    assert tests["03_jit: newton_sqrt traces once"]["visibility"] == "after_published"
    assert doc["visibility"] == "visible"
    assert doc["stdout_visibility"] == "hidden"


def test_status_passed_only_for_passed_checks(doc: dict[str, Any]) -> None:
    tests = _tests_by_name(doc)
    assert tests["03_jit: piecewise uses lax.cond"]["status"] == "passed"
    partial = tests["03_jit: newton_sqrt converges for a in [1e-2, 1e4]"]
    assert (partial["status"], partial["score"], partial["max_score"]) == ("failed", 1.5, 3.0)
    assert tests["03_jit: newton_sqrt traces once"]["status"] == "failed"
    assert tests["03_jit: newton_sqrt traces once"]["extra_data"]["status"] == "timeout"
    # 0/0 would read as a pass on Gradescope without an explicit status.
    assert tests["11_frameworks: flax MLP matches"]["status"] == "failed"


def test_failed_output_has_message_location_and_hint(doc: dict[str, Any]) -> None:
    out = _tests_by_name(doc)["03_jit: running_sum uses lax.scan"]["output"]
    assert SCAN_MESSAGE in out
    assert "in your code: 03_jit.py:14: for x in xs:" in out
    assert "hint: How does jax.lax.scan carry" in out
    assert _tests_by_name(doc)["01_arrays: set_element returns a new array"]["output"] == ""


def test_all_text_is_declared_plain_text(doc: dict[str, Any]) -> None:
    assert doc["output_format"] == doc["test_output_format"] == doc["test_name_format"] == "text"
    assert {t["output_format"] for t in doc["tests"]} == {"text"}
    assert {t["name_format"] for t in doc["tests"]} == {"text"}


def test_top_level_output_shows_exercise_problems_but_no_hidden_details(
    doc: dict[str, Any],
) -> None:
    out = doc["output"]
    assert "seed 1234" in out
    assert "SyntaxError: invalid syntax (04_vmap.py, line 7)" in out
    assert "your program printed:" in out and "üñí done" in out
    assert "2 hidden check(s)" in out
    assert "did not finish within 60 s" not in out  # a hidden check's message
    assert "Is n_iters static?" not in out  # a hidden check's hint
    assert "03_jit (jit and structured control flow): failed, 3.5/7 on visible checks" in out


def test_deterministic(report: Report) -> None:
    assert gradescope.render(report) == gradescope.render(report)


def test_checks_that_never_ran_carry_no_hint(doc: dict[str, Any]) -> None:
    out = _tests_by_name(doc)["04_vmap: batched_dot traces once"]["output"]
    assert out == "error (0/2 points)\n\nnot run: 04_vmap.py does not import"
