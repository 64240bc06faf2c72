"""Gough-Stewart kinematics and statics: FK o IK, J_p against finite differences, singular and unreachable
poses, static equilibrium against a free-body hand calculation, and the massless-leg limit of eq. (66)."""
import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

import rne_control as rc

ROOT = Path(__file__).parents[1]
SHIPPED = yaml.safe_load(open(ROOT / "config" / "gough_stewart.yaml"))
MODEL = rc.load_parallel(ROOT / "config" / "gough_stewart.yaml")


def quat_R(quat):
    x, y, z, w = np.asarray(quat) / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def quat_of(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.r_[np.sin(angle / 2) * axis, np.cos(angle / 2)]


def quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz])


def move(pose, dx):
    """pose displaced by dx = [dp; dphi] (dphi a base-frame rotation vector)."""
    n = np.linalg.norm(dx[3:])
    dq = quat_of(dx[3:], n) if n > 0 else np.array([0, 0, 0, 1.0])
    return np.r_[pose[:3] + dx[:3], quat_mul(dq, pose[3:])]


def random_pose(rng):
    return np.r_[rng.uniform(-0.3, 0.3, 2), 2.0 + rng.uniform(-0.25, 0.25),
                 quat_of(rng.normal(size=3), rng.uniform(-0.2, 0.2))]


def leg_lengths(spec, pose):
    """q_i = |p + R b_i - A_i| from the spec (independent of the library)."""
    R = quat_R(pose[3:])
    return np.array([np.linalg.norm(pose[:3] + R @ np.asarray(lg["platform_point"]) - np.asarray(lg["base_point"]))
                     for lg in spec["legs"]])


def same_pose(a, b):
    s = 1.0 if a[3:] @ b[3:] >= 0 else -1.0
    return np.max(np.abs(np.r_[a[:3] - b[:3], a[3:] - s * b[3:]]))


def test_inverse_kinematics_is_the_leg_lengths():
    rng = np.random.default_rng(0)
    poses = np.array([random_pose(rng) for _ in range(5)])
    q = rc.platform_inverse_kinematics(MODEL, poses)
    assert q.shape == (5, 6)
    for pose, qk in zip(poses, q):
        np.testing.assert_allclose(qk, leg_lengths(SHIPPED, pose), rtol=0, atol=1e-14)
    np.testing.assert_allclose(rc.platform_inverse_kinematics(MODEL, MODEL.home_pose), 3.153800681, atol=1e-8)


def test_fk_of_ik_round_trip_single_and_stacked():
    rng = np.random.default_rng(1)
    for _ in range(10):
        pose = random_pose(rng)
        q = rc.platform_inverse_kinematics(MODEL, pose)
        back = rc.platform_forward_kinematics(MODEL, q)        # from the home pose
        assert same_pose(back, pose) < 1e-10
        assert np.max(np.abs(rc.platform_inverse_kinematics(MODEL, back) - q)) <= 1e-12
    # a trajectory, each sample warm-started from the previous one
    t = np.linspace(0, 2, 200)[:, None]
    poses = np.hstack([0.2 * np.sin(t), 0.1 * np.cos(3 * t), 2 + 0.2 * np.sin(2 * t),
                       np.array([quat_of([0.2, 0.1, 1], 0.3 * np.sin(tk[0])) for tk in t])])
    back = rc.platform_forward_kinematics(MODEL, rc.platform_inverse_kinematics(MODEL, poses), pose_guess=poses[0])
    assert max(same_pose(a, b) for a, b in zip(back, poses)) < 1e-10


def test_jacobian_maps_leg_rates_to_the_twist():
    rng = np.random.default_rng(2)
    pose, twist, h = random_pose(rng), rng.uniform(-1, 1, 6), 1e-6
    qd = (leg_lengths(SHIPPED, move(pose, h * twist)) - leg_lengths(SHIPPED, move(pose, -h * twist))) / (2 * h)
    J = rc.platform_jacobian(MODEL, pose)
    np.testing.assert_allclose(J @ qd, twist, rtol=0, atol=1e-7)
    assert rc.platform_jacobian(MODEL, np.array([pose, pose])).shape == (2, 6, 6)


