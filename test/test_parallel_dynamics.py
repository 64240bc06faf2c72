"""Gough-Stewart dynamics by Khalil's eq. (66) against Pinocchio's constrained dynamics (a KKT solve on a
Pinocchio model of the platform and its legs, test/parallel_oracle.py), and the energy balance."""
import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

import rne_control as rc
from parallel_oracle import PlatformOracle

ROOT = Path(__file__).parents[1]
SHIPPED = yaml.safe_load(open(ROOT / "config" / "gough_stewart.yaml"))


def general_spec():
    """The shipped geometry with nothing symmetric left: per-leg bodies, one explicit u_axis, an off-axis
    platform COM with products of inertia, tilted gravity."""
    s = copy.deepcopy(SHIPPED)
    s["gravity"] = [0.4, -0.3, -9.7]
    s["platform"] = {"mass": 180.0, "com": [0.05, -0.03, 0.08],
                     "inertia": {"ixx": 40.0, "iyy": 35.0, "izz": 60.0, "ixy": 1.5, "ixz": -2.0, "iyz": 0.7}}
    for i, leg in enumerate(s["legs"]):
        leg["cylinder"] = {"mass": 9.0 + i, "com": 0.6 + 0.05 * i, "inertia": {"axial": 0.05 + 0.01 * i,
                                                                              "transverse": 3.0 + 0.2 * i}}
        leg["piston"] = {"mass": 4.0 + 0.5 * i, "com": 0.4 + 0.03 * i, "inertia": {"axial": 0.02 + 0.003 * i,
                                                                                  "transverse": 1.1 + 0.1 * i}}
    s["legs"][2]["u_axis"] = [0.3, 0.9, 0.2]
    return s


SPECS = {"shipped": SHIPPED, "general": general_spec()}


def motion(k):
    """A few platform states (pose, twist, accel) around home."""
    rng = np.random.default_rng(10 + k)
    axis = rng.normal(size=3)
    ang = 0.15 * rng.uniform(-1, 1)
    quat = np.r_[np.sin(ang / 2) * axis / np.linalg.norm(axis), np.cos(ang / 2)]
    pose = np.r_[rng.uniform(-0.2, 0.2, 2), 2.0 + rng.uniform(-0.2, 0.2), quat]
    return pose, rng.uniform(-0.5, 0.5, 6), rng.uniform(-2.0, 2.0, 6)


@pytest.fixture(scope="module", params=list(SPECS))
def pair(request):
    spec = SPECS[request.param]
    return rc.load_parallel(spec), PlatformOracle(spec)


def test_leg_joints_close_the_loops_in_pinocchio(pair):
    m, orc = pair
    for k in range(3):
        pose, _, _ = motion(k)
        q, legq = rc.platform_inverse_kinematics(m, pose, leg_joints=True)
        np.testing.assert_allclose(legq[:, 2], q, rtol=0, atol=0)
        _, _, res = orc.constraint(orc.q_full(legq, pose))
        assert np.max(np.abs(res)) < 1e-12


def test_inverse_dynamics_matches_pinocchio_kkt(pair):
    m, orc = pair
    poses, twists, accels, expect = [], [], [], []
    for k in range(4):
        pose, twist, accel = motion(k)
        legq = rc.platform_inverse_kinematics(m, pose, leg_joints=True)[1]
        ref = orc.inverse(*orc.full_state(legq, pose, twist, accel))
        tau = rc.parallel_inverse_dynamics(m, pose, twist, accel, friction=False)
        assert np.max(np.abs(tau - ref)) <= 1e-8 * max(1.0, np.max(np.abs(ref))), (tau, ref)
        poses.append(pose), twists.append(twist), accels.append(accel), expect.append(tau)
    stacked = rc.parallel_inverse_dynamics(m, np.array(poses), np.array(twists), np.array(accels), friction=False)
    np.testing.assert_array_equal(stacked, np.array(expect))


def test_external_wrench_matches_pinocchio(pair):
    m, orc = pair
    pose, twist, accel = motion(7)
    f_ext = np.array([120.0, -80.0, 300.0, 25.0, -40.0, 15.0])
    legq = rc.platform_inverse_kinematics(m, pose, leg_joints=True)[1]
    ref = orc.inverse(*orc.full_state(legq, pose, twist, accel), f_ext=f_ext)
    tau = rc.parallel_inverse_dynamics(m, pose, twist, accel, f_ext=f_ext, friction=False)
    assert np.max(np.abs(tau - ref)) <= 1e-8 * max(1.0, np.max(np.abs(ref)))


def test_forward_dynamics_matches_pinocchio_kkt(pair):
    m, orc = pair
    for k in range(3):
        pose, twist, _ = motion(k)
        tau = np.random.default_rng(k).uniform(-3000, 3000, 6) + rc.parallel_gravity_torques(
            m, rc.platform_inverse_kinematics(m, pose), pose_guess=pose)
        legq = rc.platform_inverse_kinematics(m, pose, leg_joints=True)[1]
        q, v, _ = orc.full_state(legq, pose, twist, np.zeros(6))
        ref = orc.platform_accel(pose, v, orc.forward(q, v, tau))
        acc = rc.parallel_forward_dynamics(m, pose, twist, tau, friction=False)
        assert np.max(np.abs(acc - ref)) <= 1e-8 * max(1.0, np.max(np.abs(ref))), (acc, ref)


