"""rne_control.ros.wire against rclpy's own serialisation (the independent truth): every JointState and
Float64MultiArray rclpy serialises reads back to the same values, big-endian and malformed messages go
through rclpy's deserializer, and SerializedMessage's bytes deserialise to the values written into them."""
import struct

import numpy as np
import pytest

from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

from rne_control.ros.wire import JointStateReader, SerializedMessage, read_float64_array


def random_joint_state(rng):
    m = JointState()
    k = int(rng.integers(0, 10))
    m.header.frame_id = "f" * int(rng.integers(0, 9))        # every alignment of what follows
    m.header.stamp.sec = int(rng.integers(0, 2**31))
    m.header.stamp.nanosec = int(rng.integers(0, 10**9))
    m.name = ["j" + "é" * int(rng.integers(0, 4)) + "x" * int(rng.integers(0, 5)) + str(i) for i in range(k)]
    m.position = rng.normal(size=k).tolist()
    m.velocity = rng.normal(size=k).tolist() if rng.random() < 0.7 else []
    m.effort = rng.normal(size=k).tolist() if rng.random() < 0.5 else []
    return m


def assert_read_as(read, m):
    """What JointStateReader.read returned equals the message ``m``."""
    names, p, v, e, stamp = read
    assert names == tuple(m.name)
    assert np.array_equal(p, m.position) and np.array_equal(v, m.velocity) and np.array_equal(e, m.effort)
    assert stamp == m.header.stamp.sec * 10**9 + m.header.stamp.nanosec
    # the merge's kernels take aligned, writable arrays (anything else would compile a new signature)
    assert p.flags.aligned and p.flags.writeable and v.flags.aligned and v.flags.writeable


def test_names_are_decoded_once_per_name_list():
    reader = JointStateReader()
    m = JointState(name=["a", "b"], position=[1.0, 2.0])
    first = reader.read(serialize_message(m))[0]
    m.position = [3.0, 4.0]
    m.header.frame_id = "other"
    again, p = reader.read(serialize_message(m))[:2]
    assert again is first and p.tolist() == [3.0, 4.0]
    m.name = ["a", "c"]                                     # same lengths, other names
    assert reader.read(serialize_message(m))[0] == ("a", "c")
    # the padding after a string may hold any bytes (Fast CDR leaves it uninitialised): still the same names
    m.name, m.header.frame_id = ["a", "b"], ""
    raw = bytearray(serialize_message(m))
    at = raw.index(b"a\x00") + 2                           # "a" and its NUL, then two bytes of padding
    raw[at:at + 2] = b"\xde\xad"
    assert reader.read(bytes(raw))[0] is first


def _be_joint_state(m):
    """``m`` serialised as big-endian plain CDR, written here from the format's rules."""
    out = bytearray(b"\x00\x00\x00\x00")

    def align(k):
        while (len(out) - 4) % k:
            out.append(0)

    def u32(x):
        align(4)
        out.extend(struct.pack(">I", x))

    def string(s):
        b = s.encode() + b"\x00"
        u32(len(b))
        out.extend(b)

    def doubles(xs):
        u32(len(xs))
        if len(xs):
            align(8)
            out.extend(struct.pack(">%dd" % len(xs), *xs))

    align(4)
    out.extend(struct.pack(">iI", m.header.stamp.sec, m.header.stamp.nanosec))
    string(m.header.frame_id)
    u32(len(m.name))
    for nm in m.name:
        string(nm)
    doubles(list(m.position))
    doubles(list(m.velocity))
    doubles(list(m.effort))
    return bytes(out)


@pytest.mark.parametrize("serialise, count", [(serialize_message, 3000), (_be_joint_state, 200)],
                         ids=["rclpy little-endian", "big-endian through rclpy"])
def test_joint_states_read_as_written(serialise, count):
    rng = np.random.default_rng(7)
    reader = JointStateReader()
    for _ in range(count):
        m = random_joint_state(rng)
        assert_read_as(reader.read(serialise(m)), m)


def test_malformed_messages_go_through_rclpy():
    reader = JointStateReader()
    raw = serialize_message(JointState(name=["a", "b"], position=[1.0, 2.0]))
    with pytest.raises(Exception):
        reader.read(raw[:-9])                               # truncated: rclpy's error, not a wrong value


def test_float64_arrays_read_as_rclpy_wrote_them():
    rng = np.random.default_rng(5)
    for _ in range(2000):
        f = Float64MultiArray()
        f.layout.dim = [MultiArrayDimension(label="l" * int(rng.integers(0, 7)), size=int(rng.integers(0, 9)),
                                            stride=int(rng.integers(0, 99))) for _ in range(int(rng.integers(0, 4)))]
        f.layout.data_offset = int(rng.integers(0, 5))
        f.data = rng.normal(size=int(rng.integers(0, 12))).tolist()
        assert np.array_equal(read_float64_array(serialize_message(f)), f.data)


def test_serialized_message_bytes_deserialise_to_what_was_written():
    wire = SerializedMessage(JointState(name=["a", "bb", "ccc"]), {"effort": 3}, stamped=True)
    wire.views["effort"][:] = [1.5, -2.0, 3.25]
    wire.stamp(12_345_678_901)
    d = deserialize_message(wire.bytes(), JointState)
    assert list(d.name) == ["a", "bb", "ccc"] and list(d.effort) == [1.5, -2.0, 3.25]
    assert (d.header.stamp.sec, d.header.stamp.nanosec) == (12, 345_678_901) and list(d.position) == []
    n = 7
    data = SerializedMessage(Float64MultiArray(), {"data": n})
    for x in (np.arange(n) * 1.5, np.full(n, np.pi), np.zeros(n)):
        data.views["data"][:] = x
        assert np.array_equal(deserialize_message(data.bytes(), Float64MultiArray).data, x)
        assert data.bytes() == serialize_message(Float64MultiArray(data=x.tolist()))
    js = SerializedMessage(JointState(name=["p", "q"]), {"position": 2, "velocity": 2, "effort": 2}, stamped=True)
    js.views["velocity"][:] = [7.0, 8.0]
    d = deserialize_message(js.bytes(), JointState)
    assert list(d.position) == [0.0, 0.0] and list(d.velocity) == [7.0, 8.0] and list(d.effort) == [0.0, 0.0]
