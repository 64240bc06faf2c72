"""``joints`` as any subset of the actuated joints, for the kinds beyond a tree: a closed loop, an elastic robot
and the Gough-Stewart platform. The uncontrolled actuated joints are measured (else locked), take zero
acceleration and get no command.

Truths: the library's whole-model functions (each checked against Pinocchio or closed forms elsewhere) with
the uncontrolled joints' accelerations set to 0, restricted to the controlled joints; and the identity
between two different algorithms, the plant's forward dynamics with the uncontrolled joints held (a solve
of the mass matrix, CRBA) and its inverse dynamics (the RNE, or Khalil's three passes for elastic joints).
"""
import warnings
from pathlib import Path

import numpy as np
import pytest

import rne_control as rc
from rne_control.control import ClosedLoopPlant, ControlLaw, StateError, make_plant

ROOT = Path(__file__).parents[1]

# the palletiser (its parallelogram: <mimic> joints driven by the elbow) carrying a two-finger gripper, whose
# second finger is a <mimic> of the first: one loop a controlled joint drives, one it does not
GRIPPER = """
  <link name="finger_a"><inertial><origin xyz="0 0.01 0.03"/><mass value="0.4"/>
    <inertia ixx="1e-4" iyy="1e-4" izz="2e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="finger_b"><inertial><origin xyz="0 -0.01 0.03"/><mass value="0.4"/>
    <inertia ixx="1e-4" iyy="1e-4" izz="2e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="finger_a_joint" type="revolute"><parent link="tool0"/><child link="finger_a"/>
    <origin xyz="0.02 0 0"/><axis xyz="1 0 0"/><limit lower="-0.5" upper="0.5" effort="5" velocity="1"/></joint>
  <joint name="finger_b_joint" type="revolute"><parent link="tool0"/><child link="finger_b"/>
    <origin xyz="-0.02 0 0"/><axis xyz="1 0 0"/><limit lower="-0.5" upper="0.5" effort="5" velocity="1"/>
    <mimic joint="finger_a_joint" multiplier="-1.5" offset="0.1"/></joint>
</robot>"""


