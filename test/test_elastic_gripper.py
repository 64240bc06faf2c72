"""An elastic arm with a gripper: the unedited Panda with its hand, elastic joints on the arm, the fingers
(a <mimic> pair) uncontrolled (ElasticPlant, issue 37).

Truths: the same arm without its hand, the hand folded into link 7 by Pinocchio's buildReducedModel
(panda_gripper.py), whose plant has no mimic joint; and Pinocchio's mass matrix and bias forces of the
whole description, the fingers independent joints placed by the rule, through the partitioned solve of
Khalil's eq. (68). Stiffnesses: config/arm7_elastic.yaml's (panda_gripper.py).
"""
import warnings

import numpy as np
import pytest

import rne_control as rc
from oracle import ROOT, Oracle
from panda_gripper import (ARM, CASES, FINGER, FINGER_LOCKED, FOLLOWER, PANDA, READY, case)
from rne_control.control import make_plant
from rne_control.control.plants.elastic import ElasticPlant
from rne_control.control.simulation import Simulation

TOL = 1e-9     # N m, kg m^2, rad/s^2


def load(xml, elastic):
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # the descriptions load without a warning
        return rc.load_urdf(xml, elastic=elastic)


@pytest.fixture(scope="module", params=list(CASES))
def pair(request):
    """(plant with the hand, fingers locked at FINGER_LOCKED; plant of the handless arm) of one case."""
    plants = []
    for hand in (True, False):
        xml, elastic, joints = case(request.param, hand)
        plants.append(make_plant(load(xml, elastic), joints, locked={FINGER: FINGER_LOCKED} if hand else None))
    return request.param, plants[0], plants[1]


def by_name(plant, values, names):
    """``values`` (in ``names`` order) in ``plant.state_names`` order, NaN for the joints not named."""
    at = dict(zip(names, values))
    return np.array([at.get(j, np.nan) for j in plant.state_names])


def random_state(plant, rng):
    """A state of the handless plant: the controlled joints anywhere, the springs deflected and moving."""
    q, qd = plant.reference_state()
    n, m = plant.n, plant.model
    q[:n] += rng.uniform(-0.5, 0.5, n)
    qd[:n] = rng.normal(size=n)
    ne = len(m.unactuated_joint_names)
    q[-ne:] += rng.normal(size=ne) * 2e-3
    qd[-ne:] = rng.normal(size=ne) * 0.1
    return q, qd


def test_the_model_and_plant_of_an_elastic_arm_with_a_gripper():
    xml, elastic, joints = case("passive_2_4")
    m = load(xml, elastic)
    names = m.joint_names
    assert names == tuple(ARM) + (FINGER, FOLLOWER)
    assert m.is_closed_loop and len(m.loops.cut) == 0
    np.testing.assert_array_equal(m.loops.mimic, [[names.index(FOLLOWER), names.index(FINGER), 1.0, 0.0]])
    assert m.passive_joint_names == (FOLLOWER,)
    assert m.elastic_joint_names == m.unactuated_joint_names == ("panda_joint2", "panda_joint4")
    assert m.rigid_joint_names == tuple(joints) + (FINGER, FOLLOWER)   # the fingers' accelerations are inputs
    np.testing.assert_array_equal(m.elastic_stiffness, [6.7e4, 6.7e4])
    np.testing.assert_array_equal(m.elastic_damping, [14.0, 14.0])
    np.testing.assert_array_equal(m.elastic_rest_position, [READY[1], READY[3]])
    p = make_plant(m, joints, locked={FINGER: FINGER_LOCKED})
    assert isinstance(p, ElasticPlant)
    assert p.joint_names == tuple(joints) == ("panda_joint1", "panda_joint3", "panda_joint5", "panda_joint6",
                                              "panda_joint7")
    assert p.state_names == p.joint_names + (FINGER, FOLLOWER) + m.elastic_joint_names
    assert p.required_names == p.joint_names + m.elastic_joint_names
    assert p.sim_names == p.joint_names + m.elastic_joint_names
    assert p.lockable_names == (FINGER,)        # the follower is solved, not locked
    np.testing.assert_array_equal(p.initial_state, [0.0] * 5 + [FINGER_LOCKED, np.nan, READY[1], READY[3]])
    names_h, q_h = p.held_joint_states()
    assert names_h == (FINGER, FOLLOWER)
    np.testing.assert_array_equal(q_h, [FINGER_LOCKED, FINGER_LOCKED])
    q, qd = p.reference_state()
    p.set_state(q, qd)
    np.testing.assert_array_equal(p.q_all, [0.0, READY[1], 0.0, READY[3], 0.0, 0.0, 0.0, FINGER_LOCKED, FINGER_LOCKED])
    assert p.ignored_passive == {}


