"""The ROS side of task-space control in ``rne_controller`` (the cycle's
:class:`~rne_control.control.task.TaskSpace`):

In:

* ``~/target_pose`` (geometry_msgs/PoseStamped): the target of ``end_effector_frame``. ``header.frame_id``
  is empty (the base) or a frame of the model, converted to the base frame once, at arrival, at the
  measured configuration (there is no tf here); anything else is rejected with the reason. The target is
  approached along a shaped path (``max_cartesian_velocity``). Only in a task-space mode.
* ``~/target_wrench`` (geometry_msgs/WrenchStamped): F_d, the wrench the tool is to exert on the
  environment, given at the origin of ``header.frame_id`` in its axes (empty: the base's), converted at
  arrival to base axes at the end effector's origin. Only in a task-space mode; entering one starts from 0.

Out:

* ``~/end_effector_pose`` (geometry_msgs/PoseStamped, frame_id: the base link), at ``state_publish_rate``
  while someone subscribes, in every mode, stamped with the state it comes from;
* ``~/task_state`` (std_msgs/Float64MultiArray) in the task-space modes, at ``state_publish_rate`` while
  someone subscribes. Its layout labels each field (``layout.dim``: label, size; in order):
  ``pose_error`` (6: p - p_d, m; log(R R_d^T), rad; before the clip), ``target_position`` (3, m),
  ``target_orientation`` (4, quaternion x y z w), ``target_twist`` (6), ``target_accel`` (6), ``twist`` (6:
  J qd), ``sigma_min`` (1), ``position_clipped``, ``rotation_clipped``, ``singular`` (1 each: 1.0 or 0.0).
"""
from __future__ import annotations

import numpy as np

from geometry_msgs.msg import PoseStamped, WrenchStamped
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

from ...control.task import TaskError, task_unavailable
from ...control.task.rotation import matrix_quaternion
from ...control.trajectory import TrajectoryError
from ..wire import SerializedMessage

TASK_STATE_FIELDS = (("pose_error", 6), ("target_position", 3), ("target_orientation", 4), ("target_twist", 6),
                     ("target_accel", 6), ("twist", 6), ("sigma_min", 1), ("position_clipped", 1),
                     ("rotation_clipped", 1), ("singular", 1))


def base_frame(model) -> str:
    """The name of the model's base link (the frame at the base's origin)."""
    for name, (b, T) in model.link_frames.items():
        if b < 0 and np.allclose(T, np.eye(4)):
            return name
    return ""


class TaskTopics:
    """Subscriptions and publishers of the module docstring, on the ControllerNode ``node``."""

    def __init__(self, node):
        self.node = node
        self.task = node.cycle.task
        node._rejected.update(target_pose=0, target_wrench=0)
        node.create_subscription(PoseStamped, "~/target_pose", self._on_pose, 10)
        node.create_subscription(WrenchStamped, "~/target_wrench", self._on_wrench, 10)
        if self.task is None:
            return
        self.base = base_frame(self.task.model)
        self._pose_pub = node.publishing.create(PoseStamped, "~/end_effector_pose", 10)
        self._state_pub = node.publishing.create(Float64MultiArray, "~/task_state", 10)
        msg = Float64MultiArray()
        msg.layout.dim = [MultiArrayDimension(label=k, size=m, stride=m) for k, m in TASK_STATE_FIELDS]
        self._state = SerializedMessage(msg, {"data": sum(m for _, m in TASK_STATE_FIELDS)})
        data = self._state.views["data"]
        self._views, at = {}, 0
        for k, m in TASK_STATE_FIELDS:
            self._views[k] = data[at:at + m]
            at += m

    # ------------------------------------------------------------ in
    def _take(self, key, msg, apply) -> bool:
        """Hand a message on ``~/<key>`` to the cycle: ``apply(frame)`` with its frame_id ("" for the base
        link); a rejection is logged with the reason and counted. True if it was taken."""
        node, cycle = self.node, self.node.cycle
        try:
            if self.task is None:
                raise TaskError("the %s model %r has no task space: %s" % (cycle.plant.kind, cycle.plant.name,
                                                                           task_unavailable(cycle.plant)))
            apply("" if msg.header.frame_id == self.base else msg.header.frame_id)
        except (TaskError, TrajectoryError) as e:
            node._reject(key, "~/" + key, e)
            return False
        return True

    def _on_pose(self, msg: PoseStamped) -> None:
        p, o = msg.pose.position, msg.pose.orientation
        node = self.node
        if self._take("target_pose", msg, lambda frame: node.cycle.set_target(
                (p.x, p.y, p.z), (o.x, o.y, o.z, o.w), frame, node._now())):
            node.get_logger().info("target pose accepted (%s)" % (msg.header.frame_id or "base"),
                                   throttle_duration_sec=1.0)

    def _on_wrench(self, msg: WrenchStamped) -> None:
        f, m = msg.wrench.force, msg.wrench.torque
        self._take("target_wrench", msg, lambda frame: self.node.cycle.set_wrench(
            (f.x, f.y, f.z), (m.x, m.y, m.z), frame))

    # ------------------------------------------------------------ out
    def publish_state(self, stamp_ns: int) -> None:
        """The end effector's pose (every mode) and, in a task-space mode, the task state, to those who
        subscribe; ``stamp_ns``: the state's time."""
        task = self.task
        if task is None:
            return
        cycle = self.node.cycle
        in_task = cycle.task_running
        if self._pose_pub.get_subscription_count():
            try:
                T = task.pose if in_task else task.measured_pose()
            except ValueError as e:   # never let an output stop the loop
                self.node.get_logger().warning("end_effector_pose: %s" % e, throttle_duration_sec=5.0)
                return
            msg = PoseStamped()
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp_ns), 1_000_000_000)
            msg.header.frame_id = self.base
            pos, ori = msg.pose.position, msg.pose.orientation
            pos.x, pos.y, pos.z = (float(x) for x in T[:3, 3])
            ori.x, ori.y, ori.z, ori.w = (float(x) for x in matrix_quaternion(T[:3, :3]))
            self._pose_pub.publish(msg)
        if in_task and self._state_pub.get_subscription_count():
            v = self._views
            p_d, R_d, xd_d, xdd_d = task.shaped_target()
            v["pose_error"][:] = task.error
            v["target_position"][:] = p_d
            v["target_orientation"][:] = matrix_quaternion(R_d)
            v["target_twist"][:] = xd_d
            v["target_accel"][:] = xdd_d
            v["twist"][:] = task.twist
            v["sigma_min"][0] = task.sigma_min
            v["position_clipped"][0], v["rotation_clipped"][0] = task.clipped
            v["singular"][0] = task.singular
            self._state_pub.publish(self._state.bytes())

