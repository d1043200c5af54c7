"""records.assemble: what a grading child leaves behind becomes an ExerciseResult.

The records come from the processes that graded student code, so these tests
also forge them: points always come from the catalog, unknown checks and
malformed records (a fraction out of range, an unknown status or field, broken
JSON) are ignored.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from grader.catalog import read_suite
from grader.protocol.worker_messages import Ended
from grader.runner.results import Ending, assemble

SUITE = """
LESSON = "demo"
TITLE = "Demo"
from grader.authoring import check

@check("first", points=2, hint="h1")
def test_a(student): pass

@check("second", points=3, hint="h2", hidden=True)
def test_b(student): pass

@check("third", points=5, hint="h3")
def test_c(student): pass
"""

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


@pytest.fixture
def spec(tmp_path: Path) -> Any:
    path = tmp_path / "test_demo.py"
    path.write_text(SUITE)
    return read_suite(path)


def ending(*records: dict[str, Any] | str, **how: Any) -> Ending:
    """The judge's ending (`how`: exit_code, signal, ...) with these record lines."""
    lines = tuple(r if isinstance(r, str) else json.dumps(r) for r in records)
    timeout_s = how.pop("timeout_s", 0.0)
    return Ending(Ended(records=lines, **how), timeout_s=timeout_s)


def ok(check_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "result",
        "id": check_id,
        "status": "passed",
        "fraction": 1.0,
        "message": "",
        **extra,
    }


COLLECTED = {"type": "collected", "ids": ["test_a", "test_b", "test_c"]}
IMPORTED = {"type": "import", "lesson": "demo", "ok": True}
DONE = {"type": "done"}


def test_all_passed(spec: Any) -> None:
    result = assemble(
        spec,
        ending(COLLECTED, IMPORTED, ok("test_a"), ok("test_b"), ok("test_c"), DONE, exit_code=0),
    )
    assert result.status == "passed"
    assert (result.score, result.max_score) == (10.0, 10.0)
    assert [c.visibility for c in result.checks] == ["public", "hidden", "public"]
    assert [c.hint for c in result.checks] == ["h1", "h2", "h3"]


def test_partial_credit_counts_the_catalog_points(spec: Any) -> None:
    partial = {
        "type": "result",
        "id": "test_c",
        "status": "failed",
        "fraction": 0.4,
        "message": "2 of 5",
    }
    result = assemble(
        spec, ending(COLLECTED, IMPORTED, ok("test_a"), ok("test_b"), partial, DONE, exit_code=0)
    )
    assert result.status == "failed"
    assert result.checks[2].score == pytest.approx(2.0)
    assert result.score == pytest.approx(7.0)


def test_forged_records_cannot_raise_the_score(spec: Any) -> None:
    result = assemble(
        spec,
        ending(
            COLLECTED,
            IMPORTED,
            {"type": "result", "id": "test_a", "status": "failed", "fraction": 0.5, "points": 100},
            {"type": "result", "id": "test_a", "status": "failed", "fraction": 7.0},
            {"type": "result", "id": "test_zzz", "status": "passed", "fraction": 1.0},
            {"type": "result", "id": "test_b", "status": "error", "fraction": 1.0},
            {"type": "result", "id": "test_c", "status": "passed!!", "fraction": 1.0},
            {"type": "result", "id": "test_c", "status": "failed", "fraction": 0.0},
            ok("test_c"),  # a second valid record for the same check is ignored
            "{not json",
            DONE,
            exit_code=0,
        ),
    )
    # test_a: both records malformed (an unknown field, a fraction above 1): never reached
    assert [c.status for c in result.checks] == ["error", "error", "failed"]
    assert result.checks[0].message.startswith("not run")
    assert result.score == 0.0
    assert result.max_score == 10.0


def test_a_check_that_did_not_pass_never_earns_all_its_points(spec: Any) -> None:
    failed = {"type": "result", "id": "test_a", "status": "failed", "fraction": 1.0, "message": "m"}
    result = assemble(spec, ending(COLLECTED, IMPORTED, failed, DONE, exit_code=0))
    assert result.checks[0].status == "failed" and result.checks[0].score == 0.0


def test_not_attempted_when_every_check_hits_the_stub(spec: Any) -> None:
    todo = {
        "status": "failed",
        "fraction": 0.0,
        "not_implemented": True,
        "message": "not implemented",
    }
    result = assemble(
        spec,
        ending(
            COLLECTED,
            IMPORTED,
            *({"type": "result", "id": i, **todo} for i in ("test_a", "test_b", "test_c")),
            DONE,
            exit_code=0,
        ),
    )
    assert result.status == "not_attempted"
    assert "NotImplementedError" in result.message


