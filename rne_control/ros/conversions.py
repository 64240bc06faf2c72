"""Conversions between ROS messages and the control layer's arrays.

``~/controller_state`` layout (std_msgs/Float64MultiArray)
-----------------------------------------------------------
``layout.dim[0]``: label ``"field"``, size F = 15, stride F*n;
``layout.dim[1]``: label ``"joint"``, size n (the ``joints`` parameter, in
that order), stride n; ``data_offset`` 0. Element (f, j) is ``data[f*n + j]``.
Rows (``STATE_FIELDS``):

==  ======================  ==================================================
 0  position_desired        q_d (rad or m)
 1  velocity_desired        qd_d
 2  acceleration_desired    qdd_d
 3  position_measured       q
 4  velocity_measured       qd (estimated if /joint_states has no velocities)
 5  position_error          q_d - q
 6  velocity_error          qd_d - qd
 7  effort_command          the published command (after ramp and clamp)
 8  effort_law              the law's torque before ramp and clamp = rows 9..14
 9  effort_inertial         M(q) qdd_d (computed_torque only)
10  effort_coriolis         C(q, qd) qd (modes with measured velocity)
11  effort_gravity          g(q) (modes with gravity)
12  effort_feedback         M(q)(Kd e_dot + Kp e) in computed_torque, hold PD otherwise
13  effort_friction         Fs sign(qd) + Fv qd (with friction_compensation)
14  effort_base             what a moving / free-floating base adds (0 on a fixed base)
==  ======================  ==================================================

After these F*n values come the plant's extra arrays
(:meth:`~rne_control.control.plant.Plant.extra_state`), each described by one more
``layout.dim`` entry (label = its name, size = its length, stride = its length), in that
order: ``elastic_deflection`` and ``elastic_acceleration`` (rad or m, rad/s^2 or m/s^2;
``elastic_joint_names`` order) of a robot with elastic joints, ``platform_pose``
[x, y, z, qx, qy, qz, qw] and ``platform_twist`` [v; w] (base frame) of a parallel
platform. A tree adds nothing.
"""
from __future__ import annotations

import numpy as np

from ..control.laws import SPLIT_PARTS

# the effort command's message types (both nodes): std_msgs/Float64MultiArray, sensor_msgs/JointState efforts
COMMAND_TYPES = ("float64_multi_array", "joint_state")
STATE_FIELDS = (
    "position_desired", "velocity_desired", "acceleration_desired",
    "position_measured", "velocity_measured", "position_error", "velocity_error",
    "effort_command", "effort_law",
    "effort_inertial", "effort_coriolis", "effort_gravity", "effort_feedback", "effort_friction", "effort_base",
)


def stamp_to_sec(stamp) -> float:
    return float(stamp.sec) + 1e-9 * float(stamp.nanosec)


def duration_to_sec(d) -> float:
    return float(d.sec) + 1e-9 * float(d.nanosec)


