"""Probes run the code bound before the student's module ran, whatever it reassigns later."""

import jax
import numpy as np
import pytest

from grader.checks import jit
from grader.checks.failure import CheckFailure
from grader.probes import traces
from grader.protocol import sandbox as proto
from grader.sandbox import server
from grader.sandbox.probes import REGISTRY, name_of


def test_the_server_looks_probes_up_in_its_copy_of_the_registry():
    copy = dict(REGISTRY)
    box = server.Server(None, "", copy)
    name = name_of(traces.compile_state)
    REGISTRY[name] = lambda fn: {"jitted": True, "cache_size": 0, "traces": 0, "compiles": 0}
    try:
        assert box.run(proto.Probe(name, (len,))) == traces.compile_state(len)
        box = server.Server(None, "", {})
        with pytest.raises(LookupError):
            box.run(proto.Probe(name, (len,)))
    finally:
        REGISTRY[name] = traces.compile_state


def test_a_reassigned_jax_jit_does_not_reach_the_probes(monkeypatch):
    def piecewise(x):
        if x > 0:  # a Python branch on a traced value: does not compile
            return x
        return -x

    monkeypatch.setattr(jax, "jit", lambda fn, **options: fn)  # "jit" that never traces
    with pytest.raises(CheckFailure, match="TracerBoolConversionError"):
        jit.assert_jittable(piecewise, (np.float32(1.0),), what="piecewise(x)")


def test_threads_started_after_the_import_are_counted():
    import threading

    box = server.Server(None, "", {})
    box.baseline = server.thread_ids()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert box.threads() == 1
        reply = proto.reply_from(box.decode(*box.handle_frame(*_encoded(box))))
        assert reply.threads == 1
    finally:
        stop.set()
        thread.join()
    assert box.threads() == 0


def _encoded(box):
    from grader.sandbox.client import Channel

    msg, buffers = Channel(None)._encode(proto.request_to(proto.Describe(proto.MODULE_HANDLE)))
    return msg, [memoryview(bytes(b)) for b in buffers]


def test_the_sandbox_loads_the_probes_and_no_check():
    """`load_all` (what the judge imports before it forks the sandbox) registers every probe,
    from `grader.probes` and `grader.inputs`, and imports no module of `grader.checks`."""
    import json
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from grader.sandbox import probes\n"
        "probes.load_all()\n"
        "print(json.dumps([sorted(m for m in sys.modules if m.startswith('grader.')),\n"
        "                  sorted(n.partition(':')[0] for n in probes.REGISTRY)]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    ).stdout
    loaded, names = json.loads(out)
    owners = set(names)
    assert [m for m in loaded if m.startswith(("grader.checks", "grader.plugin"))] == []
    assert [m for m in loaded if m.startswith(("grader.suites", "grader.authoring"))] == []
    assert {"grader.probes.jit", "grader.probes.traces", "grader.probes.exported"} <= owners
    assert all(o.startswith(("grader.probes.", "grader.inputs.")) for o in owners), owners


def test_a_check_failure_is_one_class_wherever_it_is_imported_from():
    from grader.checks import failure
    from grader.protocol import failure as protocol_failure

    assert failure.CheckFailure is protocol_failure.CheckFailure
    assert not hasattr(protocol_failure, "fail")  # `fail` has one home: grader.checks.failure
    with pytest.raises(protocol_failure.CheckFailure) as raised:
        failure.fail("x", expected="a", observed="b")  # it raises, as pytest.fail does
    assert isinstance(raised.value, CheckFailure) and raised.value.finding.observed == "b"
