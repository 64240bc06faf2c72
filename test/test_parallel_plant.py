"""ParallelPlant (rne_control.control.plants.parallel) against the library functions it wraps."""
from pathlib import Path

import numpy as np
import pytest

import rne_control as rc
from rne_control.control.plant import Plant, StateError
from rne_control.control.plants.parallel import ParallelPlant

ROOT = Path(__file__).parents[1]


def quat_z(psi):
    return np.array([0.0, 0.0, np.sin(psi / 2), np.cos(psi / 2)])


@pytest.fixture()
def plant():
    return ParallelPlant(rc.load_parallel(ROOT / "config" / "gough_stewart.yaml"))


def test_interface(plant):
    assert isinstance(plant, Plant)
    assert plant.joint_names == plant.state_names == plant.required_names == plant.sim_names == plant.model.joint_names
    assert plant.n == 6
    np.testing.assert_array_equal(plant.position_limits, plant.model.position_limits)
    np.testing.assert_array_equal(plant.effort_limits, np.full(6, 20000.0))
    plant.set_base("fixed")
    with pytest.raises(ValueError, match="not available"):
        plant.set_base("free_floating")


def test_state_and_dynamics_equal_the_library(plant):
    m = plant.model
    rng = np.random.default_rng(0)
    pose = np.r_[0.1, -0.05, 2.1, quat_z(0.2)]
    J = rc.platform_jacobian(m, pose)
    twist = rng.uniform(-0.3, 0.3, 6)
    q, qd, qdd = rc.platform_inverse_kinematics(m, pose), np.linalg.solve(J, twist), rng.uniform(-1, 1, 6)
    plant.set_state(q, qd)
    np.testing.assert_array_equal(plant.q, q)
    np.testing.assert_array_equal(plant.qd, qd)
    extra = plant.extra_state()
    assert np.max(np.abs(extra["platform_pose"] - pose)) < 1e-10
    np.testing.assert_allclose(extra["platform_twist"], twist, atol=1e-12)
    out = np.empty(6)
    for friction in (True, False):
        np.testing.assert_allclose(plant.inverse_dynamics(qdd, friction, out),
                                   rc.parallel_joint_inverse_dynamics(m, q, qd, qdd, friction=friction), rtol=1e-12)
    np.testing.assert_allclose(plant.gravity_torques(out), rc.parallel_gravity_torques(m, q), rtol=1e-12)
    np.testing.assert_allclose(plant.coriolis_torques(out), rc.parallel_coriolis_torques(m, q, qd), rtol=1e-12)
    np.testing.assert_allclose(plant.friction_torques(out), 0.0)
    M = plant.mass_matrix()
    np.testing.assert_allclose(M, rc.parallel_mass_matrix(m, q), rtol=1e-12)
    assert np.allclose(M, M.T, rtol=1e-10) and np.linalg.eigvalsh(M).min() > 0
    tau = plant.inverse_dynamics(qdd, True, np.empty(6))
    np.testing.assert_allclose(plant.forward_dynamics(tau), qdd, atol=1e-9)
    # the Plant's split: M qdd + Coriolis + gravity + friction = inverse dynamics
    np.testing.assert_allclose(M @ qdd + plant.coriolis_torques(np.empty(6)) + plant.gravity_torques(np.empty(6))
                               + plant.friction_torques(np.empty(6)), tau, rtol=1e-9)


def test_friction_and_settings():
    spec = __import__("yaml").safe_load(open(ROOT / "config" / "gough_stewart.yaml"))
    spec["leg_defaults"].update(viscous=40.0, coulomb=15.0)
    plant = ParallelPlant(rc.load_parallel(spec))
    q = rc.platform_inverse_kinematics(plant.model, plant.model.home_pose)
    qd = np.array([0.1, -0.2, 0.0, 0.3, -0.1, 0.05])
    plant.set_state(q, qd)
    np.testing.assert_allclose(plant.friction_torques(np.empty(6)), 40.0 * qd + 15.0 * np.sign(qd))
    g0 = plant.gravity_torques(np.empty(6)).copy()
    plant.set_payload("platform", 200.0, (0.0, 0.0, 0.1))
    assert np.all(plant.gravity_torques(np.empty(6)) > g0)
    plant.set_payload(None)
    np.testing.assert_allclose(plant.gravity_torques(np.empty(6)), g0, rtol=1e-12)
    plant.set_gravity([0.0, 0.0, 0.0])
    np.testing.assert_allclose(plant.gravity_torques(np.empty(6)), 0.0, atol=1e-9)
    plant.set_gravity(None)
    np.testing.assert_allclose(plant.gravity_torques(np.empty(6)), g0, rtol=1e-12)


