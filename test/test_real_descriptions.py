"""Real descriptions in the library: each loads as it ships, its arm is controlled with the rest of the
robot uncontrolled (the gripper measured or locked, its mimic joints following their leader), and the
plant's torques equal Pinocchio's RNE on the whole description restricted to the arm, to 1e-9."""
import warnings

import numpy as np
import pinocchio as pin
import pytest

import rne_control as rc
from rne_control.control import ControlLaw, TreePlant, make_plant
from rne_control.control.simulation import Simulation
from rne_control.dynamics.floating.api import floating_forward_dynamics
from rne_control.model.reduced import welded

from oracle import Oracle, rel_err
from real_descriptions import ARM_Q, DESCRIPTIONS, full_state, oracle

TOL = 1e-9


def load(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # published inertias that break the triangle inequality
        return rc.load_urdf(DESCRIPTIONS[name][0], friction=False)


@pytest.mark.parametrize("name", list(DESCRIPTIONS))
def test_arm_of_a_real_description_equals_pinocchio(name):
    path, arm, gripper, (g_lo, g_hi) = DESCRIPTIONS[name]
    model = load(name)
    pin_ = oracle(name, model)
    plant = make_plant(model, joints=arm)
    assert type(plant) is TreePlant and plant.joint_names == tuple(arm)
    assert gripper in plant.lockable_names
    mimic = set(model.passive_joint_names)
    assert mimic and mimic.isdisjoint(plant.lockable_names)      # mimic joints follow, they are not locked
    law = ControlLaw(plant)
    law.friction = False
    rng = np.random.default_rng(len(name))
    idx = [model.joint_names.index(j) for j in arm]
    names = plant.state_names
    q_arm = np.array(ARM_Q[name])
    for trial in range(3):
        qd_arm = rng.normal(size=len(arm)) * 0.5
        g, gd = rng.uniform(g_lo, g_hi), rng.normal() * 0.05 * trial   # the gripper moving in the later trials
        q, qd = full_state(model, arm, q_arm, qd_arm, {gripper: g}, {gripper: gd})
        state_q = np.array([q[model.joint_names.index(j)] for j in names])
        state_qd = np.array([qd[model.joint_names.index(j)] for j in names])
        state_q[[names.index(j) for j in mimic]] = np.nan          # not published: they follow their leader
        # gravity mode: zero velocity and acceleration everywhere
        law.set_mode("gravity")
        tau_g = law.compute(state_q, state_qd, q_arm, np.zeros(len(arm)), np.zeros(len(arm))).copy()
        assert rel_err(tau_g, pin_.gravity(q)[idx]) < TOL, (name, trial)
        # computed torque: every joint's measured q and qd, the law's acceleration at the arm, 0 elsewhere
        law.set_mode("computed_torque")
        q_d, qd_d, qdd_d = q_arm + 0.05, qd_arm * 0.5, rng.normal(size=len(arm))
        tau = law.compute(state_q, state_qd, q_d, qd_d, qdd_d).copy()
        qdd = np.zeros(model.n)
        qdd[idx] = qdd_d + law.kd * (qd_d - qd_arm) + law.kp * (q_d - q_arm)
        assert rel_err(tau, pin_.rnea(q, qd, qdd)[idx]) < TOL, (name, trial)
        assert rel_err(plant.mass_matrix(), pin_.mass_matrix(q)[np.ix_(idx, idx)]) < TOL, (name, trial)
    assert plant.ignored_passive == {}


@pytest.mark.parametrize("name", ["panda", "ur5_2f85"])
def test_gripper_mass_moves_the_arm_torques_and_off_rule_positions_are_ignored(name):
    """The gripper's configuration changes the arm's torques (the Panda's fingers open symmetrically, so
    only the inertial and velocity terms feel it, not gravity); a published mimic position off its rule is
    ignored (the joint follows its leader) and counted, never rejected."""
    path, arm, gripper, (g_lo, g_hi) = DESCRIPTIONS[name]
    model = load(name)
    plant = make_plant(model, joints=arm)
    law = ControlLaw(plant)
    names = plant.state_names
    q_arm, qd_arm, z = np.array(ARM_Q[name]), np.linspace(-1.0, 1.0, len(arm)), np.zeros(len(arm))
    taus = []
    for g in (g_lo, g_hi):
        q, qd = full_state(model, arm, q_arm, qd_arm, {gripper: g})
        sq = np.array([q[model.joint_names.index(j)] for j in names])
        sqd = np.array([qd[model.joint_names.index(j)] for j in names])
        taus.append(law.compute(sq, sqd, q_arm, z, z).copy())
    assert np.max(np.abs(taus[1] - taus[0])) > 1e-4          # the fingers' mass moved
    follower = model.passive_joint_names[0]
    sq[names.index(follower)] += 0.3                         # off its rule
    tau = law.compute(sq, sqd, q_arm, z, z).copy()
    np.testing.assert_array_equal(tau, taus[1])              # ignored: it follows its leader
    assert plant.ignored_passive == {follower: 1}


def test_the_dynamics_run_on_what_the_arm_depends_on():
    """On a fixed base, the other arm, the head and the legs are not in the dynamics model: Baxter's left
    arm with its gripper is 9 joints of 19, Talos' 7 + 7 gripper joints (+ 2 torso) of 44, PR2's right arm
    with its gripper and the torso 14 of 30."""
    for name, n in (("baxter", 9), ("talos", 16), ("panda", 9), ("pr2", 14)):
        plant = make_plant(load(name), joints=DESCRIPTIONS[name][1])
        assert plant._dm.n == n, (name, plant._dm.n)


def test_mimic_follower_of_a_controlled_leader_is_a_closed_loop_and_passive_joints_are_refused():
    model = load("panda")
    plant = make_plant(model)                                 # default: every actuated joint, the hand too
    assert plant.kind == "closed_loop" and plant.joint_names[-1] == "panda_finger_joint1"
    with pytest.raises(ValueError, match=r"panda_finger_joint2.*follow their leaders.*panda_finger_joint1"):
        make_plant(model, joints=["panda_joint1", "panda_finger_joint2"])
    with pytest.raises(ValueError, match="locked joints.*panda_finger_joint2"):
        make_plant(model, joints=DESCRIPTIONS["panda"][1], locked={"panda_finger_joint2": 0.01})


def test_payload_and_gravity_on_the_restricted_dynamics():
    """Baxter's left arm: a payload on its hand moves its torques as on the whole model; one on the right hand
    (not in the left arm's dynamics) changes nothing the left arm feels; gravity changes reach it."""
    model = load("baxter")
    arm = DESCRIPTIONS["baxter"][1]
    plant = make_plant(model, joints=arm)
    idx = [model.joint_names.index(j) for j in arm]
    q, _ = full_state(model, arm, np.array(ARM_Q["baxter"]), np.zeros(7))
    state = np.array([q[model.joint_names.index(j)] for j in plant.state_names])
    plant.set_state(state, np.zeros(len(state)))
    g0 = plant.gravity_torques(np.zeros(7)).copy()
    for link, changes in (("left_hand_link", True), ("right_hand_link", False)):
        plant.set_payload(link, 2.0, (0.0, 0.0, 0.05), (0.01, 0.01, 0.01, 0.0, 0.0, 0.0))
        g = plant.gravity_torques(np.zeros(7)).copy()
        assert rel_err(g, rc.gravity_torques(model, q)[idx]) < TOL, link      # the whole model, payload set
        assert (rel_err(g, g0) > 1e-3) == changes, link
    plant.set_payload(None)
    plant.set_gravity([0.0, 0.0, -3.7])
    assert rel_err(plant.gravity_torques(np.zeros(7)), g0 * 3.7 / 9.81) < TOL


def test_a_tree_plant_refuses_the_loops_it_cannot_close():
    with pytest.raises(ValueError, match=r"mimic joints \['panda_finger_joint2'\] of controlled leaders.*ClosedLoop"):
        TreePlant(load("panda"))
    assert ControlLaw(load("panda")).plant.kind == "closed_loop"     # a model's law takes make_plant's plant


@pytest.mark.parametrize("name", ["talos", "ur5_2f85"])
def test_passengers_at_rest_are_folded_and_exact(name):
    """A gripper at rest runs on the folded model (its subtree one composite body), moving on the restricted
    one; both equal Pinocchio, and a payload on a finger refolds."""
    from rne_control.control import tree_state as ts
    path, arm, gripper, (lo, hi) = DESCRIPTIONS[name]
    model = load(name)
    pin_ = oracle(name, model)
    plant = make_plant(model, joints=arm)
    assert plant._folded is not None and plant._folded.n < plant._dm.n
    law = ControlLaw(plant)
    idx = [model.joint_names.index(j) for j in arm]
    rng = np.random.default_rng(1)
    q_arm, qd_arm = np.array(ARM_Q[name]), rng.normal(size=len(arm))
    for gd in (0.0, 0.3):
        q, qd = full_state(model, arm, q_arm, qd_arm, {gripper: 0.5 * (lo + hi)}, {gripper: gd})
        sq = np.array([q[model.joint_names.index(j)] for j in plant.state_names])
        sqd = np.array([qd[model.joint_names.index(j)] for j in plant.state_names])
        for mode in ("computed_torque", "gravity_coriolis"):
            plant._state.invalidate_fold()
            law.set_mode(mode)
            tau = law.compute(sq, sqd, q_arm, np.zeros(len(arm)), np.zeros(len(arm))).copy()
            assert np.isfinite(plant._work[ts.FOLDQ, 0]) == (gd == 0.0), (mode, gd)    # folded at rest only
            qdd = np.zeros(model.n)
            if mode == "computed_torque":
                qdd[idx] = -law.kd * qd_arm
            assert rel_err(tau, pin_.rnea(q, qd, qdd)[idx]) < TOL, (mode, gd)
    finger = [k for k in model.link_frames if "finger" in k][0]
    q, qd = full_state(model, arm, q_arm, np.zeros(len(arm)), {gripper: 0.5 * (lo + hi)})
    sq = np.array([q[model.joint_names.index(j)] for j in plant.state_names])
    law.set_mode("gravity")
    g0 = law.compute(sq, np.zeros(len(sq)), q_arm, np.zeros(len(arm)), np.zeros(len(arm))).copy()
    plant.set_payload(finger, 1.0, (0.0, 0.0, 0.02))
    g1 = law.compute(sq, np.zeros(len(sq)), q_arm, np.zeros(len(arm)), np.zeros(len(arm))).copy()
    assert rel_err(g1, rc.gravity_torques(model, q)[idx]) < TOL and rel_err(g1, g0) > 1e-3


@pytest.mark.parametrize("name", list(DESCRIPTIONS))
def test_welded_model_equals_pinocchio_reduced_model(name):
    """The model with every joint but the arm welded at a random configuration: its RNE, mass matrix and, on a
    floating base, its forward dynamics equal those of Pinocchio's reduced model (buildReducedModel)."""
    path, arm, _, _ = DESCRIPTIONS[name]
    rng = np.random.default_rng(7)
    model = load(name)
    q = rng.uniform(-1.0, 1.0, model.n)
    weld = {j: q[k] for k, j in enumerate(model.joint_names) if j not in arm}
    W = welded(model, arm, q)
    assert W.joint_names == tuple(arm) and W.link_names == model.link_names
    pin_ = Oracle(path, W, weld=weld)
    qa, qda, qdda = q[[model.joint_names.index(j) for j in arm]], rng.normal(size=len(arm)), rng.normal(size=len(arm))
    assert rel_err(rc.inverse_dynamics(W, qa, qda, qdda), pin_.rnea(qa, qda, qdda)) < TOL
    assert rel_err(rc.mass_matrix(W, qa), pin_.mass_matrix(qa)) < TOL
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        floating = rc.load_urdf(path, friction=False, floating_base=True)
    Wf = welded(floating, arm, q)
    pf = Oracle(path, Wf, floating=True, weld=weld)
    quat = np.array([0.1, -0.2, 0.3, 0.9]) / np.linalg.norm([0.1, -0.2, 0.3, 0.9])
    twist, tau = rng.normal(size=6), rng.normal(size=len(arm))
    qdd, base_accel = floating_forward_dynamics(Wf, qa, qda, tau, twist, quat)
    qp = pf.q(qa)
    qp[3:7] = quat                                   # free flyer: position, quaternion (x, y, z, w)
    v = pf.v(qda)
    v[:6] = twist                                    # [v; w] in the base frame, as ours
    a = pin.aba(pf.pm, pf.pd, qp, v, pf.v(tau))
    assert rel_err(qdd, a[pf.iv]) < TOL and rel_err(base_accel, a[:6]) < TOL


def test_welded_model_refuses_what_it_cannot_keep():
    model = load("panda")
    with pytest.raises(rc.ModelError, match=r"\['panda_finger_joint1'\].*mimic coupling"):
        welded(model, ["panda_joint1", "panda_finger_joint1"], np.zeros(model.n))
    with pytest.raises(rc.ModelError, match="unknown joint 'nope'"):
        welded(model, ["panda_joint1", "nope"], np.zeros(model.n))
    with pytest.raises(rc.ModelError, match="9 finite positions"):
        welded(model, ["panda_joint1"], np.zeros(3))


def test_floating_base_simulation_holds_the_uncontrolled_joints():
    """Talos on a floating base with its left arm controlled: rne_sim's simulation integrates the base and the
    arm on the model with the rest welded at its locked positions (legs, torso, other arm and grippers do not
    fall), publishes the arm only, and its payload follows the plant's."""
    path, arm, gripper, _ = DESCRIPTIONS["talos"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = rc.load_urdf(path, friction=False, floating_base=True)
    locked = {"leg_left_4_joint": 0.6, "leg_right_4_joint": 0.6, "torso_2_joint": 0.2, gripper: -0.4}
    plant = make_plant(model, joints=arm, locked=locked)
    assert plant.sim_floating_base and plant.sim_names == tuple(arm) and plant.sim_model.joint_names == tuple(arm)
    sim = Simulation(plant, q0=ARM_Q["talos"], friction=False, base_position=[0.0, 0.0, 1.0])
    held_names, held_q = plant.held_joint_states()
    assert set(held_names) == set(model.joint_names) - set(arm)
    weld = dict(zip(held_names, held_q))
    assert weld["leg_left_4_joint"] == 0.6 and weld[gripper] == -0.4
    pf = Oracle(path, plant.sim_model, floating=True, weld=weld)
    tau = np.linspace(-5.0, 5.0, len(arm))
    for _ in range(20):
        assert sim.step(tau, 1e-3)
    names, q, qd, effort = sim.joint_states()
    assert names == tuple(arm) and np.allclose(effort, tau)
    s = sim.state
    qp = pf.q(s.q)
    qp[:3], qp[3:7] = s.pos, s.quat
    v = pf.v(s.qd)
    v[:6] = s.twist
    a = pin.aba(pf.pm, pf.pd, qp, v, pf.v(tau))
    qdd, _ = floating_forward_dynamics(plant.sim_model, s.q, s.qd, tau, s.twist, s.quat)
    assert rel_err(qdd, a[pf.iv]) < TOL
    plant.set_payload("arm_left_7_link", 1.5, (0.0, 0.0, 0.05))
    g_sim = rc.inverse_dynamics(plant.sim_model, s.q, np.zeros(7), np.zeros(7), friction=False)
    plant.set_payload(None)
    assert rel_err(g_sim, rc.inverse_dynamics(plant.sim_model, s.q, np.zeros(7), np.zeros(7))) > 1e-3


def test_fixed_base_simulation_of_the_arm_equals_the_plant_with_the_rest_held():
    """Baxter's left arm on a fixed base: the simulation's accelerations (the welded model's forward dynamics)
    equal the plant's own, M_cc^-1 (tau - h_c) from the CRBA and the RNE with the rest held at its locks."""
    path, arm, gripper, _ = DESCRIPTIONS["baxter"]
    model = load("baxter")
    plant = make_plant(model, joints=arm, locked={"right_s1": -0.5, gripper: 0.01})
    assert plant.sim_names == tuple(arm) and plant.sim_model.joint_names == tuple(arm)
    rng = np.random.default_rng(3)
    q, qd, tau = np.array(ARM_Q["baxter"]), rng.normal(size=7), rng.normal(size=7) * 5.0
    state = dict(zip(*plant.held_joint_states()))
    state.update(zip(arm, q))
    plant.set_state([state[j] for j in plant.state_names], [dict(zip(arm, qd)).get(j, 0.0) for j in plant.state_names])
    assert rel_err(plant.sim_acceleration(q, qd, tau), plant.forward_dynamics(tau)) < TOL
