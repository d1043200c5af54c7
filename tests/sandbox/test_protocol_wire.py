"""Frames on a socket: sizes checked before reading, timeouts, a peer that goes away."""

from __future__ import annotations

import struct
import threading
import time

import pytest

from grader.protocol import wire


def test_a_frame_round_trips_with_its_buffers():
    a, b = wire.socketpair()
    wire.send(a, {"x": 1}, [b"abc", memoryview(b"defg")])
    msg, buffers = wire.receive(b, time.monotonic() + 5)
    assert msg == {"x": 1} and [bytes(x) for x in buffers] == [b"abc", b"defg"]


def test_an_oversized_frame_is_refused_before_it_is_read():
    a, b = wire.socketpair()
    a.sendall(struct.pack("<II", 10, wire.MAX_FRAME_BYTES + 1))
    with pytest.raises(wire.WireError, match="too large"):
        wire.receive(b, time.monotonic() + 5)


def test_a_half_sent_frame_times_out():
    a, b = wire.socketpair()
    a.sendall(struct.pack("<II", 100, 0) + b"{")
    started = time.monotonic()
    with pytest.raises(wire.Timeout):
        wire.receive(b, time.monotonic() + 0.3)
    assert time.monotonic() - started < 3


def test_a_peer_that_closes_is_reported():
    a, b = wire.socketpair()
    threading.Timer(0.1, a.close).start()
    with pytest.raises(wire.Closed):
        wire.receive(b, time.monotonic() + 5)


@pytest.mark.parametrize("header", [b"not json", b'{"msg": 1, "buffers": [[0, 99]]}', b"[1, 2]"])
def test_malformed_headers_are_refused(header):
    a, b = wire.socketpair()
    a.sendall(struct.pack("<II", len(header), 0) + header)
    with pytest.raises(wire.WireError):
        wire.receive(b, time.monotonic() + 5)
