"""TreePlant, make_plant and Simulation: the one controller interface on trees, and simulating any plant.

Truths: the tree library called on the full model (a subset of controlled joints must give the same
torques as the full inverse dynamics with the uncontrolled joints held), the closed-form energy of a
planar two-link arm, and the conservation of momentum of a free-floating robot with braked joints.
"""
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

import rne_control as rc
from rne_control.control import (ClosedLoopPlant, ControlLaw, ElasticPlant, ParallelPlant, StateError, TreePlant,
                                  make_plant)
from rne_control.control.simulation import Simulation
from rne_control.dynamics.floating.api import centroidal_momentum

REPO = Path(__file__).resolve().parents[1]
G = 9.81
M1, L1, LC1 = 2.0, 1.0, 0.5
M2, LC2 = 1.5, 0.4


def _load(name, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rc.load_model(str(REPO / "config" / name), **kw)


def test_make_plant_picks_each_kind_and_checks_joints():
    kinds = {"puma560.yaml": TreePlant, "fourbar.yaml": ClosedLoopPlant, "palletizer.yaml": ClosedLoopPlant,
             "gough_stewart.yaml": ParallelPlant, "arm7_sea.yaml": ElasticPlant}
    for name, cls in kinds.items():
        plant = make_plant(_load(name))
        assert type(plant) is cls, name
        assert plant.state_names[:plant.n] == plant.joint_names
        assert set(plant.joint_names) <= set(plant.required_names) <= set(plant.state_names)
    # any subset of the actuated joints, in any order, for every kind; what the mechanics forbids is refused
    for name, joints in (("palletizer.yaml", ["joint3", "joint1"]), ("gough_stewart.yaml", ["leg4", "leg2"]),
                         ("arm7_sea.yaml", ["arm7_joint6", "arm7_joint2"])):
        assert make_plant(_load(name), joints=joints).joint_names == tuple(joints), name
    with pytest.raises(ValueError, match=r"joints \['elbow'\] are passive joints.*no actuator"):
        make_plant(_load("palletizer.yaml"), joints=["joint1", "elbow"])
    with pytest.raises(ValueError, match=r"joints \[.arm7_joint2_deflection.\] of model .arm7_sea. are elastic"):
        make_plant(_load("arm7_sea.yaml"), joints=["arm7_joint1", "arm7_joint2_deflection"])
    with pytest.raises(ValueError, match="'nope'"):
        make_plant(_load("puma560.yaml"), joints=["joint1", "nope"])
    with pytest.raises(ValueError, match=r"locked joints \[.joint2.\] are not uncontrolled actuated joints"):
        make_plant(_load("fourbar.yaml"), locked={"joint2": 0.1})


def test_subset_of_joints_equals_full_inverse_dynamics_with_the_others_held():
    m = _load("puma560.yaml")
    joints = ["joint3", "joint1", "joint2"]
    plant = make_plant(m, joints=joints, locked={"joint5": 0.4})
    assert plant.state_names == ("joint3", "joint1", "joint2", "joint4", "joint5", "joint6")
    assert plant.lockable_names == ("joint4", "joint5", "joint6")
    np.testing.assert_array_equal(plant.initial_state, [0, 0, 0, 0, 0.4, 0])
    law = ControlLaw(plant)
    rng = np.random.default_rng(3)
    q, qd = rng.normal(size=6), rng.normal(size=6)
    q[4] = np.nan                               # joint5 not measured: its locked value applies
    q_d, qd_d, qdd_d = rng.normal(size=(3, 3))
    tau = law.compute(q, qd, q_d, qd_d, qdd_d).copy()
    idx = [m.joint_names.index(j) for j in plant.state_names]
    q_full, qd_full = np.zeros(6), np.zeros(6)
    q_full[idx], qd_full[idx] = np.where(np.isnan(q), 0.4, q), qd
    qdd_full = np.zeros(6)
    ctrl = idx[:3]
    qdd_full[ctrl] = qdd_d + law.kd * (qd_d - qd[:3]) + law.kp * (q_d - q[:3])
    want = rc.inverse_dynamics(m, q_full, qd_full, qdd_full, friction=False)[ctrl]
    np.testing.assert_allclose(tau, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(plant.mass_matrix(), rc.mass_matrix(m, q_full)[np.ix_(ctrl, ctrl)], rtol=1e-12)
    np.testing.assert_allclose(plant.gravity_torques(np.zeros(3)), rc.gravity_torques(m, q_full)[ctrl], rtol=1e-12)
    bad = q.copy()
    bad[1] = np.nan
    with pytest.raises(StateError, match="controlled joint 'joint1'"):
        law.compute(bad, qd, q_d, qd_d, qdd_d)


def _two_link():
    d = yaml.safe_load((REPO / "config" / "two_link.yaml").read_text())
    for link in d["links"]:
        link["coulomb"] = link["viscous"] = 0.0
    return rc.load_dh(d)


def _energy(m, q, qd):
    pe = (M1 * LC1 + M2 * L1) * G * math.sin(q[0]) + M2 * LC2 * G * math.sin(q[0] + q[1])
    return 0.5 * qd @ rc.mass_matrix(m, q) @ qd + pe


def test_simulation_of_an_unforced_arm_conserves_energy():
    m = _two_link()
    sim = Simulation(make_plant(m), q0=[0.3, -0.7], qd0=[0.5, -1.2], friction=False)
    e0 = _energy(m, sim.state.q, sim.state.qd)
    for _ in range(2000):                      # RK4, 1 ms, 2 s
        assert sim.step(np.zeros(2), 1e-3)
    drift = abs(_energy(m, sim.state.q, sim.state.qd) - e0) / abs(e0)
    assert drift <= 1e-6, drift
    names, q, qd, effort = sim.joint_states()
    assert names == m.joint_names and np.all(effort == 0.0)


def test_simulation_damping_and_gravity_and_divergence():
    m = _two_link()
    sim = Simulation(make_plant(m), q0=[0.3, -0.7], qd0=[0.5, -1.2], friction=False, damping=[2.0, 1.0],
                     gravity=[0.0, 0.0, 0.0])
    e0 = 0.5 * sim.state.qd @ rc.mass_matrix(m, sim.state.q) @ sim.state.qd
    for _ in range(200):
        sim.step(np.zeros(2), 1e-3)
    e1 = 0.5 * sim.state.qd @ rc.mass_matrix(m, sim.state.q) @ sim.state.qd
    assert e1 < 0.9 * e0                        # no gravity, only the dampers: kinetic energy decays
    before = (sim.state.q.copy(), sim.state.qd.copy())
    assert not sim.step(np.array([np.inf, 0.0]), 1e-3)   # a diverging step keeps the last finite state
    np.testing.assert_array_equal(sim.state.q, before[0])
    with pytest.raises(ValueError, match="damping"):
        Simulation(make_plant(m), damping=[-1.0, 0.0])


def test_braked_free_floating_robot_keeps_zero_momentum():
    m = _load("ffsr.yaml")
    plant = make_plant(m)
    assert plant.sim_floating_base and plant.bases == ("fixed", "moving", "free_floating")
    sim = Simulation(plant, q0=np.full(m.n, 0.3), base_orientation=[0.0, 0.0, 0.3, 1.0])
    tau = np.linspace(-2.0, 2.0, m.n)
    for _ in range(50):
        assert sim.step(tau, 1e-3)
    s = sim.state
    p0 = centroidal_momentum(m, s.q, s.qd, s.twist, s.quat)[0]
    np.testing.assert_allclose(p0, 0.0, atol=1e-9)            # started at rest: momentum stays zero
    sim.brake(1e-3)
    s = sim.state
    assert np.all(s.qd == 0.0)
    np.testing.assert_allclose(centroidal_momentum(m, s.q, s.qd, s.twist, s.quat)[0], 0.0, atol=1e-9)