def test_singular_configuration_is_named():
    """Six vertical, parallel legs: J_p^-1 has rows [e_z; P_i x e_z], rank 3."""
    spec = copy.deepcopy(SHIPPED)
    for lg in spec["legs"]:
        lg["base_point"] = [lg["platform_point"][0], lg["platform_point"][1], 0.0]
    spec["leg_defaults"].update(lower_limit=1.0, upper_limit=3.0)
    m = rc.load_parallel(spec)
    pose = np.array([0, 0, 2.0, 0, 0, 0, 1])
    for call in (lambda: rc.platform_jacobian(m, pose),
                 lambda: rc.parallel_inverse_dynamics(m, pose, np.zeros(6), np.zeros(6)),
                 lambda: rc.parallel_joint_inverse_dynamics(m, np.full(6, 2.0), np.zeros(6), np.zeros(6), pose)):
        with pytest.raises(rc.SingularConfigurationError, match="singular configuration"):
            call()


def test_fichter_singularity_of_the_shipped_platform():
    """Fichter's singularity (Int. J. Robotics Research 5(2), 1986): the platform turned by 90 deg about its
    normal is singular at any height. The finite-difference J_p^-1 confirms it; the library must refuse
    that pose and accept its neighbourhood."""
    def fd_jinv(pose, h=1e-6):
        return np.column_stack([(leg_lengths(SHIPPED, move(pose, h * e)) - leg_lengths(SHIPPED, move(pose, -h * e)))
                                / (2 * h) for e in np.eye(6)])

    for z in (1.8, 2.0, 2.3):
        pose = np.array([0, 0, z, *quat_of([0, 0, 1], np.pi / 2)])
        assert np.linalg.svd(fd_jinv(pose))[1].min() < 1e-8
        with pytest.raises(rc.SingularConfigurationError, match="singular configuration at pose"):
            rc.platform_jacobian(MODEL, pose)
        with pytest.raises(rc.SingularConfigurationError):
            rc.parallel_inverse_dynamics(MODEL, pose, np.zeros(6), np.zeros(6))
        near = np.array([0, 0, z, *quat_of([0, 0, 1], np.radians(85))])
        assert np.linalg.svd(fd_jinv(near))[1].min() > 1e-3
        rc.platform_jacobian(MODEL, near)


def test_leg_along_its_universal_axis_is_named():
    spec = copy.deepcopy(SHIPPED)
    lg = spec["legs"][3]
    lg["u_axis"] = (np.r_[lg["platform_point"][:2], 2.0] - np.asarray(lg["base_point"])).tolist()
    m = rc.load_parallel(spec)
    with pytest.raises(rc.SingularConfigurationError, match="leg 'leg4'.*u_axis"):
        rc.parallel_inverse_dynamics(m, m.home_pose, np.zeros(6), np.zeros(6))


def test_unreachable_poses_and_lengths():
    with pytest.raises(rc.InputError, match=r"leg 'leg\d'.*outside its stroke \[2.5, 3.8\]"):
        rc.platform_inverse_kinematics(MODEL, np.array([0, 0, 3.9, 0, 0, 0, 1]))
    q = rc.platform_inverse_kinematics(MODEL, np.array([0, 0, 3.9, 0, 0, 0, 1]), check_limits=False)
    assert q.min() > 3.8
    # the Cartesian dynamics refuse an unreachable pose the same way, in a stack naming the sample
    far = np.array([0, 0, 3.9, 0, 0, 0, 1.0])
    for f in (rc.parallel_inverse_dynamics, rc.parallel_forward_dynamics):
        with pytest.raises(rc.InputError, match=r"pose unreachable: leg 'leg\d'.*would be \d\.\d+ m long, outside "
                                                r"its stroke \[2.5, 3.8\]"):
            f(MODEL, far, np.zeros(6), np.zeros(6))
        with pytest.raises(rc.InputError, match=r"pose unreachable \(sample 1\): leg"):
            f(MODEL, np.stack([MODEL.home_pose, far]), np.zeros(6), np.zeros(6))
    with pytest.raises(rc.LoopClosureError, match="did not converge.*residual"):
        rc.platform_forward_kinematics(MODEL, [3.0, 3.0, 3.0, 8.0, 8.0, 8.0])
    with pytest.raises(rc.LoopClosureError):
        rc.parallel_joint_inverse_dynamics(MODEL, [0.5] * 6, np.zeros(6), np.zeros(6))
    assert issubclass(rc.LoopClosureError, ValueError)


