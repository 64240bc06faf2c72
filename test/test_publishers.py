"""rne_control.ros.publishers on a real rclpy node over Fast DDS: a sample the middleware refuses is counted
under its topic, logged with the topic's name, and publish returns False instead of raising; the next
sample goes out and is received.

The refusal is the middleware's own: Fast DDS refuses a serialized sample larger than a bounded type's
largest (std_msgs/Bool) with the same "cannot publish data" error it gives under load (ros2/rmw#209)."""
import pytest
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from std_msgs.msg import Bool

from rne_control.ros.publishers import Publishers

OVERSIZE = b"\x00\x01\x00\x00" + b"\x01" * 64   # CDR header + more bytes than a Bool can hold


def test_a_refused_sample_is_counted_logged_and_the_next_goes_out(ros_node, capfd):
    node = ros_node.node
    raw = node.create_publisher(Bool, "/rne_test_refusal_raw", 10)
    with pytest.raises(_rclpy.RCLError, match="cannot publish data"):   # the premise: rclpy raises
        raw.publish(OVERSIZE)

    pubs = Publishers(node)
    pub = pubs.create(Bool, "/rne_test_refusal", 10)
    got = ros_node.collect(Bool, "/rne_test_refusal", qos=10)
    assert ros_node.wait_for(lambda: pub.get_subscription_count() == 1, 10.0)
    assert pub.publish(OVERSIZE) is False
    assert pub.publish(OVERSIZE) is False
    assert pubs.refused == {"/rne_test_refusal": 2} and pubs.refused_total == 2
    assert pubs.new_refusals() == 2 and pubs.new_refusals() == 0
    assert pub.publish(Bool(data=True)) is True
    assert ros_node.wait_for(lambda: len(got) == 1, 10.0)
    assert got.last().data is True
    assert pubs.refused_total == 2
    err = capfd.readouterr().err
    # one warning within the throttle period, naming the topic and the count
    assert err.count("the middleware refused a sample") == 1, err
    assert "/rne_test_refusal: the middleware refused a sample (1 on this topic so far" in err
