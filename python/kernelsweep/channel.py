"""Length-prefixed JSON messages over a pair of pipe file descriptors (src/cluster/pipe_channel.h):
a 4-byte little-endian length, then that many bytes of UTF-8 JSON."""
from __future__ import annotations

import json
import math
import os
import struct
from typing import Optional


class PipeChannel:
    def __init__(self, read_fd: int, write_fd: int):
        self.read_fd, self.write_fd = read_fd, write_fd

    def send(self, message: dict) -> bool:
        """Writes one message; False when the rank has gone."""
        body = json.dumps(_without_non_finite(message), separators=(",", ":")).encode()
        data = struct.pack("<I", len(body)) + body
        try:
            while data:
                written = os.write(self.write_fd, data)
                data = data[written:]
        except BrokenPipeError:
            return False
        return True

    def receive(self) -> Optional[dict]:
        """Reads one message; None when the rank closed the pipe."""
        header = self._read_exactly(4)
        if header is None:
            return None
        body = self._read_exactly(struct.unpack("<I", header)[0])
        return None if body is None else json.loads(body)

    def _read_exactly(self, count: int) -> Optional[bytes]:
        chunks, left = [], count
        while left:
            chunk = os.read(self.read_fd, left)
            if not chunk:
                return None
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)


def _without_non_finite(value):
    """NaN and infinities as null, as the C++ side writes and reads a figure that was not measured."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _without_non_finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_non_finite(v) for v in value]
    return value
