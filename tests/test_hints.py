"""grader.hints: help in levels, the course setting, the one policy every report obeys;
grader.next_step: an untouched file's first TODO, the next lesson file at full marks."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from grader import audience, hints, invocations, next_step, settings, state
from grader.model import CheckResult, ExerciseResult, NextStep, Report, SourceLine
from grader.reports import gradescope, html, json_report, junit, terminal
from grader.runner.submission import Submission

QUESTION = "How does jax.lax.scan carry a value from one step to the next?"
NUDGE = "The carry is the running total; each step returns (new carry, output)."
FIX = "SOLUTION_CODE: jax.lax.scan(step, 0.0, xs)"
MESSAGE = (
    "the jaxpr of running_sum(xs)\n"
    "  expected: a scan primitive\n"
    "  observed: 12 add equations and no scan\n"
    "  likely cause: a Python `for` loop over a traced array"
)
LINE = SourceLine("03_jit.py", 14, "for x in xs:")


def failed(nudge: str = NUDGE, fix: str = FIX, location: SourceLine | None = LINE) -> CheckResult:
    return CheckResult(
        name="running_sum uses lax.scan",
        id="test_running_sum_scan",
        status="failed",
        score=0.0,
        max_score=2.0,
        visibility="public",
        message=MESSAGE,
        hint=QUESTION,
        location=location,
        nudge=nudge,
        fix=fix,
    )


def raw_report(*checks: CheckResult) -> Report:
    """As the runner makes it: every check holds all of its help."""
    passed = CheckResult("piecewise works", "test_piecewise", "passed", 1.0, 1.0, "public", "", "?")
    exercise = ExerciseResult("03_jit", "jit", "failed", (passed, *(checks or (failed(),))))
    return Report(exercises=(exercise,), seed=1, submission="exercises", grader_version="0")


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


# -- the course setting -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "setting"),
    [
        ("", "on-request"),
        ("show_fixes = false", "never"),
        ("show_fixes = true", "always"),
        ('show_fixes = "on-request"  # the default', "on-request"),
        ("show_fixes = 'on_request'", "on-request"),
    ],
)
@pytest.mark.parametrize("tomllib", [True, False], ids=["tomllib", "py310"])
def test_show_fixes_is_read_from_the_course_pyproject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, setting: str, tomllib: bool
) -> None:
    if not tomllib:
        monkeypatch.setitem(sys.modules, "tomllib", None)  # import fails as on Python 3.10
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "course"\n\n[tool.grade]\n{line}\n\n[tool.other]\nshow_fixes = 1\n'
    )
    (tmp_path / "exercises").mkdir()
    assert settings.show_fixes(tmp_path / "exercises") == setting  # found in a folder above


def test_a_bad_setting_is_an_error_and_grading_reads_it_as_never(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.grade]\nshow_fixes = "sometimes"\n')
    with pytest.raises(settings.SettingError, match="give true, false or"):
        settings.show_fixes(tmp_path)
    shown = audience.for_class(raw_report(), tmp_path)
    assert shown.exercises[0].checks[1].fix == ""
    assert "show_fixes" in capsys.readouterr().err


# -- what is remembered -------------------------------------------------------------------


def test_last_results_keep_the_help_and_lessons_graded_before(tmp_path: Path) -> None:
    other = ExerciseResult("01_arrays", "arrays", "passed", ())
    state.remember(
        Report((other,), seed=1, submission=".", grader_version="0"), tmp_path, "on-request"
    )
    state.remember(raw_report(), tmp_path, "on-request")
    back = state.last_result(tmp_path, "03_jit")
    assert back is not None and back.checks[1] == failed()
    assert state.last_result(tmp_path, "01_arrays") is not None
    assert state.last_result(tmp_path, "02_grad") is None
    state.remember(raw_report(), tmp_path, "never")
    back = state.last_result(tmp_path, "03_jit")
    assert back is not None and back.checks[1].fix == ""
    assert "SOLUTION_CODE" not in (tmp_path / ".grade" / "last.json").read_text()


def test_revealed_levels_survive_a_damaged_file(tmp_path: Path) -> None:
    assert state.load_revealed(tmp_path) == {}
    state.save_revealed(tmp_path, "03_jit", "test_x", 1)
    state.save_revealed(tmp_path, "03_jit", "test_y", 2)
    assert state.load_revealed(tmp_path) == {"03_jit": {"test_x": 1, "test_y": 2}}
    (tmp_path / ".grade" / "hints.json").write_text("{not json")
    assert state.load_revealed(tmp_path) == {}


# -- what to do next ----------------------------------------------------------------------

STUB = '''"""A lesson."""
import jax

NOTE = "# TODO in a string is not one"


def piecewise(x):
    """Docstring."""
    raise NotImplementedError("piecewise is not implemented yet")


def running_sum(xs):
    # TODO: carry the running total through jax.lax.scan
    raise NotImplementedError
'''


def test_the_first_todo_is_a_raise_or_a_comment_never_a_string(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the TODO's path is shown from where the student stands
    path = tmp_path / "03_jit.py"
    path.write_text(STUB)
    assert next_step.first_todo(path) == SourceLine(
        "03_jit.py", 9, 'raise NotImplementedError("piecewise is not implemented yet")'
    )
    path.write_text(STUB.replace('    raise NotImplementedError("piecewise', '    return ("'))
    assert next_step.first_todo(path) == SourceLine(
        "03_jit.py", 13, "# TODO: carry the running total through jax.lax.scan"
    )
    path.write_text("def f(:\n    # TODO: fix me\n")  # a syntax error: read line by line
    assert next_step.first_todo(path) == SourceLine("03_jit.py", 2, "# TODO: fix me")
    path.write_text("def f(x):\n    return x\n")
    assert next_step.first_todo(path) is None


def test_the_todo_is_named_by_a_path_that_opens_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35: the stubs' first `Next:` named `01_arrays.py line 34`, without `exercises/`."""
    (tmp_path / "exercises").mkdir()
    path = tmp_path / "exercises" / "03_jit.py"
    path.write_text(STUB)
    monkeypatch.chdir(tmp_path)
    assert next_step.first_todo(Path("exercises/03_jit.py")).path == "exercises/03_jit.py"  # type: ignore[union-attr]
    assert next_step.first_todo(path).path == "exercises/03_jit.py"  # type: ignore[union-attr]
    assert invocations.command(path) == "grade exercises/03_jit.py"
    monkeypatch.chdir(tmp_path / "exercises")
    assert next_step.first_todo(path).path == "03_jit.py"  # type: ignore[union-attr]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # outside the working folder: the path as given
    assert next_step.first_todo(path).path == str(path)  # type: ignore[union-attr]


