"""Trees with lumped elasticity (Khalil 2010, §6): the three-pass inverse dynamics and the ABA with springs.

Oracles: the partitioned solve of eqs. (68)-(71) from our mass matrix and bias torques; Pinocchio's
mass matrix and nonlinear effects; a hand-derived two-link arm; physical limits and conservation laws.
"""
import copy
import warnings

import numpy as np
import pinocchio as pin
import pytest
import yaml

import rne_control as rc
from oracle import ROOT, Oracle, erd, rel_err
from rne_control.dynamics.integrate import State, rk4_step
from test_closed_form import C_hand, DH, G, M_hand, Fs, Fv, Ia, g_hand, l1, lc1, lc2, m1, m2

ARM7_ELASTIC = ROOT / "config/arm7_elastic.yaml"


def arm7_elastic_doc(scale=1.0, damping=True):
    doc = yaml.safe_load(open(ARM7_ELASTIC))
    for e in doc["links"]:
        if "elastic" in e:
            e["elastic"]["stiffness"] *= scale
            if not damping:
                e["elastic"]["damping"] = 0.0
    return doc


def rigid_twin(doc):
    """The same model file with every elastic/actuated key removed: the rigid tree."""
    doc = copy.deepcopy(doc)
    for e in doc["links"]:
        e.pop("elastic", None)
        e.pop("actuated", None)
    return doc


def with_friction(doc):
    doc = copy.deepcopy(doc)
    for i, e in enumerate(doc["links"]):
        if e["joint"] != "fixed":
            e["viscous"], e["coulomb"] = 0.1 + 0.05 * i, 0.3 + 0.02 * i
    return doc


def spring(model, q, qd):
    """Gamma of the passive joints (unactuated_joint_names order): -K dq - D qd at elastic joints, 0 at free ones."""
    G_u = np.zeros(len(model.unactuated_index))
    pos = np.searchsorted(model.unactuated_index, model.elastic_index)
    e = model.elastic_index
    G_u[pos] = -model.elastic_stiffness * (q[e] - model.elastic_rest_position) - model.elastic_damping * qd[e]
    return G_u


def partitioned(model, q, qd, qdd_r, A, h, friction_torque=0.0):
    """Eqs. (68)-(71): qdd_f from the second row, Gamma_r from the first. h = H(q, qd) (+ friction)."""
    r, u = model.rigid_index, model.unactuated_index
    h = h + friction_torque
    qdd_u = np.linalg.solve(A[np.ix_(u, u)], spring(model, q, qd) - h[u] - A[np.ix_(u, r)] @ qdd_r)
    return A[np.ix_(r, r)] @ qdd_r + A[np.ix_(r, u)] @ qdd_u + h[r], qdd_u


def friction(model, qd):
    fr = np.zeros(model.n)
    tree = np.asarray(model.tree)
    k = tree[:, 17].astype(int)
    fr[k] = tree[:, 13] * qd[k] + tree[:, 14] * np.sign(qd[k])
    return fr