def test_bad_call_arguments():
    with pytest.raises(rc.InputError, match="'q' contains NaN"):
        rc.parallel_joint_inverse_dynamics(MODEL, [3.15, np.nan, 3.15, 3.15, 3.15, 3.15], np.zeros(6), np.zeros(6))
    with pytest.raises(rc.InputError, match="'accel' must have shape"):
        rc.parallel_inverse_dynamics(MODEL, MODEL.home_pose, np.zeros(6), np.zeros(5))
    with pytest.raises(rc.InputError, match="quaternion.*zero"):
        rc.platform_inverse_kinematics(MODEL, [0, 0, 2, 0, 0, 0, 0])
    with pytest.raises(rc.InputError, match="different numbers of samples"):
        rc.parallel_inverse_dynamics(MODEL, np.tile(MODEL.home_pose, (3, 1)), np.zeros((2, 6)), np.zeros(6))


def _leg_params(spec, i):
    lg = {**spec["leg_defaults"], **spec["legs"][i]}
    return lg["cylinder"], lg["piston"]


def test_static_equilibrium_against_free_body_diagrams():
    """Free bodies: each leg (weights of cylinder and piston, the platform's force F_i at B_i, and a
    universal-joint reaction moment about a1 x a2 only) and the platform (its weight and -F_i). The
    moment balance of a leg about A_i along a1 and a2 gives F_i's transverse part; the platform's six
    equilibrium equations give the axial parts f_i; the piston's axial balance gives the actuator force
    Gamma_i = -f_i - m_piston g . u_i."""
    g = np.array(SHIPPED["gravity"])
    mp, cp = SHIPPED["platform"]["mass"], np.array(SHIPPED["platform"]["com"])
    for pose in (MODEL.home_pose, np.array([0.15, -0.1, 2.2, *quat_of([1, 2, 3], 0.15)])):
        R = quat_R(pose[3:])
        rows, rhs = [], np.r_[mp * g, np.cross(R @ cp, mp * g)]
        axial_piston = []
        for i, lg in enumerate(SHIPPED["legs"]):
            A, P = np.asarray(lg["base_point"]), R @ np.asarray(lg["platform_point"])
            L = pose[:3] + P - A
            q, u = np.linalg.norm(L), L / np.linalg.norm(L)
            a1 = np.array([-A[1], A[0], 0.0]) / np.linalg.norm(A[:2])
            a2 = np.cross(u, a1) / np.linalg.norm(np.cross(u, a1))
            cyl, pis = _leg_params(SHIPPED, i)
            Mw = np.cross(cyl["com"] * u, cyl["mass"] * g) + np.cross((q - pis["com"]) * u, pis["mass"] * g)
            n1 = np.cross(u, a1) / np.linalg.norm(np.cross(u, a1))     # basis of the plane normal to u
            n2 = np.cross(u, n1)
            # (q u x (x n1 + y n2)) . a = -Mw . a  for a = a1, a2
            Asys = np.array([[np.cross(q * u, n1) @ a, np.cross(q * u, n2) @ a] for a in (a1, a2)])
            x, y = np.linalg.solve(Asys, [-Mw @ a1, -Mw @ a2])
            Fperp = x * n1 + y * n2
            rows.append(np.r_[u, np.cross(P, u)])
            rhs = rhs - np.r_[Fperp, np.cross(P, Fperp)]
            axial_piston.append(pis["mass"] * g @ u)
        f = np.linalg.solve(np.array(rows).T, rhs)
        gamma = -f - np.array(axial_piston)
        q = rc.platform_inverse_kinematics(MODEL, pose)
        np.testing.assert_allclose(rc.parallel_gravity_torques(MODEL, q, pose_guess=pose), gamma, rtol=1e-10)
        np.testing.assert_allclose(rc.parallel_inverse_dynamics(MODEL, pose, np.zeros(6), np.zeros(6)), gamma,
                                   rtol=1e-10)
        assert np.all(gamma > 0)  # the legs hold the platform up


