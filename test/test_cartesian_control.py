"""Task-space control (rne_control.control.task) without ROS: the laws' torques against the equations written
with Pinocchio's quantities (frame placement and Jacobian, J-dot qd, M, C qd + g: an independent
implementation) and scipy's generalized eigensolver (the double-diagonalization damping); the null space's
task acceleration through the library's forward dynamics (ABA); the closed-loop behaviour in the cycle in
lockstep with the library's simulation (RK4, the exact model): the stiffness K^-1 F, the operational-space
error against its linear response, the speed of a shaped target, stability at 500 Hz and 1 kHz, a singular
configuration; and the refusals."""
import os

import numpy as np
import pinocchio as pin
import pytest
import scipy.linalg

import rne_control as rc
from rne_control.control import ControlLaw, make_plant
from rne_control.control.cycle import ControlCycle
from rne_control.control.settings import Settings
from rne_control.control.simulation import Simulation
from rne_control.control.task import TaskError, rotation, shaping
from rne_control.control.trajectory import TrajectoryError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARM7, PANDA = os.path.join(ROOT, "urdf", "arm7.urdf"), os.path.join(ROOT, "urdf", "panda.urdf")
PANDA_ARM = ["panda_joint%d" % i for i in range(1, 8)]
NS = 1_000_000_000
Q_ARM7 = np.array([0.1, -0.4, 0.1, -2.0, 0.1, 1.6, 0.5])
Q_PANDA = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
LIMITS7 = np.array([87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0])


@pytest.fixture(scope="module")
def arm7():
    return rc.load_model(ARM7)


@pytest.fixture(scope="module")
def panda():
    return rc.load_model(PANDA)


# ---------------------------------------------------------------------------------------------- rotations
def test_log_exp_and_the_axis_at_pi():
    rng = np.random.default_rng(1)
    for theta in (0.0, 1e-9, 1e-4, 0.3, 2.0, np.pi - 1e-3, np.pi - 1e-6, np.pi):
        for _ in range(5):
            u = rng.normal(size=3)
            u /= np.linalg.norm(u)
            R = scipy.linalg.expm(np.cross(np.eye(3), theta * u))          # an independent exp
            phi = rotation.log(R)
            np.testing.assert_allclose(rotation.exp(phi), R, atol=1e-12)
            assert abs(np.linalg.norm(phi) - theta) < 1e-9
            if theta < np.pi - 1e-6:
                np.testing.assert_allclose(phi, theta * u, atol=1e-9 + 1e-9 / max(np.pi - theta, 1e-9) * 0)
    # at pi, +u and -u are one rotation: one answer, its largest component positive
    for u in (np.array([0.0, 0.0, -1.0]), np.array([0.6, -0.8, 0.0]), np.array([-0.48, 0.6, -0.64])):
        R = 2 * np.outer(u, u) - np.eye(3)
        a, b = rotation.log(R), rotation.log(2 * np.outer(-u, -u) - np.eye(3))
        np.testing.assert_array_equal(a, b)
        assert a[np.argmax(np.abs(a))] > 0 and abs(np.linalg.norm(a) - np.pi) < 1e-12
    q = np.array([0.1, -0.7, 0.3, 0.5])
    np.testing.assert_array_equal(rotation.quaternion_matrix(*q), rotation.quaternion_matrix(*-q))
    with pytest.raises(ValueError, match="quaternion"):
        rotation.quaternion_matrix(0.0, 0.0, 0.0, 0.0)


