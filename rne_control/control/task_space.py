"""A platform's task space: the leg motion that realises a platform motion (the inverse kinematics of a
trajectory point), for controllers that take platform trajectories (no ROS).

Leg i runs from its base point A_i to its platform point B_i = p + R b_i (base frame), L_i = B_i - A_i,
q_i = |L_i|, u_i = L_i / q_i. Differentiating with P_i = R b_i:

    dL_i = v + w x P_i,      ddL_i = a + dw x P_i + w x (w x P_i),
    qd_i = u_i . dL_i,       qdd_i = u_i . ddL_i + (|dL_i|^2 - qd_i^2) / q_i

(the second term is the centripetal part of the length's acceleration: |dL_i|^2 - qd_i^2 is the square of
the velocity across the leg).
"""
from __future__ import annotations

import numpy as np

from ..dynamics.parallel.api import platform_inverse_kinematics
from ..model.spatial import quat_to_matrix


def leg_motion(model, pose, twist=None, accel=None):
    """Leg lengths q (6,) (m), rates qd (m/s) and accelerations qdd (m/s^2) of the ParallelModel ``model``
    for the platform pose [p (m); quat xyzw] (7,), twist [v; w] (6,) and acceleration [a; dw] (6,), all in
    the base frame (v, a: of the platform origin). A missing twist or acceleration gives None for the
    rates or accelerations. Raises InputError (a ValueError) naming the leg for a pose out of stroke, and
    SingularConfigurationError at a singular pose."""
    pose = np.asarray(pose, float)
    q = platform_inverse_kinematics(model, pose)          # validates the pose, checks the strokes
    if twist is None:
        return q, None, None
    quat = pose[3:] / np.linalg.norm(pose[3:])
    P = np.asarray(model.platform_points, float) @ quat_to_matrix(*quat).T
    L = pose[:3] + P - np.asarray(model.base_points, float)
    u = L / q[:, None]
    twist = np.asarray(twist, float)
    v, w = twist[:3], twist[3:]
    dL = v + np.cross(w, P)
    qd = np.einsum("ij,ij->i", u, dL)
    if accel is None:
        return q, qd, None
    accel = np.asarray(accel, float)
    ddL = accel[:3] + np.cross(accel[3:], P) + np.cross(w, np.cross(w, P))
    qdd = np.einsum("ij,ij->i", u, ddL) + (np.einsum("ij,ij->i", dL, dL) - qd**2) / q
    return q, qd, qdd