def test_a_notebook_todo_names_its_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cells = [
        {"cell_type": "markdown", "source": ["# TODO is prose here"]},
        {"cell_type": "code", "source": ["import jax\n"]},
        {"cell_type": "code", "source": ["def f(x):\n", "    raise NotImplementedError\n"]},
    ]
    path = tmp_path / "03_jit.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    assert next_step.first_todo(path) == SourceLine(
        "03_jit.ipynb, cell 2", 2, "raise NotImplementedError"
    )


def _exercise(name: str, status: str, score: float) -> ExerciseResult:
    check = CheckResult(
        "c", "test_c", "passed" if score else "failed", score, 1.0, "public", "", "?"
    )
    return ExerciseResult(name, name, status, (check,))  # type: ignore[arg-type]


def test_an_untouched_file_names_its_first_todo_and_the_command(tmp_path: Path) -> None:
    folder = tmp_path / "my exercises"
    folder.mkdir()
    (folder / "03_jit.py").write_text(STUB)
    submission = Submission(folder, {"03_jit": folder / "03_jit.py"})
    report = Report((_exercise("03_jit", "not_attempted", 0.0),), 1, str(folder), "0")
    filled = next_step.fill(report, submission, ["01_arrays", "03_jit", "04_vmap"])
    step = filled.exercises[0].next
    assert step is not None and step.todo is not None
    assert step.command == f"grade '{folder}/03_jit.py'"
    assert (step.todo.line, step.lesson) == (9, "")
    text = terminal.render(filled, color=False)
    assert "Not attempted yet (still raising NotImplementedError): 03_jit" in text
    assert (
        f"Next: start 03_jit at {folder}/03_jit.py line 9: "
        'raise NotImplementedError("piecewise is not implemented yet")\n'
        f"      then run `grade '{folder}/03_jit.py'`"
    ) in text


def test_full_marks_name_the_next_lesson_file_to_work_on(tmp_path: Path) -> None:
    for name in ("03_jit", "04_vmap", "05_pytrees"):
        (tmp_path / f"{name}.py").write_text("")
    order = ["01_arrays", "03_jit", "04_vmap", "05_pytrees"]
    single = Submission(tmp_path, {"03_jit": tmp_path / "03_jit.py"}, single="03_jit")
    report = Report((_exercise("03_jit", "passed", 1.0),), 1, "03_jit.py", "0")
    filled = next_step.fill(report, single, order)
    assert filled.exercises[0].next == NextStep(f"grade {tmp_path}/04_vmap.py", lesson="04_vmap")
    text = terminal.render(filled, color=False)
    assert (
        f"Next: 03_jit is at full marks; go on with 04_vmap: `grade {tmp_path}/04_vmap.py`" in text
    )
    # A next file known to be at full marks is skipped; the last file has none.
    both = Report(
        (_exercise("03_jit", "passed", 1.0), _exercise("04_vmap", "passed", 1.0)), 1, ".", "0"
    )
    filled = next_step.fill(both, Submission(tmp_path, {}), order)
    assert [e.next.lesson if e.next else "" for e in filled.exercises] == ["05_pytrees"] * 2
    assert next_step.fill(report, single, ["03_jit"]).exercises[0].next is None


