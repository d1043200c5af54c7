"""The terminal summary: one line per exercise, the first failures, total and seed."""

from __future__ import annotations

import re

import pytest
from report_samples import ESCAPES, hostile_report

from grader.model import CheckResult, ExerciseResult, Report
from grader.reports import terminal

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# rich writes combined styles as one sequence: bold red is ESC[1;31m.
OUR_STYLES = re.compile(r"\x1b\[(?:(?:0|1|2|31|32|33|36);)*(?:0|1|2|31|32|33|36)m")
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_one_line_per_exercise_then_problems_then_total(report: Report) -> None:
    text = terminal.render(report, color=False)
    lines = text.splitlines()
    assert lines[:6] == [
        "PASS         6/6  01_arrays        jax.numpy and immutability",
        "FAIL       3.5/8  03_jit           jit and structured control flow",
        "ERROR        0/4  04_vmap          automatic vectorization",
        "TODO         0/4  06_random        explicit PRNG keys",
        "SKIP         0/0  11_frameworks    the same MLP in Flax and Equinox",
        "PASS         4/4  ex4_jit_speedup  measuring a jit speedup",
    ]
    assert lines[-2] == "Total 13.5/26 (51%) · seed 1234"
    assert lines[-1] == "Isolation: user (missing: namespaces)"
    assert text.endswith("\n")


def test_failures_show_message_location_and_hint(report: Report) -> None:
    text = terminal.render(report, color=False)
    assert "03_jit > running_sum uses lax.scan (0/2)" in text
    assert "    the jaxpr of running_sum(xs)\n      expected: a scan primitive" in text
    assert "    in your code: 03_jit.py:14: for x in xs:  # <b>loop</b>" in text
    assert "    hint: How does jax.lax.scan carry a value from one step to the next?" in text
    assert "03_jit > newton_sqrt converges for a in [1e-2, 1e4] (1.5/3)" in text
    assert "03_jit > newton_sqrt traces once (0/1) [timed out]" in text
    assert "04_vmap (error)\n    04_vmap.py could not be imported:" in text
    assert "    in your code: 04_vmap.py:7: def batched_dot(a, b)" in text
    assert "Not attempted yet (still raising NotImplementedError): 06_random" in text
    assert "Skipped: 11_frameworks (flax is not installed)" in text
    # An import error is said once, not again for every check it stopped.
    assert text.count("could not be imported") == 1
    assert "not run:" not in text
    # Untouched stubs are one line, not a wall of NotImplementedError.
    assert "split_keys returns independent keys" not in text
    # Passed and skipped checks are not listed.
    assert "piecewise uses lax.cond" not in text
    assert "flax MLP matches" not in text


def test_no_color_means_no_escape_codes(report: Report) -> None:
    assert not ANSI.search(terminal.render(report, color=False))


def test_color_paints_status_words(report: Report) -> None:
    text = terminal.render(report, color=True)
    assert "\x1b[32mPASS " in text and "\x1b[31mFAIL " in text
    assert ANSI.sub("", text) == terminal.render(report, color=False)


def _failing(i: int, message: str = "observed: wrong") -> CheckResult:
    return CheckResult(
        name=f"check {i}",
        id=f"test_{i}",
        status="failed",
        score=0.0,
        max_score=1.0,
        visibility="public",
        message=message,
        hint="",
    )


def test_failures_are_capped() -> None:
    checks = tuple(_failing(i) for i in range(terminal.MAX_FAILURES + 3))
    ex = ExerciseResult(name="02_grad", title="autodiff", status="failed", checks=checks)
    text = terminal.render(
        Report(exercises=(ex,), seed=5, submission=".", grader_version="0"), color=False
    )
    assert f"02_grad > check {terminal.MAX_FAILURES - 1} (0/1)" in text
    assert f"check {terminal.MAX_FAILURES} (0/1)" not in text
    assert "... and 3 more problem(s): see the HTML report." in text


def test_long_messages_are_capped() -> None:
    long = "\n".join(f"line {i}" for i in range(40))
    ex = ExerciseResult(
        name="02_grad", title="autodiff", status="failed", checks=(_failing(0, long),)
    )
    text = terminal.render(
        Report(exercises=(ex,), seed=5, submission=".", grader_version="0"), color=False
    )
    assert f"line {terminal.MAX_MESSAGE_LINES - 1}" in text
    assert f"line {terminal.MAX_MESSAGE_LINES}\n" not in text
    assert f"[... {40 - terminal.MAX_MESSAGE_LINES} more line(s): see the HTML report]" in text


