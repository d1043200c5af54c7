"""The process protocol: judge -> parent records and parent <-> worker messages.

Every type goes to JSON and back unchanged; the decoders reject what the
writers never send (unknown kinds and fields, wrong types, texts over their
limits, fractions out of range, images that are not PNGs, non-finite numbers).
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import pytest

from grader.model import SourceLine
from grader.protocol import records as rec
from grader.protocol import worker_messages

PNG = rec.PNG_MAGIC + b"\x00" * 16
WHERE = SourceLine("03_jit.py", 14, "for x in xs:")

RECORDS: list[rec.Record] = [
    rec.Collected(("test_a", "test_b")),
    rec.Import("03_jit", ok=True),
    rec.Import("03_jit", ok=False, message="03_jit.py has a syntax error", location=WHERE),
    rec.Skipped("needs flax"),
    rec.SuiteError("Traceback ..."),
    rec.Start("test_a"),
    rec.Result(
        "test_a",
        "failed",
        fraction=0.25,
        message="m",
        location=WHERE,
        not_implemented=True,
        duration_s=1.5,
    ),
    rec.Artifact(id="test_a", title="loss", data=PNG),
    rec.Metric(id="test_a", name="speedup", value=3.5),
    rec.Uses("test_a", ("running_sum", "piecewise"), ("test_b",), whole=True),
    rec.Notebook("Notes on 03_jit.ipynb"),
    rec.Unrun(("test_b",), stopped=("running_sum",)),
    rec.Done(),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_every_record_goes_to_a_line_and_back(record: rec.Record) -> None:
    line = rec.encode(record)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert rec.decode(line) == record
    assert json.loads(line)["type"] == record.kind


def test_every_kind_has_a_record() -> None:
    assert set(rec.KINDS) == {type(r).kind for r in RECORDS}


def test_the_wire_format_is_the_plugins() -> None:
    doc = rec.to_json(rec.Result("test_a", "passed", fraction=1.0))
    assert doc == {
        "type": "result",
        "id": "test_a",
        "status": "passed",
        "fraction": 1.0,
        "message": "",
        "fix": "",
        "location": None,
        "not_implemented": False,
        "duration_s": 0.0,
        "blocked_by": None,
        "root_cause": None,
        "grader_error": False,
    }
    gated = rec.Result("test_b", "failed", blocked_by="test_a", root_cause="TypeError|f.py|3|g")
    assert rec.decode(rec.encode(gated)) == gated
    art = rec.to_json(rec.Artifact(id="test_a", title="t", data=PNG))
    assert base64.b64decode(art["data"]) == PNG and art["media_type"] == "image/png"


def test_building_a_record_clips_it_to_its_limits() -> None:
    long = "x" * (rec.MAX_MESSAGE_CHARS + 10)
    assert len(rec.Result("t", "failed", message=long).message) == rec.MAX_MESSAGE_CHARS
    assert rec.SuiteError("head" + long).message.endswith("x")  # the end of a report says why
    assert rec.Result("t", "failed", fraction=7.0).fraction == 1.0
    assert rec.Result("t", "failed", fraction=float("nan")).fraction == 0.0
    loc = rec.Import("l", ok=False, location=SourceLine("p" * 999, 1, "c" * 999)).location
    assert loc is not None and (len(loc.path), len(loc.code)) == (
        rec.MAX_PATH_CHARS,
        rec.MAX_CODE_CHARS,
    )
    assert rec.decode(rec.encode(rec.Result("t", "failed", message=long))) is not None


def _line(doc: dict[str, Any]) -> str:
    return json.dumps(doc)


RESULT = {"type": "result", "id": "test_a", "status": "failed", "fraction": 0.5}
MALFORMED = {
    "not JSON": "{not json",
    "not an object": "[1, 2]",
    "unknown kind": _line({"type": "points", "value": 100}),
    "no kind": _line({"id": "test_a"}),
    "unknown field": _line({**RESULT, "points": 100}),
    "missing field": _line({"type": "result", "id": "test_a"}),
    "unknown status": _line({**RESULT, "status": "passed!!"}),
    "fraction above 1": _line({**RESULT, "fraction": 7.0}),
    "negative fraction": _line({**RESULT, "fraction": -0.5}),
    "fraction is a bool": _line({**RESULT, "fraction": True}),
    "fraction is a string": _line({**RESULT, "fraction": "1"}),
    "NaN duration": _line({**RESULT, "duration_s": float("nan")}),
    "message too long": _line({**RESULT, "message": "x" * (rec.MAX_MESSAGE_CHARS + 1)}),
    "id too long": _line({"type": "start", "id": "x" * (rec.MAX_ID_CHARS + 1)}),
    "id not a string": _line({"type": "start", "id": 3}),
    "location malformed": _line({**RESULT, "location": {"path": "a.py", "line": "3", "code": ""}}),
    "location with extra keys": _line(
        {**RESULT, "location": {"path": "a", "line": 3, "code": "", "x": 1}}
    ),
    "import ok not a bool": _line({"type": "import", "lesson": "l", "ok": 1}),
    "ids not a list": _line({"type": "collected", "ids": "test_a"}),
    "svg artifact": _line(
        {"type": "artifact", "id": "t", "title": "t", "data": base64.b64encode(b"<svg/>").decode()}
    ),
    "artifact not base64": _line({"type": "artifact", "id": "t", "title": "t", "data": "%%%"}),
    "artifact of another type": _line(
        {
            "type": "artifact",
            "id": "t",
            "title": "t",
            "media_type": "text/html",
            "data": base64.b64encode(PNG).decode(),
        }
    ),
    "NaN metric": '{"type": "metric", "id": "t", "name": "m", "value": NaN}',
    "metric a string": _line({"type": "metric", "id": "t", "name": "m", "value": "1"}),
    "done with fields": _line({"type": "done", "ok": True}),
    "too long a line": " " * (rec.MAX_LINE_BYTES + 1) + "{}",
}


@pytest.mark.parametrize("line", MALFORMED.values(), ids=list(MALFORMED))
def test_malformed_records_are_rejected(line: str) -> None:
    assert rec.decode(line) is None


def test_a_metric_that_is_not_finite_is_written_and_then_dropped() -> None:
    line = rec.encode(rec.Metric(id="t", name="m", value=float("nan")))  # a suite's NaN: no crash
    assert rec.decode(line) is None


def test_decode_all_reads_at_most_max_records() -> None:
    lines = [rec.encode(rec.Start("t"))] * (rec.MAX_RECORDS + 5)
    assert len(rec.decode_all(lines)) == rec.MAX_RECORDS


def test_writer_writes_whole_lines_to_a_pipe() -> None:
    read_end, write_end = os.pipe()
    big = rec.Artifact(id="t", title="big", data=rec.PNG_MAGIC + os.urandom(30_000))
    try:
        rec.Writer(write_end).emit(big)
        rec.Writer(write_end).emit(rec.Done())
        os.close(write_end)
        data = b""
        while chunk := os.read(read_end, 1 << 16):
            data += chunk
    finally:
        os.close(read_end)
    assert rec.decode_all(data.splitlines()) == [big, rec.Done()]


def test_check_status_maps_anything_else_to_error() -> None:
    assert rec.check_status("timeout") == "timeout"
    assert rec.check_status("weird") == "error"


# -- parent <-> worker --------------------------------------------------------------------

MESSAGES: list[worker_messages.Message] = [
    worker_messages.Request(
        suite="/s/test_03_jit.py",
        workdir="/w",
        lesson_dir="/w/lessons",
        seed=3,
        timeout_s=180.0,
        memory_bytes=4 << 30,
        output_cap=32 << 10,
        devices=8,
        notebook="03_jit",
        isolation="strict",
        cache_dir="/root/.cache/jax-lesson-grader/xla",
        sandbox_dir="/tmp/grader-sandboxes-x",
        check_share_s=45.0,
        only=("test_b",),
        passed=("test_a",),
        unjudged=("test_c",),
        stopped=("running_sum",),
    ),
    worker_messages.Ready(pid=12),
    worker_messages.Started(pid=13),
    worker_messages.Ended(
        exit_code=None,
        signal=9,
        timed_out=False,
        output="out",
        output_bytes=3,
        duration_s=1.0,
        memory_limit=1 << 30,
        records=(rec.encode(rec.Done()).decode().strip(),),
        records_dropped=2,
        leftovers=1,
    ),
    worker_messages.Ended(),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_every_worker_message_goes_to_a_line_and_back(message: worker_messages.Message) -> None:
    line = worker_messages.encode(message)
    assert line.endswith("\n") and line.count("\n") == 1
    assert worker_messages.decode(line) == message
    assert worker_messages.decode_as(line, type(message)) == message


BAD_MESSAGES = {
    "not JSON": "{",
    "unknown type": json.dumps({"type": "reboot"}),
    "unknown field": json.dumps({"type": "started", "pid": 1, "extra": 2}),
    "missing field": json.dumps({"type": "started"}),
    "pid a string": json.dumps({"type": "started", "pid": "1"}),
    "unknown level": json.dumps({**worker_messages.to_json(MESSAGES[0]), "isolation": "none"}),
    "negative timeout": json.dumps({**worker_messages.to_json(MESSAGES[0]), "timeout_s": -1}),
    "records not strings": json.dumps({"type": "ended", "records": [{"type": "done"}]}),
    "exit code a bool": json.dumps({"type": "ended", "exit_code": True}),
}


@pytest.mark.parametrize("line", BAD_MESSAGES.values(), ids=list(BAD_MESSAGES))
def test_malformed_worker_messages_raise(line: str) -> None:
    with pytest.raises(worker_messages.ProtocolError):
        worker_messages.decode(line)


def test_decode_as_refuses_another_message() -> None:
    with pytest.raises(worker_messages.ProtocolError, match="expected Ended, got Started"):
        worker_messages.decode_as(
            worker_messages.encode(worker_messages.Started(pid=1)), worker_messages.Ended
        )
