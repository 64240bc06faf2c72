"""The demo's motions (numpy, no ROS): a joint-space out-and-back, and a platform's sines with the pose
coordinates its tracking error is measured in."""
from __future__ import annotations

import math

import numpy as np

from ...control.profiles import min_jerk


def out_and_back(q0, amp, T):
    """q_d(t): min-jerk from ``q0`` to ``q0 + amp`` in T/2 s, back to ``q0`` in T/2 s, held at ``q0`` outside
    [0, T]; f(t) -> (positions, velocities, accelerations) (rad or m, per s, per s^2)."""
    q0, amp, h = np.asarray(q0, float), np.asarray(amp, float), T / 2.0

    def f(t):
        if t <= h:
            return min_jerk(t, h, q0, q0 + amp)
        return min_jerk(t - h, h, q0 + amp, q0)

    return f


TASK_LABELS = ["x", "y", "z", "rot x", "rot y", "rot z"]
TASK_UNITS = ["m", "m", "m", "rad", "rad", "rad"]


def platform_sines(home, motion, T):
    """Platform motion from the pose ``home`` [p; quat]: surge, sway, heave (m) and rotations about x, y, z
    (rad) of amplitudes ``motion``, along sin(2 pi s) for surge, sway and yaw, (1 - cos(2 pi s)) / 2 for
    heave, with s a min-jerk 0 -> 1 over T (the motion starts and ends at rest). f(t) -> pose, twist,
    acceleration (base frame)."""
    from rne_control.dynamics.integrate import quat_exp, quat_mul

    A = np.asarray(motion, float)

    def f(t):
        s, sd, sdd = (float(x) for x in min_jerk(t, T))
        w = 2 * math.pi
        g = np.array([math.sin(w * s), math.sin(w * s), (1 - math.cos(w * s)) / 2, 0.0, 0.0, math.sin(w * s)])
        dg = np.array([w * math.cos(w * s), w * math.cos(w * s), w * math.sin(w * s) / 2, 0, 0, w * math.cos(w * s)])
        ddg = np.array([-w * w * math.sin(w * s), -w * w * math.sin(w * s), w * w * math.cos(w * s) / 2, 0, 0,
                        -w * w * math.sin(w * s)])
        x, v, a = A * g, A * dg * sd, A * (ddg * sd * sd + dg * sdd)
        n = np.linalg.norm(x[3:])
        rot = quat_exp(x[3:] / n, n) if n > 0 else np.array([0.0, 0.0, 0.0, 1.0])
        return np.r_[home[:3] + x[:3], quat_mul(rot, home[3:])], v, a   # the rotations: constant axis

    return f


def _rotvec(quat):
    v, w = np.asarray(quat[:3], float), float(quat[3])
    n = np.linalg.norm(v)
    return np.zeros(3) if n < 1e-15 else 2 * math.atan2(n, w) * v / n


def pose_coordinates(home, poses):
    """Rows [p - p_home, rotation vector from home (base frame)] (6,) of platform poses [p; quat]."""
    from rne_control.dynamics.integrate import quat_mul

    inv_home = np.r_[-home[3:6], home[6]]
    return np.array([np.r_[p[:3] - home[:3], _rotvec(quat_mul(p[3:], inv_home))] for p in poses])


def task_coordinates(model, home, legs):
    """The platform pose coordinates (see pose_coordinates) of each row of measured leg lengths."""
    import rne_control as rc

    return pose_coordinates(home, rc.platform_forward_kinematics(model, np.asarray(legs, float), home))


def frame_moved(model, q0, frame, dp, iterations=100):
    """The joint positions near ``q0`` that move ``frame``'s origin by ``dp`` (m, base axes) and keep its
    orientation: damped Gauss-Newton on the frame's pose (position and rotation error); ValueError if it
    does not converge to 1e-10 (out of reach)."""
    import rne_control as rc

    q = np.array(q0, dtype=float)
    T0 = rc.frame_pose(model, q, frame)
    p_goal, R_goal = T0[:3, 3] + np.asarray(dp, float), T0[:3, :3]
    for _ in range(iterations):
        T = rc.frame_pose(model, q, frame)
        R = T[:3, :3]
        e = np.r_[p_goal - T[:3, 3], 0.5 * sum(np.cross(R[:, i], R_goal[:, i]) for i in range(3))]
        if np.linalg.norm(e) < 1e-10:
            return q
        J = rc.frame_jacobian(model, q, frame)
        q += J.T @ np.linalg.solve(J @ J.T + 1e-9 * np.eye(6), e)
    raise ValueError(f"{frame} cannot be moved by {list(dp)} m from the start pose")
