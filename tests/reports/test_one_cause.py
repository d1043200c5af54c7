"""One root cause, one place, for checks of several parts too: a check that lost only the part
whose function raised the error other checks failed with is listed under that error once, with
the share it kept and where that share comes from (terminal, `grade watch`'s screen, HTML,
`%grade`); and a check of several parts carries that cause only when every failed part has it
(`grader.suites._shared.score_cases`)."""

from __future__ import annotations

import dataclasses

from report_samples import check

from grader.authoring import Credit
from grader.checks.failure import CheckFailure
from grader.model import ExerciseResult, Report, SourceLine
from grader.notebooks import inline
from grader.protocol.value_codec import ErrorInfo
from grader.reports import groups, html, terminal
from grader.sandbox.client import student_error
from grader.suites._shared import score_cases
from grader.watch import display

KEY = "TracerBoolConversionError|03_jit.py|40|piecewise"
LINE = SourceLine("03_jit.py", 40, "if x > 0:")
RAISED = (
    "piecewise(x) under jax.jit\n"
    "  expected: the function traces and compiles\n"
    "  observed: jax.jit(piecewise)(-2.0) raised TracerBoolConversionError: Attempted boolean "
    "conversion of traced array with shape bool[].\n"
    "    at 03_jit.py, line 40: if x > 0:"
)
SHARE = "2 of 3 passed (piecewise failed); each of the 3 parts is 1/3 of the points."


def _jit_lesson() -> ExerciseResult:
    """The issue's 03_jit: a Python `if` in piecewise fails two checks outright and the
    piecewise part of two checks of three parts each."""
    partial = {"status": "failed", "score": 1 / 1.5, "max_score": 1.0, "root_cause": KEY}
    return ExerciseResult(
        name="03_jit",
        title="jit and structured control flow",
        status="failed",
        checks=(
            check("piecewise returns x**2 for x > 0 and -x otherwise"),
            check(
                "piecewise compiles under jax.jit",
                status="failed",
                message=RAISED,
                hint="What does a Python `if` do with a value known only when the program runs?",
                location=LINE,
                root_cause=KEY,
            ),
            check(
                "piecewise branches with jax.lax.cond",
                status="failed",
                message=RAISED,
                hint="Which jax.lax function takes a predicate and two functions?",
                location=LINE,
                root_cause=KEY,
            ),
            check(
                "each function is traced once for repeated same-shaped calls",
                message=f"{SHARE}\npiecewise: repeated calls of piecewise(x)\n{RAISED}",
                hint="a question about static arguments, not this cause",
                location=LINE,
                **partial,  # type: ignore[arg-type]
            ),
            check(
                "the three functions are pure",
                message=f"{SHARE}\npiecewise: side effects of piecewise(x)\n{RAISED}",
                hint="a question about trace-time side effects, not this cause",
                location=LINE,
                **partial,  # type: ignore[arg-type]
            ),
        ),
    )


def _report() -> Report:
    return Report(
        exercises=(_jit_lesson(),), seed=0, submission="03_jit.py", grader_version="0.1.0"
    )


def test_the_cause_is_shown_once_with_every_check_it_cost_in_the_terminal() -> None:
    text = terminal.render(_report(), color=False)
    assert "03_jit > 4 checks failed because `piecewise` raised TracerBoolConversionError" in text
    assert text.count("Attempted boolean conversion") == 1, text
    assert (
        "      - each function is traced once for repeated same-shaped calls (0.67/1): " + SHARE
    ) in text
    assert "      - the three functions are pure (0.67/1): " + SHARE in text
    assert "static arguments" not in text and "side effects, not this cause" not in text


def test_the_cause_is_shown_once_in_grade_watch() -> None:
    exercise = _jit_lesson()
    entry = display.first_problem(exercise)
    assert entry is not None and len(entry.same_cause) == 3
    lines = "\n".join(terminal.problem_lines(exercise, entry))
    assert lines.count("Attempted boolean conversion") == 1
    assert SHARE in lines


def test_the_cause_is_shown_once_in_the_html_report_and_in_grade_magic() -> None:
    page = html.render(_report())
    assert page.count("Attempted boolean conversion") == 1, page
    assert "same error as: piecewise compiles under jax.jit; " + SHARE in page
    cell = inline.render_html(inline.Inline(exercise=_jit_lesson()))
    assert cell.count("Attempted boolean conversion") == 1, cell
    assert "same error; " + SHARE in cell