# ---------------------------------------------------------------------------------------------- the laws
class Truth:
    """Pinocchio's quantities at (q, qd) of the controlled joints of ``plant`` (the uncontrolled ones held)."""

    def __init__(self, path, plant, frame, q_state, qd_state):
        pm = pin.buildModelFromUrdf(path)
        pd = pm.createData()
        names = list(plant.state_names)
        q, v = pin.neutral(pm), np.zeros(pm.nv)
        model = plant.model
        full = dict(zip(model.joint_names, plant.q_model))
        for name, x in full.items():
            q[pm.joints[pm.getJointId(name)].idx_q] = x
        for name, x in zip(names, qd_state):
            if np.isfinite(x):
                v[pm.joints[pm.getJointId(name)].idx_v] = x
        iv = np.array([pm.joints[pm.getJointId(j)].idx_v for j in plant.joint_names])
        fid = pm.getFrameId(frame)
        pin.forwardKinematics(pm, pd, q, v, np.zeros(pm.nv))
        pin.updateFramePlacements(pm, pd)
        self.T = pd.oMf[fid].homogeneous.copy()
        self.Jdqd = pin.getFrameClassicalAcceleration(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED).vector
        self.J = pin.computeFrameJacobian(pm, pd, q, fid, pin.LOCAL_WORLD_ALIGNED)[:, iv]
        M = pin.crba(pm, pd, q)
        M = np.triu(M) + np.triu(M, 1).T
        self.M = M[np.ix_(iv, iv)]
        self.h = pin.rnea(pm, pd, q, v, np.zeros(pm.nv))[iv]
        self.q, self.qd = q[[pm.joints[pm.getJointId(j)].idx_q for j in plant.joint_names]], v[iv]
        self.Minv = np.linalg.inv(self.M)
        self.Lam = np.linalg.inv(self.J @ self.Minv @ self.J.T)


def law_at(model, joints, frame, q, qd, mode, **values):
    """A ControlLaw in ``mode`` on ``frame``, its plant's state set to (q, qd) of the controlled joints (the
    others at their locked positions), the target held at the measured pose at t = 0."""
    plant = make_plant(model, joints)
    s = Settings.of(plant, None, mode=mode, **values)
    law = ControlLaw(plant)
    law.enable_task(frame, s)
    law.set_mode(mode)
    qs, qds = plant.reference_state()
    qs[:plant.n], qds[:plant.n] = q, qd
    plant.set_state(qs, qds)
    law.task.anchor(0.0)
    return law, qs, qds


CASES = [(ARM7, None, "arm7_link7", Q_ARM7), (PANDA, PANDA_ARM, "panda_hand_tcp", Q_PANDA)]


@pytest.mark.parametrize("path,joints,frame,q0", CASES, ids=["arm7", "panda_with_hand"])
@pytest.mark.parametrize("projector", ["dynamic", "kinematic"])
def test_impedance_torque_is_the_equation_with_pinocchio_quantities(path, joints, frame, q0, projector):
    model = rc.load_model(path)
    rng = np.random.default_rng(7)
    qd = rng.uniform(-0.5, 0.5, 7)
    K = np.array([300.0, 200.0, 250.0, 30.0, 20.0, 25.0])
    zeta = 0.7
    F_d = np.array([2.0, -1.0, 3.0, 0.1, 0.2, -0.3])
    posture = q0 + rng.uniform(-0.3, 0.3, 7)
    for design in ("unit_mass", "double_diagonalization"):
        law, qs, qds = law_at(model, joints, frame, q0, qd, "cartesian_impedance", cartesian_stiffness=K,
                              cartesian_damping_ratio=[zeta], damping_design=design, nullspace_projector=projector,
                              nullspace_stiffness=[15.0], nullspace_damping_ratio=[0.8], nullspace_posture=posture,
                              error_clip=[1.0, 1.0], max_effort_rate=0.0)
        task = law.task
        tr = Truth(path, law.plant, frame, qs, qds)
        # a target off the measured pose (no shaping: max_cartesian_velocity 0 would step; here set directly)
        T = tr.T
        R_d = rotation.exp([0.05, -0.1, 0.08]) @ T[:3, :3]
        p_d = T[:3, 3] + [0.02, -0.03, 0.01]
        task.S = shaping.hold(p_d, R_d, 0.0)
        task.set_wrench(F_d)
        tau = law.compute(qs, qds, None, None, None, 1.0, t=1.0).copy()
        e = np.r_[T[:3, 3] - p_d, rotation.log(T[:3, :3] @ R_d.T)]
        # log against scipy: the rotation vector of R R_d^T
        np.testing.assert_allclose(scipy.linalg.expm(np.cross(np.eye(3), e[3:])), T[:3, :3] @ R_d.T, atol=1e-12)
        Lam = tr.Lam
        np.testing.assert_allclose(task.Lam, Lam, rtol=1e-9, atol=1e-9 * np.abs(Lam).max())
        np.testing.assert_allclose(task.pose, T, atol=1e-12)
        if design == "unit_mass":
            D = np.diag(2 * zeta * np.sqrt(K))
        else:   # K v = k0 Lambda v, V^T Lambda V = I: Q = V^-T, D = Q diag(2 zeta sqrt(k0)) Q^T
            k0, V = scipy.linalg.eigh(np.diag(K), Lam)
            Q = np.linalg.inv(V).T
            D = Q @ np.diag(2 * zeta * np.sqrt(k0)) @ Q.T
        xd = tr.J @ tr.qd
        F = -K * e - D @ xd + F_d
        tau0 = 15.0 * (posture - tr.q) - 2 * 0.8 * np.sqrt(15.0 * np.diag(tr.M)) * tr.qd
        if projector == "dynamic":
            NT = np.eye(7) - tr.J.T @ Lam @ tr.J @ tr.Minv
        else:
            NT = np.eye(7) - tr.J.T @ np.linalg.pinv(tr.J).T
        expected = tr.J.T @ F + NT @ tau0 + tr.h
        np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
        np.testing.assert_allclose(task.ff, tr.J.T @ F_d, atol=1e-12)
        assert task.sigma_min > 0.05 and not task.singular


