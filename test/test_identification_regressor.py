"""Issue 11: the regressor Y (tau = Y pi) and the base parameters, against independent truth.

- Y pi equals our RNE for *random* physically consistent pi (a model rebuilt with that pi), fixed base
  (PUMA 560, baxter's branched tree) and moving base (the FFSR and solo12 with base twist/accel/pose).
- Y equals Pinocchio's ``computeJointTorqueRegressor``. Convention mapping: Pinocchio's 10 dynamic
  parameters of a joint are [m, mc, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] of the body it carries, about the
  joint frame's origin in joint-frame axes; for a URDF the joint frame *is* the child link frame, so
  Pinocchio's block of joint j equals our block of j's child link. Pinocchio merges links on fixed
  joints into that body (we keep them as their own columns), orders joints depth-first (we: URDF
  document order; rows are mapped by joint name), and has no rotor or friction columns (ours are
  compared as zero-inertia here and checked separately). The full products Y pi must agree as well.
- Base-parameter counts: a planar two-link arm and a prismatic-revolute arm derived by hand, and the
  PUMA 560 against the published count.
"""
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from urdf_parser_py.urdf import URDF

import rne_control as rc
from oracle import Oracle, erd
from rne_control.model.spatial import body_params, rot_x, rot_z
from rne_control.identification.parameters import TO_PUBLIC, model_with_parameters

ROOT = Path(__file__).parents[1]


def _load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # published inertias that break the triangle inequality
        return rc.load_model(str(path), **kw)


def random_pi(model, rng):
    """A random physically consistent pi: per link a mass, a COM, and a principal inertia triple that
    satisfies the triangle inequality, rotated at random; positive rotor inertia and friction."""
    pi = []
    for _ in model.link_names:
        m = rng.uniform(0.2, 5.0)
        c = rng.uniform(-0.3, 0.3, 3)
        a, b = rng.uniform(0.01, 0.2, 2)
        d = np.array([a, b, rng.uniform(abs(a - b), a + b)])
        R = rot_z(rng.uniform(-3, 3)) @ rot_x(rng.uniform(-3, 3)) @ rot_z(rng.uniform(-3, 3))
        pi.append(body_params(m, c, R @ np.diag(d) @ R.T)[TO_PUBLIC])
    pi.append(rng.uniform(0.01, 1.0, 3 * model.n))
    return np.concatenate(pi)


def _states(model, rng, N=25):
    return rng.uniform(-2, 2, (N, model.n)), 2 * rng.standard_normal((N, model.n)), 3 * rng.standard_normal((N, model.n))


FIXED = {"puma560": ROOT / "config" / "puma560.yaml", "baxter": erd("baxter_description/urdf/baxter.urdf"),
         "stanford (prismatic)": ROOT / "config" / "stanford.yaml"}


@pytest.mark.parametrize("name", sorted(FIXED))
def test_regressor_equals_inverse_dynamics(name):
    model = _load(FIXED[name])
    rng = np.random.default_rng(1)
    for trial in range(3):
        pi = random_pi(model, rng)
        truth = model_with_parameters(model, pi)
        q, qd, qdd = _states(model, rng)
        Y = rc.regressor(model, q, qd, qdd)
        tau = rc.inverse_dynamics(truth, q, qd, qdd)
        assert Y.shape == (len(q) * model.n, len(pi))
        assert np.all(np.abs(Y @ pi - tau.ravel()) <= 1e-10 * (1 + np.abs(tau.ravel())))
        Y0 = rc.regressor(model, q[0], qd[0], qdd[0], friction=False)      # single sample, no friction
        assert Y0.shape == (model.n, len(pi))
        tau0 = rc.inverse_dynamics(truth, q[0], qd[0], qdd[0], friction=False)
        assert np.all(np.abs(Y0 @ pi - tau0) <= 1e-10 * (1 + np.abs(tau0)))
    assert np.allclose(rc.parameter_vector(model_with_parameters(model, pi)), pi, rtol=0, atol=0)


FLOATING = {"ffsr": ROOT / "config" / "ffsr.yaml",
            "solo12": erd("solo_description/robots/solo12.urdf")}


