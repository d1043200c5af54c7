"""grader.hints: a check's help in levels, and the one policy every report obeys."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest
from help_examples import FIX, MESSAGE, NUDGE, QUESTION, failed, raw_report

from grader import hints, settings
from grader.model import CheckResult, Report
from grader.reports import gradescope, html, json_report, junit, terminal

# -- levels ----------------------------------------------------------------------------


def test_a_check_has_three_levels_question_nudge_fix() -> None:
    levels = hints.levels(failed())
    assert [(lv.number, lv.name, lv.text) for lv in levels] == [
        (0, "question", QUESTION),
        (1, "nudge", NUDGE),
        (2, "fix", FIX),
    ]


def test_without_a_nudge_the_second_level_asks_about_the_line_without_repeating_the_cause() -> None:
    nudge = hints.levels(failed(nudge=""))[1]
    assert nudge.name == "nudge"
    assert nudge.text == (
        "Look at 03_jit.py line 14 (`for x in xs:`): what does it do with the input shown "
        "above, against what the check expected?"
    )
    assert "a Python `for` loop over a traced array" in MESSAGE  # shown with the failure
    assert "traced array" not in nudge.text


def test_empty_levels_are_left_out_and_never_drops_the_fix() -> None:
    bare = failed(nudge="", location=None)
    bare = CheckResult(**{**bare.__dict__, "message": "expected 6, observed 9"})
    assert [lv.name for lv in hints.levels(bare)] == ["question", "fix"]
    assert [lv.name for lv in hints.levels(failed(), "never")] == ["question", "nudge"]


# -- the policy ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "revealed", "nudge", "fix"),
    [
        ("on-request", 0, "", ""),
        ("on-request", 1, NUDGE, ""),
        ("on-request", 2, NUDGE, FIX),
        ("always", 0, "", FIX),
        ("never", 2, NUDGE, ""),
    ],
)
def test_apply_keeps_only_what_is_allowed(
    setting: settings.ShowFixes, revealed: int, nudge: str, fix: str
) -> None:
    shown = hints.apply(raw_report(), {"03_jit": {"test_running_sum_scan": revealed}}, setting)
    check = shown.exercises[0].checks[1]
    assert (check.nudge, check.fix, check.hints_revealed) == (nudge, fix, revealed)
    assert check.hint == QUESTION and check.message == MESSAGE
    assert shown.hints_revealed == revealed


def _every_format(report: Report) -> dict[str, str]:
    return {
        "terminal": terminal.render(report, color=False),
        "json": json_report.render(report),
        "gradescope": gradescope.render(report),
        "junit": junit.render(report),
        "html": html.render(report),
    }


def test_withheld_fixes_reach_no_report_format() -> None:
    shown = hints.apply(raw_report(), {}, "on-request")
    for kind, text in _every_format(shown).items():
        assert "SOLUTION_CODE" not in text, kind
        assert NUDGE not in text, kind
    assert QUESTION in terminal.render(shown, color=False)


def test_course_setting_never_hides_revealed_fixes_in_every_format() -> None:
    revealed = {"03_jit": {"test_running_sum_scan": 2}}
    for kind, text in _every_format(hints.apply(raw_report(), revealed, "never")).items():
        assert "SOLUTION_CODE" not in text, kind
    allowed = _every_format(hints.apply(raw_report(), revealed, "on-request"))
    for kind in ("terminal", "json", "gradescope", "junit"):
        assert "SOLUTION_CODE" in allowed[kind], kind
    assert f"    fix: {FIX}" in allowed["terminal"] and f"    nudge: {NUDGE}" in allowed["terminal"]
    ET.fromstring(allowed["junit"])


def test_hints_revealed_validates_against_the_schema() -> None:
    revealed = {"03_jit": {"test_running_sum_scan": 2, "test_piecewise": 1}}
    doc = json.loads(json_report.render(hints.apply(raw_report(), revealed, "on-request")))
    jsonschema.Draft202012Validator(json_report.schema()).validate(doc)
    assert doc["hints_revealed"] == 3
    assert [c["hints_revealed"] for c in doc["exercises"][0]["checks"]] == [1, 2]
    assert doc["exercises"][0]["checks"][1]["fix"] == FIX
    doc["exercises"][0]["checks"][1]["hints_revealed"] = 3  # there is no fourth level
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(json_report.schema()).validate(doc)
