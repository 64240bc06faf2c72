"""rne_control against Pinocchio on real URDFs from example-robot-data, to 1e-9 relative."""
import numpy as np
import pinocchio as pin
import pytest

import rne_control as rc
from oracle import Oracle, erd, rel_err

ROBOTS = {
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",          # prismatic fingers
    "baxter": "baxter_description/urdf/baxter.urdf",       # branched: two arms on a torso
    "talos": "talos_data/robots/talos_reduced.urdf",       # 32-DOF humanoid tree
}
TOL = 1e-9


@pytest.fixture(scope="module", params=sorted(ROBOTS))
def robot(request):
    path = erd(ROBOTS[request.param])
    model = rc.load_urdf(path, friction=False)
    return model, Oracle(path, model)


def states(n, count=8, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-2, 2, n), rng.normal(size=n) * 2, rng.normal(size=n) * 3) for _ in range(count)]


def test_inverse_dynamics(robot):
    model, pin_ = robot
    for q, qd, qdd in states(model.n):
        assert rel_err(rc.inverse_dynamics(model, q, qd, qdd), pin_.rnea(q, qd, qdd)) < TOL


def test_gravity_and_coriolis(robot):
    model, pin_ = robot
    for q, qd, _ in states(model.n):
        assert rel_err(rc.gravity_torques(model, q), pin_.gravity(q)) < TOL
        assert rel_err(rc.coriolis_torques(model, q, qd), pin_.coriolis(q, qd)) < TOL


def test_mass_matrix(robot):
    model, pin_ = robot
    for q, _, _ in states(model.n):
        assert rel_err(rc.mass_matrix(model, q), pin_.mass_matrix(q)) < TOL


def test_forward_dynamics(robot):
    model, pin_ = robot
    for q, qd, qdd in states(model.n):
        tau = pin_.rnea(q, qd, qdd)
        assert rel_err(rc.forward_dynamics(model, q, qd, tau), pin_.aba(q, qd, tau)) < 1e-8


def test_stacked_equals_single(robot):
    model, pin_ = robot
    rng = np.random.default_rng(3)
    Q, QD, QDD = rng.normal(size=(3, 50, model.n))
    T = rc.inverse_dynamics(model, Q, QD, QDD)
    assert T.shape == (50, model.n)
    for i in (0, 17, 49):
        assert rel_err(T[i], pin_.rnea(Q[i], QD[i], QDD[i])) < TOL
    G = rc.gravity_torques(model, Q)
    H = rc.mass_matrix(model, Q[:5])
    A = rc.forward_dynamics(model, Q[:5], QD[:5], T[:5])
    C = rc.coriolis_torques(model, Q, QD[0])          # an unstacked argument broadcasts
    for i in range(5):
        assert rel_err(G[i], pin_.gravity(Q[i])) < TOL
        assert rel_err(H[i], pin_.mass_matrix(Q[i])) < TOL
        assert rel_err(A[i], QDD[i]) < 1e-7
        assert rel_err(C[i], pin_.coriolis(Q[i], QD[0])) < TOL


def test_external_wrench_matches_pinocchio():
    """A wrench on panda_link7 (Featherstone/Pinocchio sign: acting on the link), in that link's frame."""
    path = erd(ROBOTS["panda"])
    model = rc.load_urdf(path, friction=False)
    pin_ = Oracle(path, model)
    pm = pin_.pm
    rng = np.random.default_rng(5)
    for link in ("panda_link7", "panda_hand", "panda_link4"):
        fid = pm.getFrameId(link)
        frame = pm.frames[fid]
        for _ in range(3):
            q, qd, qdd = rng.normal(size=(3, model.n))
            w = rng.normal(size=6) * 10  # [force; torque]
            fext = [pin.Force.Zero() for _ in range(pm.njoints)]
            fext[frame.parentJoint] = frame.placement.act(pin.Force(w[:3], w[3:]))
            tau = rc.inverse_dynamics(model, q, qd, qdd, f_ext={link: w})
            assert rel_err(tau, pin_.rnea(q, qd, qdd, pin.StdVec_Force(fext))) < TOL
            # forward dynamics with the same wrench inverts it
            assert rel_err(rc.forward_dynamics(model, q, qd, tau, f_ext={link: w}), qdd) < 1e-8


def test_branched_selection_and_order():
    """A joint subset in an arbitrary order on the branched baxter; the rest locked at given angles."""
    path = erd(ROBOTS["baxter"])
    full = rc.load_urdf(path, friction=False)
    joints = ["right_w2", "left_s0", "right_s0", "left_e1", "head_pan"]
    locked = {"left_s1": 0.3, "right_e1": -0.7}
    sub = rc.load_urdf(path, joints=joints, locked=locked, friction=False)
    assert sub.joint_names == tuple(joints) and sub.n == 5
    rng = np.random.default_rng(11)
    q, qd, qdd = rng.normal(size=(3, 5))
    qf, qdf, qddf = np.zeros(full.n), np.zeros(full.n), np.zeros(full.n)
    for k, j in enumerate(joints):
        i = full.joint_names.index(j)
        qf[i], qdf[i], qddf[i] = q[k], qd[k], qdd[k]
    for j, v in locked.items():
        qf[full.joint_names.index(j)] = v
    tf = rc.inverse_dynamics(full, qf, qdf, qddf)
    idx = [full.joint_names.index(j) for j in joints]
    assert rel_err(rc.inverse_dynamics(sub, q, qd, qdd), tf[idx]) < TOL
