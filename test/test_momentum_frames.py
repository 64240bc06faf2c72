"""generalized_momentum, coriolis_transpose_torques, frame_pose, frame_jacobian and frame_bias_acceleration
against Pinocchio (the oracle of test_pinocchio.py) and against central differences of the library's own
mass matrix and frame poses."""
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import rne_control as rc
from oracle import Oracle, erd, rel_err

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = {
    "arm7": str(ROOT / "urdf/arm7.urdf"),                                 # the project's 7-DOF arm
    "panda": erd("panda_description/urdf/panda.urdf"),                   # with its hand: a mimic finger joint
    "ur5": erd("ur_description/urdf/ur5_robot.urdf"),
    "baxter": erd("baxter_description/urdf/baxter.urdf"),                # branched: two arms on a torso
}
TOL = 1e-9
FD_TOL = 1e-6


def load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rc.load_model(path, **kw) if path.endswith(".yaml") else rc.load_urdf(path, friction=False, **kw)


@pytest.fixture(scope="module", params=sorted(ROBOTS))
def robot(request):
    model = load(ROBOTS[request.param])
    return model, Oracle(ROBOTS[request.param], model)


def states(n, count=4, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-2, 2, n), rng.normal(size=n) * 2) for _ in range(count)]


def frames(model, oracle):
    """The model's frames that Pinocchio has too (its BODY frame for a link), as (name, Pinocchio frame id)."""
    out = [(name, oracle.pm.getFrameId(name)) for name in model.link_frames if oracle.pm.existFrame(name)]
    assert len(out) >= len(model.link_frames) - 1
    return out


def test_coriolis_transpose_and_momentum_match_pinocchio(robot):
    model, o = robot
    for q, qd in states(model.n):
        pq, v = o.q(q), o.v(qd)
        C = pin.computeCoriolisMatrix(o.pm, o.pd, pq, v)
        assert rel_err(rc.coriolis_transpose_torques(model, q, qd), (C.T @ v)[o.iv]) < TOL
        assert rel_err(rc.generalized_momentum(model, q, qd), o.mass_matrix(q) @ qd) < TOL


def test_momentum_includes_rotor_inertia():
    """puma560.yaml has rotor inertia, its URDF twin none: p = (M_urdf + diag(Ia)) qd."""
    model = load(str(ROOT / "config/puma560.yaml"))
    o = Oracle(ROOT / "urdf/puma560.urdf", model)
    Ia = np.zeros(model.n)
    Ia[model.tree[:, 17].astype(int)] = model.tree[:, 12]
    assert np.all(Ia > 0)
    for q, qd in states(model.n):
        p = rc.generalized_momentum(model, q, qd)
        assert rel_err(p, (o.mass_matrix(q) + np.diag(Ia)) @ qd) < TOL
        assert rel_err(p, rc.mass_matrix(model, q) @ qd) < TOL
        # C^T qd has no rotor term (Ia is constant)
        C = pin.computeCoriolisMatrix(o.pm, o.pd, o.q(q), o.v(qd))
        assert rel_err(rc.coriolis_transpose_torques(model, q, qd), (C.T @ o.v(qd))[o.iv]) < TOL


def test_frames_match_pinocchio(robot):
    model, o = robot
    for q, qd in states(model.n, count=3, seed=1):
        pq, v = o.q(q), o.v(qd)
        pin.forwardKinematics(o.pm, o.pd, pq, v, 0 * v)
        pin.updateFramePlacements(o.pm, o.pd)
        for name, fid in frames(model, o):
            assert rel_err(rc.frame_pose(model, q, name), o.pd.oMf[fid].homogeneous) < TOL, name
            a = pin.getFrameClassicalAcceleration(o.pm, o.pd, fid, pin.LOCAL_WORLD_ALIGNED).vector
            assert np.max(np.abs(rc.frame_bias_acceleration(model, q, qd, name) - a)) < TOL * max(1.0, np.abs(a).max())
        for name, fid in frames(model, o):   # computeFrameJacobian recomputes the kinematics at q
            J = pin.computeFrameJacobian(o.pm, o.pd, pq, fid, pin.LOCAL_WORLD_ALIGNED)
            Jr = rc.frame_jacobian(model, q, name)
            assert Jr.shape == (6, model.n)
            assert np.max(np.abs(Jr - J[:, o.iv])) < TOL * max(1.0, np.abs(J).max()), name


def kinetic_energy(model, q, qd):
    return 0.5 * qd @ rc.mass_matrix(model, q) @ qd


