"""ClosedLoopPlant (rne_control/control/plants/closed_loop.py) against the closed-loop library functions."""
from pathlib import Path

import numpy as np
import pytest

import rne_control as rc
from rne_control.control.plant import Plant, StateError
from rne_control.control.plants.closed_loop import ClosedLoopPlant

ROOT = Path(__file__).parents[1]
NAN = np.nan


@pytest.fixture()
def plant():
    return ClosedLoopPlant(rc.load_dh(ROOT / "config" / "palletizer.yaml"))


def test_coordinates(plant):
    assert isinstance(plant, Plant)
    assert plant.joint_names == ("joint1", "joint2", "joint3") == plant.required_names == plant.sim_names
    assert plant.state_names == ("joint1", "joint2", "joint3", "elbow", "rod")
    assert plant.n == 3
    assert np.allclose(plant.effort_limits, [2000.0, 2000.0, 2000.0])
    assert np.allclose(plant.position_limits, [[-3, 3], [-0.5, 0.5], [-0.8, 0.8]])


def test_dynamics_equal_the_library(plant):
    m = plant.model
    qa, qd = np.array([0.3, 0.2, -0.4]), np.array([0.5, -0.2, 0.7])
    plant.set_state(np.r_[qa, NAN, NAN], np.r_[qd, NAN, NAN])   # passive joints not measured: solved for
    q = rc.solve_loops(m, qa)
    assert np.allclose(plant.q_tree, q, atol=1e-13) and np.allclose(plant.q, qa) and np.allclose(plant.qd, qd)
    out = np.empty(3)
    qdd = np.array([1.0, -2.0, 0.5])
    assert np.allclose(plant.inverse_dynamics(qdd, True, out), rc.closed_loop_inverse_dynamics(m, qa, qd, qdd), atol=1e-9)
    assert np.allclose(plant.gravity_torques(out), rc.closed_loop_gravity_torques(m, qa), atol=1e-9)
    assert np.allclose(plant.coriolis_torques(out), rc.closed_loop_coriolis_torques(m, qa, qd), atol=1e-9)
    assert np.allclose(plant.mass_matrix(), rc.closed_loop_mass_matrix(m, qa), atol=1e-9)
    tau = np.array([100.0, -50.0, 20.0])
    assert np.allclose(plant.forward_dynamics(tau), rc.closed_loop_forward_dynamics(m, qa, qd, tau), atol=1e-9)
    assert np.allclose(plant.friction_torques(out), 0.0)   # the palletiser has no friction


def test_friction_torques_project_passive_friction():
    import yaml
    doc = yaml.safe_load((ROOT / "config" / "fourbar.yaml").read_text())
    doc["links"][0]["viscous"] = 0.01
    doc["links"][1]["viscous"] = 0.03
    doc["links"][2]["coulomb"] = 0.04
    m = rc.load_dh(doc)
    p = ClosedLoopPlant(m)
    p.set_state([1.0, NAN, NAN], [2.0, NAN, NAN])
    out = np.empty(1)
    want = (rc.closed_loop_inverse_dynamics(m, [1.0], [2.0], [0.0])
            - rc.closed_loop_inverse_dynamics(m, [1.0], [2.0], [0.0], friction=False))
    assert np.allclose(p.friction_torques(out), want, rtol=1e-12, atol=1e-15)
    assert np.allclose(p.inverse_dynamics(np.zeros(1), False, out) + p.friction_torques(np.empty(1)),
                       p.inverse_dynamics(np.zeros(1), True, np.empty(1)), rtol=1e-12)


def test_measured_passive_joints_warm_start_and_are_checked(plant):
    qa = np.array([0.0, 0.3, -0.5])
    elbow = qa[2] - qa[1]
    plant.set_state(np.r_[qa, elbow + 0.005, -elbow], np.zeros(5))   # within loop_tolerance (0.01 rad)
    assert np.isclose(plant.q_tree[2], elbow, atol=1e-12)
    with pytest.raises(StateError, match=r"passive joint 'elbow'.*off by 0\.03.*loop_tolerance 0\.01"):
        plant.set_state(np.r_[qa, elbow + 0.03, NAN], np.zeros(5))
    with pytest.raises(StateError, match=r"passive joint 'rod'"):
        plant.set_state(np.r_[qa, NAN, -elbow + 0.5], np.zeros(5))
    assert np.isclose(plant.q_tree[2], elbow, atol=1e-12)   # a rejected state leaves the last one
    loose = ClosedLoopPlant(plant.model, loop_tolerance=0.05)
    loose.set_state(np.r_[qa, elbow + 0.03, NAN], np.zeros(5))
    with pytest.raises(StateError, match="active joint 'joint2' is missing"):
        plant.set_state([0.0, NAN, 0.0, NAN, NAN], np.zeros(5))
    with pytest.raises(StateError, match="5 positions"):
        plant.set_state([0.0, 0.0, 0.0], np.zeros(3))
    with pytest.raises(ValueError, match="loop_tolerance"):
        ClosedLoopPlant(plant.model, loop_tolerance=-1.0)


