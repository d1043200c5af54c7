"""Protocol faults are the sender's, on real sandboxes at every level.

A sandbox that sends what the judge cannot read (JSON nested past Python's recursion
limit, a namedtuple field named `class`, a float that is not hex, a header that is not
JSON) is stopped at once as a protocol break: the call that got the frame and every
later one say so, and its process is gone before the judge closes it. A student's own
exception of any type (MemoryError, RecursionError and subclasses of them, raised in a
call or at import) comes through as the student's error, and the sandbox goes on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.sandbox import client

HERE = Path(__file__).parent
LEVELS = ["basic", "user", "strict"] if os.geteuid() == 0 else ["basic"]

# Student code that writes frames of its own on the sandbox's connection to the judge.
FORGER = """
import json, os, socket, stat, struct, time

def _send(header):
    data = header.encode()
    frame = struct.pack("<II", len(data), 0) + data
    for fd in range(3, 256):
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
        except OSError:
            continue
        sock = socket.socket(fileno=fd)
        try:
            sock.sendall(frame)
        finally:
            sock.detach()

def _reply(value):
    _send(json.dumps({"msg": {"t": "dict", "items": [["value", value]]}, "buffers": []}))
    time.sleep(20)  # still running when the judge reads the forged frame
    return 1

def deep_frame():
    _send('{"msg":' + "[" * 100000 + "]" * 100000 + ',"buffers":[]}')
    time.sleep(20)
    return 1

def field_name():
    return _reply({"t": "namedtuple", "type": "x:Y", "fields": ["class"], "items": [None]})

def not_hex():
    return _reply({"t": "float", "v": "zz"})

def not_json():
    _send("{not json")
    time.sleep(20)
    return 1

def ok():
    return 5

class Mine(MemoryError):
    pass

class Deep(RecursionError):
    pass

def own_memory():
    raise MemoryError("the student's own")

def own_memory_subclass():
    raise Mine("a subclass")

def own_recursion_subclass():
    raise Deep("a subclass")

def recurses(n=0):
    return recurses(n + 1)

class Odd(BaseException):
    pass

def odd_base():
    raise Odd("not an Exception")
"""

DRIVER = """
import json, os, sys, time
sys.path.insert(0, sys.argv[4])
import drive_sandbox
from grader.sandbox import client

level, folder, scenario = sys.argv[1:4]
box, work = drive_sandbox.start(level, folder)
report = {"hello_ok": box.hello.ok if box.hello else None, "gone_at_hello": box.channel.gone}
if box.hello is not None and box.hello.error is not None:
    err = client.student_error(box.hello.error)
    report["hello_error"] = [box.hello.error.type, [c.__name__ for c in type(err).__mro__]]
if box.hello is not None and box.hello.ok:
    for name in scenario.split(","):
        started = time.monotonic()
        report[name] = drive_sandbox.outcome(lambda name=name: getattr(box.module, name)())
        report[name]["seconds"] = time.monotonic() - started
        # A sandbox stopped for a protocol break is gone (killed and reaped) before anyone
        # closes it.
        try:
            report[name]["ended"] = os.waitpid(box.pid, os.WNOHANG)[0] == box.pid
        except ChildProcessError:
            report[name]["ended"] = True
box.close()
import shutil
shutil.rmtree(work, ignore_errors=True)
print(json.dumps(report))
"""


def drive(tmp_path: Path, level: str, scenario: str, source: str = FORGER) -> dict:
    folder = tmp_path / "lesson"
    folder.mkdir(exist_ok=True)
    (folder / "lesson.py").write_text(source)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, level, str(folder), scenario, str(HERE)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


FORGERIES = {
    "deep_frame": "RecursionError",
    "field_name": "DecodeError: malformed namedtuple",
    "not_hex": "DecodeError: malformed float",
    "not_json": "WireError: frame header is not JSON",
}
# Every forgery at the highest level here; the first at the others too (the judge's side is
# the same code at every level; how the sandbox is stopped is not).
CASES = [(LEVELS[-1], forgery, reason) for forgery, reason in FORGERIES.items()] + [
    (level, "deep_frame", FORGERIES["deep_frame"]) for level in LEVELS[:-1]
]


@pytest.mark.slow
@pytest.mark.parametrize(("level", "forgery", "reason"), CASES)
def test_a_frame_the_judge_cannot_read_stops_the_sandbox(
    tmp_path: Path, level: str, forgery: str, reason: str
) -> None:
    seen = drive(tmp_path, level, f"ok,{forgery},ok")  # the report keeps the second `ok`
    assert seen["ok"]["gone"].startswith(f"{client.ALREADY_GONE}: {client.PROTOCOL_BREAK}")
    broke = seen[forgery]
    assert broke["gone"].startswith(f"the sandbox broke the protocol ({reason}"), broke
    assert broke["ended"] and broke["seconds"] < 10  # stopped at once, not after its sleep


@pytest.mark.slow
@pytest.mark.parametrize("level", LEVELS)
def test_a_students_exception_of_any_type_is_the_students(tmp_path: Path, level: str) -> None:
    names = "own_memory,own_memory_subclass,own_recursion_subclass,recurses,odd_base,ok"
    seen = drive(tmp_path, level, names)
    assert seen["own_memory"]["error"] == "MemoryError"
    assert "MemoryError" in seen["own_memory"]["builtin"]  # `except MemoryError` in a check
    assert seen["own_memory_subclass"]["error"] == "Mine"
    assert "MemoryError" in seen["own_memory_subclass"]["builtin"]
    assert seen["own_recursion_subclass"]["error"] == "Deep"
    assert "RecursionError" in seen["own_recursion_subclass"]["builtin"]
    assert seen["recurses"]["error"] == "RecursionError"
    assert seen["recurses"]["location"][0] == "lesson.py"
    assert seen["odd_base"]["error"] == "Odd"
    assert seen["ok"]["value"] == 5  # the sandbox goes on serving
    assert not any(seen[name]["ended"] for name in names.split(","))


@pytest.mark.slow
@pytest.mark.parametrize("level", LEVELS)
def test_a_memory_error_at_import_is_the_students(tmp_path: Path, level: str) -> None:
    source = "class Mine(MemoryError):\n    pass\n\nraise Mine('at import')\n"
    seen = drive(tmp_path, level, "ok", source=source)
    assert seen["hello_ok"] is False and seen["gone_at_hello"] == ""
    assert seen["hello_error"][0] == "Mine" and "MemoryError" in seen["hello_error"][1]