def test_actuator_coordinate_functions_match_pinocchio(pair):
    """q, qd, qdd of the legs from the oracle's full state; the joint-space functions must solve the
    forward kinematics and reproduce the oracle's forces, accelerations and inertia."""
    m, orc = pair
    pose, twist, accel = motion(3)
    legq = rc.platform_inverse_kinematics(m, pose, leg_joints=True)[1]
    q, v, a = orc.full_state(legq, pose, twist, accel)
    qa, qda, qdda = q[orc.act], v[orc.act], a[orc.act]
    ref = orc.inverse(q, v, a)
    out = np.empty(7)
    tau = rc.parallel_joint_inverse_dynamics(m, qa, qda, qdda, friction=False, pose_out=out)
    assert np.max(np.abs(tau - ref)) <= 1e-8 * np.max(np.abs(ref))
    assert np.max(np.abs(out - pose)) < 1e-10
    tau2 = np.random.default_rng(1).uniform(-2000, 2000, 6) + ref
    qdd = rc.parallel_joint_forward_dynamics(m, qa, qda, tau2, friction=False, pose_guess=pose)
    ref_qdd = orc.forward(q, v, tau2)[orc.act]
    assert np.max(np.abs(qdd - ref_qdd)) <= 1e-8 * max(1.0, np.max(np.abs(ref_qdd)))
    G = orc.actuator_map(q)
    M_ref = G.T @ orc.Mh(q, v)[0] @ G
    M = rc.parallel_mass_matrix(m, qa, pose_guess=pose)
    assert np.max(np.abs(M - M_ref)) <= 1e-8 * np.max(np.abs(M_ref))
    # gravity + Coriolis + M qdd (no friction) = inverse dynamics
    g = rc.parallel_gravity_torques(m, qa, pose_guess=pose)
    c = rc.parallel_coriolis_torques(m, qa, qda, pose_guess=pose)
    np.testing.assert_allclose(g + c + M @ qdda, tau, rtol=0, atol=1e-8 * np.max(np.abs(tau)))


def test_gravity_override_and_friction(pair):
    m, orc = pair
    pose, twist, accel = motion(4)
    g = np.array([0.0, 0.0, -1.62])
    tau = rc.parallel_inverse_dynamics(m, pose, twist, accel, gravity=g, friction=False)
    spec = copy.deepcopy(orc.spec)
    spec["gravity"] = g.tolist()
    np.testing.assert_allclose(tau, rc.parallel_inverse_dynamics(rc.load_parallel(spec), pose, twist, accel,
                                                                 friction=False), rtol=0, atol=1e-9)
    spec = copy.deepcopy(orc.spec)
    spec.setdefault("leg_defaults", {}).update(viscous=50.0, coulomb=20.0)
    mf = rc.load_parallel(spec)
    qd = np.linalg.solve(rc.platform_jacobian(m, pose), twist)
    diff = (rc.parallel_inverse_dynamics(mf, pose, twist, accel)
            - rc.parallel_inverse_dynamics(mf, pose, twist, accel, friction=False))
    np.testing.assert_allclose(diff, 50.0 * qd + 20.0 * np.sign(qd), rtol=1e-9)


def test_power_balance_along_a_trajectory(pair):
    """Gamma . qd = dE/dt (no friction, no external force), E the total energy from Pinocchio."""
    m, orc = pair

    def pose_at(t):
        ang = 0.1 * np.sin(1.3 * t)
        axis = np.array([0.3, -0.5, 1.0]) / np.linalg.norm([0.3, -0.5, 1.0])
        return np.r_[0.1 * np.sin(2 * t), 0.08 * np.cos(1.7 * t), 2.0 + 0.15 * np.sin(3 * t),
                     np.sin(ang / 2) * axis, np.cos(ang / 2)]

    def state(t, h=1e-5):  # twist and accel from the pose by central differences of the exact path
        from parallel_oracle import quat_R
        P = [pose_at(t + k * h) for k in (-2, -1, 0, 1, 2)]
        R = [quat_R(p[3:]) for p in P]
        dp = (P[0][:3] - 8 * P[1][:3] + 8 * P[3][:3] - P[4][:3]) / (12 * h)
        ddp = (-P[0][:3] + 16 * P[1][:3] - 30 * P[2][:3] + 16 * P[3][:3] - P[4][:3]) / (12 * h * h)
        dR = (R[0] - 8 * R[1] + 8 * R[3] - R[4]) / (12 * h)
        W = dR @ R[2].T
        return P[2], np.r_[dp, W[2, 1], W[0, 2], W[1, 0]], ddp

    h = 1e-3
    for t in (0.2, 0.9, 1.7):
        E = []
        for tk in (t - 2 * h, t - h, t + h, t + 2 * h):
            pose, twist, _ = state(tk)
            legq = rc.platform_inverse_kinematics(m, pose, leg_joints=True)[1]
            q, v, _ = orc.full_state(legq, pose, twist, np.zeros(6))
            E.append(orc.energy(q, v))
        dE = (E[0] - 8 * E[1] + 8 * E[2] - E[3]) / (12 * h)
        pose, twist, _ = state(t)
        # the angular acceleration by differencing the angular velocity
        dw = (state(t + 1e-4)[1][3:] - state(t - 1e-4)[1][3:]) / 2e-4
        accel = np.r_[state(t)[2], dw]
        tau = rc.parallel_inverse_dynamics(m, pose, twist, accel, friction=False)
        qd = np.linalg.solve(rc.platform_jacobian(m, pose), twist)
        power = tau @ qd
        assert abs(power - dE) <= 1e-5 * max(1.0, np.abs(tau).max() * np.abs(qd).max()), (power, dE)
