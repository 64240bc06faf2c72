"""Control laws against the closed-form dynamics of a planar two-link arm."""
import math
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import yaml

import rne_control as rc
from rne_control.control import SPLIT_PARTS, BaseState, ControlLaw, default_gains

REPO = Path(__file__).resolve().parents[1]
G = 9.81
M1, L1, LC1, I1 = 2.0, 1.0, 0.5, 2.0 * 1.0 / 12
M2, L2, LC2, I2 = 1.5, 0.8, 0.4, 1.5 * 0.64 / 12


def _two_link_dict(coulomb=0.0, viscous=0.0):
    d = yaml.safe_load((REPO / "config" / "two_link.yaml").read_text())
    for link in d["links"]:
        link["coulomb"] = coulomb
        link["viscous"] = viscous
    return d


@pytest.fixture(scope="module")
def model():
    return rc.load_dh(_two_link_dict())


def closed_form(q, qd):
    c1, c2 = math.cos(q[0]), math.cos(q[1])
    c12 = math.cos(q[0] + q[1])
    s2 = math.sin(q[1])
    m11 = M1 * LC1**2 + I1 + M2 * (L1**2 + LC2**2 + 2 * L1 * LC2 * c2) + I2
    m12 = M2 * (LC2**2 + L1 * LC2 * c2) + I2
    m22 = M2 * LC2**2 + I2
    M = np.array([[m11, m12], [m12, m22]])
    h = M2 * L1 * LC2 * s2
    C = np.array([-h * (2 * qd[0] * qd[1] + qd[1] ** 2), h * qd[0] ** 2])
    g = np.array([(M1 * LC1 + M2 * L1) * G * c1 + M2 * LC2 * G * c12, M2 * LC2 * G * c12])
    return M, C, g


STATES = [
    (np.array([0.3, -0.7]), np.array([0.5, -1.2])),
    (np.array([-1.1, 2.0]), np.array([-0.4, 0.9])),
]
DES = (np.array([0.4, -0.5]), np.array([0.2, 0.1]), np.array([1.5, -2.0]))


def test_closed_form_matches_library(model):
    q, qd = STATES[0]
    M, C, g = closed_form(q, qd)
    np.testing.assert_allclose(rc.mass_matrix(model, q), M, atol=1e-12)
    np.testing.assert_allclose(rc.coriolis_torques(model, q, qd), C, atol=1e-12)
    np.testing.assert_allclose(rc.gravity_torques(model, q), g, atol=1e-12)


def test_default_gains_omega_10_critically_damped():
    kp, kd = default_gains(3)
    np.testing.assert_array_equal(kp, [100.0] * 3)
    np.testing.assert_array_equal(kd, [20.0] * 3)
    law = ControlLaw(rc.load_dh(_two_link_dict()))
    np.testing.assert_array_equal(law.kp, [100.0, 100.0])
    np.testing.assert_array_equal(law.kd, [20.0, 20.0])
    assert law.mode == "computed_torque" and law.base == "fixed"