def test_the_series_elastic_panda_with_its_hand():
    """The unedited URDF with elastic panda_joint2 and panda_joint4 given a rotor inertia: both split into gear
    output and deflection, all seven arm joints controlled, the deflections required in the state."""
    xml, elastic, joints = case("series_2_4")
    assert xml == open(PANDA).read() and joints == ARM
    m = load(xml, elastic)
    assert m.joint_names == ("panda_joint1", "panda_joint2", "panda_joint2_deflection", "panda_joint3",
                             "panda_joint4", "panda_joint4_deflection", "panda_joint5", "panda_joint6", "panda_joint7",
                             FINGER, FOLLOWER)
    assert m.elastic_joint_names == ("panda_joint2_deflection", "panda_joint4_deflection")
    assert m.rigid_joint_names == tuple(ARM) + (FINGER, FOLLOWER)
    p = make_plant(m, ARM, locked={FINGER: FINGER_LOCKED})
    assert isinstance(p, ElasticPlant) and p.joint_names == tuple(ARM)
    assert p.required_names == tuple(ARM) + m.elastic_joint_names
    np.testing.assert_array_equal(m.elastic_rest_position, [0.0, 0.0])


def test_motor_side_torques_equal_the_handless_arm(pair):
    """Fingers at rest at their locked positions (not published, or published there): every dynamics method
    of the plant equals the handless arm's, to 1e-9."""
    name, hand, bare = pair
    n = bare.n
    assert hand.joint_names == bare.joint_names
    rng = np.random.default_rng(7)
    worst = {}
    for published in (False, True):
        for _ in range(3):
            q, qd = random_state(bare, rng)
            names = list(bare.state_names) + ([FINGER, FOLLOWER] if published else [])
            extra = [FINGER_LOCKED, FINGER_LOCKED] if published else []
            hand.set_state(by_name(hand, np.r_[q, extra], names), by_name(hand, np.r_[qd, [0.0] * len(extra)], names))
            bare.set_state(q, qd)
            qdd = rng.normal(size=n)
            checks = {}
            for friction in (True, False):
                checks[f"inverse dynamics (friction {friction})"] = [
                    p.inverse_dynamics(qdd, friction, np.zeros(n)) for p in (hand, bare)]
            checks["elastic accelerations"] = [p.extra_state()["elastic_acceleration"] for p in (hand, bare)]
            checks["gravity torques"] = [p.gravity_torques(np.zeros(n)) for p in (hand, bare)]
            checks["elastic accelerations, held"] = [p.extra_state()["elastic_acceleration"] for p in (hand, bare)]
            checks["deflections"] = [p.extra_state()["elastic_deflection"] for p in (hand, bare)]
            checks["Coriolis torques"] = [p.coriolis_torques(np.zeros(n)) for p in (hand, bare)]
            checks["friction torques"] = [p.friction_torques(np.zeros(n)) for p in (hand, bare)]
            checks["mass matrix"] = [p.mass_matrix() for p in (hand, bare)]
            tau = checks["inverse dynamics (friction True)"][1]
            checks["forward dynamics"] = [p.forward_dynamics(tau) for p in (hand, bare)]
            # the simulation side, by name
            s_q, s_qd = dict(zip(bare.state_names, q)), dict(zip(bare.state_names, qd))
            named = [dict(zip(p.sim_names, p.sim_acceleration([s_q[j] for j in p.sim_names],
                                                             [s_qd[j] for j in p.sim_names], tau)))
                     for p in (hand, bare)]
            checks["simulated accelerations"] = [[d[j] for j in hand.sim_names] for d in named]
            named = [dict(zip(p.sim_names, p.complete_sim_positions(q[:n]))) for p in (hand, bare)]
            checks["static deflections"] = [[d[j] for j in hand.sim_names] for d in named]
            for what, (a, b) in checks.items():
                a, b = np.asarray(a), np.asarray(b)
                assert np.all(np.isfinite(a)) and np.abs(b).max() > 0, what
                worst[what] = max(worst.get(what, 0.0), float(np.abs(a - b).max()))
    print(f"\n{name}: largest |hand - handless|: " + ", ".join(f"{k} {v:.1e}" for k, v in worst.items()))
    assert max(worst.values()) <= TOL, worst
    # a step of the simulation (RK4, the springs and the dampers) from the same state
    sims = [Simulation(p, friction=True) for p in (hand, bare)]
    back = [list(bare.sim_names).index(j) for j in hand.sim_names]
    tau = np.linspace(-3.0, 3.0, n)
    for s in sims:
        assert s.step(tau, 5e-4)
    np.testing.assert_allclose(sims[0].state.q, sims[1].state.q[back], rtol=0, atol=1e-12)
    np.testing.assert_allclose(sims[0].state.qd, sims[1].state.qd[back], rtol=0, atol=1e-9)


