"""Gradescope results.json: valid per Gradescope's documented format, honest about visibility.

What a student can ever see (the top-level output, every test that is not
"hidden") never holds a hidden check's name, id, message, hint or line;
instructors see all of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import jsonschema
import pytest
from report_samples import (
    ESCAPES,
    SCAN_MESSAGE,
    SCHEMAS,
    SECRET_NAME,
    SECRET_SIBLING,
    hostile_report,
    sample_report,
)

from grader.model import Report
from grader.reports import gradescope


@pytest.fixture(scope="module")
def doc(report: Report) -> dict[str, Any]:
    return gradescope.document(report)


def _tests_by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in doc["tests"]}


def _seen_by_students(doc: dict[str, Any]) -> str:
    """Everything of results.json a student can ever see, as one text."""
    shown = [t for t in doc["tests"] if t["visibility"] != "hidden"]
    return doc["output"] + "\n" + json.dumps(shown, ensure_ascii=False)


def test_validates_against_gradescope_format(report: Report, tmp_path: Any) -> None:
    schema = json.loads((SCHEMAS / "gradescope-results.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    for sample, name in ((report, "results.json"), (hostile_report(), "hostile.json")):
        path = gradescope.write(sample, tmp_path / name)
        jsonschema.Draft202012Validator(schema).validate(
            json.loads(path.read_text(encoding="utf-8"))
        )


def test_score_is_the_reports(report: Report, doc: dict[str, Any]) -> None:
    assert doc["score"] == report.score == 13.5
    # A hidden check's details carry no points: its result for students has them.
    assert sum(t.get("score", 0) for t in doc["tests"]) == pytest.approx(report.score)
    assert sum(t.get("max_score", 0) for t in doc["tests"]) == pytest.approx(report.max_score)
    assert doc["extra_data"]["max_score"] == report.max_score


def test_one_test_per_check_in_order(report: Report, doc: dict[str, Any]) -> None:
    expected = []
    for e in report.exercises:
        hidden = 0
        for c in e.checks:
            hidden += c.visibility == "hidden"
            expected.append(
                f"{e.name}: hidden check {hidden}"
                if c.visibility == "hidden"
                else f"{e.name}: {c.name}"
            )
    assert [t["name"] for t in doc["tests"] if t["visibility"] != "hidden"] == expected
    numbers = [t["number"] for t in doc["tests"]]
    assert numbers[:5] == ["1.1", "1.2", "1.3", "1.3.1", "2.1"]
    assert len(set(numbers)) == len(numbers)


def test_visibility_public_visible_hidden_result_after_published_details_hidden(
    doc: dict[str, Any],
) -> None:
    tests = _tests_by_name(doc)
    assert tests["01_arrays: set_element returns a new array"]["visibility"] == "visible"
    assert tests["01_arrays: hidden check 1"]["visibility"] == "after_published"
    assert tests["01_arrays: standardize is jittable"]["visibility"] == "hidden"
    assert tests["03_jit: hidden check 1"]["visibility"] == "after_published"
    assert tests["03_jit: newton_sqrt traces once"]["visibility"] == "hidden"
    assert doc["visibility"] == "visible"
    assert doc["stdout_visibility"] == "hidden"


def test_a_hidden_checks_details_follow_its_result_for_instructors_only(
    doc: dict[str, Any],
) -> None:
    tests = _tests_by_name(doc)
    result, details = tests["03_jit: hidden check 1"], tests["03_jit: newton_sqrt traces once"]
    assert doc["tests"].index(details) == doc["tests"].index(result) + 1
    assert details["number"] == result["number"] + ".1"
    assert (result["score"], result["max_score"], result["status"]) == (0.0, 1.0, "failed")
    assert "output" not in result
    assert "score" not in details and "max_score" not in details
    assert details["extra_data"]["shown_to_students_as"] == "03_jit: hidden check 1"
    assert details["output"] == (
        "timed out (0/1 points)\n\nthe check did not finish within 60 s\n\nhint: Is n_iters static?"
    )


def test_status_passed_only_for_passed_checks(doc: dict[str, Any]) -> None:
    tests = _tests_by_name(doc)
    assert tests["03_jit: piecewise uses lax.cond"]["status"] == "passed"
    partial = tests["03_jit: newton_sqrt converges for a in [1e-2, 1e4]"]
    assert (partial["status"], partial["score"], partial["max_score"]) == ("failed", 1.5, 3.0)
    assert tests["03_jit: hidden check 1"]["status"] == "failed"
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
    assert {t["output_format"] for t in doc["tests"] if "output" in t} == {"text"}
    assert {t["name_format"] for t in doc["tests"]} == {"text"}


def test_top_level_output_shows_exercise_problems_but_no_hidden_details(
    doc: dict[str, Any],
) -> None:
    out = doc["output"]
    assert "seed 1234" in out
    assert "SyntaxError: invalid syntax (04_vmap.py, line 7)" in out
    assert "your program printed:" in out and "üñí done" in out
    assert "2 hidden check(s) are counted in your score" in out
    assert "did not finish within 60 s" not in out  # a hidden check's message
    assert "Is n_iters static?" not in out  # a hidden check's hint
    assert "03_jit (jit and structured control flow): failed, 3.5/7 on visible checks" in out


@pytest.mark.parametrize("make", [hostile_report, sample_report])
def test_students_never_see_a_hidden_checks_name_message_or_hint(
    make: Callable[[], Report],
) -> None:
    report = make()
    doc = gradescope.document(report)
    seen = _seen_by_students(doc)
    hidden = [c for _, c in report.checks() if c.visibility == "hidden"]
    assert hidden
    for c in hidden:
        secrets = [c.name, c.id, c.hint, c.message.strip()]
        if c.location is not None:
            secrets.append(c.location.code)
        for secret in filter(None, secrets):
            assert secret not in seen, secret
    # ... and the instructors' entries hold all of it.
    instructors = {t["extra_data"]["id"]: t for t in doc["tests"] if t["visibility"] == "hidden"}
    assert set(instructors) == {c.id for c in hidden}
    for c in hidden:
        details = instructors[c.id]
        assert details["name"].endswith(": " + c.name)
        assert c.message.strip() in details["output"]


def test_an_exercise_message_naming_a_hidden_check_is_told_without_it() -> None:
    doc = gradescope.document(hostile_report())
    out = doc["output"]
    assert "04_vmap (automatic vectorization): error, 1/1 on visible checks" in out
    assert (
        "  `a hidden check` could not finish: (what happened is shown to instructors only)" in out
    )
    assert "cell 3 (notebook notes): <script>" in out  # the rest of the message stays
    assert SECRET_SIBLING not in out and SECRET_NAME not in out
    details = _tests_by_name(doc)[f"04_vmap: {SECRET_SIBLING}"]
    assert details["visibility"] == "hidden" and "secret sibling message" in details["output"]


def test_a_message_naming_a_hidden_check_without_its_words_is_withheld() -> None:
    report = hostile_report()
    vmap = report.exercises[1]
    reworded = replace(vmap, message=f"{SECRET_SIBLING} failed: SECRET SIBLING MESSAGE")
    doc = gradescope.document(replace(report, exercises=(report.exercises[0], reworded)))
    assert f"  {gradescope.WITHHELD}" in doc["output"]
    assert "SIBLING" not in _seen_by_students(doc)


def test_an_import_error_reported_on_a_hidden_check_is_still_shown(report: Report) -> None:
    vmap = report.exercises[2]
    first = replace(vmap.checks[0], visibility="hidden")
    doc = gradescope.document(
        replace(report, exercises=(replace(vmap, checks=(first, *vmap.checks[1:])),))
    )
    assert "SyntaxError: invalid syntax (04_vmap.py, line 7)" in doc["output"]  # the student's own
    assert "batched_dot matches a loop" not in _seen_by_students(doc)


def test_control_characters_are_visible_everywhere() -> None:
    doc = gradescope.document(hostile_report())
    text = gradescope.render(hostile_report())
    assert ESCAPES not in doc["output"] and "\x1b" not in text and "\\u001b" not in text
    assert "␛[31mred␛[0m ␛]0;pwned title␇" in doc["output"]  # the captured output
    scan = _tests_by_name(doc)["03_jit: running_sum uses lax.scan"]["output"]
    assert "␍OVERWRITE back␈␈ bell␇ nul␀" in scan


def test_deterministic(report: Report) -> None:
    assert gradescope.render(report) == gradescope.render(report)


def test_checks_that_never_ran_carry_no_hint(doc: dict[str, Any]) -> None:
    out = _tests_by_name(doc)["04_vmap: batched_dot traces once"]["output"]
    assert out == "error (0/2 points)\n\nnot run: 04_vmap.py does not import"