def test_a_partial_check_with_another_cause_stands_on_its_own() -> None:
    lesson = _jit_lesson()
    other = "NameError|03_jit.py|60|running_sum"
    checks = tuple(
        c if not 0 < c.score < c.max_score else dataclasses.replace(c, root_cause=other)
        for c in lesson.checks
    )
    entries = groups.entries(dataclasses.replace(lesson, checks=checks))
    lead = next(e for e in entries if e.grouped)
    assert [c.name for c in lead.same_cause] == ["piecewise branches with jax.lax.cond"]
    assert groups.share_note(checks[3]) == SHARE  # its own entry, its share explained
    assert groups.share_note(checks[1]) == ""  # no share to explain: all or nothing


def _raised(kind: str, line: int, function: str) -> Exception:
    info = ErrorInfo(kind, ("Exception",), "boom", ("03_jit.py", line, "code"), function)
    return student_error(info)


def _failing(exc: Exception):  # type: ignore[no-untyped-def]
    def run() -> None:
        raise CheckFailure("a part", expected="it runs", observed="it raised") from exc

    return run


def test_score_cases_carries_the_one_cause_of_its_failed_parts() -> None:
    credit = Credit()
    tracer = _raised("TracerBoolConversionError", 40, "piecewise")
    score_cases(credit, [("piecewise", _failing(tracer)), ("running_sum", lambda: None),
                         ("newton_sqrt", lambda: None)])  # fmt: skip
    assert abs(credit.fraction - 2 / 3) < 1e-9
    assert credit.root_cause == KEY
    assert credit.location == SourceLine("03_jit.py", 40, "code")
    assert credit.message.splitlines()[0] == (
        "2 of 3 passed (piecewise failed); each of the 3 parts is 1/3 of the points."
    )


def test_score_cases_carries_no_cause_when_its_parts_failed_for_different_ones() -> None:
    credit = Credit()
    score_cases(
        credit,
        [
            ("piecewise", _failing(_raised("TracerBoolConversionError", 40, "piecewise"))),
            ("running_sum", _failing(_raised("NameError", 60, "running_sum"))),
            ("newton_sqrt", lambda: None),
        ],
    )
    assert abs(credit.fraction - 1 / 3) < 1e-9
    assert credit.root_cause is None and credit.location is None
    # a part that failed on its own (no exception of the student's behind it): no cause either
    credit = Credit()
    score_cases(credit, [("a", _failing(ValueError("the suite's own"))), ("b", lambda: None)])
    assert credit.root_cause is None


REFUSED = (
    "the grader's observation of your code, made in the process that runs it\n"
    "  expected: a lesson file that leaves the grader, JAX's functions and the process alone\n"
    "  observed: your module line 7: imports the grader itself (`grader.probes.jaxpr`)\n"
    "  likely cause: this check's evidence is observed inside the process running your module"
)


def _refused_lesson() -> ExerciseResult:
    """A module that imports the grader: every check resting on an observation is refused
    with one finding, word for word, and no exception of the student's behind it."""
    refused = {"status": "failed", "message": REFUSED, "max_score": 1.0}
    return ExerciseResult(
        name="03_jit",
        title="jit and structured control flow",
        status="failed",
        checks=(
            check("piecewise returns x**2 for x > 0 and -x otherwise"),
            check("piecewise compiles under jax.jit", hint="first question", **refused),  # type: ignore[arg-type]
            check("running_sum compiles under jax.jit", hint="second question", **refused),  # type: ignore[arg-type]
            check(
                "running_sum uses jax.lax.scan",
                status="failed",
                message=REFUSED.replace("line 7", "line 8"),  # another finding: its own entry
            ),
            check("each function is traced once", **refused),  # type: ignore[arg-type]
            check(
                "the three functions are pure",
                status="failed",
                message=REFUSED,
                blocked_by="test_running_sum_uses_jax_lax_scan",  # a gate: listed as waiting
            ),
        ),
    )


def test_one_refused_observation_is_shown_once_with_every_check_it_cost() -> None:
    lesson = _refused_lesson()
    report = Report(exercises=(lesson,), seed=0, submission="03_jit.py", grader_version="0.1.0")
    text = terminal.render(report, color=False)
    assert "03_jit > 3 checks failed for the same reason:" in text, text
    assert "the same finding failed 2 more checks (same message, see above):" in text
    assert text.count("line 7: imports the grader itself") == 1, text
    assert text.count("line 8: imports the grader") == 1  # the other finding, on its own
    assert "second question" not in text  # a follower's help is not repeated
    lead = next(e for e in groups.entries(lesson) if e.grouped)
    assert lead.cause is None
    assert [c.name for c in lead.same_cause] == [
        "running_sum compiles under jax.jit",
        "each function is traced once",
    ]
    page = html.render(report)
    assert page.count("line 7: imports the grader itself") == 1, page
    assert "3 checks failed for the same reason" in page
