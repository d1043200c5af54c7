"""Gates and the judge's records, without a sandbox: real pytest items (collected by
`pytester` from a suite written here), real call results (`pytest.CallInfo`), the records
read back from the file the judge wrote."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from grader.plugin import gates
from grader.plugin.gates import Earlier, GateClosed, check_name, closed_by, requirements_first
from grader.plugin.judge import Judge
from grader.plugin.options import Options
from grader.plugin.outcomes import PASSED, Outcome, classify
from grader.protocol import records
from grader.protocol.failure import CheckFailure
from grader.protocol.value_codec import ErrorInfo
from grader.sandbox import client, source_screen
from grader.sandbox.client import SandboxGone

pytest_plugins = ["pytester"]

SUITE = """
from grader.authoring import check

LESSON = "demo"

@check("gated case by case", points=1, hint="h")
def test_gated(gate):
    pass

@check("compiles", points=1, hint="h", requires=("test_values",))
def test_jit():
    pass

@check("values", points=1, hint="h")
def test_values():
    pass

def test_unmarked():
    pass
"""


def collect(pytester: pytest.Pytester, source: str = SUITE) -> dict[str, pytest.Item]:
    """The suite `source`'s items, as pytest collects them (without hypothesis's plugin:
    it would take seconds, and no check here uses it)."""
    pytester.makeini("[pytest]\nmarkers =\n    grader_check: a graded check\n")
    items, _ = pytester.inline_genitems(pytester.makepyfile(source), "-p", "no:hypothesispytest")
    return {item.name: item for item in items}


def test_required_checks_run_first_and_gated_ones_last(pytester: pytest.Pytester) -> None:
    items = list(collect(pytester).values())
    assert [i.name for i in items] == ["test_gated", "test_jit", "test_values", "test_unmarked"]
    ordered = requirements_first(items)
    assert [i.name for i in ordered] == ["test_values", "test_jit", "test_unmarked", "test_gated"]


def test_a_cycle_of_requirements_keeps_every_check_once(pytester: pytest.Pytester) -> None:
    items = collect(
        pytester,
        "from grader.authoring import check\n"
        "@check('a', points=1, hint='h', requires=('test_b',))\ndef test_a(): pass\n"
        "@check('b', points=1, hint='h', requires=('test_a',))\ndef test_b(): pass\n",
    )
    assert sorted(i.name for i in requirements_first(list(items.values()))) == ["test_a", "test_b"]


def test_a_checks_name_is_its_declared_one(pytester: pytest.Pytester) -> None:
    items = collect(pytester)
    assert check_name(items["test_values"]) == "values"
    assert check_name(items["test_unmarked"]) == "test_unmarked"


def test_a_gate_opens_only_on_full_marks() -> None:
    assert closed_by("test_values", "values", PASSED) is None
    partial = closed_by("test_values", "values", Outcome(status="failed", fraction=0.5))
    assert isinstance(partial, GateClosed) and partial.required == "test_values"
    assert partial.finding.observed == "it did not pass"
    stub = closed_by("test_values", "values", Outcome("failed", 0.0, not_implemented=True))
    assert stub is not None and stub.not_implemented
    assert stub.finding.observed == "it did not pass (not implemented yet)"


@pytest.mark.parametrize(
    ("status", "why"), [("timeout", "it ran out of time"), ("error", "it could not run")]
)
def test_a_required_check_without_a_verdict_says_nothing_of_the_values(
    status: str, why: str
) -> None:
    closed = closed_by("test_values", "values", Outcome(status, 0.0))  # type: ignore[arg-type]
    assert closed is not None
    assert closed.finding.observed == f"'values' could not be judged ({why})"
    assert "values are wrong" not in closed.finding.message()


def test_a_rerun_knows_what_passed_and_what_had_no_verdict_before() -> None:
    rerun = Earlier(only=frozenset({"test_jit"}), passed=frozenset({"test_values"}))
    assert closed_by("test_values", "values", None, rerun) is None
    unjudged = Earlier(only=frozenset({"test_jit"}), unjudged=frozenset({"test_values"}))
    closed = closed_by("test_values", "values", None, unjudged)
    assert closed is not None and "could not run" in closed.finding.observed
    failed_before = closed_by("test_values", "values", None, Earlier(only=frozenset({"test_jit"})))
    assert failed_before is not None and failed_before.finding.observed == "it did not pass"


def test_a_required_check_that_has_not_run_is_the_suites_mistake() -> None:
    with pytest.raises(pytest.UsageError, match="requires 'test_values', which has not run"):
        closed_by("test_values", "values", None)


def run(judge: Judge, item: pytest.Item, body: Callable[[], None]) -> None:
    """One check through the judge, as pytest runs it (its setup passes)."""
    judge.begin(item)
    judge.report(item, pytest.CallInfo.from_call(lambda: None, "setup"))
    judge.report(item, pytest.CallInfo.from_call(body, "call"))
    judge.finish(item)


def results(path: Path) -> list[records.Record]:
    return records.decode_all(path.read_bytes().splitlines())


def test_the_judge_gates_on_the_stashed_outcome(pytester: pytest.Pytester, tmp_path: Path) -> None:
    items = collect(pytester)
    judge = Judge(Options(lesson=None, records_path=str(tmp_path / "records.jsonl")))
    judge.collect(list(items.values()))

    def wrong() -> None:
        raise client.student_error(ErrorInfo("ValueError", ("Exception",), "no"))

    run(judge, items["test_values"], wrong)
    with pytest.raises(GateClosed):
        judge.require(items["test_jit"], ("test_values",))
    judge.require(items["test_jit"], ("test_not_collected",))  # cut out of the suite: open

    again = collect(pytester)
    fresh = Judge(Options(lesson=None))  # no records: nothing written, the gates the same
    fresh.collect(list(again.values()))
    run(fresh, again["test_values"], lambda: None)
    fresh.require(again["test_jit"], ("test_values",))  # passed in full: open


def test_a_checks_first_failing_phase_decides_its_outcome(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    path = tmp_path / "records.jsonl"
    values = collect(pytester)["test_values"]
    judge = Judge(Options(lesson=None, records_path=str(path)))

    def call() -> None:
        assert 1 == 2, "the sum is off"

    def teardown() -> None:
        raise KeyError("w")

    judge.begin(values)
    for body, when in ((lambda: None, "setup"), (call, "call"), (teardown, "teardown")):
        judge.report(values, pytest.CallInfo.from_call(body, when))  # type: ignore[arg-type]
    judge.finish(values)
    (result,) = [r for r in results(path) if isinstance(r, records.Result)]
    assert (result.status, result.message) == ("failed", "the sum is off")


def test_the_judges_records_of_a_file(pytester: pytest.Pytester, tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    items = collect(pytester)
    judge = Judge(Options(lesson=None, records_path=str(path)))
    judge.collect([*items.values()])  # no sandbox: the lesson is not there, nothing runs

    def gone() -> None:
        raise SandboxGone(f"{client.ALREADY_GONE}: exit code 1")

    def partly() -> None:
        judge.credit(items["test_jit"]).award(0.25, "1 of 4", fix="mind the carry")
        judge.attachments(items["test_jit"]).metric("speedup", 3)

    run(judge, items["test_values"], gone)
    run(judge, items["test_gated"], lambda: judge.require(items["test_gated"], ["test_values"]))
    run(judge, items["test_jit"], partly)
    judge.done()
    found = results(path)
    assert found[:2] == [
        records.Collected(("test_values", "test_jit", "test_unmarked", "test_gated")),
        records.Import("demo", ok=False, message="demo"),
    ]
    by_id = {r.id: r for r in found if isinstance(r, records.Result)}
    assert by_id["test_values"].status == "error" and by_id["test_values"].message.startswith(
        "not run: the process running your code stopped in an earlier check (exit code 1)"
    )
    assert (by_id["test_gated"].status, by_id["test_gated"].blocked_by) == ("failed", "test_values")
    jit = by_id["test_jit"]
    assert (jit.status, jit.fraction, jit.message, jit.fix) == (
        "failed",
        0.25,
        "1 of 4",
        "mind the carry",
    )
    assert records.Metric(id="test_jit", name="speedup", value=3.0) in found
    assert found[-2:] == [records.Unrun(("test_values", "test_gated"), ()), records.Done()]


# -- observations refused by the screen (grader.sandbox.source_screen) ---------------------------

FOUND = [source_screen.Finding(3, "starts threads (`threading`), which run beside a probe")]


class _Screened(client.Channel):
    """A channel whose lesson file the screen refuses (no sandbox behind it)."""

    def tampering(self) -> list[source_screen.Finding]:
        return FOUND


def test_a_refused_observation_closes_the_gate_without_blaming_the_values() -> None:
    """Refused, the required check stopped before its values were judged: the gate stays
    closed (wrong code plus a refused construct would otherwise open it) and says so."""
    exc = client.refusal(FOUND)
    outcome = classify(exc, "call")
    assert (outcome.status, outcome.refused) == ("failed", True)
    assert "line 3: starts threads" in outcome.message
    closed = closed_by("test_values", "values", outcome)
    assert closed is not None and gates.REFUSED in closed.finding.observed
    assert "values are wrong" not in closed.finding.message()
    assert "nothing is known yet about the values" in closed.finding.message()
    wrong = classify(CheckFailure("the sum", expected="3", observed="4"), "call")
    assert not wrong.refused
    blamed = closed_by("test_values", "values", wrong)
    assert blamed is not None and "values are wrong" in blamed.finding.message()


def test_a_refused_observation_is_raised_before_the_probe_runs() -> None:
    with pytest.raises(client.ObservationRefused, match="line 3: starts threads"):
        client.require_observable(_Screened(None))
    client.require_observable(client.Channel(None))  # a local channel: nothing found


def test_the_judge_records_a_refused_check_and_its_gate(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    path = tmp_path / "records.jsonl"
    items = collect(pytester)
    judge = Judge(Options(lesson=None, records_path=str(path)))
    judge.collect(list(items.values()))
    channel = _Screened(None)
    went_on: list[str] = []

    def observed() -> None:
        client.require_observable(channel)
        went_on.append("past the observation")

    run(judge, items["test_values"], observed)
    assert went_on == []
    with pytest.raises(GateClosed) as closed:
        judge.require(items["test_jit"], ("test_values",))
    assert "values are wrong" not in closed.value.finding.message()
    run(judge, items["test_unmarked"], lambda: None)  # no observation: it passes
    by_id = {r.id: r for r in results(path) if isinstance(r, records.Result)}
    assert by_id["test_values"].status == "failed"
    assert "observation of your code" in by_id["test_values"].message
    assert "line 3: starts threads" in by_id["test_values"].message
    assert by_id["test_unmarked"].status == "passed"