def samples(model, count=4, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (rng.uniform(-1.5, 1.5, model.n), rng.normal(size=model.n), rng.normal(size=len(model.rigid_index)))


BAXTER_ELASTIC = {"left_s1": {"stiffness": 800.0, "rest_position": -0.2, "damping": 2.0},
                  "left_e1": {"stiffness": 300.0}, "right_w1": {"stiffness": 50.0, "damping": 0.3}}


def load(name):
    if name == "arm7_elastic":
        return rc.load_dh(ARM7_ELASTIC)
    if name == "arm7_elastic_friction":
        return rc.load_dh(with_friction(arm7_elastic_doc()))
    if name == "baxter_tree":
        return rc.load_urdf(erd("baxter_description/urdf/baxter.urdf"), elastic=BAXTER_ELASTIC)
    if name == "stanford_prismatic":  # joint 3 prismatic and elastic (N/m), joint 5 free passive
        doc = yaml.safe_load(open(ROOT / "config/stanford.yaml"))
        doc["links"][2]["elastic"] = {"stiffness": 2000.0, "rest_position": 0.4, "damping": 3.0}
        doc["links"][4]["actuated"] = False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # Corke's inertias break the triangle inequality
            return rc.load_dh(doc)
    if name == "acrobot":  # joint 1 free passive, joint 2 actuated, with rotor inertia and friction
        doc = copy.deepcopy(DH)
        doc["links"][0]["actuated"] = False
        return rc.load_dh(doc)
    raise KeyError(name)


@pytest.fixture(scope="module", params=["arm7_elastic", "arm7_elastic_friction", "baxter_tree", "stanford_prismatic",
                                        "acrobot"])
def model(request):
    return load(request.param)


def test_model_attributes():
    m = load("arm7_elastic")
    assert m.n == 14
    assert m.rigid_joint_names == tuple(f"arm7_joint{i}" for i in range(1, 8))
    assert m.elastic_joint_names == tuple(f"arm7_joint{i}_deflection" for i in range(1, 8))
    assert m.unactuated_joint_names == m.elastic_joint_names
    np.testing.assert_array_equal(m.elastic_stiffness, [6.7e4] * 4 + [9.2e3] * 3)
    a = load("acrobot")
    assert a.rigid_joint_names == ("joint2",) and a.unactuated_joint_names == ("joint1",)
    assert a.elastic_joint_names == ()
    r = rc.load_dh(ROOT / "config/arm7.yaml")
    assert r.rigid_joint_names == r.joint_names and r.elastic_joint_names == ()


def test_partitioned_solve_oracle(model):
    """tau_r and qdd_f equal the partitioned solve of eq. (68) (A from the CRBA, H from the RNE) to 1e-10."""
    for q, qd, qdd_r in samples(model):
        A = rc.mass_matrix(model, q)
        for fr in (True, False):
            h = rc.inverse_dynamics(model, q, qd, np.zeros(model.n), friction=False)
            want = partitioned(model, q, qd, qdd_r, A, h, friction(model, qd) if fr else 0.0)
            got = rc.elastic_inverse_dynamics(model, q, qd, qdd_r, friction=fr)
            assert rel_err(got[0], want[0]) < 1e-10 and rel_err(got[1], want[1]) < 1e-10


def test_partitioned_with_external_wrench_and_gravity(model):
    link = model.link_names[-1]
    g = np.array([1.0, -2.0, -7.0])
    for q, qd, qdd_r in samples(model, count=2, seed=3):
        w = np.array([3.0, -1.0, 2.0, 0.5, 0.2, -0.4])
        A = rc.mass_matrix(model, q)
        h = rc.inverse_dynamics(model, q, qd, np.zeros(model.n), f_ext={link: w}, gravity=g)
        want = partitioned(model, q, qd, qdd_r, A, h)
        got = rc.elastic_inverse_dynamics(model, q, qd, qdd_r, f_ext={link: w}, gravity=g)
        assert rel_err(got[0], want[0]) < 1e-10 and rel_err(got[1], want[1]) < 1e-10


def test_stacked_equals_single(model):
    rng = np.random.default_rng(5)
    N, nr = 6, len(model.rigid_index)
    Q, QD, QDD = rng.uniform(-1, 1, (N, model.n)), rng.normal(size=(N, model.n)), rng.normal(size=(N, nr))
    tau, qdd_u = rc.elastic_inverse_dynamics(model, Q, QD, QDD)
    assert tau.shape == (N, nr) and qdd_u.shape == (N, len(model.unactuated_index))
    qdd = rc.elastic_forward_dynamics(model, Q, QD, tau)
    g = rc.elastic_gravity_torques(model, Q)
    c = rc.elastic_coriolis_torques(model, Q, QD)
    for s in range(N):
        t1, u1 = rc.elastic_inverse_dynamics(model, Q[s], QD[s], QDD[s])
        np.testing.assert_allclose(tau[s], t1, rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(qdd_u[s], u1, rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(qdd[s], rc.elastic_forward_dynamics(model, Q[s], QD[s], t1), rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(g[s], rc.elastic_gravity_torques(model, Q[s]), rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(c[s], rc.elastic_coriolis_torques(model, Q[s], QD[s]), rtol=1e-12, atol=1e-11)
    # unstacked inputs broadcast against stacked ones
    tb, _ = rc.elastic_inverse_dynamics(model, Q[0], QD, QDD[0])
    np.testing.assert_allclose(tb[1], rc.elastic_inverse_dynamics(model, Q[0], QD[1], QDD[0])[0], rtol=1e-13, atol=1e-12)


def test_forward_after_inverse_round_trip(model):
    """elastic_forward_dynamics(elastic_inverse_dynamics) returns qdd_r at the rigid joints and qdd_f at the others."""
    for q, qd, qdd_r in samples(model, seed=7):
        for fr in (True, False):
            tau, qdd_u = rc.elastic_inverse_dynamics(model, q, qd, qdd_r, friction=fr)
            qdd = rc.elastic_forward_dynamics(model, q, qd, tau, friction=fr)
            np.testing.assert_allclose(qdd[model.rigid_index], qdd_r, atol=1e-8 * (1 + abs(qdd_r).max()))
            np.testing.assert_allclose(qdd[model.unactuated_index], qdd_u, atol=1e-8 * (1 + abs(qdd_u).max()))


def test_forward_dynamics_is_aba_with_spring_torques(model):
    """§6.2: elastic FD = rigid FD with Gamma = -K dq - D qd (0 at free joints) put in at the passive joints."""
    for q, qd, _ in samples(model, seed=9):
        tau_r = np.random.default_rng(1).normal(size=len(model.rigid_index)) * 5
        tau = np.zeros(model.n)
        tau[model.rigid_index], tau[model.unactuated_index] = tau_r, spring(model, q, qd)
        np.testing.assert_allclose(rc.elastic_forward_dynamics(model, q, qd, tau_r), rc.forward_dynamics(model, q, qd, tau),
                                   rtol=1e-12, atol=1e-10)


def test_gravity_and_coriolis_definitions(model):
    for q, qd, _ in samples(model, count=2, seed=11):
        zr = np.zeros(len(model.rigid_index))
        g = rc.elastic_gravity_torques(model, q)
        np.testing.assert_array_equal(g, rc.elastic_inverse_dynamics(model, q, np.zeros(model.n), zr, friction=False)[0])
        c = rc.elastic_coriolis_torques(model, q, qd)
        np.testing.assert_allclose(c, rc.elastic_inverse_dynamics(model, q, qd, zr, friction=False)[0] - g,
                                   rtol=1e-13, atol=1e-12)


def test_tree_functions_keep_their_rigid_meaning():
    doc = with_friction(arm7_elastic_doc())
    m, r = rc.load_dh(doc), rc.load_dh(rigid_twin(doc))
    for q, qd, _ in samples(m, count=2):
        qdd = np.random.default_rng(2).normal(size=m.n)
        np.testing.assert_array_equal(rc.inverse_dynamics(m, q, qd, qdd), rc.inverse_dynamics(r, q, qd, qdd))
        np.testing.assert_array_equal(rc.mass_matrix(m, q), rc.mass_matrix(r, q))
        np.testing.assert_array_equal(rc.forward_dynamics(m, q, qd, qdd), rc.forward_dynamics(r, q, qd, qdd))


def test_rigid_model_equals_rigid_functions():
    """With no passive joint, elastic_inverse_dynamics is the RNE and elastic_forward_dynamics the ABA."""
    m = rc.load_dh(with_friction(rigid_twin(arm7_elastic_doc())))
    for q, qd, qdd in samples(m, count=2):
        tau, qdd_u = rc.elastic_inverse_dynamics(m, q, qd, qdd)
        assert qdd_u.shape == (0,)
        np.testing.assert_allclose(tau, rc.inverse_dynamics(m, q, qd, qdd), rtol=1e-12, atol=1e-10)
        np.testing.assert_allclose(rc.elastic_forward_dynamics(m, q, qd, tau), qdd, rtol=1e-10, atol=1e-8)


# ---------------------------------------------------------------------------------------- Pinocchio
PIN_CASES = [
    ("ur_description/urdf/ur5_robot.urdf", None, {"shoulder_lift_joint": {"stiffness": 2000.0, "rest_position": 0.1},
                                                    "wrist_2_joint": {"stiffness": 40.0, "damping": 0.5}}),
    ("panda_description/urdf/panda.urdf", [f"panda_joint{i}" for i in range(1, 8)],
     {"panda_joint2": {"stiffness": 5000.0}, "panda_joint4": {"stiffness": 3000.0, "damping": 1.0},
      "panda_joint6": {"stiffness": 300.0, "rest_position": -0.3}}),
    ("baxter_description/urdf/baxter.urdf", None, BAXTER_ELASTIC),
]


@pytest.mark.parametrize("path,joints,elastic", PIN_CASES, ids=["ur5", "panda", "baxter"])
def test_pinocchio_oracle(path, joints, elastic):
    """Rigid torques and elastic accelerations from Pinocchio's crba and nonLinearEffects, to 1e-9."""
    model = rc.load_urdf(erd(path), joints=joints, elastic=elastic, friction=False)
    o = Oracle(erd(path), model)
    r, u = model.rigid_index, model.unactuated_index
    for q, qd, qdd_r in samples(model, count=4, seed=13):
        A = o.mass_matrix(q)
        pq = o.q(q)
        H = pin.nonLinearEffects(o.pm, o.pd, pq, o.v(qd))[o.iv]
        qdd_u = np.linalg.solve(A[np.ix_(u, u)], spring(model, q, qd) - H[u] - A[np.ix_(u, r)] @ qdd_r)
        tau_r = A[np.ix_(r, r)] @ qdd_r + A[np.ix_(r, u)] @ qdd_u + H[r]
        got = rc.elastic_inverse_dynamics(model, q, qd, qdd_r)
        assert rel_err(got[0], tau_r) < 1e-9 and rel_err(got[1], qdd_u) < 1e-9
        qdd = np.zeros(model.n)          # and forward dynamics under Pinocchio's tau_r gives them back
        qdd[r], qdd[u] = qdd_r, qdd_u
        assert rel_err(rc.elastic_forward_dynamics(model, q, qd, tau_r), qdd) < 1e-9


# ---------------------------------------------------------------------------------------- by hand
K2, Q02, D2 = 40.0, 0.3, 0.5


def two_link_elastic(friction=True, damping=D2):
    doc = copy.deepcopy(DH)
    doc["links"][1]["elastic"] = {"stiffness": K2, "rest_position": Q02, "damping": damping}
    if not friction:
        for e in doc["links"]:
            e["viscous"] = e["coulomb"] = 0.0
    return rc.load_dh(doc)


def test_two_link_arm_by_hand():
    """Joint 2 elastic: qdd2 = (-K (q2 - q0) - D qd2 - F2 - C2 - g2 - M21 qdd1) / M22, tau1 = M11 qdd1 + M12 qdd2
    + C1 + g1 + F1, with M, C, g derived by hand (test_closed_form.py) and the rotor inertia on M's diagonal."""
    model = two_link_elastic()
    assert model.rigid_joint_names == ("joint1",) and model.elastic_joint_names == ("joint2",)
    rng = np.random.default_rng(17)
    for _ in range(10):
        q, qd, qdd1 = rng.uniform(-3, 3, 2), rng.uniform(-3, 3, 2), rng.uniform(-3, 3)
        M = M_hand(q) + np.diag(Ia)
        F = Fv * qd + Fs * np.sign(qd)
        h = C_hand(q, qd) + g_hand(q) + F
        qdd2 = (-K2 * (q[1] - Q02) - D2 * qd[1] - h[1] - M[1, 0] * qdd1) / M[1, 1]
        tau1 = M[0, 0] * qdd1 + M[0, 1] * qdd2 + h[0]
        tau, qdd_e = rc.elastic_inverse_dynamics(model, q, qd, [qdd1])
        np.testing.assert_allclose(tau, [tau1], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(qdd_e, [qdd2], rtol=1e-12, atol=1e-12)
        # gravity torques: gravity and the spring, joint 1 held still
        qdd2_g = (-K2 * (q[1] - Q02) - g_hand(q)[1]) / M[1, 1]
        np.testing.assert_allclose(rc.elastic_gravity_torques(model, q), [M[0, 1] * qdd2_g + g_hand(q)[0]], rtol=1e-12)
        # the damper stays with friction=False
        tau_nf, qdd_nf = rc.elastic_inverse_dynamics(model, q, qd, [qdd1], friction=False)
        h_nf = C_hand(q, qd) + g_hand(q)
        qdd2_nf = (-K2 * (q[1] - Q02) - D2 * qd[1] - h_nf[1] - M[1, 0] * qdd1) / M[1, 1]
        np.testing.assert_allclose(qdd_nf, [qdd2_nf], rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------- limits
def test_infinite_stiffness_limit():
    """As K grows with the deflection held at its quasi-static value (-K dq - D qd = the torque the joint
    carries in the rigid model), tau_r converges to the rigid model's torques and qdd_f to 0, like 1/K.
    (On arm7_elastic the motor torque Ia qdd + K dq matches the rigid model's exactly at any K, since the
    gear body is massless, so this uses elastic joints with mass on both sides.)"""
    path = ROOT / "urdf/arm7.urdf"
    rigid = rc.load_urdf(path, friction=False)
    rng = np.random.default_rng(19)
    elastic = ("arm7_joint2", "arm7_joint4", "arm7_joint6")
    q, qd, qdd = rng.uniform(-1, 1, 7), rng.normal(size=7), rng.normal(size=7)
    for moving in (False, True):   # static (qd = qdd = 0) and moving
        qd_c, qdd_c = (qd, qdd) if moving else (np.zeros(7), np.zeros(7))
        tau_rigid = rc.inverse_dynamics(rigid, q, qd_c, qdd_c)
        errs = []
        for K in (1e2, 1e3, 1e4, 1e5, 1e6):
            m = rc.load_urdf(path, friction=False, elastic={
                j: {"stiffness": K, "damping": 1.0, "rest_position": q[rigid.index[j]]} for j in elastic})
            r, e = m.rigid_index, m.elastic_index
            qk = q.copy()
            qk[e] = q[e] - (tau_rigid[e] + 1.0 * qd_c[e]) / K      # -K dq - D qd = the rigid joint's torque
            tau, qdd_f = rc.elastic_inverse_dynamics(m, qk, qd_c, qdd_c[r])
            errs.append((np.abs(tau - tau_rigid[r]).max(), np.abs(qdd_f - qdd_c[e]).max()))
        errs = np.array(errs)
        ratios = errs[:-1] / errs[1:]
        assert np.all((ratios > 5) & (ratios < 20)), errs      # O(1/K)
        assert errs[-1, 0] < 1e-4 * np.abs(tau_rigid).max() and errs[-1, 1] < 1e-2, errs


def kinetic(model, q, qd):
    return 0.5 * qd @ rc.mass_matrix(model, q) @ qd


def spring_energy(model, q):
    e = model.elastic_index
    return 0.5 * np.sum(model.elastic_stiffness * (q[e] - model.elastic_rest_position) ** 2)


def simulate_energy(model, V, q0, seconds=2.0, h=1e-3):
    accel = lambda q, qd, tau: rc.elastic_forward_dynamics(model, q, qd, tau, friction=False)  # noqa: E731
    zero = np.zeros(len(model.rigid_index))
    s = State(np.array(q0, float), np.zeros(model.n))
    E = lambda s: kinetic(model, s.q, s.qd) + V(s.q) + spring_energy(model, s.q)  # noqa: E731
    E0, drift, T_max = E(s), 0.0, 0.0
    for k in range(int(round(seconds / h))):
        s = rk4_step(model, s, k * h, h, lambda t, x: zero, acceleration=accel)
        drift = max(drift, abs(E(s) - E0))
        T_max = max(T_max, kinetic(model, s.q, s.qd))
    return drift, T_max, E0


def test_energy_conservation_two_link():
    """No damping, no input: kinetic + gravity + spring energy is conserved (RK4, 1 ms, 2 s), relative to the
    largest kinetic energy reached (the gravity potential's zero is arbitrary)."""
    model = two_link_elastic(friction=False, damping=0.0)
    V = lambda q: (m1 * lc1 + m2 * l1) * G * np.sin(q[0]) + m2 * lc2 * G * np.sin(q[0] + q[1])  # noqa: E731
    drift, T_max, _ = simulate_energy(model, V, [0.4, -0.5])
    assert T_max > 10.0
    assert drift / T_max <= 1e-6, (drift, T_max)


def test_energy_conservation_arm7():
    """The same on the 7-DOF arm (URDF, Pinocchio's potential energy) with three elastic joints, starting
    0.1 rad from their rest positions, the rigid joints falling freely. The stiffness keeps the fastest
    mode well under 100 rad/s: RK4's energy error per period grows as (w h)^6."""
    path = ROOT / "urdf/arm7.urdf"
    model = rc.load_urdf(path, friction=False, elastic={
        "arm7_joint2": {"stiffness": 600.0, "rest_position": -0.2},
        "arm7_joint4": {"stiffness": 300.0, "rest_position": -1.9},
        "arm7_joint6": {"stiffness": 40.0, "rest_position": 1.3}})
    o = Oracle(path, model)
    V = lambda q: pin.computePotentialEnergy(o.pm, o.pd, o.q(q))  # noqa: E731
    drift, T_max, _ = simulate_energy(model, V, [0.3, -0.3, 0.2, -1.8, 0.1, 1.2, 0.5])
    assert T_max > 5.0
    assert drift / T_max <= 1e-6, (drift, T_max)


# ---------------------------------------------------------------------------------------- bad input
def _doc_with(key_value, link=1):
    doc = copy.deepcopy(DH)
    doc["links"][link].update(key_value)
    return doc


@pytest.mark.parametrize("value,words", [
    ({"elastic": {"stiffness": -1.0}}, ["links[1]", "stiffness", ">= 0"]),
    ({"elastic": {"stiffness": float("nan")}}, ["links[1]", "stiffness", "finite"]),
    ({"elastic": {"stiffness": float("inf")}}, ["links[1]", "stiffness", "finite"]),
    ({"elastic": {"stiffness": 10.0, "damping": -0.1}}, ["links[1]", "damping", ">= 0"]),
    ({"elastic": {"stiffness": 10.0, "damping": float("inf")}}, ["damping", "finite"]),
    ({"elastic": {"stiffness": 10.0, "rest_position": float("nan")}}, ["rest_position", "finite"]),
    ({"elastic": {"stiffness": "stiff"}}, ["stiffness", "number"]),
    ({"elastic": {"damping": 1.0}}, ["links[1]", "stiffness"]),
    ({"elastic": {"stiffnes": 1.0}}, ["links[1]", "stiffnes"]),
    ({"elastic": 100.0}, ["links[1]", "mapping"]),
    ({"elastic": {"stiffness": 10.0}, "actuated": True}, ["joint2", "actuated"]),
    ({"actuated": "no"}, ["links[1]", "actuated"]),
    ({"joint": "fixed", "elastic": {"stiffness": 1.0}}, ["links[1]", "fixed joint"]),
    ({"joint": "fixed", "actuated": False}, ["links[1]", "fixed joint"]),
])
def test_bad_yaml(value, words):
    with pytest.raises(rc.ModelError) as exc:
        rc.load_dh(_doc_with(value))
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))


def test_bad_urdf_elastic_map():
    path = ROOT / "urdf/arm7.urdf"
    with pytest.raises(rc.ModelError, match="'arm7_joint9'.*does not exist"):
        rc.load_urdf(path, elastic={"arm7_joint9": {"stiffness": 1.0}})
    with pytest.raises(rc.ModelError, match="arm7_joint2.*stiffness.*>= 0"):
        rc.load_urdf(path, elastic={"arm7_joint2": {"stiffness": -5.0}})
    with pytest.raises(rc.ModelError, match="arm7_joint2.*damping.*finite"):
        rc.load_urdf(path, elastic={"arm7_joint2": {"stiffness": 5.0, "damping": float("nan")}})
    with pytest.raises(rc.ModelError, match="'arm7_joint3'.*locked"):
        rc.load_urdf(path, joints=["arm7_joint1", "arm7_joint2"], elastic={"arm7_joint3": {"stiffness": 5.0}})
    with pytest.raises(rc.ModelError, match="flange.*does not exist or is fixed"):
        rc.load_urdf(path, elastic={"arm7_flange_joint": {"stiffness": 5.0}})
    with pytest.raises(rc.ModelError, match="elastic"):
        rc.load_urdf(path, elastic=[("arm7_joint2", 5.0)])


def test_bad_call_arguments_name_the_field():
    m = load("arm7_elastic")
    q = np.zeros(14)
    with pytest.raises(rc.InputError, match="qdd_rigid.*7"):
        rc.elastic_inverse_dynamics(m, q, q, np.zeros(14))
    with pytest.raises(rc.InputError, match="tau_rigid.*7"):
        rc.elastic_forward_dynamics(m, q, q, np.zeros(6))
    bad = np.zeros(7)
    bad[3] = np.nan
    with pytest.raises(rc.InputError, match="'qdd_rigid' of joint 'arm7_joint4'"):
        rc.elastic_inverse_dynamics(m, q, q, bad)
    with pytest.raises(rc.InputError, match="'tau_rigid' of joint 'arm7_joint4'"):
        rc.elastic_forward_dynamics(m, q, q, bad)
    qn = q.copy()
    qn[5] = np.inf
    with pytest.raises(rc.InputError, match="'q' of joint 'arm7_joint3_deflection'"):
        rc.elastic_inverse_dynamics(m, qn, q, np.zeros(7))
    with pytest.raises(rc.InputError, match="'q' has 7 entries, expected 14"):
        rc.elastic_inverse_dynamics(m, np.zeros(7), q, np.zeros(7))


@pytest.mark.parametrize("name", ["arm7_elastic", "arm7_sea"])
def test_arm7_elastic_without_deflection_is_arm7_with_rotors(name):
    """The shipped arm7_elastic (and arm7_sea) at zero deflection, the links moving with the gear outputs,
    needs the torques of config/arm7.yaml plus Ia qdd (and the deflection joints carry arm7's torques)."""
    m, arm7 = rc.load_dh(ROOT / f"config/{name}.yaml"), rc.load_dh(ROOT / "config/arm7.yaml")
    assert m.joint_names == load("arm7_elastic").joint_names
    r, e = m.rigid_index, m.elastic_index
    Ia = np.array([0.3] * 4 + [0.1] * 3)
    for q7, qd7, qdd7 in samples(arm7, count=3, seed=23):
        q, qd, qdd = np.zeros(14), np.zeros(14), np.zeros(14)
        q[r], qd[r], qdd[r] = q7, qd7, qdd7
        tau = rc.inverse_dynamics(m, q, qd, qdd)
        np.testing.assert_allclose(tau[r], rc.inverse_dynamics(arm7, q7, qd7, qdd7) + Ia * qdd7, rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(tau[e], rc.inverse_dynamics(arm7, q7, qd7, qdd7), rtol=1e-10, atol=1e-9)


def test_passive_joint_without_inertia_is_singular():
    doc = _doc_with({"mass": 0.0, "inertia": {}, "rotor_inertia": 0.0, "elastic": {"stiffness": 10.0}})
    model = rc.load_dh(doc)
    with pytest.raises(rc.SingularMassMatrixError, match="joint2"):
        rc.elastic_inverse_dynamics(model, np.zeros(2), np.zeros(2), [0.0])
