"""The package's robot model files: each YAML (DH) model and its URDF describe the same robot.

The URDFs cannot carry rotor (armature) inertia, which lives only in the YAML files, so
tau_yaml - tau_urdf == Ia * qdd and M_yaml - M_urdf == diag(Ia).
"""
import warnings
from pathlib import Path

import numpy as np
import pytest

import rne_control as rc

ROOT = Path(__file__).parents[1]
CONFIG = ROOT / "config"
URDF = ROOT / "urdf"
PAIRS = ["puma560", "two_link", "stanford", "arm7"]
N_STATES = 20
RTOL = 1e-9


def _load_pair(name):
    with warnings.catch_warnings():
        # puma560 link 3 and stanford link 5 (published data) violate the triangle inequality: the
        # loader may warn; that is tested elsewhere, not here.
        warnings.simplefilter("ignore")
        m_yaml = rc.load_dh(CONFIG / f"{name}.yaml")
        m_urdf = rc.load_urdf(str(URDF / f"{name}.urdf"), friction=False)
    return m_yaml, m_urdf


def _rotor(name):
    import yaml

    doc = yaml.safe_load((CONFIG / f"{name}.yaml").read_text())
    return np.array([float(L.get("rotor_inertia", 0.0)) for L in doc["links"] if L["joint"] != "fixed"])


def _states(model, seed):
    rng = np.random.default_rng(seed)
    n = model.n
    q = rng.uniform(-np.pi, np.pi, (N_STATES, n))
    lo, hi = getattr(model, "lower_limits", None), getattr(model, "upper_limits", None)
    if lo is not None and hi is not None and np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)):
        q = lo + (hi - lo) * rng.uniform(0.0, 1.0, (N_STATES, n))
    qd = rng.standard_normal((N_STATES, n))
    qdd = rng.standard_normal((N_STATES, n))
    return q, qd, qdd


def _close(a, b, scale=None):
    a, b = np.asarray(a, float), np.asarray(b, float)
    scale = max(1.0, np.abs(b).max()) if scale is None else scale
    np.testing.assert_allclose(a, b, rtol=0.0, atol=RTOL * scale)


@pytest.mark.parametrize("name", PAIRS)
def test_same_joints_and_limits(name):
    m_yaml, m_urdf = _load_pair(name)
    assert m_yaml.n == m_urdf.n
    assert tuple(m_yaml.joint_names) == tuple(m_urdf.joint_names)
    np.testing.assert_allclose(m_yaml.effort_limits, m_urdf.effort_limits)
    np.testing.assert_allclose(m_yaml.velocity_limits, m_urdf.velocity_limits)
    assert np.all(np.isfinite(m_yaml.effort_limits)) and np.all(np.asarray(m_yaml.effort_limits) > 0)
    assert np.all(np.isfinite(m_yaml.velocity_limits)) and np.all(np.asarray(m_yaml.velocity_limits) > 0)


@pytest.mark.parametrize("name", PAIRS)
def test_same_gravity_torques(name):
    m_yaml, m_urdf = _load_pair(name)
    q, _, _ = _states(m_yaml, 1)
    for k in range(N_STATES):
        g_yaml = rc.gravity_torques(m_yaml, q[k])
        g_urdf = rc.gravity_torques(m_urdf, q[k])
        _close(g_yaml, g_urdf)
    assert np.abs(rc.gravity_torques(m_yaml, q[0])).max() > 0.1  # gravity matters for all of these


@pytest.mark.parametrize("name", PAIRS)
def test_same_mass_matrix_up_to_rotor_inertia(name):
    m_yaml, m_urdf = _load_pair(name)
    Ia = _rotor(name)
    q, _, _ = _states(m_yaml, 2)
    for k in range(N_STATES):
        M_yaml = rc.mass_matrix(m_yaml, q[k])
        M_urdf = rc.mass_matrix(m_urdf, q[k])
        _close(M_yaml - np.diag(Ia), M_urdf, scale=max(1.0, np.abs(M_urdf).max()))


@pytest.mark.parametrize("name", PAIRS)
def test_same_inverse_dynamics_up_to_rotor_inertia(name):
    m_yaml, m_urdf = _load_pair(name)
    Ia = _rotor(name)
    q, qd, qdd = _states(m_yaml, 3)
    for k in range(N_STATES):
        t_yaml = rc.inverse_dynamics(m_yaml, q[k], qd[k], qdd[k], friction=False)
        t_urdf = rc.inverse_dynamics(m_urdf, q[k], qd[k], qdd[k], friction=False)
        _close(t_yaml - Ia * qdd[k], t_urdf, scale=max(1.0, np.abs(t_urdf).max()))
    # stacked (N, n) inputs give the same answer
    t_yaml = rc.inverse_dynamics(m_yaml, q, qd, qdd, friction=False)
    t_urdf = rc.inverse_dynamics(m_urdf, q, qd, qdd, friction=False)
    _close(t_yaml - Ia * qdd, t_urdf, scale=max(1.0, np.abs(t_urdf).max()))


def test_two_link_gravity_closed_form():
    """Independent check of the planar arm: g = [(m1 lc1 + m2 l1) c1 + m2 lc2 c12, m2 lc2 c12] * 9.81."""
    m_yaml, m_urdf = _load_pair("two_link")
    rng = np.random.default_rng(4)
    for q in rng.uniform(-np.pi, np.pi, (N_STATES, 2)):
        c1, c12 = np.cos(q[0]), np.cos(q[0] + q[1])
        g = 9.81 * np.array([(2.0 * 0.5 + 1.5 * 1.0) * c1 + 1.5 * 0.4 * c12, 1.5 * 0.4 * c12])
        _close(rc.gravity_torques(m_yaml, q), g)
        _close(rc.gravity_torques(m_urdf, q), g)


def test_puma560_rotor_inertia_is_jm_g_squared():
    Jm = np.array([200e-6, 200e-6, 200e-6, 33e-6, 33e-6, 33e-6])
    G = np.array([-62.6111, 107.815, -53.7063, 76.0364, 71.923, 76.686])
    np.testing.assert_allclose(_rotor("puma560"), Jm * G**2, rtol=1e-12)


def test_ffsr_yaml_is_floating_and_warns_about_triangle_inequality():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = rc.load_dh(CONFIG / "ffsr.yaml")
    assert model.floating_base is True
    assert model.n == 6
    assert tuple(model.joint_names) == tuple(f"joint{i}" for i in range(1, 7))
    np.testing.assert_allclose(model.gravity, [0.0, 0.0, 0.0])
    assert np.all(np.isfinite(model.effort_limits)) and np.all(np.isfinite(model.velocity_limits))
    msgs = [str(w.message).lower() for w in caught if issubclass(w.category, Warning)]
    assert any("triangle" in m for m in msgs), msgs


def test_ffsr_urdf_loads_as_floating_base():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = rc.load_urdf(str(URDF / "ffsr.urdf"), floating_base=True, friction=False)
    assert model.floating_base is True
    assert model.n == 6
    assert tuple(model.joint_names) == tuple(f"joint{i}" for i in range(1, 7))
