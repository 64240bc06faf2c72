"""Physical identities on random states of several robots (prismatic joints and trees included)."""
import warnings

import numpy as np
import pinocchio as pin
import pytest

import rne_control as rc
from oracle import ROOT, erd

FRICTION_URDF = erd("panda_description/urdf/panda.urdf")


def load(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # published PUMA/Stanford inertias break the triangle inequality
        if name == "puma560":
            return rc.load_dh(ROOT / "config/puma560.yaml"), ROOT / "urdf/puma560.urdf"
        if name == "stanford":
            return rc.load_dh(ROOT / "config/stanford.yaml"), ROOT / "urdf/stanford.urdf"
        if name == "panda_friction":
            text = open(FRICTION_URDF).read().replace(
                '<joint name="panda_joint2" type="revolute">',
                '<joint name="panda_joint2" type="revolute"><dynamics damping="0.7" friction="1.3"/>')
            return rc.load_urdf(text), FRICTION_URDF
        if name == "baxter":
            return rc.load_urdf(erd("baxter_description/urdf/baxter.urdf")), erd("baxter_description/urdf/baxter.urdf")
        raise KeyError(name)


@pytest.fixture(scope="module", params=["puma560", "stanford", "panda_friction", "baxter"])
def robot(request):
    return load(request.param)


def states(n, count=6, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-1.5, 1.5, n), rng.normal(size=n), rng.normal(size=n)) for _ in range(count)]



def _friction(model, qd):
    fr = np.zeros(model.n)
    for i in range(model.nb):
        k = int(model.tree[i, 17])
        fr[k] = model.tree[i, 13] * qd[k] + model.tree[i, 14] * np.sign(qd[k])
    return fr


def test_mass_matrix_symmetric_positive_definite(robot):
    model, _ = robot
    for q, _, _ in states(model.n):
        H = rc.mass_matrix(model, q)
        np.testing.assert_allclose(H, H.T, atol=1e-14)
        assert np.linalg.eigvalsh(H).min() > 0


def test_inverse_of_forward(robot):
    model, _ = robot
    rng = np.random.default_rng(4)
    for q, qd, _ in states(model.n):
        tau = rng.normal(size=model.n) * 5
        qdd = rc.forward_dynamics(model, q, qd, tau)
        np.testing.assert_allclose(rc.inverse_dynamics(model, q, qd, qdd), tau, atol=1e-9 * (1 + abs(tau).max()))


def test_decomposition(robot):
    """ID = M qdd + C qd + g (+ friction)."""
    model, _ = robot
    for q, qd, qdd in states(model.n):
        parts = (rc.mass_matrix(model, q) @ qdd + rc.coriolis_torques(model, q, qd) + rc.gravity_torques(model, q))
        tau = rc.inverse_dynamics(model, q, qd, qdd)
        np.testing.assert_allclose(tau, parts + _friction(model, qd), atol=1e-9 * (1 + abs(tau).max()))
        np.testing.assert_allclose(rc.inverse_dynamics(model, q, qd, qdd, friction=False), parts,
                                   atol=1e-9 * (1 + abs(tau).max()))


def potential(path, model):
    """V(q) from Pinocchio on the matching URDF (rotor inertia does not enter V)."""
    from oracle import Oracle
    o = Oracle(path, model)
    o.pm.gravity.linear = model.gravity
    return lambda q: pin.computePotentialEnergy(o.pm, o.pd, o.q(q))


def test_gravity_is_gradient_of_potential(robot):
    model, path = robot
    V = potential(path, model)
    h = 1e-6
    for q, _, _ in states(model.n, count=3):
        grad = np.array([(V(q + h * e) - V(q - h * e)) / (2 * h) for e in np.eye(model.n)])
        np.testing.assert_allclose(rc.gravity_torques(model, q), grad, atol=1e-6 * (1 + abs(grad).max()))


def test_energy_balance(robot):
    """d/dt (T + V) = qd^T (tau - friction) along the motion qdd = FD(q, qd, tau)."""
    model, path = robot
    V = potential(path, model)
    rng = np.random.default_rng(8)

    def energy(q, qd):
        return 0.5 * qd @ rc.mass_matrix(model, q) @ qd + V(q)

    h = 1e-5
    for q, qd, _ in states(model.n, count=3):
        tau = rng.normal(size=model.n) * 3
        qdd = rc.forward_dynamics(model, q, qd, tau)
        # central difference of E along the flow x' = (qd, qdd): E(x + h x') - E(x - h x') = 2h dE/dt + O(h^3)
        dE = (energy(q + h * qd, qd + h * qdd) - energy(q - h * qd, qd - h * qdd)) / (2 * h)
        power = qd @ (tau - _friction(model, qd))
        assert abs(dE - power) < 1e-5 * (1 + abs(power))


def test_singular_mass_matrix_raises():
    urdf = """<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"
      ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
      <limit effort="1" velocity="1" lower="-1" upper="1"/></joint><link name="b"/></robot>"""
    m = rc.load_urdf(urdf)
    with pytest.raises(rc.SingularMassMatrixError, match="j1"):
        rc.forward_dynamics(m, [0.0], [0.0], [1.0])
    assert rc.inverse_dynamics(m, [0.0], [1.0], [1.0])[0] == 0.0
