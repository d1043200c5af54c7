"""Probes run the code bound before the student's module ran, whatever it reassigns later."""

import jax
import numpy as np
import pytest

from grader.checks import jit, traces
from grader.checks.failure import CheckFailure
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