def _load(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rc.load_model(str(ROOT / "config" / name))


def _held_inverse_identity(plant, rng, state_q, state_qd, tol=1e-8):
    """forward_dynamics(inverse_dynamics(qdd)) == qdd with the uncontrolled joints held."""
    plant.set_state(state_q, state_qd)
    qdd = rng.normal(size=plant.n)
    tau = plant.inverse_dynamics(qdd, True, np.zeros(plant.n)).copy()
    np.testing.assert_allclose(plant.forward_dynamics(tau), qdd, rtol=tol, atol=tol)
    M = plant.mass_matrix()
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    assert np.linalg.eigvalsh(M).min() > 0


def test_closed_loop_with_a_loop_no_controlled_joint_drives():
    text = (ROOT / "urdf" / "palletizer.urdf").read_text().replace("</robot>", GRIPPER)
    model = rc.load_urdf(text, friction=False)
    assert model.active_joint_names == ("joint1", "joint2", "elbow", "finger_a_joint")
    joints = ["elbow", "joint1", "joint2"]
    plant = make_plant(model, joints, locked={"finger_a_joint": 0.2})
    assert type(plant) is ClosedLoopPlant
    assert plant.state_names == ("elbow", "joint1", "joint2", "finger_a_joint", "joint3", "rod", "finger_b_joint")
    assert plant.lockable_names == ("finger_a_joint",)
    law = ControlLaw(plant)
    rng = np.random.default_rng(2)
    qa = np.array([0.3, 0.2, -0.4, 0.15])                     # model order: joint1, joint2, elbow, finger_a
    qda = rng.normal(size=4)
    q_tree = rc.solve_loops(model, qa)
    k = {j: model.joint_names.index(j) for j in model.joint_names}
    state = np.array([qa[2], qa[0], qa[1], qa[3], np.nan, np.nan, np.nan])
    state_qd = np.array([qda[2], qda[0], qda[1], qda[3], 0.0, 0.0, 0.0])
    q_d, qd_d, qdd_d = rng.normal(size=(3, 3))
    tau = law.compute(state, state_qd, q_d, qd_d, qdd_d).copy()
    qdd_all = np.zeros(4)
    qdd_all[[2, 0, 1]] = qdd_d + law.kd * (qd_d - qda[[2, 0, 1]]) + law.kp * (q_d - qa[[2, 0, 1]])
    want = rc.closed_loop_inverse_dynamics(model, qa, qda, qdd_all, friction=False)[[2, 0, 1]]
    np.testing.assert_allclose(tau, want, rtol=1e-12, atol=1e-12)
    # the gripper's published mimic joint off its rule: ignored and counted; the parallelogram's: rejected
    off = state.copy()
    off[6] = q_tree[k["finger_b_joint"]] + 0.2
    tau2 = law.compute(off, state_qd, q_d, qd_d, qdd_d).copy()
    np.testing.assert_array_equal(tau2, tau)
    assert plant.ignored_passive == {"finger_b_joint": 1}
    bad = state.copy()
    bad[4] = q_tree[k["joint3"]] + 0.2
    with pytest.raises(StateError, match="passive joint 'joint3'"):
        law.compute(bad, state_qd, q_d, qd_d, qdd_d)
    # not measured, the finger holds its last measured position; before any, its locked one
    fresh = make_plant(model, joints, locked={"finger_a_joint": 0.2})
    fresh.set_state(np.r_[state[:3], np.nan, state[4:]], state_qd)
    assert fresh.q_tree[k["finger_a_joint"]] == 0.2
    assert abs(fresh.q_tree[k["finger_b_joint"]] - (-1.5 * 0.2 + 0.1)) < 1e-12
    _held_inverse_identity(plant, rng, state, state_qd)
    with pytest.raises(ValueError, match=r"joints \['joint3'\] are passive joints"):
        make_plant(model, ["joint1", "joint3"])


def test_palletiser_with_a_joint_of_its_loop_uncontrolled():
    model = _load("palletizer.yaml")
    plant = make_plant(model, ["joint3", "joint1"], locked={"joint2": 0.25})
    assert plant.state_names[:3] == ("joint3", "joint1", "joint2") and plant.initial_state[2] == 0.25
    rng = np.random.default_rng(5)
    qa, qda = np.array([0.1, 0.3, -0.2]), rng.normal(size=3)       # joint1, joint2, joint3
    state = np.r_[qa[[2, 0, 1]], np.full(len(plant.state_names) - 3, np.nan)]
    state_qd = np.r_[qda[[2, 0, 1]], np.zeros(len(plant.state_names) - 3)]
    plant.set_state(state, state_qd)
    qdd = rng.normal(size=2)
    tau = plant.inverse_dynamics(qdd, True, np.zeros(2))
    want = rc.closed_loop_inverse_dynamics(model, qa, qda, np.array([qdd[1], 0.0, qdd[0]]))[[2, 0]]
    np.testing.assert_allclose(tau, want, rtol=1e-12, atol=1e-12)
    A = rc.closed_loop_mass_matrix(model, qa)
    np.testing.assert_allclose(plant.mass_matrix(), A[np.ix_([2, 0], [2, 0])], rtol=1e-12, atol=1e-12)
    _held_inverse_identity(plant, rng, state, state_qd)


def test_elastic_robot_with_a_rigid_joint_uncontrolled():
    model = _load("arm7_sea.yaml")
    rigid = model.rigid_joint_names
    joints = [rigid[4], rigid[0], rigid[2], rigid[1], rigid[3], rigid[5]]       # arm7_joint7 uncontrolled
    plant = make_plant(model, joints, locked={rigid[6]: 0.3})
    assert plant.lockable_names == (rigid[6],) and plant.initial_state[6] == 0.3
    assert set(plant.required_names) == set(joints) | set(model.elastic_joint_names)
    rng = np.random.default_rng(9)
    q, qd = rng.normal(size=model.n) * 0.3, rng.normal(size=model.n) * 0.3
    order = [model.joint_names.index(j) for j in plant.state_names]
    plant.set_state(q[order], qd[order])
    qdd = rng.normal(size=6)
    tau = plant.inverse_dynamics(qdd, True, np.zeros(6))
    qdd_r = np.zeros(7)
    qdd_r[[rigid.index(j) for j in joints]] = qdd
    want, qdd_e = rc.elastic_inverse_dynamics(model, q, qd, qdd_r)
    np.testing.assert_allclose(tau, want[[rigid.index(j) for j in joints]], rtol=1e-12, atol=1e-12)
    _held_inverse_identity(plant, rng, q[order], qd[order])
    # the simulation: the controlled and elastic joints free under the torques, the 7th held at 0.3
    sim = make_plant(model, joints, locked={rigid[6]: 0.3})
    assert sim.sim_names == tuple(joints) + model.unactuated_joint_names
    q[model.joint_names.index(rigid[6])], qd[model.joint_names.index(rigid[6])] = 0.3, 0.0
    sim_q = q[[model.joint_names.index(j) for j in sim.sim_names]]
    sim_qd = qd[[model.joint_names.index(j) for j in sim.sim_names]]
    qdd_r[6] = 0.0
    tau, qdd_e = rc.elastic_inverse_dynamics(model, q, qd, qdd_r)
    acc = sim.sim_acceleration(sim_q, sim_qd, tau[[rigid.index(j) for j in joints]])
    np.testing.assert_allclose(acc[:6], qdd, rtol=1e-8, atol=1e-8)
    unact = list(model.unactuated_joint_names)
    np.testing.assert_allclose(acc[6:], qdd_e[[unact.index(j) for j in sim.sim_names[6:]]], rtol=1e-8, atol=1e-8)


def test_platform_with_a_leg_uncontrolled():
    model = _load("gough_stewart.yaml")
    plant = make_plant(model, ["leg4", "leg1", "leg2", "leg3", "leg5"])
    assert plant.state_names == ("leg4", "leg1", "leg2", "leg3", "leg5", "leg6")
    assert plant.lockable_names == ("leg6",)
    rng = np.random.default_rng(4)
    pose = np.r_[0.02, -0.03, 2.05, 0.0, 0.0, np.sin(0.04), np.cos(0.04)]
    q6, qd6 = rc.platform_inverse_kinematics(model, pose), rng.normal(size=6) * 0.02
    order = [3, 0, 1, 2, 4, 5]
    plant.set_state(q6[order], qd6[order])
    qdd = rng.normal(size=5) * 0.1
    tau = plant.inverse_dynamics(qdd, True, np.zeros(5))
    qdd6 = np.zeros(6)
    qdd6[order[:5]] = qdd
    want = rc.parallel_joint_inverse_dynamics(model, q6, qd6, qdd6)[order[:5]]
    np.testing.assert_allclose(tau, want, rtol=1e-10, atol=1e-8)
    _held_inverse_identity(plant, rng, q6[order], qd6[order], tol=1e-7)
    # leg6 not measured: it holds its last length
    plant.set_state(np.r_[q6[order[:5]], np.nan], np.r_[qd6[order[:5]], np.nan])
    np.testing.assert_allclose(plant.pose, pose / np.r_[1, 1, 1, np.full(4, np.linalg.norm(pose[3:]))], atol=1e-9)
