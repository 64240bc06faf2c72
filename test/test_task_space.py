"""Leg motion of a platform trajectory point (rne_control.control.task_space) against the library's
kinematics: lengths from platform_inverse_kinematics, rates through J_p, accelerations by differencing
the rates along the motion."""
import numpy as np
import pytest

import rne_control as rc
from rne_control.control.task_space import leg_motion
from rne_control.dynamics.integrate import quat_exp, quat_mul

from ros_util import REPO


@pytest.fixture(scope="module")
def gs():
    return rc.load_model(str(REPO / "config" / "gough_stewart.yaml"))


def _advance(pose, twist, accel, h):
    """Pose and twist after h s of constant acceleration from (pose, twist) (second order, base frame)."""
    p = pose[:3] + h * twist[:3] + 0.5 * h * h * accel[:3]
    w_mid = twist[3:] + 0.5 * h * accel[3:]
    # the orientation turns about the base-frame angular velocity: R' = exp(w h) R
    dq = quat_exp(w_mid, h)
    quat = quat_mul(dq, pose[3:])
    return np.r_[p, quat / np.linalg.norm(quat)], twist + h * accel


def test_leg_motion_matches_the_kinematics(gs):
    rng = np.random.default_rng(4)
    for _ in range(5):
        pose = np.r_[rng.uniform(-0.2, 0.2, 2), 2.0 + rng.uniform(-0.2, 0.2), 0, 0, 0, 1.0]
        ax = rng.normal(size=3)
        ang = rng.uniform(-0.2, 0.2)
        pose[3:] = np.r_[np.sin(ang / 2) * ax / np.linalg.norm(ax), np.cos(ang / 2)]
        twist, accel = rng.uniform(-0.5, 0.5, 6), rng.uniform(-2, 2, 6)
        q, qd, qdd = leg_motion(gs, pose, twist, accel)
        np.testing.assert_allclose(q, rc.platform_inverse_kinematics(gs, pose), atol=1e-12)
        np.testing.assert_allclose(qd, np.linalg.solve(rc.platform_jacobian(gs, pose), twist), atol=1e-10)
        h = 1e-5
        (p1, t1), (p0, t0) = _advance(pose, twist, accel, h), _advance(pose, twist, accel, -h)
        qd1, qd0 = leg_motion(gs, p1, t1)[1], leg_motion(gs, p0, t0)[1]
        np.testing.assert_allclose(qdd, (qd1 - qd0) / (2 * h), atol=1e-6)
        np.testing.assert_allclose(qd, (leg_motion(gs, p1)[0] - leg_motion(gs, p0)[0]) / (2 * h), atol=1e-8)


def test_unreachable_pose_names_the_leg(gs):
    with pytest.raises(ValueError, match="leg"):
        leg_motion(gs, [0, 0, 4.5, 0, 0, 0, 1])