@pytest.mark.parametrize("name", ["arm7", "panda"])
def test_coriolis_transpose_is_dT_dq(name):
    """C^T qd = dT/dq, T = 1/2 qd^T M(q) qd, by central differences of rc.mass_matrix (qd fixed)."""
    model = load(ROBOTS[name])
    h = 1e-5
    for q, qd in states(model.n, seed=2):
        dT = np.array([(kinetic_energy(model, q + h * e, qd) - kinetic_energy(model, q - h * e, qd)) / (2 * h)
                       for e in np.eye(model.n)])
        assert rel_err(rc.coriolis_transpose_torques(model, q, qd), dT) < FD_TOL


def vee(W):
    return np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2


@pytest.mark.parametrize("name, frame", [("arm7", "arm7_flange"), ("panda", "panda_hand_tcp"),
                                         ("panda", "panda_leftfinger"), ("baxter", "left_gripper")])
def test_frame_jacobian_is_derivative_of_pose(name, frame):
    model = load(ROBOTS[name])
    h = 1e-6
    for q, _ in states(model.n, count=3, seed=3):
        J = rc.frame_jacobian(model, q, frame)
        R = rc.frame_pose(model, q, frame)[:3, :3]
        for k, e in enumerate(np.eye(model.n)):
            dT = (rc.frame_pose(model, q + h * e, frame) - rc.frame_pose(model, q - h * e, frame)) / (2 * h)
            col = np.concatenate([dT[:3, 3], vee(dT[:3, :3] @ R.T)])
            assert np.max(np.abs(J[:, k] - col)) < FD_TOL, (frame, model.joint_names[k])
        assert np.any(J != 0)


def test_frame_bias_acceleration_is_dJ_qd():
    """Jdot qd by central differences of the Jacobian along qd: d/dt J(q + t qd) qd at t = 0."""
    model = load(ROBOTS["panda"])
    h, f = 1e-6, "panda_hand_tcp"
    for q, qd in states(model.n, seed=4):
        dJ = (rc.frame_jacobian(model, q + h * qd, f) - rc.frame_jacobian(model, q - h * qd, f)) / (2 * h)
        # classical acceleration of a point: d/dt (J_lin qd), angular d/dt (J_ang qd)
        assert np.max(np.abs(rc.frame_bias_acceleration(model, q, qd, f) - dJ @ qd)) < FD_TOL * 10


def test_stacked_equals_single(robot):
    model, _ = robot
    rng = np.random.default_rng(5)
    Q, QD = rng.uniform(-2, 2, (2, 6, model.n))
    frame = list(model.link_frames)[-1]
    P, C = rc.generalized_momentum(model, Q, QD), rc.coriolis_transpose_torques(model, Q, QD)
    T, J, A = (rc.frame_pose(model, Q, frame), rc.frame_jacobian(model, Q, frame),
               rc.frame_bias_acceleration(model, Q, QD, frame))
    assert P.shape == C.shape == (6, model.n) and T.shape == (6, 4, 4) and J.shape == (6, 6, model.n)
    assert A.shape == (6, 6)
    for i in range(6):
        np.testing.assert_array_equal(P[i], rc.generalized_momentum(model, Q[i], QD[i]))
        np.testing.assert_array_equal(C[i], rc.coriolis_transpose_torques(model, Q[i], QD[i]))
        np.testing.assert_array_equal(T[i], rc.frame_pose(model, Q[i], frame))
        np.testing.assert_array_equal(J[i], rc.frame_jacobian(model, Q[i], frame))
        np.testing.assert_array_equal(A[i], rc.frame_bias_acceleration(model, Q[i], QD[i], frame))
    # an unstacked argument broadcasts
    np.testing.assert_array_equal(rc.coriolis_transpose_torques(model, Q, QD[0])[3],
                                  rc.coriolis_transpose_torques(model, Q[3], QD[0]))


def test_floating_base_is_held_at_identity():
    fixed, floating = load(ROBOTS["panda"]), load(ROBOTS["panda"], floating_base=True)
    q, qd = states(fixed.n, count=1, seed=6)[0]
    for f in (rc.generalized_momentum, rc.coriolis_transpose_torques):
        assert rel_err(f(floating, q, qd), f(fixed, q, qd)) < TOL
    assert rel_err(rc.frame_jacobian(floating, q, "panda_hand"), rc.frame_jacobian(fixed, q, "panda_hand")) < TOL
    np.testing.assert_array_equal(rc.frame_pose(fixed, q, "panda_link0"), fixed.link_frames["panda_link0"][1])