@pytest.mark.parametrize("path,joints,frame,q0", CASES, ids=["arm7", "panda_with_hand"])
@pytest.mark.parametrize("projector", ["dynamic", "kinematic"])
def test_operational_space_torque_is_khatibs_law(path, joints, frame, q0, projector):
    model = rc.load_model(path)
    rng = np.random.default_rng(3)
    qd = rng.uniform(-0.6, 0.6, 7)
    kp, kd = np.array([100.0, 120.0, 80.0, 60.0, 90.0, 70.0]), np.array([20.0, 22.0, 18.0, 15.0, 19.0, 17.0])
    posture = q0 + rng.uniform(-0.3, 0.3, 7)
    law, qs, qds = law_at(model, joints, frame, q0, qd, "operational_space", cartesian_kp=kp, cartesian_kd=kd,
                          nullspace_projector=projector, nullspace_stiffness=[25.0], nullspace_damping_ratio=[0.9],
                          nullspace_posture=posture, error_clip=[1.0, 1.0], max_effort_rate=0.0)
    task = law.task
    tr = Truth(path, law.plant, frame, qs, qds)
    T = tr.T
    R_d = rotation.exp([-0.04, 0.07, 0.02]) @ T[:3, :3]
    p_d = T[:3, 3] + [-0.01, 0.02, 0.015]
    task.S = shaping.hold(p_d, R_d, 0.0)
    tau = law.compute(qs, qds, None, None, None, 1.0, t=1.0).copy()
    e = np.r_[T[:3, 3] - p_d, rotation.log(T[:3, :3] @ R_d.T)]
    xd = tr.J @ tr.qd
    a = -kd * xd - kp * e
    qdd0 = 25.0 * (posture - tr.q) - 2 * 0.9 * 5.0 * tr.qd
    Lam, J, Minv, h = tr.Lam, tr.J, tr.Minv, tr.h
    if projector == "dynamic":   # Khatib: J^T (Lambda a* + mu + p) + Nbar^T (M qdd_0 + h)
        NT = np.eye(7) - J.T @ Lam @ J @ Minv
    else:
        NT = np.eye(7) - J.T @ np.linalg.pinv(J).T
    expected = J.T @ (Lam @ (a - tr.Jdqd) + Lam @ J @ Minv @ h) + NT @ (tr.M @ qdd0 + h)
    np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
    # the task acceleration of that torque through the library's forward dynamics (ABA): a* exactly when the
    # projector is dynamically consistent
    # ABA on the model with the uncontrolled joints welded (the simulation's), friction off as in the law
    qdd = rc.forward_dynamics(law.plant.sim_model, tr.q, tr.qd, tau, friction=False)
    xdd = J @ qdd + tr.Jdqd
    if projector == "dynamic":
        np.testing.assert_allclose(xdd, a, atol=1e-9 * max(1.0, np.abs(a).max()))


