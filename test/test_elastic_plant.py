"""ElasticPlant (rne_control/control/plants/elastic.py) against the elastic library functions."""
import numpy as np
import pytest

import rne_control as rc
from oracle import ROOT
from rne_control.control.plant import StateError
from rne_control.control.plants.elastic import ElasticPlant
from rne_control.dynamics.integrate import State, rk4_step
from test_elastic import arm7_elastic_doc, with_friction


@pytest.fixture(scope="module")
def plant():
    return ElasticPlant(rc.load_dh(with_friction(arm7_elastic_doc())))


def state(plant, seed=0):
    rng = np.random.default_rng(seed)
    m = plant.model
    q, qd = np.zeros(m.n), rng.normal(size=m.n)
    q[m.rigid_index] = rng.uniform(-1, 1, 7)
    q[m.elastic_index] = rng.normal(size=7) * 1e-3
    qd[m.elastic_index] *= 0.1
    order = list(m.rigid_index) + list(m.unactuated_index)
    plant.set_state(q[order], qd[order])
    return q, qd


def test_coordinates(plant):
    m = plant.model
    assert plant.joint_names == m.rigid_joint_names == tuple(f"arm7_joint{i}" for i in range(1, 8))
    assert plant.state_names == m.rigid_joint_names + m.elastic_joint_names
    assert plant.required_names == plant.state_names
    assert plant.sim_names == m.joint_names
    assert plant.n == 7
    np.testing.assert_array_equal(plant.effort_limits, [87.0] * 4 + [12.0] * 3)
    q, qd = state(plant)
    np.testing.assert_array_equal(plant.q, q[m.rigid_index])
    np.testing.assert_array_equal(plant.qd, qd[m.rigid_index])
    np.testing.assert_array_equal(plant.q_all, q)


def test_dynamics_equal_the_library(plant):
    m = plant.model
    for seed in range(3):
        q, qd = state(plant, seed)
        qdd = np.random.default_rng(seed + 10).normal(size=7)
        out = np.empty(7)
        for fr in (True, False):
            tau, qdd_e = rc.elastic_inverse_dynamics(m, q, qd, qdd, friction=fr)
            assert plant.inverse_dynamics(qdd, fr, out) is out
            np.testing.assert_array_equal(out, tau)
            extra = plant.extra_state()
            np.testing.assert_array_equal(extra["elastic_acceleration"], qdd_e)
            np.testing.assert_allclose(extra["elastic_deflection"], q[m.elastic_index] - m.elastic_rest_position)
        np.testing.assert_allclose(plant.gravity_torques(out), rc.elastic_gravity_torques(m, q), rtol=1e-14, atol=1e-12)
        np.testing.assert_allclose(plant.extra_state()["elastic_acceleration"],
                                   rc.elastic_inverse_dynamics(m, q, np.zeros(14), np.zeros(7), friction=False)[1])
        np.testing.assert_allclose(plant.coriolis_torques(out), rc.elastic_coriolis_torques(m, q, qd),
                                   rtol=1e-14, atol=1e-12)
        tree = np.asarray(m.tree)
        Fv, Fs = np.zeros(14), np.zeros(14)
        Fv[tree[:, 17].astype(int)], Fs[tree[:, 17].astype(int)] = tree[:, 13], tree[:, 14]
        r = m.rigid_index
        np.testing.assert_allclose(plant.friction_torques(out), Fv[r] * qd[r] + Fs[r] * np.sign(qd[r]))
        # the effective inertia: tau(qdd) - tau(0) = M qdd, symmetric positive definite
        M = plant.mass_matrix()
        t0 = plant.inverse_dynamics(np.zeros(7), True, np.empty(7))
        t1 = plant.inverse_dynamics(qdd, True, np.empty(7))
        np.testing.assert_allclose(t1 - t0, M @ qdd, rtol=1e-9, atol=1e-9 * abs(t1).max())
        np.testing.assert_allclose(M, M.T, atol=1e-12)
        assert np.linalg.eigvalsh(M).min() > 0
        # forward dynamics returns the rigid accelerations
        np.testing.assert_allclose(plant.forward_dynamics(t1), qdd, rtol=1e-8, atol=1e-8)


