"""Task-space topics of ``rne_controller`` for a model whose plant has a task space (a parallel platform):

* ``~/platform_trajectory`` (trajectory_msgs/MultiDOFJointTrajectory, one joint named ``platform``):
  each point's transform (platform pose in the base frame), and optionally its velocity (twist [v; w] of
  the platform origin, base frame) and acceleration, converted to the legs by inverse kinematics
  (:func:`rne_control.control.task_space.leg_motion`) and then handled exactly as a
  ``~/joint_trajectory`` on the legs: the same interpolation, start time and rejection rules (a rejected
  trajectory is logged and counted as ``rejected_platform_trajectory``; the running one stays).
  Velocities and accelerations must be given for every point or for none.
* ``~/platform_state`` (nav_msgs/Odometry) at ``state_publish_rate``: the platform pose from the forward
  kinematics of the measured legs (frame ``base``, child ``platform``) and its twist, expressed in the
  platform frame as REP 105 has it for odometry.
"""
from __future__ import annotations

import math

import numpy as np
from nav_msgs.msg import Odometry
from trajectory_msgs.msg import MultiDOFJointTrajectory

from ...control.task_space import leg_motion
from ...control.trajectory import TrajectoryError
from ...model.spatial import quat_to_matrix
from ..conversions import duration_to_sec, stamp_to_sec

JOINT = "platform"


def _vec(v):
    return [v.x, v.y, v.z]


def platform_trajectory_fields(msg, model):
    """(leg names, times, positions, velocities, accelerations, start or None) of a platform trajectory, in
    the form of :func:`rne_control.ros.conversions.trajectory_fields`. Raises TrajectoryError."""
    if list(msg.joint_names) != [JOINT]:
        raise TrajectoryError("a platform trajectory names one joint, %r (got %s)" % (JOINT, list(msg.joint_names)),
                              "joint_names")
    if not msg.points:
        raise TrajectoryError("a platform trajectory needs at least one point", "points")
    has_v = [len(pt.velocities) > 0 for pt in msg.points]
    has_a = [len(pt.accelerations) > 0 for pt in msg.points]
    if len(set(has_v)) > 1 or len(set(has_a)) > 1 or (has_a[0] and not has_v[0]):
        raise TrajectoryError("velocities and accelerations must be given for every point or for none "
                              "(accelerations only with velocities)", "points")
    times, P, V, A = [], [], [], []
    for k, pt in enumerate(msg.points):
        if len(pt.transforms) != 1 or len(pt.velocities) > 1 or len(pt.accelerations) > 1:
            raise TrajectoryError("point %d: one transform (and at most one velocity and acceleration) for the "
                                  "one joint %r" % (k, JOINT), "points")
        tr = pt.transforms[0]
        pose = np.array(_vec(tr.translation) + [tr.rotation.x, tr.rotation.y, tr.rotation.z, tr.rotation.w])
        twist = np.array(_vec(pt.velocities[0].linear) + _vec(pt.velocities[0].angular)) if has_v[0] else None
        accel = np.array(_vec(pt.accelerations[0].linear) + _vec(pt.accelerations[0].angular)) if has_a[0] else None
        for name, x in (("transform", pose), ("velocity", twist), ("acceleration", accel)):
            if x is not None and not np.all(np.isfinite(x)):
                raise TrajectoryError("point %d: non-finite %s" % (k, name), name)
        if np.linalg.norm(pose[3:]) < 1e-9:
            raise TrajectoryError("point %d: zero rotation quaternion" % k, "transform")
        try:
            q, qd, qdd = leg_motion(model, pose, twist, accel)
        except ValueError as e:
            raise TrajectoryError("point %d: %s" % (k, e), "transform") from None
        times.append(duration_to_sec(pt.time_from_start))
        P.append(q.tolist())
        V.append([] if qd is None else qd.tolist())
        A.append([] if qdd is None else qdd.tolist())
    st = msg.header.stamp
    start = None if (st.sec == 0 and st.nanosec == 0) else stamp_to_sec(st)
    return list(model.joint_names), times, P, V, A, start


class PlatformTopics:
    """The two topics on a ControllerNode ``node`` (see the module docstring)."""

    def __init__(self, node):
        self.node = node
        node._rejected.setdefault("platform_trajectory", 0)
        node.create_subscription(MultiDOFJointTrajectory, "~/platform_trajectory", self._on_trajectory, 10)
        self._pub = node.publishing.create(Odometry, "~/platform_state", 10)
        self._msg = Odometry()
        self._msg.header.frame_id = "base"
        self._msg.child_frame_id = JOINT

    def _on_trajectory(self, msg) -> None:
        node = self.node
        try:
            fields = platform_trajectory_fields(msg, node.plant.model)
        except TrajectoryError as e:
            node._reject("platform_trajectory", "~/platform_trajectory", e)
            return
        node.accept_trajectory("platform_trajectory", "~/platform_trajectory", *fields)

    def publish_state(self, stamp_ns: int) -> None:
        """Publish the platform pose and twist of the state last set (called at state_publish_rate)."""
        plant, m = self.node.plant, self._msg
        pose, twist = plant.pose, plant.twist
        m.header.stamp.sec, m.header.stamp.nanosec = stamp_ns // 1000000000, stamp_ns % 1000000000
        p, o = m.pose.pose.position, m.pose.pose.orientation
        p.x, p.y, p.z = (float(x) for x in pose[:3])
        o.x, o.y, o.z, o.w = (float(x) for x in pose[3:])
        Rt = quat_to_matrix(*pose[3:]).T
        v, w = Rt @ twist[:3], Rt @ twist[3:]
        lin, ang = m.twist.twist.linear, m.twist.twist.angular
        lin.x, lin.y, lin.z = (float(x) for x in v)
        ang.x, ang.y, ang.z = (float(x) for x in w)
        if all(math.isfinite(x) for x in (*pose, *v, *w)):
            self._pub.publish(m)


def create(node):
    """PlatformTopics for a node whose plant has a task space, else None."""
    return PlatformTopics(node) if getattr(node.plant, "task_space", False) else None