@pytest.mark.parametrize("path,joints,frame,q0", CASES, ids=["arm7", "panda_with_hand"])
def test_the_null_space_makes_no_task_acceleration(path, joints, frame, q0):
    """J M^-1 Nbar^T tau_0 = 0 to 1e-9: the impedance law with K = 0 and F_d = 0 leaves only C qd + g and the
    posture torque."""
    model = rc.load_model(path)
    qd = np.linspace(-0.4, 0.4, 7)
    posture = q0 + np.array([0.4, -0.3, 0.5, 0.2, -0.4, 0.3, 0.6])
    law, qs, qds = law_at(model, joints, frame, q0, qd, "cartesian_impedance", cartesian_stiffness=[0.0],
                          nullspace_stiffness=[50.0], nullspace_posture=posture, max_effort_rate=0.0)
    tr = Truth(path, law.plant, frame, qs, qds)
    tau = law.compute(qs, qds, None, None, None, 1.0, t=0.0).copy()
    ns = tau - tr.h
    assert np.abs(ns).max() > 1.0                                      # a real posture torque
    assert np.abs(tr.J @ tr.Minv @ ns).max() < 1e-9


# ---------------------------------------------------------------------------------------------- the cycle
class Rig:
    """A ControlCycle and a Simulation of the same plant in lockstep (state k stamped k h, command k held over
    [k h, (k+1) h]); the law's torque before the clamp and the task outputs recorded."""

    def __init__(self, model, joints, q0, h, frame=None, **settings):
        self.plant = make_plant(model, joints)
        settings.setdefault("ramp_time", 0.0)
        self.h = h
        self.cycle = ControlCycle(self.plant, Settings.of(self.plant, h, **settings), end_effector_frame=frame)
        sp = make_plant(model, joints)
        self.sim = Simulation(sp, sp.sim_initial_positions(q0))
        self.k = 0
        self.cmds, self.laws, self.err, self.twist, self.sigma = [], [], [], [], []

    def step(self):
        names, q, qd, eff = self.sim.joint_states()
        t_ns = int(round(self.k * self.h * NS))
        c = self.cycle
        c.merge(list(names), np.asarray(q), np.asarray(qd), eff, t_ns, t_ns, 0)
        cmd = c.update(t_ns)
        assert cmd is not None and np.all(np.isfinite(cmd))
        self.cmds.append(cmd.copy())
        self.laws.append(c.law.tau.copy())
        if c.task_running:
            self.err.append(c.task.error.copy())
            self.twist.append(c.task.twist.copy())
            self.sigma.append(c.task.sigma_min)
        assert self.sim.step(c.total.copy(), self.h)
        self.k += 1

    def run(self, seconds):
        for _ in range(int(round(seconds / self.h))):
            self.step()

    @property
    def now(self):
        return self.k * self.h

    def push(self, frame, F):
        """A wrench F (base axes) at the origin of ``frame`` in the simulation (which takes it in the frame's axes)."""
        R = rc.frame_pose(self.sim.model, self.sim.state.q, frame)[:3, :3]
        self.sim.set_wrench(frame, np.r_[R.T @ F[:3], R.T @ F[3:]])


STIFF = np.array([200.0, 200.0, 200.0, 20.0, 20.0, 20.0])


@pytest.mark.parametrize("rate", [500.0, 1000.0])
@pytest.mark.parametrize("path,joints,q0", [(ARM7, None, Q_ARM7), (PANDA, PANDA_ARM, Q_PANDA)], ids=["arm7", "panda"])
def test_default_impedance_is_stable_at_the_rate_and_deflects_by_k_inverse_f(path, joints, q0, rate):
    """The defaults (double diagonalization) at 500 Hz and 1 kHz: a wrench at the end effector deflects it by
    K^-1 F within 2 % per axis, and the arm comes to rest."""
    rig = Rig(rc.load_model(path), joints, q0, 1.0 / rate, mode="cartesian_impedance")
    rig.run(0.2)
    frame = rig.cycle.task.frame
    F = np.array([6.0, -4.0, 5.0, 0.4, -0.3, 0.35])
    rig.push(frame, F)
    rig.run(2.5)
    e = rig.err[-1]
    assert np.all(np.abs(e - F / STIFF) <= 0.02 * np.abs(F / STIFF)), (e, F / STIFF)
    assert np.abs(np.array(rig.twist[-int(0.2 * rate):])).max() < 1e-3       # at rest: no oscillation


