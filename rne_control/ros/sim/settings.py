"""The parameters of ``rne_sim``: ``SPECS``, declared through :class:`~rne_control.ros.params.TypedParameters`
(a double accepts an integer; an array without a default is unset and reads as None, "from the model"),
and :func:`validate`.

The node reads them once, at start: they are not read-only, but a change at run time has no effect.
Besides ``SPECS`` it declares, per model, ``locked.<joint>`` (the position, rad or m, at which it holds
each uncontrolled joint; :func:`rne_control.ros.model_params.make_plant`) and takes the
``elastic.<joint>.*`` parameters of an elastic URDF robot (:mod:`rne_control.ros.model_params`).
"""
from __future__ import annotations

import math

from ..conversions import COMMAND_TYPES
from ..params import Spec, T
from ..runner import DEFAULT_EXECUTOR, EXECUTORS, check_executor

SPECS = [
    Spec("model_file", T.STRING, "", "URDF or DH YAML path (absolute or relative to the share folder)"),
    Spec("robot_description", T.STRING, "", "URDF XML string"),
    Spec("joints", T.STRING_ARRAY, None, "commanded (simulated) joints and command order; unset: the actuated "
         "joints"),
    Spec("publish_uncontrolled", T.BOOL, False, "also publish the uncontrolled joints, at their locked positions"),
    Spec("initial_positions", T.DOUBLE_ARRAY, None, "the controlled joints (joints order; an elastic robot's "
         "springs start deflected by gravity) or every simulated joint (its published order); unset: the "
         "reference state"),
    Spec("initial_velocities", T.DOUBLE_ARRAY, None, "in 'joints' order; unset: zeros"),
    Spec("initial_base_position", T.DOUBLE_ARRAY, None, "floating base: [x, y, z]"),
    Spec("initial_base_orientation", T.DOUBLE_ARRAY, None, "floating base: quaternion [x, y, z, w]"),
    Spec("sim_rate", T.DOUBLE, 2000.0, "integration rate, Hz"),
    Spec("integrator", T.STRING, "rk4", "rk4 | semi_implicit", choices=["rk4", "semi_implicit"]),
    Spec("substeps", T.INTEGER, 1, "integration substeps per 1/sim_rate"),
    Spec("publish_rate", T.DOUBLE, 1000.0, "joint state rate, Hz (real-time mode)"),
    Spec("command_topic", T.STRING, "/effort_controller/commands", "effort command topic"),
    Spec("command_type", T.STRING, COMMAND_TYPES[0], " | ".join(COMMAND_TYPES), choices=list(COMMAND_TYPES)),
    Spec("command_timeout", T.DOUBLE, 0.1, "brakes engage after this long without a command, s"),
    Spec("joint_states_topic", T.STRING, "/joint_states", "joint state topic"),
    Spec("odometry_topic", T.STRING, "base_odometry", "floating base: base state topic (nav_msgs/Odometry)"),
    Spec("odom_frame", T.STRING, "world", "floating base: the odometry's frame_id"),
    Spec("base_frame", T.STRING, "", "unset: the model's base link"),
    Spec("gravity", T.DOUBLE_ARRAY, None, "unset: the model's gravity"),
    Spec("friction", T.BOOL, True, "plant includes the model's friction"),
    Spec("joint_damping", T.DOUBLE_ARRAY, None, "extra viscous damping per joint (model mismatch), N m s/rad"),
    Spec("effort_limits", T.DOUBLE_ARRAY, None, "unset: the model's limits"),
    Spec("clamp_efforts", T.BOOL, True, "clamp the commanded efforts to effort_limits"),
    Spec("position_noise", T.DOUBLE, 0.0, "std dev of measured positions, rad"),
    Spec("velocity_noise", T.DOUBLE, 0.0, "std dev of measured velocities, rad/s"),
    Spec("noise_seed", T.INTEGER, 0, "seed of the measurement noise (0: a fresh one)"),
    Spec("lockstep", T.BOOL, False, "publish /clock and advance only on commands"),
    Spec("control_rate", T.DOUBLE, 500.0, "lockstep: controller rate, Hz"),
    Spec("control_period", T.DOUBLE, 0.0, "lockstep: step, s (0: 1/control_rate)"),
    Spec("lockstep_timeout", T.DOUBLE, 1.0, "lockstep: wall s to wait for a command"),
    Spec("lockstep_idle_timeout", T.DOUBLE, 0.1, "lockstep: wall s per step while no controller answers"),
    Spec("start_time", T.DOUBLE, 1.0, "lockstep: sim time of step 0, s"),
    Spec("executor", T.STRING, DEFAULT_EXECUTOR, "rclpy executor that spins the node", choices=list(EXECUTORS)),
    Spec("contact.frame", T.STRING, "", "a frame whose origin a plane stops ('' no contact; a fixed-base tree)"),
    Spec("contact.point", T.DOUBLE_ARRAY, [0.0, 0.0, 0.0], "a point of the contact plane, m, base frame"),
    Spec("contact.normal", T.DOUBLE_ARRAY, [0.0, 0.0, 1.0], "the plane's normal, towards the free side"),
    Spec("contact.stiffness", T.DOUBLE, 10000.0, "penalty spring, N/m"),
    Spec("contact.damping", T.DOUBLE, 100.0, "penalty damper, N s/m"),
]


def validate(p: dict) -> None:
    """ValueError naming the first parameter of ``p`` ({name: value}) out of its range or choices."""
    for k in ("sim_rate", "publish_rate", "control_rate"):
        if not (math.isfinite(p[k]) and p[k] > 0):
            raise ValueError(f"parameter '{k}' must be > 0")
    for s in SPECS:
        if s.choices and p[s.name] not in s.choices:
            raise ValueError(f"parameter '{s.name}' must be {' or '.join(s.choices)}")
    if p["substeps"] < 1:
        raise ValueError("parameter 'substeps' must be >= 1")
    check_executor(p["executor"])
    for k in ("position_noise", "velocity_noise", "command_timeout", "control_period"):
        if not (math.isfinite(p[k]) and p[k] >= 0):
            raise ValueError(f"parameter '{k}' must be >= 0")
