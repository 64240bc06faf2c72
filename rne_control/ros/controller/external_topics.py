"""The ROS side of external torques and collisions in ``rne_controller`` (the cycle's
:class:`~rne_control.control.external.ExternalTorques`):

* ``~/external_torque`` (sensor_msgs/JointState): efforts = the observer's residual r at ``joints``, in
  their order (N m, N);
* ``~/external_wrench`` (geometry_msgs/WrenchStamped): the wrench acting on the robot at the origin of
  ``observer.wrench_frame``, in its axes, whose joint torques are r (damped pseudo-inverse);

  both at ``state_publish_rate`` while someone subscribes, stamped with the time of the state r comes from;
* ``~/collision`` (std_msgs/Bool, transient local): whether a collision reaction is latched (with
  ``collision.reaction: none``, whether the last state detected one); published when it changes;
* ``~/reset_collision`` (std_srvs/Trigger): release a latched reaction; the controller holds the measured
  position and ramps back in.
"""
from __future__ import annotations

import numpy as np

from geometry_msgs.msg import WrenchStamped
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from std_srvs.srv import Trigger

from ..sim.output import LOCKSTEP_DEPTH
from ..wire import SerializedMessage


class ExternalTopics:
    """Publishers and the service of the module docstring, on the ControllerNode ``node``."""

    def __init__(self, node):
        self.node = node
        self.external = node.cycle.external
        n = len(node.joints)
        self._torque = SerializedMessage(JointState(name=list(node.joints)), {"effort": n}, stamped=True)
        self._effort = self._torque.views["effort"]
        # in lockstep a reader can fall seconds of sim time behind: keep what it has not read yet
        depth = LOCKSTEP_DEPTH if node._sim_time else 10
        self._torque_pub = node.publishing.create(JointState, "~/external_torque", depth)
        self._wrench_pub = node.publishing.create(WrenchStamped, "~/external_wrench", depth)
        latched = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self._collision_pub = node.publishing.create(Bool, "~/collision", latched)
        self._collision = None
        self.publish_collision()
        node.create_service(Trigger, "~/reset_collision", self._on_reset)

    def publish_state(self) -> None:
        """r and the wrench of the latest observed state, to those who subscribe."""
        ext = self.external
        if not ext.enabled or ext.t == -np.inf:
            return
        stamp_ns = int(round(ext.t * 1e9))
        if self._torque_pub.get_subscription_count():
            np.copyto(self._effort, ext.r)
            self._torque.stamp(stamp_ns)
            self._torque_pub.publish(self._torque.bytes())
        if self._wrench_pub.get_subscription_count():
            try:
                F = ext.wrench()
            except (ValueError, np.linalg.LinAlgError) as e:   # never let an output stop the loop
                self.node.get_logger().warning("external_wrench: %s" % e, throttle_duration_sec=5.0)
                return
            msg = WrenchStamped()
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
            msg.header.frame_id = ext.settings.wrench_frame
            f, m = msg.wrench.force, msg.wrench.torque
            f.x, f.y, f.z, m.x, m.y, m.z = (float(x) for x in F)
            self._wrench_pub.publish(msg)

    def publish_collision(self) -> None:
        """``~/collision`` if it changed."""
        mon = self.external.monitor
        now = bool(mon.latched or mon.detected)
        if now != self._collision:
            self._collision = now
            self._collision_pub.publish(Bool(data=now))

    def _on_reset(self, _request, response):
        node = self.node
        response.success = node.cycle.reset_collision()
        response.message = ("collision reaction released: holding the measured position, ramping in"
                            if response.success else "no collision reaction is latched")
        node.get_logger().info("~/reset_collision: %s" % response.message)
        return response