def test_unit_mass_damping_is_the_hazard_the_default_avoids(panda):
    """About the Panda's wrist Lambda is small: unit-mass damping (D = 2 zeta sqrt(K)) at 500 Hz keeps the tool
    oscillating where the default design settles."""
    speeds = {}
    for design in ("unit_mass", "double_diagonalization"):
        rig = Rig(panda, PANDA_ARM, Q_PANDA, 0.002, mode="cartesian_impedance", damping_design=design)
        rig.run(0.2)
        rig.push(rig.cycle.task.frame, np.array([0.0, 0.0, 0.0, 0.3, -0.2, 0.25]))
        rig.run(1.5)
        speeds[design] = np.abs(np.array(rig.twist[-100:])).max()
    assert speeds["double_diagonalization"] < 1e-3 and speeds["unit_mass"] > 20 * speeds["double_diagonalization"]


@pytest.mark.parametrize("path,joints,q0", [(ARM7, None, Q_ARM7), (PANDA, PANDA_ARM, Q_PANDA)], ids=["arm7", "panda"])
def test_operational_space_step_follows_the_linear_error_dynamics(path, joints, q0):
    """Shaping off, a 2 cm / 0.1 rad step: e follows e'' + K_D e' + K_P e = 0 (K_P 100, K_D 20: critically
    damped, e(t) = e_0 (1 + 10 t) exp(-10 t)) within 5 % RMS of the step."""
    rig = Rig(rc.load_model(path), joints, q0, 0.001, mode="operational_space", max_cartesian_velocity=[0.0, 0.0])
    rig.run(0.2)
    T = rig.cycle.task.pose.copy()
    u, w = np.array([0.6, -0.6, 0.52]), np.array([0.6, -0.5, 0.58])
    R1 = rotation.exp(0.1 * w / np.linalg.norm(w)) @ T[:3, :3]
    rig.cycle.set_target(T[:3, 3] + 0.02 * u / np.linalg.norm(u), rotation.matrix_quaternion(R1), "", rig.now)
    n0 = len(rig.err)
    rig.run(1.0)
    e = np.array(rig.err[n0:])
    t = np.arange(len(e)) * rig.h
    linear = np.outer((1 + 10 * t) * np.exp(-10 * t), e[0])
    assert abs(np.linalg.norm(e[0, :3]) - 0.02) < 1e-9 and abs(np.linalg.norm(e[0, 3:]) - 0.1) < 1e-9
    rms_p = np.sqrt(np.mean(np.sum((e[:, :3] - linear[:, :3]) ** 2, axis=1))) / 0.02
    rms_r = np.sqrt(np.mean(np.sum((e[:, 3:] - linear[:, 3:]) ** 2, axis=1))) / 0.1
    assert rms_p <= 0.05 and rms_r <= 0.05, (rms_p, rms_r)


@pytest.mark.parametrize("mode", ["cartesian_impedance", "operational_space"])
def test_a_far_target_is_approached_within_the_velocity_limit(arm7, mode):
    """A 1 m, 179 degree target jump (the pose of a configuration found by sampling, moved to exactly 1 m and
    179 degrees): the tool never moves faster than max_cartesian_velocity + 10 %, and gets there."""
    rig = Rig(arm7, None, Q_ARM7, 0.002, mode=mode, effort_limits=list(LIMITS7))
    rig.run(0.1)
    T = rig.cycle.task.pose.copy()
    q_far = np.array([-1.21568371, -1.66206709, -1.35223486, -2.16560631, 1.45004966, 1.91164665, 0.37797059])
    T_far = rc.frame_pose(arm7, q_far, rig.cycle.task.frame)
    d = T_far[:3, 3] - T[:3, 3]
    p1 = T[:3, 3] + d / np.linalg.norm(d)
    phi = rotation.log(T_far[:3, :3] @ T[:3, :3].T)
    R1 = rotation.exp(np.deg2rad(179.0) * phi / np.linalg.norm(phi)) @ T[:3, :3]
    rig.cycle.set_target(p1, rotation.matrix_quaternion(R1), "", rig.now)
    n0 = len(rig.twist)
    rig.run(10.0)
    tw = np.array(rig.twist[n0:])
    v, w = np.linalg.norm(tw[:, :3], axis=1), np.linalg.norm(tw[:, 3:], axis=1)
    assert v.max() <= 1.1 * 0.25 and w.max() <= 1.1 * 1.0, (v.max(), w.max())
    assert v.max() > 0.1 and w.max() > 0.3
    p_d, R_d, xd, _ = rig.cycle.task.target(rig.now)
    np.testing.assert_allclose(p_d, p1, atol=1e-9)
    np.testing.assert_allclose(R_d, R1, atol=1e-9)
    assert np.linalg.norm(rig.err[-1][:3]) < 0.01 and np.linalg.norm(rig.err[-1][3:]) < 0.02, rig.err[-1]