def test_massless_legs_give_the_platform_newton_euler_wrench():
    spec = copy.deepcopy(SHIPPED)
    spec["leg_defaults"]["cylinder"] = {"mass": 0.0, "com": 0.0, "inertia": {"axial": 0.0, "transverse": 0.0}}
    spec["leg_defaults"]["piston"] = {"mass": 0.0, "com": 0.0, "inertia": {"axial": 0.0, "transverse": 0.0}}
    spec["platform"]["com"] = [0.03, -0.02, 0.06]
    spec["platform"]["inertia"].update(ixy=5.0, ixz=-3.0, iyz=2.0)
    m = rc.load_parallel(spec)
    mp, g = spec["platform"]["mass"], np.array(spec["gravity"])
    I = spec["platform"]["inertia"]
    Ic = np.array([[I["ixx"], I["ixy"], I["ixz"]], [I["ixy"], I["iyy"], I["iyz"]], [I["ixz"], I["iyz"], I["izz"]]])
    rng = np.random.default_rng(5)
    for _ in range(3):
        pose, twist, accel = random_pose(rng), rng.uniform(-1, 1, 6), rng.uniform(-3, 3, 6)
        R = quat_R(pose[3:])
        c, w, dw = R @ np.array(spec["platform"]["com"]), twist[3:], accel[3:]
        Icb = R @ Ic @ R.T
        a_c = accel[:3] + np.cross(dw, c) + np.cross(w, np.cross(w, c))      # COM acceleration
        f = mp * (a_c - g)
        n = Icb @ dw + np.cross(w, Icb @ w) + np.cross(c, f)                # about the platform origin
        expect = rc.platform_jacobian(m, pose).T @ np.r_[f, n]
        tau = rc.parallel_inverse_dynamics(m, pose, twist, accel)
        np.testing.assert_allclose(tau, expect, rtol=0, atol=1e-9 * np.abs(expect).max())


def test_fast_and_checked_paths_agree():
    """Single float64 arrays take the kernel directly; lists, other dtypes and stacks the checked path."""
    rng = np.random.default_rng(9)
    pose = random_pose(rng)
    q = rc.platform_inverse_kinematics(MODEL, pose)
    qd, qdd = rng.uniform(-0.1, 0.1, 6), rng.uniform(-1, 1, 6)
    out = np.empty(7)
    fast = rc.parallel_joint_inverse_dynamics(MODEL, q, qd, qdd, pose, pose_out=out)
    assert same_pose(out, pose) < 1e-10
    np.testing.assert_array_equal(rc.parallel_joint_inverse_dynamics(MODEL, q.tolist(), qd.tolist(), qdd.tolist(),
                                                                     pose.tolist()), fast)
    stacked = rc.parallel_joint_inverse_dynamics(MODEL, np.array([q, q]), qd, np.array([qdd, qdd]), pose)
    np.testing.assert_allclose(stacked, [fast, fast], rtol=1e-12)
    with pytest.raises(rc.InputError, match=r"'q' must have shape \(6,\)"):
        rc.parallel_joint_inverse_dynamics(MODEL, q[:5], qd, qdd)
    with pytest.raises(rc.InputError, match="pose_guess"):
        rc.parallel_joint_inverse_dynamics(MODEL, q, qd, qdd, pose_guess=[0, 0, 2])
    with pytest.raises(rc.InputError, match=r"'q' must have shape \(6,\)"):
        rc.platform_forward_kinematics(MODEL, q[:5])
    np.testing.assert_array_equal(rc.platform_forward_kinematics(MODEL, q, pose),
                                  rc.platform_forward_kinematics(MODEL, q.tolist(), pose.tolist()))