def time_msg(ns: int):
    """builtin_interfaces/Time of ``ns`` integer nanoseconds (ROS time: since the epoch, or sim time)."""
    from builtin_interfaces.msg import Time   # not at the top: the library's users import this module

    return Time(sec=int(ns // 1_000_000_000), nanosec=int(ns % 1_000_000_000))


def duration_msg(seconds: float):
    """builtin_interfaces/Duration of ``seconds`` (>= 0), rounded to the nanosecond."""
    from builtin_interfaces.msg import Duration

    ns = int(round(seconds * 1e9))
    return Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def joint_trajectory_message(joint_names, start_ns: int, pieces, dt: float, from_zero: bool = False):
    """trajectory_msgs/JointTrajectory stamped ``start_ns`` (ROS time, ns): the motions ``pieces`` =
    [(f, duration s)] back to back, each f(t) -> (positions, velocities, accelerations) at t in [0, duration]
    (rad or m, per s, per s^2; ``joint_names`` order), sampled every ``dt`` s from t = dt (from t = 0 in the
    first piece with ``from_zero``) to its duration."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    msg = JointTrajectory()
    msg.header.stamp = time_msg(start_ns)
    msg.joint_names = list(joint_names)
    offset = 0.0
    for i, (f, duration) in enumerate(pieces):
        for k in range(0 if from_zero and i == 0 else 1, int(duration / dt + 1e-6) + 1):
            q, qd, qdd = (np.asarray(x, dtype=float).tolist() for x in f(k * dt))
            p = JointTrajectoryPoint(positions=q, velocities=qd, accelerations=qdd)
            p.time_from_start = duration_msg(offset + k * dt)
            msg.points.append(p)
        offset += duration
    return msg


def controller_state_message(nc: int, extra: dict):
    """A ``~/controller_state`` message (layout in the module docstring) for ``nc`` joints and the extra
    arrays ``extra`` (name -> array, for the sizes), serialised once. Returns (message, rows (F, nc) view,
    {name: view}): the views share the serialised message's buffer; publish ``message.bytes()``."""
    from std_msgs.msg import Float64MultiArray, MultiArrayDimension
    from .wire import SerializedMessage
    F = len(STATE_FIELDS)
    sizes = {k: int(np.size(v)) for k, v in extra.items()}
    msg = Float64MultiArray()
    msg.layout.dim = [MultiArrayDimension(label="field", size=F, stride=F * nc),
                      MultiArrayDimension(label="joint", size=nc, stride=nc)] + [
        MultiArrayDimension(label=k, size=m, stride=m) for k, m in sizes.items()]
    msg.layout.data_offset = 0
    wire = SerializedMessage(msg, {"data": F * nc + sum(sizes.values())})
    data = wire.views["data"]
    views, at = {}, F * nc
    for k, m in sizes.items():
        views[k] = data[at:at + m]
        at += m
    return wire, data[:F * nc].reshape(F, nc), views


def fill_controller_state(rows, views, desired, measured, command, parts: dict, extra: dict) -> None:
    """Write one ``~/controller_state`` into the views of :func:`controller_state_message`: ``desired``
    (q_d, qd_d, qdd_d), ``measured`` (q, qd), the published ``command``, the law's ``parts``
    (``SPLIT_PARTS`` of :meth:`~rne_control.control.laws.ControlLaw.split`) and the plant's ``extra``."""
    rows[0], rows[1], rows[2] = desired
    rows[3], rows[4] = measured
    rows[5] = rows[0] - rows[3]
    rows[6] = rows[1] - rows[4]
    rows[7] = command
    for r, k in enumerate(SPLIT_PARTS):
        rows[9 + r] = parts[k]
    rows[8] = rows[9:15].sum(axis=0)
    for k, view in views.items():
        view[:] = extra[k]


def trajectory_fields(msg):
    """(names, times, positions, velocities, accelerations, start_time or None) of a JointTrajectory."""
    names = list(msg.joint_names)
    times, P, V, A = [], [], [], []
    for pt in msg.points:
        times.append(duration_to_sec(pt.time_from_start))
        P.append(list(pt.positions))
        V.append(list(pt.velocities))
        A.append(list(pt.accelerations))
    st = msg.header.stamp
    start = None if (st.sec == 0 and st.nanosec == 0) else stamp_to_sec(st)
    return names, times, P, V, A, start


def odometry_fields(msg):
    """(orientation xyzw, twist [v; w] in the child (base) frame) of a nav_msgs/Odometry."""
    o = msg.pose.pose.orientation
    tw = msg.twist.twist
    quat = np.array([o.x, o.y, o.z, o.w], dtype=float)
    twist = np.array([tw.linear.x, tw.linear.y, tw.linear.z, tw.angular.x, tw.angular.y, tw.angular.z])
    if not (np.all(np.isfinite(quat)) and np.all(np.isfinite(twist))):
        raise ValueError("non-finite odometry")
    if np.linalg.norm(quat) < 1e-9:
        raise ValueError("zero quaternion in odometry")
    return quat, twist


def accel_fields(msg):
    """(classical linear acceleration of the base origin, angular acceleration), base frame."""
    a = msg.accel
    lin = np.array([a.linear.x, a.linear.y, a.linear.z], dtype=float)
    ang = np.array([a.angular.x, a.angular.y, a.angular.z], dtype=float)
    if not (np.all(np.isfinite(lin)) and np.all(np.isfinite(ang))):
        raise ValueError("non-finite acceleration")
    return lin, ang