def test_warm_start_follows_a_large_motion(plant):
    """A yaw sweep to 40 deg in small steps: each set_state warm-starts from the last pose and tracks it
    (a cold start from home at the far end may converge too, but the warm-started one must be exact)."""
    m = plant.model
    for psi in np.linspace(0.0, np.radians(40), 41):
        pose = np.r_[0.0, 0.0, 2.0, quat_z(psi)]
        plant.set_state(rc.platform_inverse_kinematics(m, pose), np.zeros(6))
        assert np.max(np.abs(plant.pose - pose)) < 1e-10


def test_inconsistent_states_are_rejected(plant):
    q = rc.platform_inverse_kinematics(plant.model, plant.model.home_pose)
    bad = q.copy()
    bad[2] = np.nan
    with pytest.raises(StateError, match="leg 'leg3' is missing"):
        plant.set_state(bad, np.zeros(6))
    with pytest.raises(StateError, match="no platform pose fits"):
        plant.set_state([3.0, 3.0, 3.0, 8.0, 8.0, 8.0], np.zeros(6))
    with pytest.raises(StateError, match="6 positions"):
        plant.set_state(q[:5], np.zeros(5))
    plant.set_state(q, np.zeros(6))  # a good state after bad ones is accepted
    assert np.max(np.abs(plant.pose - plant.model.home_pose)) < 1e-10


def test_a_rejected_state_leaves_the_last_one(plant):
    """A state whose lengths no pose fits changes nothing: q, qd, pose and every torque stay those of the
    last accepted state (the plant fills spare buffers and swaps them in only once the pose is solved)."""
    m = plant.model
    pose = np.r_[0.02, -0.01, 2.05, quat_z(0.1)]
    q, qd = rc.platform_inverse_kinematics(m, pose), np.linspace(-0.1, 0.1, 6)
    plant.set_state(q, qd)
    before = [np.array(x) for x in (plant.q, plant.qd, plant.pose, plant.twist,
                                    plant.inverse_dynamics(np.ones(6), True, np.zeros(6)),
                                    plant.gravity_torques(np.zeros(6)), plant.coriolis_torques(np.zeros(6)))]
    for _ in range(3):  # more than once: the spare buffers must not take the state's place either
        with pytest.raises(StateError, match="no platform pose fits"):
            plant.set_state([3.0, 3.0, 3.0, 8.0, 8.0, 8.0], np.ones(6))
    after = (plant.q, plant.qd, plant.pose, plant.twist, plant.inverse_dynamics(np.ones(6), True, np.zeros(6)),
             plant.gravity_torques(np.zeros(6)), plant.coriolis_torques(np.zeros(6)))
    for b, a in zip(before, after):
        assert np.array_equal(a, b)
    assert np.allclose(plant.pose, pose, atol=1e-10)
    expected = rc.parallel_joint_inverse_dynamics(m, q, qd, np.ones(6), pose)
    assert np.allclose(before[4], expected, rtol=1e-12, atol=1e-9)


def test_simulation_interface(plant):
    m = plant.model
    pose = np.r_[0.05, 0.02, 2.05, quat_z(0.1)]
    q, qd = rc.platform_inverse_kinematics(m, pose), np.array([0.05, -0.02, 0.01, 0.0, 0.03, -0.04])
    tau = np.full(6, 3000.0)
    np.testing.assert_allclose(plant.sim_acceleration(q, qd, tau),
                               rc.parallel_joint_forward_dynamics(m, q, qd, tau), rtol=1e-10)
    assert np.max(np.abs(plant.sim_pose() - pose)) < 1e-10
    names, qs, qds = plant.sim_joint_states(q, qd)
    assert tuple(names) == m.joint_names
    np.testing.assert_array_equal(qs, q)
    np.testing.assert_array_equal(qds, qd)
