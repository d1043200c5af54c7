"""A failed check holding all of its help, the report the runner makes of it, and a stub:
the examples the tests of the help, its policy, `.grade/` and the next steps share."""

from __future__ import annotations

from grader.model import CheckResult, ExerciseResult, Report, SourceLine

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