def test_bad_input_raises_named_errors():
    model = load(ROBOTS["arm7"])
    q, qd = np.zeros(7), np.ones(7)
    for f in (rc.generalized_momentum, rc.coriolis_transpose_torques, rc.frame_bias_acceleration):
        args = (("arm7_flange",) if f is rc.frame_bias_acceleration else ())
        with pytest.raises(rc.InputError, match="'qd' has 6 entries|'qd' must have shape"):
            f(model, q, qd[:6], *args)
        bad = qd.copy()
        bad[3] = np.nan
        with pytest.raises(rc.InputError, match="'qd' of joint 'arm7_joint4'"):
            f(model, q, bad, *args)
        with pytest.raises(rc.InputError, match=r"\(sample 1\)"):
            f(model, np.zeros((2, 7)), np.array([qd, bad]), *args)
    for f in (rc.frame_pose, rc.frame_jacobian):
        with pytest.raises(rc.InputError, match="'q' must have shape"):
            f(model, q[:5], "arm7_flange")
        bad = q.copy()
        bad[0] = np.inf
        with pytest.raises(rc.InputError, match="'q' of joint 'arm7_joint1'"):
            f(model, bad, "arm7_flange")
        with pytest.raises(ValueError, match="unknown frame 'tool'.*arm7_flange"):
            f(model, q, "tool")
    with pytest.raises(rc.InputError, match="unknown frame 'nope'"):
        rc.frame_bias_acceleration(model, q, qd, "nope")


def test_parallel_model_is_refused():
    model = rc.load_parallel(str(ROOT / "config/gough_stewart.yaml"))
    q = np.zeros(model.n)
    for call in (lambda: rc.generalized_momentum(model, q, q), lambda: rc.coriolis_transpose_torques(model, q, q),
                 lambda: rc.frame_pose(model, q, "platform"), lambda: rc.frame_jacobian(model, q, "platform"),
                 lambda: rc.frame_bias_acceleration(model, q, q, "platform")):
        with pytest.raises(rc.InputError, match="no kinematic tree"):
            call()


def test_rne_compile_compiles_the_new_kernels(monkeypatch):
    """rne_compile's dynamics group prepares the momentum/Coriolis kernels (both entry points) and the frame kernel."""
    from rne_control import compile as rc_compile
    from rne_control.dynamics import calls, frames, momentum_coriolis
    prepared = []
    monkeypatch.setattr(calls, "prepare", lambda kernel, sigs: prepared.append(kernel))
    rc_compile._group("dynamics")
    for kernel in (momentum_coriolis.momentum_coriolis_one, momentum_coriolis.momentum_coriolis_many,
                   frames.frame_many):
        assert kernel in prepared, kernel


def test_closed_loop_model_works_over_its_spanning_tree():
    """fourbar.yaml (a loop cut at one joint): q, qd hold every joint; p = M qd and C^T qd = dT/dq with the
    spanning tree's rc.mass_matrix."""
    model = load(str(ROOT / "config/fourbar.yaml"))
    assert model.is_closed_loop
    h = 1e-5
    for q, qd in states(model.n, seed=7):
        assert rel_err(rc.generalized_momentum(model, q, qd), rc.mass_matrix(model, q) @ qd) < TOL
        dT = np.array([(kinetic_energy(model, q + h * e, qd) - kinetic_energy(model, q - h * e, qd)) / (2 * h)
                       for e in np.eye(model.n)])
        assert rel_err(rc.coriolis_transpose_torques(model, q, qd), dT) < FD_TOL
        assert rc.frame_jacobian(model, q, "rocker").shape == (6, model.n)


def test_momentum_and_coriolis_transpose_together_equal_each_alone(robot):
    """The observer's one call gives what the two functions give, single and stacked."""
    from rne_control.dynamics import momentum_and_coriolis_transpose
    model, _ = robot
    (q, qd), (q2, qd2) = states(model.n, count=2, seed=5)
    p, ctq = momentum_and_coriolis_transpose(model, q, qd)
    np.testing.assert_array_equal(p, rc.generalized_momentum(model, q, qd))
    np.testing.assert_array_equal(ctq, rc.coriolis_transpose_torques(model, q, qd))
    P, CTQ = momentum_and_coriolis_transpose(model, np.stack([q, q2]), np.stack([qd, qd2]))
    np.testing.assert_array_equal(P[1], rc.generalized_momentum(model, q2, qd2))
    np.testing.assert_array_equal(CTQ[1], rc.coriolis_transpose_torques(model, q2, qd2))
