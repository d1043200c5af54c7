"""A small suite for the CLI tests: fast, and independent of the lesson content."""

LESSON = "demo"
TITLE = "A demo lesson file"
TIMEOUT = 60

import jax.numpy as jnp

from grader.checks.failure import fail
from grader.sandbox import client
from grader.authoring import check


@check("double(x) is 2 * x", points=2, hint="What does doubling do to 3.0?")
def test_double(student):
    got = float(student.double(3.0))
    if got != 6.0:
        raise fail("double(3.0)", expected="6.0", observed=str(got), fix="return 2 * x")


@check("double compiles under jax.jit", points=1, hint="Is every operation a jnp one?")
def test_double_jit(student):
    assert float(client.jit(student.double)(jnp.float32(2.0))) == 4.0


@check("halve(x) is x / 2", points=1, hint="What is half of 3.0?", hidden=True)
def test_halve(student, credit):
    cases = [1.0, 3.0, -2.0, 10.0]
    right = sum(float(student.halve(x)) == x / 2 for x in cases)
    credit.award(right / len(cases), f"{right} of {len(cases)} cases right")