def test_a_rejected_state_leaves_the_last_one(plant):
    """Rejected states (passive joints off the loop, repeatedly: the plant solves into a spare buffer and
    swaps it in only once the state is accepted) change neither the state nor the torques; a state given
    as strided views (which the kernel does not take directly) gives the same result."""
    qa, qd = np.array([0.1, 0.3, -0.5]), np.array([0.4, -0.3, 0.2])
    plant.set_state(np.r_[qa, NAN, NAN], np.r_[qd, NAN, NAN])
    qdd = np.array([1.0, -2.0, 0.5])

    def snapshot():
        return [np.array(x) for x in (plant.q_tree, plant.q, plant.qd,
                                      plant.inverse_dynamics(qdd, True, np.empty(3)), plant.gravity_torques(np.empty(3)))]

    before = snapshot()
    for k in range(3):
        with pytest.raises(StateError, match="passive joint 'elbow'"):
            plant.set_state(np.r_[qa + 0.05 * k, 1.0, NAN], np.r_[qd, NAN, NAN])
    for b, a in zip(before, snapshot()):
        assert np.array_equal(a, b)
    assert np.allclose(before[0], rc.solve_loops(plant.model, qa), atol=1e-12)
    strided = np.zeros((5, 2))
    strided[:, 0] = np.r_[qa, NAN, NAN]
    plant.set_state(strided[:, 0], np.r_[qd, NAN, NAN][::1])
    for b, a in zip(before, snapshot()):
        assert np.allclose(a, b, rtol=1e-12, atol=1e-12)


def test_revolute_passive_joints_compare_modulo_two_pi():
    p = ClosedLoopPlant(rc.load_dh(ROOT / "config" / "fourbar.yaml"))
    p.set_state([0.0, NAN, NAN], [0.0, NAN, NAN])
    q = p.q_tree.copy()
    p.set_state([0.0, q[1] + 2 * np.pi, q[2]], [0.0, NAN, NAN])


def test_unclosable_state_is_rejected():
    import yaml
    doc = yaml.safe_load((ROOT / "config" / "fourbar.yaml").read_text())
    doc["links"][2]["d"] = 0.6
    p = ClosedLoopPlant(rc.load_dh(doc))
    p.set_state([0.0, NAN, NAN], [0.0, NAN, NAN])
    with pytest.raises(StateError, match="do not close.*'pin'"):
        p.set_state([np.pi, NAN, NAN], [0.0, NAN, NAN])


def test_simulation_interface(plant):
    q, qd, tau = np.array([0.2, 0.1, -0.3]), np.array([0.4, 0.0, -0.1]), np.array([0.0, 100.0, 300.0])
    qdd = plant.sim_acceleration(q, qd, tau)
    assert np.allclose(qdd, rc.closed_loop_forward_dynamics(plant.model, q, qd, tau), atol=1e-9)
    names, pos, vel = plant.sim_joint_states(q, qd)
    assert names == plant.state_names
    e = q[2] - q[1]
    assert np.allclose(pos, [0.2, 0.1, -0.3, e, -e], atol=1e-12)
    assert np.allclose(vel, [0.4, 0.0, -0.1, -0.1, 0.1], atol=1e-12)


def test_gravity_and_payload(plant):
    qa = np.array([0.0, 0.2, 0.1])
    plant.set_state(np.r_[qa, NAN, NAN], np.zeros(5))
    out = np.empty(3)
    g0 = plant.gravity_torques(out).copy()
    plant.set_gravity([0.0, 0.0, -4.905])
    assert np.allclose(plant.gravity_torques(out), 0.5 * g0, rtol=1e-12)
    plant.set_gravity(None)
    assert np.allclose(plant.gravity_torques(out), g0, rtol=1e-12)
    plant.set_payload("upper_arm", 20.0, com=[1.1, 0.0, 0.0])
    with_payload = plant.gravity_torques(out).copy()
    assert abs(with_payload[2]) > abs(g0[2]) + 20.0 * 9.81 * 1.0
    plant.set_payload(None)
    assert np.allclose(plant.gravity_torques(out), g0, rtol=1e-12)