@pytest.mark.parametrize("name", sorted(FLOATING))
def test_regressor_equals_moving_base_inverse_dynamics(name):
    model = _load(FLOATING[name], floating_base=True)
    rng = np.random.default_rng(2)
    pi = random_pi(model, rng)
    truth = model_with_parameters(model, pi)
    q, qd, qdd = _states(model, rng, N=10)
    twist, accel = rng.standard_normal((2, 10, 6))
    quat = rng.standard_normal((10, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    Y = rc.regressor(model, q, qd, qdd, base_twist=twist, base_accel=accel, base_orientation=quat)
    tau, wrench = rc.moving_base_inverse_dynamics(truth, q, qd, qdd, twist, accel, quat)
    ref = np.hstack([wrench, tau]).ravel()  # per sample: the six base-wrench rows first
    assert Y.shape == (10 * (6 + model.n), len(pi))
    assert np.all(np.abs(Y @ pi - ref) <= 1e-10 * (1 + np.abs(ref)))
    # without base arguments the base is held fixed, as in inverse_dynamics on a floating model
    tau_fixed = rc.inverse_dynamics(truth, q, qd, qdd)
    assert np.all(np.abs(rc.regressor(model, q, qd, qdd) @ pi - tau_fixed.ravel()) <= 1e-10 * (1 + np.abs(tau_fixed.ravel())))


PIN_ROBOTS = {"ur5": "ur_description/urdf/ur5_robot.urdf", "panda": "panda_description/urdf/panda.urdf",
              "baxter": "baxter_description/urdf/baxter.urdf"}


@pytest.mark.parametrize("name", sorted(PIN_ROBOTS))
def test_regressor_against_pinocchio(name):
    path = erd(PIN_ROBOTS[name])
    model = _load(path, friction=False)
    oracle = Oracle(path, model)
    pm, pd = oracle.pm, oracle.pd
    child = {j.name: j.child for j in URDF.from_xml_file(path).joints}
    rng = np.random.default_rng(3)
    pin_params = np.concatenate([pm.inertias[i].toDynamicParameters() for i in range(1, pm.njoints)])
    pi = rc.parameter_vector(model)
    for q, qd, qdd in zip(*_states(model, rng, N=5)):
        Yp = pin.computeJointTorqueRegressor(pm, pd, oracle.q(q), oracle.v(qd), oracle.v(qdd))[oracle.iv]
        Y = rc.regressor(model, q, qd, qdd)
        scale = max(1.0, np.abs(Yp).max())
        for jname in model.joint_names:
            jid = pm.getJointId(jname)
            li = model.link_names.index(child[jname])
            assert np.abs(Y[:, 10 * li:10 * li + 10] - Yp[:, 10 * (jid - 1):10 * jid]).max() <= 1e-9 * scale
        tau = Yp @ pin_params
        assert np.abs(Y @ pi - tau).max() <= 1e-9 * max(1.0, np.abs(tau).max())


def _two_link_mdh(L1=0.7):
    """Planar 2R arm in a vertical plane, modified DH (Khalil): frame 2 at joint 2, d2 = L1."""
    link = dict(joint="revolute", alpha=0.0, theta=0.0, mass=1.0, com=[0.3, 0.0, 0.0],
                inertia={"ixx": 0.01, "iyy": 0.05, "izz": 0.05})
    return rc.load_dh({"convention": "modified", "gravity": [0.0, -9.81, 0.0],
                       "links": [dict(link, name="link1", d=0.0), dict(link, name="link2", d=L1)]})


def test_base_parameters_planar_two_link_by_hand():
    """By hand (Khalil & Dombre's planar 2R): tau depends on pi only through ZZ1R = ZZ1 + L1^2 m2 + Ia1,
    MX1R = MX1 + L1 m2, MY1, ZZ2, MX2, MY2, Ia2 and the four friction parameters: b = 11. m1, MZ1 and
    the other inertia entries of both links do not enter the planar dynamics."""
    L1 = 0.7
    model = _two_link_mdh(L1)
    bp = rc.base_parameters(model)
    assert bp.b == 11
    names = rc.parameter_names(model)
    col = {n: i for i, n in enumerate(names)}
    rows = {names[i]: r for r, i in enumerate(bp.independent)}
    assert set(rows) == {"mcx:link1", "mcy:link1", "Izz:link1", "mcx:link2", "mcy:link2", "Izz:link2",
                         "Ia:joint2", "Fv:joint1", "Fs:joint1", "Fv:joint2", "Fs:joint2"}
    K = bp.K
    assert K[rows["mcx:link1"], col["m:link2"]] == pytest.approx(L1, abs=1e-12)
    assert K[rows["Izz:link1"], col["m:link2"]] == pytest.approx(L1 ** 2, abs=1e-12)
    assert K[rows["Izz:link1"], col["Ia:joint1"]] == pytest.approx(1.0, abs=1e-12)
    nonzero = {names[j] for j in np.flatnonzero(K[rows["Izz:link1"]])}
    assert nonzero == {"Izz:link1", "m:link2", "Ia:joint1"}
    assert bp.names[list(bp.independent).index(col["Izz:link1"])] == "Izz:link1 + 0.49*m:link2 + Ia:joint1"
    # pi_b = K pi: Y pi = Y_b pi_b for any pi
    rng = np.random.default_rng(4)
    pi = rng.standard_normal(len(names))
    q, qd, qdd = _states(model, rng)
    Y = rc.regressor(model, q, qd, qdd)
    assert np.allclose(Y @ pi, bp.Y_b(Y) @ (K @ pi), rtol=1e-12, atol=1e-10)
    assert bp.gap > 1e8


def test_base_parameters_prismatic_by_hand():
    """A vertical prismatic joint carrying a revolute joint about the same vertical axis. By hand:
    tau1 = (m1 + m2)(qdd1 + g) + Ia1 qdd1 (+ friction), tau2 = (ZZ2 + Ia2) qdd2 (+ friction): the base
    parameters are m1 + m2, Ia1, ZZ2 + Ia2 and four friction parameters, b = 7."""
    doc = {"convention": "modified", "links": [
        dict(name="slider", joint="prismatic", mass=2.0, lower_limit=-0.5, upper_limit=0.5),
        dict(name="arm", joint="revolute", mass=1.0, com=[0.2, 0.1, 0.0],
             inertia={"ixx": 0.01, "iyy": 0.015, "izz": 0.02})]}
    model = rc.load_dh(doc)
    bp = rc.base_parameters(model)
    assert bp.b == 7
    assert sorted(bp.names) == sorted(["m:slider + m:arm", "Izz:arm + Ia:joint2", "Ia:joint1", "Fv:joint1",
                                       "Fs:joint1", "Fv:joint2", "Fs:joint2"])


def test_base_parameter_count_puma560():
    """PUMA 560, 6R, inertial parameters only (no rotor inertia, no friction): 36 base parameters, the
    count published for it by Gautier (1991, "Numerical calculation of the base inertial parameters of
    robots", J. Robotic Systems 8(4), application to the PUMA 560) and by Mayeda, Yoshida & Osuka (1990,
    IEEE Trans. Robotics and Automation 6(3)): 7 n - 4 for 6 revolute joints with the first axis along
    gravity, less 2 for the parallel axes 2 and 3. With rotor inertia and viscous + Coulomb friction it
    is 52: the 12 friction parameters, Ia3..Ia6, and Ia1, Ia2 regrouped (Ia1 with the inertia about axis
    1, Ia2 with link 2's inertia about axis 2, its axis meeting axis 1). The DH-YAML and the URDF of the
    same robot, whose link frames differ, agree."""
    for path in (ROOT / "config" / "puma560.yaml", ROOT / "urdf" / "puma560.urdf"):
        model = _load(path)
        assert rc.base_parameters(model, rotor=False, friction=False).b == 36
        bp = rc.base_parameters(model)
        assert bp.b == 52
        kept = [rc.parameter_names(model)[i] for i in bp.independent]
        assert [k for k in kept if k.startswith("Ia")] == [f"Ia:joint{j}" for j in (3, 4, 5, 6)]
    # reproducible: another seed keeps the same columns and the same regrouping
    other = rc.base_parameters(model, seed=5)
    assert np.array_equal(other.independent, bp.independent)
    assert np.allclose(other.K, bp.K, rtol=0, atol=1e-8)


def test_regressor_bad_input():
    model = _load(ROOT / "config" / "puma560.yaml")
    z = np.zeros(6)
    with pytest.raises(rc.InputError, match="joint3"):
        rc.regressor(model, z, z, np.array([0, 0, np.nan, 0, 0, 0]))
    with pytest.raises(rc.InputError, match="shape"):
        rc.regressor(model, np.zeros(5), z, z)
    with pytest.raises(rc.InputError, match="floating-base"):
        rc.regressor(model, z, z, z, base_twist=np.zeros(6), base_accel=np.zeros(6))
