"""Publishing from a control loop that outlives a sample the middleware refuses.

rclpy raises ``RCLError`` ("cannot publish data") when the middleware does not take a sample. Fast DDS
can refuse samples under load with reliable readers that cannot keep up (ros2/rmw#209); it did here, on
``~/external_wrench``, with a Python reader behind a 1 kHz lockstep loop on a loaded machine. One refused
sample of a monitoring topic, or even of one command, must not end a controller or a simulation:
:class:`Publishers` counts it per topic, logs it (throttled, naming the topic) and the loop goes on. The
next cycle's sample is the recovery.
"""
from __future__ import annotations

from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

LOG_THROTTLE = 5.0   # s between two warnings about refused samples


class Publishers:
    """The publishers of ``node`` created through :meth:`create`, and their refused samples."""

    def __init__(self, node):
        self.node = node
        self.refused = {}   # topic -> samples the middleware refused
        self._seen = 0

    def create(self, msg_type, topic: str, qos) -> "Publisher":
        """``node.create_publisher(msg_type, topic, qos)`` whose ``publish`` does not raise."""
        return Publisher(self, self.node.create_publisher(msg_type, topic, qos))

    @property
    def refused_total(self) -> int:
        return sum(self.refused.values())

    def new_refusals(self) -> int:
        """Samples refused since the previous call (a diagnostics period)."""
        total = self.refused_total
        new, self._seen = total - self._seen, total
        return new

    def send(self, topic: str, publish, msg) -> bool:
        """``publish(msg)``, an rclpy publish call (a publisher's, an action goal's feedback); False where
        the middleware refused the sample, counted under ``topic`` and logged."""
        try:
            publish(msg)
            return True
        except _rclpy.RCLError as e:
            self.refused[topic] = self.refused.get(topic, 0) + 1
            self.node.get_logger().warning(
                "%s: the middleware refused a sample (%d on this topic so far; a reader that cannot keep up?): %s"
                % (topic, self.refused[topic], e), throttle_duration_sec=LOG_THROTTLE)
            return False


class Publisher:
    """An rclpy publisher whose :meth:`publish` returns False where the middleware refused the sample."""

    __slots__ = ("_owner", "_pub", "topic_name")

    def __init__(self, owner: Publishers, pub):
        self._owner, self._pub = owner, pub
        self.topic_name = pub.topic_name

    def publish(self, msg) -> bool:
        """Publish ``msg`` (a message or its serialized bytes); False if it was refused (counted, logged)."""
        return self._owner.send(self.topic_name, self._pub.publish, msg)

    def get_subscription_count(self) -> int:
        return self._pub.get_subscription_count()
