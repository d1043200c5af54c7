"""A suite with gates: properties stand on value checks (tests/suites/test_gates.py)."""

LESSON = "gated"
TITLE = "Gated properties"
TIMEOUT = 60

import jax.numpy as jnp

from grader.checks import jit
from grader.checks.failure import CheckFailure, fail
from grader.suites._shared import score_cases
from grader.authoring import check


@check("double(x) is 2 * x", points=2, hint="What does doubling do to 3.0?")
def test_double_values(student):
    for x in (3.0, -1.5):
        got = float(student.double(jnp.float32(x)))
        if got != 2 * x:
            raise fail(f"double({x})", expected=str(2 * x), observed=str(got))


@check("double compiles under jax.jit", points=1, hint="Is every operation a jnp one?",
       requires=("test_double_values",))
def test_double_jit(student):
    jit.assert_jittable(student.double, (jnp.float32(2.0),), what="double(x)")


@check("both compile under jax.jit", points=2, hint="Is every operation a jnp one?")
def test_both_jit(student, credit, gate):
    score_cases(credit, [
        ("double", lambda: (gate.require("test_double_values"),
                            jit.assert_jittable(student.double, (jnp.float32(2.0),), what="double(x)"))),
        ("halve", lambda: (gate.require("test_halve_values"),
                           jit.assert_jittable(student.halve, (jnp.float32(2.0),), what="halve(x)"))),
    ])


@check("halve(x) is x / 2", points=1, hint="What is half of 3.0?")
def test_halve_values(student):
    got = float(student.halve(jnp.float32(3.0)))
    if got != 1.5:
        raise fail("halve(3.0)", expected="1.5", observed=str(got))


@check("double(x) of a vector is 2 * x elementwise", points=1, hint="Does doubling work on arrays?")
def test_double_vector(student):
    from grader.sandbox.client import StudentError

    try:
        got = student.double(jnp.arange(3.0))
    except StudentError as exc:  # a check that names the error in its own words
        if exc.info.is_a("NotImplementedError"):
            raise
        raise CheckFailure("double(arange(3))", expected="[0, 2, 4]", observed=f"it raised {exc.info.type}") from exc
    if list(got) != [0.0, 2.0, 4.0]:
        raise fail("double(arange(3))", expected="[0, 2, 4]", observed=str(got))