def test_q_and_minus_q_give_the_same_command(arm7):
    cmds = []
    for sign in (1.0, -1.0):
        rig = Rig(arm7, None, Q_ARM7, 0.001, mode="cartesian_impedance")
        rig.run(0.05)
        T = rig.cycle.task.pose.copy()
        quat = rotation.matrix_quaternion(rotation.exp([0.4, -0.2, 0.3]) @ T[:3, :3])
        rig.cycle.set_target(T[:3, 3] + [0.05, 0.0, -0.03], sign * quat, "", rig.now)
        rig.run(0.3)
        cmds.append(np.array(rig.cmds))
    assert np.abs(cmds[0] - cmds[1]).max() <= 1e-12


@pytest.mark.parametrize("mode", ["cartesian_impedance", "operational_space"])
def test_through_a_singular_configuration_the_torque_stays_bounded(arm7, mode):
    """The arm stretched straight (joint 4 at 0: the elbow singularity) and driven across it by a target that
    moves through the stretched configuration: the law's torque before the clamp is finite and within 2x the
    limits, and sigma_min(J) is reported below singular_damping there."""
    q_bent = np.array([0.0, 0.3, 0.0, -0.5, 0.0, 0.6, 0.0])
    rig = Rig(arm7, None, q_bent, 0.001, mode=mode, effort_limits=list(LIMITS7))
    rig.run(0.1)
    model = rig.plant.rigid_tree()[0]
    frame = rig.cycle.task.frame
    q_straight = q_bent.copy()
    q_straight[3] = 0.0
    T_s = rc.frame_pose(model, q_straight, frame)
    q_over = q_bent.copy()
    q_over[3] = 0.5
    T_o = rc.frame_pose(model, q_over, frame)
    for T in (T_s, T_o, T_s):
        rig.cycle.set_target(T[:3, 3], rotation.matrix_quaternion(T[:3, :3]), "", rig.now)
        rig.run(3.0)
    laws = np.array(rig.laws)
    assert np.all(np.isfinite(laws))
    assert np.abs(laws / LIMITS7).max() <= 2.0, np.abs(laws / LIMITS7).max()
    assert min(rig.sigma) < 0.05                                        # it did come near the singularity


def test_entering_and_leaving_a_task_mode_holds_and_ramps(arm7):
    rig = Rig(arm7, None, Q_ARM7, 0.001, mode="computed_torque", ramp_time=0.2, effort_limits=list(LIMITS7))
    rig.run(0.3)
    c = rig.cycle
    c.request(Settings.of(rig.plant, 0.001, mode="cartesian_impedance", ramp_time=0.2,
                          effort_limits=list(LIMITS7)), ["mode"])
    rig.run(0.5)
    assert np.abs(rig.err[0]).max() < 1e-12                              # the measured pose held at entry
    jumps = np.abs(np.diff(np.array(rig.cmds), axis=0)).max()
    assert jumps < 0.5, jumps                                          # blended, no step in the command
    with pytest.raises(TrajectoryError, match="needs a task-space mode"):
        c.request(Settings.of(rig.plant, 0.001, mode="computed_torque", ramp_time=0.2), ["mode"])
        rig.run(0.01)
        c.set_target([0.0, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0], "", rig.now)
    q = rig.sim.state.q.copy()
    rig.run(0.5)
    assert np.abs(rig.sim.state.q - q).max() < 0.01                    # leaving: holds the measured position