def test_link_side_dynamics_equal_pinocchio_with_the_fingers_moving_by_their_rule():
    """The unedited description (joints 2 and 4 springs), the gripper measured moving and its second finger
    not published: the controlled torques and the springs' accelerations equal the partitioned solve of
    eq. (68) on Pinocchio's M and bias forces, both fingers at the leader's position and velocity."""
    xml, elastic, joints = case("passive_2_4")
    m = load(xml, elastic)
    p = make_plant(m, joints)
    pin_ = Oracle(PANDA, m)
    names = m.joint_names
    r, u = m.rigid_index, m.unactuated_index
    c = [names.index(j) for j in joints]
    K, D, q0 = (np.asarray(a) for a in (m.elastic_stiffness, m.elastic_damping, m.elastic_rest_position))
    rng = np.random.default_rng(3)
    for finger, finger_v in ((0.01, 0.05), (0.035, -0.02), (FINGER_LOCKED, 0.0)):
        q, qd = np.zeros(m.n), rng.normal(size=m.n)
        q[c] = np.array(READY)[c] + rng.uniform(-0.4, 0.4, len(c))
        q[u] = np.array(READY)[u] + rng.normal(size=2) * 1e-3
        f = [names.index(FINGER), names.index(FOLLOWER)]
        q[f], qd[f] = finger, finger_v
        state = {j: (q[k], qd[k]) for k, j in enumerate(names) if j != FOLLOWER}
        p.set_state(*(np.array([state.get(j, (np.nan, np.nan))[i] for j in p.state_names]) for i in (0, 1)))
        np.testing.assert_array_equal(p.q_all, q)
        qdd = rng.normal(size=p.n)
        tau = p.inverse_dynamics(qdd, False, np.zeros(p.n))
        # the truth: rigid accelerations given (the controlled ones, 0 at the fingers), the springs' solved
        M, h = pin_.mass_matrix(q), pin_.rnea(q, qd, np.zeros(m.n))
        qdd_r = np.zeros(len(r))
        qdd_r[[list(r).index(k) for k in c]] = qdd
        tau_u = -K * (q[u] - q0) - D * qd[u]
        qdd_u = np.linalg.solve(M[np.ix_(u, u)], tau_u - h[u] - M[np.ix_(u, r)] @ qdd_r)
        tau_r = M[np.ix_(r, r)] @ qdd_r + M[np.ix_(r, u)] @ qdd_u + h[r]
        want = tau_r[[list(r).index(k) for k in c]]
        assert np.abs(tau - want).max() <= TOL * np.abs(want).max(), (tau, want)
        np.testing.assert_allclose(p.extra_state()["elastic_acceleration"], qdd_u, rtol=0,
                                   atol=TOL * np.abs(qdd_u).max())


