"""The planar two-link arm, whose M, C and g are derived by hand, for all five functions."""
import numpy as np
import pytest

import rne_control as rc

m1, m2, l1, l2, lc1, lc2, I1, I2, G = 2.0, 1.5, 1.0, 0.8, 0.45, 0.35, 0.2, 0.09, 9.81
Ia = np.array([0.3, 0.1])
Fv = np.array([0.5, 0.2])
Fs = np.array([1.2, 0.7])

URDF = f"""<robot name="planar2">
  <link name="base"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit effort="100" velocity="3" lower="-3" upper="3"/></joint>
  <link name="l1"><inertial><origin xyz="{lc1} 0 0"/><mass value="{m1}"/>
    <inertia ixx="0.01" iyy="{I1}" izz="{I1}" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/><origin xyz="{l1} 0 0"/>
    <axis xyz="0 0 1"/></joint>
  <link name="l2"><inertial><origin xyz="{lc2} 0 0"/><mass value="{m2}"/>
    <inertia ixx="0.01" iyy="{I2}" izz="{I2}" ixy="0" ixz="0" iyz="0"/></inertial></link>
</robot>"""

# The same arm as a standard-DH model (link frame i at the far end of link i), with rotor inertia and friction.
DH = {"name": "planar2", "convention": "standard", "gravity": [0.0, -G, 0.0], "links": [
    {"joint": "revolute", "a": l1, "mass": m1, "com": [lc1 - l1, 0, 0], "rotor_inertia": float(Ia[0]),
     "viscous": float(Fv[0]), "coulomb": float(Fs[0]), "inertia": {"ixx": 0.01, "iyy": I1, "izz": I1}},
    {"joint": "revolute", "a": l2, "mass": m2, "com": [lc2 - l2, 0, 0], "rotor_inertia": float(Ia[1]),
     "viscous": float(Fv[1]), "coulomb": float(Fs[1]), "inertia": {"ixx": 0.01, "iyy": I2, "izz": I2}},
]}


def M_hand(q):
    c2 = np.cos(q[1])
    M11 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2) + I1 + I2
    M12 = m2 * (lc2**2 + l1 * lc2 * c2) + I2
    return np.array([[M11, M12], [M12, m2 * lc2**2 + I2]])


def C_hand(q, qd):
    h = -m2 * l1 * lc2 * np.sin(q[1])
    return np.array([h * (2 * qd[0] * qd[1] + qd[1] ** 2), -h * qd[0] ** 2])


def g_hand(q):
    c1, c12 = np.cos(q[0]), np.cos(q[0] + q[1])
    return np.array([(m1 * lc1 + m2 * l1) * G * c1 + m2 * lc2 * G * c12, m2 * lc2 * G * c12])


@pytest.fixture(scope="module")
def urdf_model():
    return rc.load_urdf(URDF, gravity=[0.0, -G, 0.0])


@pytest.fixture(scope="module")
def dh_model():
    return rc.load_dh(DH)


def samples(count=10, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-3, 3, (3, 2)) for _ in range(count)]


def test_urdf_all_five_functions(urdf_model):
    m = urdf_model
    for q, qd, qdd in samples():
        M, C, g = M_hand(q), C_hand(q, qd), g_hand(q)
        np.testing.assert_allclose(rc.mass_matrix(m, q), M, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rc.coriolis_torques(m, q, qd), C, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rc.gravity_torques(m, q), g, rtol=1e-12, atol=1e-12)
        tau = M @ qdd + C + g
        np.testing.assert_allclose(rc.inverse_dynamics(m, q, qd, qdd), tau, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rc.forward_dynamics(m, q, qd, tau), qdd, rtol=1e-10, atol=1e-10)


def test_dh_with_rotor_inertia_and_friction(dh_model):
    m = dh_model
    assert m.joint_names == ("joint1", "joint2") and m.link_names == ("base", "link1", "link2")
    for q, qd, qdd in samples(seed=2):
        M = M_hand(q) + np.diag(Ia)
        fr = Fv * qd + Fs * np.sign(qd)
        tau = M @ qdd + C_hand(q, qd) + g_hand(q) + fr
        np.testing.assert_allclose(rc.mass_matrix(m, q), M, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rc.inverse_dynamics(m, q, qd, qdd), tau, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rc.inverse_dynamics(m, q, qd, qdd, friction=False), tau - fr, atol=1e-12)
        np.testing.assert_allclose(rc.forward_dynamics(m, q, qd, tau), qdd, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(rc.forward_dynamics(m, q, qd, tau - fr, friction=False), qdd, atol=1e-10)
        # Coriolis and gravity carry neither rotor inertia nor friction
        np.testing.assert_allclose(rc.coriolis_torques(m, q, qd), C_hand(q, qd), atol=1e-12)
        np.testing.assert_allclose(rc.gravity_torques(m, q), g_hand(q), atol=1e-12)


def test_gravity_override_and_set_gravity():
    m = rc.load_urdf(URDF, gravity=[0.0, -G, 0.0])
    q = np.array([0.3, -0.4])
    np.testing.assert_allclose(rc.gravity_torques(m, q, gravity=[0, -2 * G, 0]), 2 * g_hand(q), atol=1e-12)
    np.testing.assert_allclose(rc.inverse_dynamics(m, q, [0, 0], [0, 0], gravity=[0, 0, -G]), 0.0, atol=1e-12)
    m.set_gravity([0.0, G, 0.0])
    np.testing.assert_allclose(rc.gravity_torques(m, q), -g_hand(q), atol=1e-12)
    np.testing.assert_allclose(m.gravity, [0.0, G, 0.0])


def test_payload_is_a_point_mass_at_the_tip():
    """A payload on l2 equals a point mass in the closed form; clearing it restores the model."""
    m = rc.load_urdf(URDF, gravity=[0.0, -G, 0.0])
    mp, q = 0.7, np.array([0.5, 0.9])
    m.set_payload("l2", mp, [l2, 0, 0], [0, 0, 0, 0, 0, 0])
    c1, c12 = np.cos(q[0]), np.cos(q[0] + q[1])
    extra = mp * G * np.array([l1 * c1 + l2 * c12, l2 * c12])
    np.testing.assert_allclose(rc.gravity_torques(m, q), g_hand(q) + extra, atol=1e-12)
    assert m.payload[0] == "l2"
    m.clear_payload()
    np.testing.assert_allclose(rc.gravity_torques(m, q), g_hand(q), atol=1e-12)
    with pytest.raises(ValueError, match="nosuchlink"):
        m.set_payload("nosuchlink", 1.0)
    with pytest.raises(ValueError, match="negative mass"):
        m.set_payload("l2", -1.0)
    with pytest.raises(ValueError, match="negative eigenvalue"):
        m.set_payload("l2", 1.0, [0, 0, 0], [1, 1, -1, 0, 0, 0])