def test_the_effort_rate_limit_starts_from_the_first_torque(arm7):
    """max_effort_rate: the first task-space command is the law's torque itself (no ramp from zero, which would
    let the arm sag); after it, no joint's command changes faster than the limit."""
    rig = Rig(arm7, None, Q_ARM7, 0.001, mode="cartesian_impedance", max_effort_rate=200.0)
    rig.step()
    plant = rig.plant
    np.testing.assert_allclose(rig.cmds[0], plant.gravity_torques(np.zeros(7)), atol=1e-6)
    T = rig.cycle.task.pose.copy()
    rig.cycle.set_target(T[:3, 3] + [0.05, 0.05, 0.0], rotation.matrix_quaternion(T[:3, :3]), "", rig.now)
    rig.run(0.3)
    steps = np.abs(np.diff(np.array(rig.cmds), axis=0)).max(axis=0)
    assert steps.max() <= 200.0 * 0.001 + 1e-9


def test_refusals_name_the_reason(arm7, panda):
    plant = make_plant(arm7)
    with pytest.raises(TaskError, match="nowhere"):
        ControlCycle(plant, Settings.of(plant, 0.001), end_effector_frame="nowhere")
    with pytest.raises(TaskError, match="not a frame the controlled joints move"):
        ControlCycle(plant, Settings.of(plant, 0.001), end_effector_frame="arm7_link0")
    fb = rc.load_model(ARM7, floating_base=True)
    fplant = make_plant(fb)
    with pytest.raises(ValueError, match="floating base"):
        Settings.of(fplant, 0.001, mode="cartesian_impedance")
    four = rc.load_model(os.path.join(ROOT, "config", "fourbar.yaml"))
    with pytest.raises(ValueError, match="not available"):
        Settings.of(make_plant(four), 0.001, mode="operational_space")
    few = make_plant(arm7, ["arm7_joint%d" % i for i in range(1, 5)])
    with pytest.raises(ValueError, match="at least 6 controlled joints"):
        Settings.of(few, 0.001, mode="cartesian_impedance")
    for name, value, why in (("cartesian_stiffness", [1.0, 2.0], "cartesian_stiffness"),
                             ("cartesian_damping_ratio", [0.0], "cartesian_damping_ratio"),
                             ("error_clip", [0.1], "error_clip"), ("singular_damping", float("nan"), "singular_damping"),
                             ("nullspace_projector", "oblique", "nullspace_projector"),
                             ("max_effort_rate", -1.0, "max_effort_rate")):
        with pytest.raises(ValueError, match=why):
            Settings.of(plant, 0.001, mode="cartesian_impedance", **{name: value})
    rig = Rig(arm7, None, Q_ARM7, 0.001, mode="cartesian_impedance")
    rig.run(0.01)
    with pytest.raises(TaskError, match="'map' is not a frame"):
        rig.cycle.set_target([0.0, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0], "map", rig.now)
    with pytest.raises(TaskError, match="finite"):
        rig.cycle.set_target([0.0, float("nan"), 0.5], [0.0, 0.0, 0.0, 1.0], "", rig.now)
    with pytest.raises(TaskError, match="quaternion"):
        rig.cycle.set_target([0.0, 0.0, 0.5], [0.0, 0.0, 0.0, 0.0], "", rig.now)
    rig.run(0.01)                                                       # the cycle lives on


def test_a_target_in_another_frame_is_converted_at_arrival(arm7):
    rig = Rig(arm7, None, Q_ARM7, 0.001, mode="cartesian_impedance")
    rig.run(0.02)
    c = rig.cycle
    T = c.task.pose.copy()
    c.set_target([0.0, 0.0, 0.04], [0.0, 0.0, 0.0, 1.0], c.task.frame, rig.now)   # 4 cm along the tool's z
    p_end, R_end, _, _ = c.task.target(rig.now + 10.0)
    np.testing.assert_allclose(p_end, T[:3, 3] + 0.04 * T[:3, 2], atol=1e-12)
    np.testing.assert_allclose(R_end, T[:3, :3], atol=1e-12)
    c.set_wrench([0.0, 0.0, 5.0], [0.0, 0.0, 0.0], c.task.frame)
    np.testing.assert_allclose(c.task.wrench[:3], 5.0 * T[:3, 2], atol=1e-9)