def test_all_passed_has_no_problem_section() -> None:
    ok = CheckResult("x works", "test_x", "passed", 1.0, 1.0, "public", "", "a hint")
    ex = ExerciseResult(name="01_arrays", title="arrays", status="passed", checks=(ok,))
    text = terminal.render(
        Report(exercises=(ex,), seed=9, submission=".", grader_version="0"), color=False
    )
    assert text == "PASS         1/1  01_arrays  arrays\n\nTotal 1/1 (100%) · seed 9\n"


def test_empty_report() -> None:
    text = terminal.render(
        Report(exercises=(), seed=0, submission=".", grader_version="0"), color=False
    )
    assert text == "No exercises were graded.\n\nTotal 0/0 (-) · seed 0\n"


def test_progress_and_done_lines(report: Report) -> None:
    assert terminal.progress_line(3, 11, "03_jit") == "[ 3/11] 03_jit ..."
    assert terminal.progress_line(1, 1, "ex1_dropout") == "[1/1] ex1_dropout ..."
    assert terminal.done_line(report.exercises[1]) == "FAIL       3.5/8  03_jit (2.5 s)"
    assert terminal.done_line(report.exercises[2]) == (
        "ERROR        0/4  04_vmap (0.4 s): "
        "04_vmap.py could not be imported: SyntaxError: invalid syntax (04_vmap.py, line 7)"
    )
    assert terminal.done_line(report.exercises[0], color=True).startswith("\x1b[32mPASS ")


@pytest.mark.parametrize("color", [False, True])
def test_student_text_cannot_drive_the_terminal(color: bool) -> None:
    report = hostile_report()
    text = terminal.render(report, color=color)
    text += "\n".join(terminal.done_line(e, color=color) for e in report.exercises)
    text += terminal.progress_line(1, 1, "\x1b]0;retitled\x07")
    # The only escape sequences left are our own colours; no other control character at all.
    assert not CONTROLS.search(OUR_STYLES.sub("", text)), CONTROLS.findall(OUR_STYLES.sub("", text))
    assert bool(OUR_STYLES.search(text)) == color


def test_student_escapes_are_shown_not_obeyed() -> None:
    text = terminal.render(hostile_report(), color=False)
    assert "␛[31mred␛[0m ␛]0;pwned title␇ ␛]8;;x␛\\link" in text  # colour, OSC retitle, hyperlink
    assert "␍OVERWRITE back␈␈ bell␇ nul␀ csi\\x9b2J rlo\\u202eevil" in text
    assert "    in your code: 03_jit.py:14: <script>alert(1)</script>" in text
    crashed = ExerciseResult("02_grad", "autodiff", "error", (), message=ESCAPES)
    assert terminal.done_line(crashed).startswith("ERROR        0/0  02_grad (0.0 s): ␛[31mred␛[0m")
    assert terminal.progress_line(1, 1, "\x1b]0;retitled\x07") == "[1/1] ␛]0;retitled␇ ..."


def test_windows_line_endings_stay_line_breaks() -> None:
    check = _failing(0, "expected: 1\r\nobserved: 2\r\n")
    ex = ExerciseResult(name="02_grad", title="autodiff", status="failed", checks=(check,))
    text = terminal.render(
        Report(exercises=(ex,), seed=5, submission=".", grader_version="0"), color=False
    )
    assert "    expected: 1\n    observed: 2\n" in text and "␍" not in text


def test_help_shows_what_the_model_holds_level_by_level() -> None:
    check = CheckResult(
        **{
            **_failing(0).__dict__,
            "hint": "Which primitive carries a value?",
            "nudge": "The carry is the total.",
            "fix": "def step(c, x):\n    return c + x, c + x",
        }
    )
    ex = ExerciseResult(name="03_jit", title="jit", status="failed", checks=(check,))
    report = Report(exercises=(ex,), seed=5, submission=".", grader_version="0")
    text = terminal.render(report, color=False)
    assert (
        "    hint: Which primitive carries a value?\n"
        "    nudge: The carry is the total.\n"
        "    fix: def step(c, x):\n"
        "             return c + x, c + x\n"
    ) in text
    withheld = Report((ExerciseResult("03_jit", "jit", "failed", (_failing(0),)),), 5, ".", "0")
    assert "nudge:" not in terminal.render(withheld, color=False)
    assert "fix:" not in terminal.render(withheld, color=False)
    assert "\x1b[36mnudge: \x1b[0m" in terminal.render(report, color=True)
