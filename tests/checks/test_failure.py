"""The check library's surface: `fail` raises, as `pytest.fail` does, and
every check kind's `assert_*` takes `cause=`/`fix=`, applied the same way (`explained`):
the suite's text replaces the generic likely cause and fix, nothing else of the finding
changes, and the student's exception behind the failure stays behind it."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import jax
import numpy as np
import pytest

from grader.checks import KINDS, jit, keys, purity
from grader.checks.failure import CheckFailure, explainable, explained, fail
from grader.plugin.gates import GateClosed

SUITE_CAUSE = "the suite's own cause"
SUITE_FIX = "the suite's own fix"


def test_fail_raises_the_finding() -> None:
    with pytest.raises(CheckFailure) as raised:
        fail("values", expected="1", observed="2", cause="c", fix="f", where=("a.py", 3, "x"))
    finding = raised.value.finding
    assert (finding.checked, finding.expected, finding.observed) == ("values", "1", "2")
    assert (finding.cause, finding.fix, finding.where) == ("c", "f", ("a.py", 3, "x"))


def test_raise_fail_still_raises_the_same_failure() -> None:
    """Call sites written `raise fail(...)` keep working: fail raises first."""
    with pytest.raises(CheckFailure, match="expected: 1"):
        raise fail("values", expected="1", observed="2")


def _failing(cause: str = "generic cause", fix: str = "generic fix") -> None:
    try:
        raise ZeroDivisionError("the student's")
    except ZeroDivisionError as exc:
        raise CheckFailure(
            "values", expected="1", observed="2", cause=cause, fix=fix, where=("a.py", 3, "x")
        ) from exc


def test_explained_replaces_cause_and_fix_and_keeps_the_rest() -> None:
    with pytest.raises(CheckFailure) as raised, explained(SUITE_CAUSE, SUITE_FIX):
        _failing()
    finding = raised.value.finding
    assert (finding.cause, finding.fix) == (SUITE_CAUSE, SUITE_FIX)
    assert (finding.checked, finding.observed, finding.where) == ("values", "2", ("a.py", 3, "x"))
    assert isinstance(raised.value.__cause__, ZeroDivisionError)  # the root cause stays


def test_explained_keeps_what_the_suite_does_not_give() -> None:
    with pytest.raises(CheckFailure) as raised, explained(fix=SUITE_FIX):
        _failing()
    assert (raised.value.finding.cause, raised.value.finding.fix) == ("generic cause", SUITE_FIX)
    with pytest.raises(CheckFailure) as untouched, explained():
        _failing()
    assert untouched.value.finding.cause == "generic cause"


def test_a_closed_gate_is_not_reworded() -> None:
    gate = GateClosed("test_values", "values", not_implemented=False)
    with pytest.raises(GateClosed) as raised, explained(SUITE_CAUSE, SUITE_FIX):
        raise gate
    assert raised.value is gate


@explainable
def _check(*, what: str, cause: str = "", fix: str = "") -> None:
    _failing()


def test_explainable_applies_the_keywords() -> None:
    with pytest.raises(CheckFailure) as raised:
        _check(what="x", cause=SUITE_CAUSE)
    assert raised.value.finding.cause == SUITE_CAUSE
    with pytest.raises(CheckFailure) as plain:
        _check(what="x")
    assert plain.value.finding.cause == "generic cause"


def _asserts() -> list[tuple[str, Any]]:
    found = []
    for kind in KINDS:
        module = importlib.import_module(f"grader.checks.{kind}")
        for name, fn in vars(module).items():
            if name.startswith("assert_") and getattr(fn, "__module__", "") == module.__name__:
                found.append((f"{kind}.{name}", fn))
    return found


@pytest.mark.parametrize(("name", "fn"), _asserts(), ids=[n for n, _ in _asserts()])
def test_every_check_kind_takes_cause_and_fix(name: str, fn: Any) -> None:
    params = inspect.signature(fn).parameters
    for keyword in ("cause", "fix"):
        assert keyword in params, f"{name} takes no {keyword}="
        assert params[keyword].kind is inspect.Parameter.KEYWORD_ONLY
        assert params[keyword].default == ""


def piecewise_python_if(x: Any) -> Any:
    if x > 0:
        return x**2
    return -x


def test_assert_jittable_takes_the_suites_cause_and_fix() -> None:
    with pytest.raises(CheckFailure) as generic:
        jit.assert_jittable(piecewise_python_if, (1.5,), what="piecewise(x)")
    with pytest.raises(CheckFailure) as suites:
        jit.assert_jittable(
            piecewise_python_if, (1.5,), what="piecewise(x)", cause=SUITE_CAUSE, fix=SUITE_FIX
        )
    assert generic.value.finding.cause not in ("", SUITE_CAUSE)
    assert (suites.value.finding.cause, suites.value.finding.fix) == (SUITE_CAUSE, SUITE_FIX)
    assert suites.value.finding.observed == generic.value.finding.observed
    assert type(suites.value.__cause__) is type(generic.value.__cause__)


def test_a_passing_check_is_unchanged_by_cause_and_fix() -> None:
    out = jit.assert_jittable(abs, (-2.0,), what="abs(x)", cause=SUITE_CAUSE, fix=SUITE_FIX)
    assert float(out) == 2.0


def test_the_keys_and_purity_kinds_take_them_too() -> None:
    def mutates(x: Any) -> Any:
        x[0] = 1.0
        return x

    with pytest.raises(CheckFailure) as impure:
        purity.assert_pure(mutates, (np.zeros(3),), what="f(x)", fix=SUITE_FIX)
    assert impure.value.finding.fix == SUITE_FIX

    with pytest.raises(CheckFailure) as constant:
        keys.assert_varies_with_key(
            lambda key: jax.numpy.zeros(2), lambda key: (key,), what="f(key)", cause=SUITE_CAUSE
        )
    assert constant.value.finding.cause == SUITE_CAUSE