def test_a_second_finger_off_its_rule_is_ignored_and_counted():
    xml, elastic, joints = case("series_all")
    m = load(xml, elastic)
    out = {}
    for tolerance in (0.01, 0.1):
        p = make_plant(m, joints, locked={FINGER: FINGER_LOCKED}, loop_tolerance=tolerance)
        q, qd = p.reference_state()
        i = p.state_names.index(FOLLOWER)
        q[:p.n] = READY
        qd[:p.n] = 0.3
        for follower in (np.nan, FINGER_LOCKED + 0.005, FINGER_LOCKED + 0.05, FINGER_LOCKED - 0.05):
            q[i] = follower
            p.set_state(q, qd)
            assert p.q_all[m.joint_names.index(FOLLOWER)] == FINGER_LOCKED        # by the rule, always
            out[tolerance, follower] = p.inverse_dynamics(np.ones(p.n), True, np.zeros(p.n)).copy()
        assert p.ignored_passive == ({FOLLOWER: 2} if tolerance == 0.01 else {}), p.ignored_passive
    for t in out.values():
        np.testing.assert_array_equal(t, out[0.01, np.nan])


def test_what_stays_refused():
    xml, elastic, joints = case("passive_2_4")
    m = load(xml, elastic)
    # a mimic joint that a controlled joint drives: the default (every rigid joint) controls the finger
    for bad in (None, joints + [FINGER]):
        with pytest.raises(ValueError, match=r"mimic joints \['panda_finger_joint2'\] that controlled joints "
                                             r"\['panda_finger_joint1'\] drive .* not supported"):
            make_plant(m, bad)
    with pytest.raises(ValueError, match=r"\['panda_finger_joint2'\] .* are <mimic> joints: they follow their leaders"):
        make_plant(m, joints + [FOLLOWER])
    # an elastic joint of a URDF is a spring without a motor: it cannot be controlled; the message says how
    # to make it a series-elastic drive instead
    with pytest.raises(ValueError, match=r"joints \['panda_joint2', 'panda_joint4'\] of model 'panda' are elastic "
                                         r"or passive: .*; to model a series-elastic drive .* the nodes' "
                                         r"elastic\.panda_joint2\.rotor_inertia.*; control rigid joints "
                                         r"\['panda_joint1', 'panda_joint3', 'panda_joint5', 'panda_joint6', "
                                         r"'panda_joint7'\] \(mimic leaders \['panda_finger_joint1'\] stay "
                                         r"uncontrolled\)"):
        make_plant(m, ARM)
    # a finger on a spring
    for finger in (FINGER, FOLLOWER):
        springy = load(xml, {finger: {"stiffness": 100.0}})
        with pytest.raises(ValueError, match=rf"joints \['{finger}'\] of model 'panda' are elastic or passive and "
                                             r"in a <mimic> coupling .* must be rigid"):
            make_plant(springy, joints)
    # other closed loops with elastic joints
    import yaml
    with open(ROOT / "config" / "palletizer.yaml") as f:
        doc = yaml.safe_load(f)
    doc["links"][0]["elastic"] = {"stiffness": 1e4}
    loop = rc.load_dh(doc)
    with pytest.raises(ValueError, match=r"elastic joints \['joint1'\] and closed loops \(cut joints"):
        make_plant(loop)