@pytest.mark.parametrize("q, qd", STATES)
def test_computed_torque_closed_form(model, q, qd):
    law = ControlLaw(model)
    law.kp[:] = [90.0, 120.0]
    law.kd[:] = [19.0, 22.0]
    q_d, qd_d, qdd_d = DES
    tau = law.compute(q, qd, q_d, qd_d, qdd_d).copy()
    M, C, g = closed_form(q, qd)
    qdd_ref = qdd_d + law.kd * (qd_d - qd) + law.kp * (q_d - q)
    np.testing.assert_allclose(tau, M @ qdd_ref + C + g, rtol=1e-12, atol=1e-10)
    # feedback scale 0: pure feed-forward (used while the feedback ramps in at activation)
    tau0 = law.compute(q, qd, q_d, qd_d, qdd_d, feedback_scale=0.0)
    np.testing.assert_allclose(tau0, M @ qdd_d + C + g, rtol=1e-12, atol=1e-10)
    half = law.compute(q, qd, q_d, qd_d, qdd_d, feedback_scale=0.5)
    np.testing.assert_allclose(half, M @ (qdd_d + 0.5 * (qdd_ref - qdd_d)) + C + g, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("q, qd", STATES)
def test_compensation_modes_closed_form(model, q, qd):
    law = ControlLaw(model)
    q_d, qd_d, qdd_d = DES
    M, C, g = closed_form(q, qd)
    expect = {"gravity": g, "coriolis": C, "gravity_coriolis": g + C, "off": np.zeros(2)}
    for mode, ref in expect.items():
        law.set_mode(mode)
        np.testing.assert_allclose(law.compute(q, qd, q_d, qd_d, qdd_d), ref, rtol=1e-12, atol=1e-10, err_msg=mode)
    # hold PD added to the compensation modes only
    law.hold_kp[:] = [50.0, 30.0]
    law.hold_kd[:] = [5.0, 3.0]
    pd = law.hold_kp * (q_d - q) + law.hold_kd * (qd_d - qd)
    for mode, ref in expect.items():
        law.set_mode(mode)
        want = ref if mode == "off" else ref + pd
        np.testing.assert_allclose(law.compute(q, qd, q_d, qd_d, qdd_d), want, rtol=1e-12, atol=1e-10, err_msg=mode)


def test_gravity_override(model):
    law = ControlLaw(model)
    law.set_mode("gravity")
    q = STATES[0][0]
    law.set_gravity([0.0, 0.0, 0.0])
    np.testing.assert_allclose(law.compute(q, q, q, q, q), 0.0, atol=1e-14)
    law.set_gravity([0.0, -2 * G, 0.0])
    np.testing.assert_allclose(law.compute(q, q, q, q, q), 2 * closed_form(q, q)[2], rtol=1e-12)
    law.set_gravity(None)
    np.testing.assert_allclose(law.compute(q, q, q, q, q), closed_form(q, q)[2], rtol=1e-12)
    with pytest.raises(ValueError):
        law.set_gravity([0.0, float("nan"), 0.0])
    with pytest.raises(ValueError):
        law.set_mode("torque")


def test_friction_compensation():
    fs, fv = 0.7, 0.25
    m = rc.load_dh(_two_link_dict(coulomb=fs, viscous=fv))
    law = ControlLaw(m)
    law.compute(np.zeros(2), np.array([1.0, -2.0]), np.zeros(2), np.zeros(2), np.zeros(2))
    np.testing.assert_allclose(law.plant.friction_torques(np.zeros(2)), [fs + fv, -fs - 2 * fv], rtol=1e-12)
    q, qd = STATES[0]
    q_d, qd_d, qdd_d = DES
    M, C, g = closed_form(q, qd)
    fric = fs * np.sign(qd) + fv * qd
    law.friction = True
    for mode, ref in {"computed_torque": None, "gravity": g, "coriolis": C + fric,
                      "gravity_coriolis": g + C + fric}.items():
        law.set_mode(mode)
        tau = law.compute(q, qd, q_d, qd_d, qdd_d)
        if ref is None:
            qdd_ref = qdd_d + law.kd * (qd_d - qd) + law.kp * (q_d - q)
            ref = M @ qdd_ref + C + g + fric
        np.testing.assert_allclose(tau, ref, rtol=1e-12, atol=1e-10, err_msg=mode)
    law.friction = False
    law.set_mode("coriolis")
    np.testing.assert_allclose(law.compute(q, qd, q_d, qd_d, qdd_d), C, rtol=1e-12)


@pytest.mark.parametrize("mode", ["computed_torque", "gravity", "coriolis", "gravity_coriolis", "off"])
def test_split_parts_sum_to_law(model, mode):
    law = ControlLaw(model)
    law.set_mode(mode)
    law.hold_kp[:] = [10.0, 20.0]
    q, qd = STATES[1]
    q_d, qd_d, qdd_d = DES
    tau = law.compute(q, qd, q_d, qd_d, qdd_d, 0.8).copy()
    parts = law.split(q, qd, q_d, qd_d, qdd_d, 0.8)
    assert set(parts) == set(SPLIT_PARTS)
    np.testing.assert_allclose(sum(parts.values()), tau, rtol=1e-12, atol=1e-12)
    M, C, g = closed_form(q, qd)
    if mode == "computed_torque":
        np.testing.assert_allclose(parts["inertial"], M @ qdd_d, rtol=1e-12)
        fb = 0.8 * (law.kd * (qd_d - qd) + law.kp * (q_d - q))
        np.testing.assert_allclose(parts["feedback"], M @ fb, rtol=1e-12)
        np.testing.assert_allclose(parts["gravity"], g, rtol=1e-12)
        np.testing.assert_allclose(parts["coriolis"], C, rtol=1e-9, atol=1e-12)
    if mode == "gravity":
        np.testing.assert_allclose(parts["coriolis"], 0.0)
        np.testing.assert_allclose(parts["feedback"], 0.8 * law.hold_kp * (q_d - q))
    np.testing.assert_allclose(parts["base"], 0.0)


def test_compute_is_allocation_free_on_fixed_base():
    m = rc.load_model(str(REPO / "config" / "puma560.yaml"))
    law = ControlLaw(m)
    rng = np.random.default_rng(0)
    q, qd, q_d, qd_d, qdd_d = rng.normal(size=(5, m.n))
    for mode in ("computed_torque", "gravity", "coriolis", "gravity_coriolis"):
        law.set_mode(mode)
        out = law.compute(q, qd, q_d, qd_d, qdd_d)
        assert out is law.tau
        for _ in range(20):
            law.compute(q, qd, q_d, qd_d, qdd_d)
        tracemalloc.start()
        snap0 = tracemalloc.take_snapshot()
        for _ in range(200):
            law.compute(q, qd, q_d, qd_d, qdd_d)
        snap1 = tracemalloc.take_snapshot()
        tracemalloc.stop()
        grown = sum(s.size_diff for s in snap1.compare_to(snap0, "filename") if s.size_diff > 0)
        assert grown < 4096, (mode, grown)


def test_base_state_classical_to_spatial_acceleration():
    bs = BaseState()
    bs.set_odometry([0, 0, 0, 2.0], [1.0, 0.0, 0.0, 0.0, 0.0, 2.0])   # quaternion normalised
    np.testing.assert_allclose(bs.orientation, [0, 0, 0, 1])
    bs.set_classical_accel([0.0, 3.0, 0.0], [0.0, 0.0, 0.5])
    # vdot = a - w x v = (0,3,0) - (0,0,2)x(1,0,0) = (0,3,0) - (0,2,0)
    np.testing.assert_allclose(bs.accel, [0.0, 1.0, 0.0, 0.0, 0.0, 0.5])
    with pytest.raises(ValueError):
        bs.set_odometry([0, 0, 0, 0], np.zeros(6))


def test_base_modes_require_a_floating_base_model(model):
    law = ControlLaw(model)
    for base in ("moving", "free_floating"):
        with pytest.raises(ValueError, match="base '%s' is not available for the tree model" % base):
            law.set_base(base)
    with pytest.raises(ValueError, match="unknown base 'rolling'"):
        law.set_base("rolling")


# ----------------------------------------------------------------------------- moving / free-floating base
def _floating_puma(gravity=None):
    d = yaml.safe_load((REPO / "config" / "puma560.yaml").read_text())
    if gravity is not None:
        d["gravity"] = list(gravity)
    return rc.load_dh(d, floating_base=True)


def test_moving_base_at_rest_equals_fixed_base():
    m = _floating_puma()
    law = ControlLaw(m)
    law.set_base("moving")
    rng = np.random.default_rng(5)
    q, qd, q_d, qd_d, qdd_d = rng.normal(size=(5, m.n))
    bs = BaseState()                       # identity pose, zero twist and acceleration
    fixed = ControlLaw(m)
    for mode in ("computed_torque", "gravity", "coriolis", "gravity_coriolis", "off"):
        law.set_mode(mode)
        fixed.set_mode(mode)
        np.testing.assert_allclose(law.compute(q, qd, q_d, qd_d, qdd_d, 1.0, bs),
                                   fixed.compute(q, qd, q_d, qd_d, qdd_d), rtol=1e-9, atol=1e-9, err_msg=mode)


def test_moving_base_terms_per_mode_table():
    from rne_control.dynamics import moving_base_inverse_dynamics as mbid
    m = _floating_puma()
    m0 = _floating_puma(gravity=[0.0, 0.0, 0.0])
    law = ControlLaw(m)
    law.set_base("moving")
    rng = np.random.default_rng(11)
    q, qd, q_d, qd_d, qdd_d = rng.normal(size=(5, m.n))
    quat = rng.normal(size=4)
    bs = BaseState()
    bs.set_odometry(quat, rng.normal(size=6))
    bs.set_classical_accel(rng.normal(size=3), rng.normal(size=3))
    V, A, R = bs.twist, bs.accel, bs.orientation
    z = np.zeros(m.n)
    qdd_ref = qdd_d + law.kd * (qd_d - qd) + law.kp * (q_d - q)
    want = {
        "computed_torque": mbid(m, q, qd, qdd_ref, V, A, R, friction=False)[0],
        "gravity": mbid(m, q, z, z, V, A, R, friction=False)[0],
        "coriolis": mbid(m0, q, qd, z, V, np.zeros(6), R, friction=False)[0],   # no gravity, no base accel
        "gravity_coriolis": mbid(m, q, qd, z, V, A, R, friction=False)[0],
    }
    for mode, ref in want.items():
        law.set_mode(mode)
        np.testing.assert_allclose(law.compute(q, qd, q_d, qd_d, qdd_d, 1.0, bs), ref, rtol=1e-9, atol=1e-9,
                                   err_msg=mode)
        parts = law.split(q, qd, q_d, qd_d, qdd_d, 1.0, bs)
        np.testing.assert_allclose(sum(parts.values()), ref, rtol=1e-9, atol=1e-9)
    # a gravity override on a moving base (the model's gravity is replaced, not added)
    law.set_mode("gravity")
    law.set_gravity([0.0, 0.0, 0.0])
    np.testing.assert_allclose(law.compute(q, qd, q_d, qd_d, qdd_d, 1.0, bs),
                               mbid(m0, q, z, z, V, A, R, friction=False)[0], rtol=1e-9, atol=1e-9)


def test_free_floating_terms_and_momentum_source():
    from rne_control.dynamics import base_twist_from_momentum, free_floating_inverse_dynamics as ffid
    m = rc.load_model(str(REPO / "config" / "ffsr.yaml"))
    assert m.floating_base
    law = ControlLaw(m)
    law.set_base("free_floating")
    rng = np.random.default_rng(2)
    q, qd, q_d, qd_d, qdd_d = rng.normal(size=(5, m.n))
    bs = BaseState()
    bs.set_odometry(rng.normal(size=4), rng.normal(size=6))
    V, R = bs.twist, bs.orientation
    z = np.zeros(m.n)
    qdd_ref = qdd_d + law.kd * (qd_d - qd) + law.kp * (q_d - q)
    want = {"computed_torque": ffid(m, q, qd, qdd_ref, V, R, friction=False)[0],
            "gravity": ffid(m, q, z, z, V, R, friction=False)[0],
            "coriolis": ffid(m, q, qd, z, V, R, friction=False)[0],
            "gravity_coriolis": ffid(m, q, qd, z, V, R, friction=False)[0]}
    for mode, ref in want.items():
        law.set_mode(mode)
        np.testing.assert_allclose(law.compute(q, qd, q_d, qd_d, qdd_d, 1.0, bs), ref, rtol=1e-9, atol=1e-9,
                                   err_msg=mode)
    law.set_mode("computed_torque")
    law.base_velocity_source = "momentum"
    Vm = base_twist_from_momentum(m, q, qd, None, R)
    np.testing.assert_allclose(law.compute(q, qd, q_d, qd_d, qdd_d, 1.0, bs),
                               ffid(m, q, qd, qdd_ref, Vm, R, friction=False)[0], rtol=1e-9, atol=1e-9)
