"""The command path's messages on the wire: ``sensor_msgs/JointState`` read from, and the command
messages written to, their serialised form, without rclpy's conversion to and from Python objects.

Why not rclpy's own: for every message it receives, rclpy builds the Python message (a JointState: its
header, a list of name strings, three arrays), and for every message it publishes it converts the
Python message back to C and then serialises it. At 1 kHz on this project's 2-core machine those
conversions were the largest part of the nodes' CPU besides the middleware's (``make bench-loop``,
docs/control_loop_speed.md). The nodes therefore subscribe with ``raw=True`` and read the serialised
bytes here (:class:`JointStateReader`, :func:`read_float64_array`), and publish bytes serialised once
by rclpy whose numbers are rewritten in place (:class:`SerializedMessage`). rclpy's
``publish(bytes)`` and ``raw=True`` subscriptions are its documented serialised-message API.

The format: a 4-byte encapsulation header (``00 01``: plain CDR, little-endian), then the fields in
order, each aligned to its size relative to the end of the header (XCDR1, what ROS 2's middlewares
use). A string is a uint32 length counting its NUL, then its bytes; a sequence a uint32 count, then
its elements. Only little-endian plain CDR is read here; anything else (a big-endian peer, XCDR2) goes
through rclpy's ``deserialize_message``, as does anything this reader cannot parse, so that a
malformed message gets rclpy's error.
"""
from __future__ import annotations

import struct
from typing import Optional, Tuple

import numpy as np

from rclpy.serialization import deserialize_message, serialize_message

_LE = b"\x00\x01"
_U32 = struct.Struct("<I")
_STAMP = struct.Struct("<iI")
_HEADER = struct.Struct("<iII")   # stamp (sec, nanosec), then the frame_id's length
_F8 = np.dtype("<f8")
_BODY = 4          # the encapsulation header's length: alignment counts from here
_NAMES_CACHE = 8   # distinct name lists remembered (one per publisher or joint group)


def _align(pos: int, size: int) -> int:
    return _BODY + ((pos - _BODY + size - 1) & -size)


def _doubles(raw: bytes, pos: int):
    """(float64 array, position after it) of the sequence<double> at ``pos``; the array is a read-only
    view of ``raw``, unaligned in memory."""
    (count,) = _U32.unpack_from(raw, pos)
    pos += 4
    if count == 0:
        return _EMPTY, pos
    pos = _align(pos, 8)
    end = pos + 8 * count
    if end > len(raw):
        raise ValueError("sequence past the end of the message")
    return np.frombuffer(raw, dtype=_F8, count=count, offset=pos), end


_EMPTY = np.zeros(0)


class JointStateReader:
    """Reads serialised ``sensor_msgs/JointState`` messages (``raw=True`` subscriptions).

    :meth:`read` returns ``(names, position, velocity, effort, stamp_ns)``: the names as a tuple (the
    same tuple object for every message with the same names, decoded once), the positions and
    velocities as new float64 arrays (aligned, writable), the efforts as a read-only view (its length
    is what the merge checks), and the header stamp in ns."""

    def __init__(self, msg_type=None):
        if msg_type is None:
            from sensor_msgs.msg import JointState as msg_type
        self.msg_type = msg_type
        self._names = []   # (serialised block, names tuple), newest first

    def read(self, raw: bytes) -> Tuple[tuple, np.ndarray, np.ndarray, np.ndarray, int]:
        if raw[:2] == _LE:
            try:
                return self._read_le(raw)
            except (struct.error, ValueError, UnicodeDecodeError):
                pass
        m = deserialize_message(raw, self.msg_type)
        st = m.header.stamp
        return (tuple(m.name), np.array(m.position, dtype=float), np.array(m.velocity, dtype=float),
                np.asarray(m.effort, dtype=float), st.sec * 1000000000 + st.nanosec)

    def _read_le(self, raw: bytes):
        sec, nanosec, n_frame = _HEADER.unpack_from(raw, _BODY)
        pos = _align(_BODY + 12 + n_frame, 4)
        for entry in self._names:
            block, segments, names = entry
            # the block as last seen; else its strings without the padding between them, whose bytes
            # the serialiser may leave uninitialised
            if raw.startswith(block, pos):
                break
            if all(raw.startswith(seg, pos + at) for at, seg in segments):
                entry[0] = raw[pos:pos + len(block)]
                break
        else:
            names, end = self._read_names(raw, pos)
            block = raw[pos:end]
        pos = _align(pos + len(block), 4)
        position, pos = _doubles(raw, pos)
        velocity, pos = _doubles(raw, _align(pos, 4))
        effort, _ = _doubles(raw, _align(pos, 4))
        return names, position.copy(), velocity.copy(), effort, sec * 1000000000 + nanosec

    def _read_names(self, raw: bytes, start: int):
        (count,) = _U32.unpack_from(raw, start)
        pos, names, segments = start + 4, [], [(0, raw[start:start + 4])]
        for _ in range(count):
            pos = _align(pos, 4)
            (n,) = _U32.unpack_from(raw, pos)
            if n == 0 or pos + 4 + n > len(raw):
                raise ValueError("malformed string")
            names.append(raw[pos + 4:pos + 3 + n].decode("utf-8"))
            segments.append((pos - start, raw[pos:pos + 4 + n]))
            pos += 4 + n
        names = tuple(names)
        self._names.insert(0, [raw[start:pos], segments, names])
        del self._names[_NAMES_CACHE:]
        return names, pos