def test_crash_mid_run_keeps_earlier_results(spec: Any) -> None:
    result = assemble(
        spec,
        ending(
            COLLECTED,
            IMPORTED,
            {"type": "start", "id": "test_a"},
            ok("test_a"),
            {"type": "start", "id": "test_b"},
            signal=11,
        ),
    )
    assert [c.status for c in result.checks] == ["passed", "error", "error"]
    assert "SIGSEGV" in result.checks[1].message
    assert result.checks[2].message.startswith("not run")
    assert result.status == "error" and result.score == 2.0


def test_timeout_names_the_running_check(spec: Any) -> None:
    result = assemble(
        spec,
        ending(
            COLLECTED,
            IMPORTED,
            {"type": "start", "id": "test_a"},
            ok("test_a"),
            {"type": "start", "id": "test_b"},
            timed_out=True,
            timeout_s=30,
        ),
    )
    assert [c.status for c in result.checks] == ["passed", "timeout", "error"]
    assert "30 s" in result.checks[1].message


def test_import_failure_is_one_clear_error(spec: Any) -> None:
    failed = {
        "type": "import",
        "lesson": "demo",
        "ok": False,
        "message": "demo.py has a syntax error",
        "location": {"path": "demo.py", "line": 3, "code": "def f(x)"},
    }
    result = assemble(spec, ending(COLLECTED, failed, DONE, exit_code=0))
    assert result.status == "error"
    assert result.message == "demo.py has a syntax error"
    assert result.checks[0].location is not None and result.checks[0].location.line == 3
    assert all(c.score == 0 for c in result.checks)


def test_nothing_written_is_a_grader_error(spec: Any) -> None:
    result = assemble(spec, ending(exit_code=4))
    assert result.status == "error"
    assert "problem in the grader" in result.message


def test_artifacts_must_be_png(spec: Any) -> None:
    good = {
        "type": "artifact",
        "id": "test_a",
        "title": "plot",
        "data": base64.b64encode(PNG).decode(),
    }
    bad = {
        "type": "artifact",
        "id": "test_a",
        "title": "evil",
        "data": base64.b64encode(b"<svg/>").decode(),
    }
    metric = {"type": "metric", "id": "test_a", "name": "speedup", "value": 12.5}
    nan = {"type": "metric", "id": "test_a", "name": "nan", "value": "NaN"}
    result = assemble(
        spec, ending(COLLECTED, IMPORTED, ok("test_a"), good, bad, metric, nan, DONE, exit_code=0)
    )
    assert [a.title for a in result.artifacts] == ["plot"]
    assert result.metrics == (("speedup", 12.5),)


def test_output_cap_notice(spec: Any) -> None:
    result = assemble(
        spec,
        ending(
            COLLECTED,
            IMPORTED,
            ok("test_a"),
            ok("test_b"),
            ok("test_c"),
            DONE,
            exit_code=0,
            output="x" * 10,
            output_bytes=5_000_000,
        ),
    )
    assert result.output.startswith("x" * 10)
    assert (
        "[output truncated: 5,000,000 bytes were printed; the first 10 are shown]" in result.output
    )


# -- a rerun after a stopped sandbox (engine.grade_one) ------------------------------------


def test_a_rerun_replaces_only_the_checks_the_stopped_sandbox_could_not_run(spec: Any) -> None:
    from grader.runner.results import merge, rerun_of

    first = ending(
        COLLECTED,
        IMPORTED,
        ok("test_a"),
        {"type": "result", "id": "test_b", "status": "timeout", "message": "ran out"},
        {"type": "result", "id": "test_c", "status": "error", "message": "not run"},
        {"type": "unrun", "ids": ["test_c"], "stopped": ["running_sum"]},
        DONE,
        exit_code=1,
    ).ended
    rerun = rerun_of(first.records)
    assert rerun is not None
    assert (rerun.ids, rerun.passed, rerun.unjudged, rerun.stopped) == (
        ("test_c",),
        ("test_a",),
        ("test_b",),
        ("running_sum",),
    )
    again = ending(
        {"type": "collected", "ids": ["test_c"]}, IMPORTED, ok("test_c"), DONE, exit_code=0
    ).ended
    merged = merge(first, again, rerun)
    assert rerun_of(merged.records) is None  # nothing left to run
    result = assemble(spec, Ending(merged, timeout_s=10.0))
    assert [(c.id, c.status) for c in result.checks] == [
        ("test_a", "passed"),
        ("test_b", "timeout"),
        ("test_c", "passed"),
    ]
    assert result.score == 7.0


def test_no_rerun_without_unrun_checks() -> None:
    from grader.runner.results import rerun_of

    assert rerun_of([json.dumps(ok("test_a")), json.dumps(DONE)]) is None
    forged = {"type": "unrun", "ids": ["test_zz"]}  # a check nobody reported: nothing to rerun
    assert rerun_of([json.dumps(ok("test_a")), json.dumps(forged)]) is None