def test_after_grading_fills_remembers_and_applies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "03_jit.py").write_text(STUB)
    submission = Submission(tmp_path, {"03_jit": tmp_path / "03_jit.py"}, single="03_jit")
    state.save_revealed(tmp_path, "03_jit", "test_running_sum_scan", 1)
    shown = audience.after_grading(raw_report(), submission)
    check = shown.exercises[0].checks[1]
    assert (check.nudge, check.fix, check.hints_revealed) == (NUDGE, "", 1)
    kept = state.last_result(tmp_path, "03_jit")
    assert kept is not None and kept.checks[1].fix == FIX  # for `grade hint`
    assert "Next: stuck on 03_jit? `grade hint 03_jit`" in terminal.render(shown, color=False)


def test_a_planted_link_is_not_written_through(tmp_path: Path) -> None:
    """The graded folder is the student's: a `.grade` linked elsewhere is not written into."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / ".grade").symlink_to(elsewhere)
    with pytest.raises(OSError, match="is a link"):
        state.save_revealed(work, "03_jit", "test_x", 1)
    with pytest.raises(OSError, match="is a link"):
        state.remember(raw_report(), work, "on-request")  # after_grading goes on without it
    assert list(elsewhere.iterdir()) == []


def test_state_belongs_to_the_graded_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / "exercises").mkdir(parents=True)
    (repo / "notebooks").mkdir()
    other = tmp_path / "other"
    other.mkdir()
    assert state.state_folder(repo / "exercises") == repo.resolve()
    assert state.state_folder(repo / "notebooks") == repo.resolve()
    assert state.state_folder(other) == other.resolve()
    assert state.state_folder_here(repo) == repo.resolve()
    assert state.state_folder_here(repo / "exercises") == repo.resolve()
    monkeypatch.chdir(other)
    assert state.state_folder_here() == other.resolve()
    submission = Submission(repo / "exercises", {"03_jit": repo / "exercises" / "03_jit.py"})
    (repo / "exercises" / "03_jit.py").write_text(STUB)
    audience.after_grading(raw_report(), submission)  # run in `other`
    assert (repo / ".grade" / "last.json").is_file() and not (other / ".grade").exists()


def test_a_students_file_is_read_as_data(tmp_path: Path) -> None:
    path = tmp_path / "hints.json"
    assert state.revealed_in(path) is None
    path.write_text('{"03_jit": {"test_a": 2, "test_b": 7, "test_c": true, "4": "x"}, "x": 1}')
    revealed = state.revealed_in(path)
    assert revealed == {"03_jit": {"test_a": 2, "test_b": 2}}
    assert state.count(revealed) == 4
    path.write_text("[1, 2]")
    assert state.revealed_in(path) is None
    path.write_text(" " * (state.REVEALED_LIMIT + 1) + "{}")
    assert state.revealed_in(path) is None
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "target.json")
    (tmp_path / "target.json").write_text('{"03_jit": {"test_a": 1}}')
    assert state.revealed_in(link) is None


def test_the_hint_command_finds_the_grading_from_where_it_is_printed(tmp_path: Path) -> None:
    """`grade hint 03_jit` where `grade hint` finds the grading from the working folder;
    else the lesson file's path, whose grading it reads (issue 35: a command printed after
    `grade ~/course/exercises` from elsewhere led nowhere)."""
    repo = tmp_path / "repo"
    (repo / "exercises").mkdir(parents=True)
    inside = repo / "exercises"
    assert invocations.hint_command("03_jit", "exercises", repo) == "grade hint 03_jit"
    assert invocations.hint_command("03_jit", "exercises/03_jit.py", repo) == "grade hint 03_jit"
    assert invocations.hint_command("03_jit", "", repo) == "grade hint 03_jit"
    assert invocations.hint_command("03_jit", "03_jit.py", inside) == "grade hint 03_jit"
    assert invocations.hint_command("03_jit", ".", inside) == "grade hint 03_jit"
    elsewhere = invocations.hint_command("03_jit", "repo/exercises", tmp_path)
    assert elsewhere == "grade hint repo/exercises/03_jit.py"
    assert invocations.hint_command("03_jit", "repo/exercises/03_jit.py", tmp_path) == elsewhere
    away = tmp_path / "away"
    away.mkdir()
    absolute = invocations.hint_command("03_jit", str(inside), away)
    assert absolute == f"grade hint {inside / '03_jit.py'}"
    assert invocations.hint_command("03_jit", "bad\0name", away) == "grade hint 03_jit"
