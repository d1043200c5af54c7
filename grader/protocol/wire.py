"""Length-prefixed frames on a stream socket: an 8-byte header, a JSON header, raw buffers.

    frame  = struct("<II", len(header), len(payload)) + header + payload
    header = {"msg": <tagged JSON>, "buffers": [[offset, nbytes], ...]}

Arrays travel as raw bytes in the payload (no base64, no pickle). Sizes are
checked before anything is read, so a sender cannot make the reader allocate
more than `MAX_FRAME_BYTES` or wait on a half-sent frame forever.
"""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import time
from typing import Any

MAX_HEADER_BYTES = 16 << 20
"""JSON part of one frame (tags, strings, shapes)."""
MAX_FRAME_BYTES = 512 << 20
"""Raw array bytes in one frame: larger replies are refused, not read."""

_PREFIX = struct.Struct("<II")


class WireError(Exception):
    """The peer sent something that is not a valid frame, or went away."""


class Timeout(WireError):
    """No complete frame arrived in time."""


class Closed(WireError):
    """The peer closed the connection (it exited or was killed)."""


def send(sock: socket.socket, msg: Any, buffers: list[bytes | memoryview]) -> None:
    spans, offset = [], 0
    for buf in buffers:
        n = memoryview(buf).nbytes
        spans.append([offset, n])
        offset += n
    header = json.dumps({"msg": msg, "buffers": spans}, separators=(",", ":")).encode()
    if len(header) > MAX_HEADER_BYTES or offset > MAX_FRAME_BYTES:
        raise WireError(f"frame too large ({len(header)} header bytes, {offset} data bytes)")
    sock.sendall(_PREFIX.pack(len(header), offset) + header)
    for buf in buffers:
        sock.sendall(buf)


def _read_exactly(sock: socket.socket, n: int, deadline: float | None) -> bytearray:
    out = bytearray(n)
    view = memoryview(out)
    got = 0
    while got < n:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Timeout("no reply in time")
            ready, _, _ = select.select([sock], [], [], remaining)
            if not ready:
                raise Timeout("no reply in time")
        try:
            k = sock.recv_into(view[got:], n - got)
        except (ConnectionError, OSError) as exc:
            raise Closed(str(exc)) from None
        if k == 0:
            raise Closed("the other side closed the connection")
        got += k
    return out


def receive(sock: socket.socket, deadline: float | None = None) -> tuple[Any, list[memoryview]]:
    """One frame: the tagged message and its buffers. Raises `WireError` on anything malformed."""
    head = _read_exactly(sock, _PREFIX.size, deadline)
    header_len, payload_len = _PREFIX.unpack(bytes(head))
    if header_len > MAX_HEADER_BYTES or payload_len > MAX_FRAME_BYTES:
        raise WireError(f"frame too large ({header_len} header bytes, {payload_len} data bytes)")
    try:
        header = json.loads(bytes(_read_exactly(sock, header_len, deadline)))
    except ValueError as exc:
        raise WireError(f"frame header is not JSON: {exc}") from None
    payload = (
        memoryview(_read_exactly(sock, payload_len, deadline)) if payload_len else memoryview(b"")
    )
    if (
        not isinstance(header, dict)
        or "msg" not in header
        or not isinstance(header.get("buffers"), list)
    ):
        raise WireError("frame header has no msg/buffers")
    buffers = []
    for span in header["buffers"]:
        if (
            not isinstance(span, list)
            or len(span) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in span)
            or span[0] + span[1] > payload_len
        ):
            raise WireError("frame buffer span out of range")
        buffers.append(payload[span[0] : span[0] + span[1]])
    return header["msg"], buffers


def socketpair() -> tuple[socket.socket, socket.socket]:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    for s in (a, b):
        os.set_inheritable(s.fileno(), False)
    return a, b