def read_float64_array(raw: bytes, msg_type=None) -> np.ndarray:
    """The ``data`` of a serialised ``std_msgs/Float64MultiArray`` as a new float64 array (its layout is
    skipped)."""
    if raw[:2] == _LE:
        try:
            (n_dim,) = _U32.unpack_from(raw, _BODY)
            pos = _BODY + 4
            for _ in range(n_dim):   # label (string), then size and stride (uint32)
                pos = _align(pos, 4)
                (n,) = _U32.unpack_from(raw, pos)
                pos = _align(pos + 4 + n, 4) + 8
            pos = _align(pos, 4) + 4   # data_offset (uint32)
            data, _ = _doubles(raw, _align(pos, 4))
            return data.copy()
        except (struct.error, ValueError):
            pass
    if msg_type is None:
        from std_msgs.msg import Float64MultiArray as msg_type
    return np.array(deserialize_message(raw, msg_type).data, dtype=float)


class SerializedMessage:
    """A message serialised once by rclpy, whose float64[] fields and header stamp are rewritten in
    place: publish :meth:`bytes` with ``publisher.publish``.

    ``msg``: the message with every field as it is to stay (names, layout, frame); ``arrays``: the
    float64[] fields to rewrite ({field name: length}; the lengths are fixed); ``stamped``: rewrite
    ``header.stamp`` (:meth:`stamp`). ``views[field]``: a numpy view of that field's values in the
    serialised bytes (unaligned: copy into it)."""

    def __init__(self, msg, arrays: dict, stamped: bool = False):
        rng = np.random.default_rng(20261126)   # marker values, found once in the serialised bytes
        markers = {}
        for field, n in arrays.items():
            markers[field] = rng.uniform(1.0, 2.0, n) * 1e300
            setattr(msg, field, markers[field].tolist())
        if stamped:
            msg.header.stamp.sec, msg.header.stamp.nanosec = 0x5A17C0DE, 0x2B1E0F3D
        raw = serialize_message(msg)
        if raw[:2] != _LE:
            raise ValueError("rclpy serialised %s as %r, not little-endian CDR" % (type(msg).__name__, raw[:2]))
        self.buf = bytearray(raw)
        self.views = {}
        for field, values in markers.items():
            off = self._find(raw, values.astype("<f8").tobytes(), field) if values.size else 0
            self.views[field] = np.frombuffer(self.buf, dtype="<f8", count=values.size, offset=off)
            self.views[field][:] = 0.0
            setattr(msg, field, [0.0] * values.size)
        self._stamp_at: Optional[int] = None
        if stamped:
            self._stamp_at = self._find(raw, _STAMP.pack(0x5A17C0DE, 0x2B1E0F3D), "header.stamp")
            self.stamp(0)
            msg.header.stamp.sec = msg.header.stamp.nanosec = 0

    @staticmethod
    def _find(raw: bytes, pattern: bytes, what: str) -> int:
        at = raw.find(pattern)
        if at < 0 or raw.find(pattern, at + 1) >= 0:
            raise ValueError("cannot locate %s in the serialised message" % what)
        return at

    def stamp(self, t_ns: int) -> None:
        """Set ``header.stamp`` to ``t_ns`` (ns)."""
        _STAMP.pack_into(self.buf, self._stamp_at, t_ns // 1000000000, t_ns % 1000000000)

    def bytes(self) -> bytes:
        return bytes(self.buf)