def test_simulation_side(plant):
    m = plant.model
    q, qd = state(plant, 4)
    tau = np.random.default_rng(3).normal(size=7)
    np.testing.assert_array_equal(plant.sim_acceleration(q, qd, tau), rc.elastic_forward_dynamics(m, q, qd, tau))
    names, pos, vel = plant.sim_joint_states(q, qd)
    assert names == m.joint_names
    np.testing.assert_array_equal(pos, q)
    np.testing.assert_array_equal(vel, qd)
    # one RK4 step of the shared integrator on the plant's accelerations
    s = rk4_step(m, State(q, qd), 0.0, 5e-4, lambda t, x: tau, acceleration=plant.sim_acceleration)
    assert s.q.shape == (14,) and np.isfinite(s.q).all() and np.isfinite(s.qd).all()


def test_missing_elastic_joint_is_rejected(plant):
    q, qd = np.zeros(14), np.zeros(14)
    q[9] = np.nan     # state order: 7 rigid, then the deflections: arm7_joint3_deflection
    with pytest.raises(StateError, match="'arm7_joint3_deflection' is missing"):
        plant.set_state(q, qd)
    qd[0] = np.inf
    with pytest.raises(StateError, match="rigid joint 'arm7_joint1'"):
        plant.set_state(np.zeros(14), qd)
    with pytest.raises(StateError, match="14 positions"):
        plant.set_state(np.zeros(7), np.zeros(7))


def test_payload_and_gravity(plant):
    m = plant.model
    q, qd = state(plant, 5)
    out = np.empty(7)
    g0 = plant.gravity_torques(out).copy()
    a0 = plant.extra_state()["elastic_acceleration"]
    # The gear bodies are massless, so holding the motors still takes just the spring torques -K dq
    # (Spong's model: tau = Ia theta'' - K dq): a payload changes the links' accelerations, not these torques.
    np.testing.assert_allclose(g0, -m.elastic_stiffness * (q[m.elastic_index] - m.elastic_rest_position),
                               rtol=1e-10, atol=1e-10)
    plant.set_payload("arm7_link7", 2.0, com=[0.0, 0.0, 0.1])
    try:
        np.testing.assert_allclose(plant.gravity_torques(out), rc.elastic_gravity_torques(m, q))
        np.testing.assert_allclose(out, g0, rtol=1e-10, atol=1e-10)
        assert np.abs(plant.extra_state()["elastic_acceleration"] - a0).max() > 1.0
    finally:
        plant.set_payload(None)
    plant.set_gravity([0.0, 0.0, 0.0])
    try:
        np.testing.assert_allclose(plant.gravity_torques(out), rc.elastic_gravity_torques(m, q, gravity=[0, 0, 0]))
    finally:
        plant.set_gravity(None)
    np.testing.assert_allclose(plant.gravity_torques(out), g0)
    with pytest.raises(ValueError, match="moving"):
        plant.set_base("moving")


def test_rigid_tree_plant():
    """On a rigid model the plant is the tree: its inverse dynamics is the RNE."""
    m = rc.load_dh(ROOT / "config/arm7.yaml")
    p = ElasticPlant(m)
    assert p.joint_names == p.state_names == m.joint_names and p.extra_state()["elastic_deflection"].shape == (0,)
    q, qd, qdd = np.full(7, 0.2), np.full(7, 0.1), np.full(7, -0.3)
    p.set_state(q, qd)
    np.testing.assert_allclose(p.inverse_dynamics(qdd, True, np.empty(7)), rc.inverse_dynamics(m, q, qd, qdd),
                               rtol=1e-12, atol=1e-10)



def test_elastic_computed_torque_tracks_series_elastic_arm():
    """Without ROS (rne_control.examples.elastic_tracking): on arm7_sea the elastic-aware computed torque
    (ElasticPlant.inverse_dynamics) tracks the rigid joints at least 5x better than computed torque on the
    rigid model (deflections locked at 0), both at 1 kHz against RK4 at 2 kHz."""
    from rne_control.examples.elastic_tracking import compare
    res = compare("arm7_sea", T=3.0)
    print(res)
    assert res["elastic"][0] < 1e-4, res
    assert res["rigid"][0] > 5 * res["elastic"][0], res
    assert res["elastic"][2] > 0.01     # the springs do deflect (rad)
