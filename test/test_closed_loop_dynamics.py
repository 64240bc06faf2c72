"""Closed-loop robots (Khalil 2010 §2.2, §4): loop closure, G, and the closed-loop dynamics against
closed forms, physical identities and a Pinocchio KKT oracle; bad input.

(test_closed_loop.py is about the controller's control loop, not about kinematic loops.)
"""
import re

import numpy as np
import pinocchio as pin
import pytest
import yaml

import rne_control as rc
from rne_control.dynamics.integrate import rk4

from closed_loop_cases import (ROOT, fourbar_closed_form, fourbar_energy, fourbar_tree_q, kkt_forward, pin_fourbar,
                               pin_palletizer, slider_crank_closed_form, slider_crank_doc, FB_IA)

FOURBAR = ROOT / "config" / "fourbar.yaml"
PALLET = ROOT / "config" / "palletizer.yaml"
PALLET_URDF = ROOT / "urdf" / "palletizer.urdf"
# palletiser: YAML active (joint1, joint2, joint3) = T @ URDF active (joint1, joint2, elbow)
T_YU = np.array([[1.0, 0, 0], [0, 1, 0], [0, 1, 1]])


@pytest.fixture(scope="module")
def fourbar():
    return rc.load_dh(FOURBAR)


@pytest.fixture(scope="module")
def pallet():
    return rc.load_dh(PALLET)


def pallet_no_rotor():
    doc = yaml.safe_load(PALLET.read_text())
    for link in doc["links"]:
        link["rotor_inertia"] = 0.0
    return rc.load_dh(doc)


def ref(model, S):
    """The default initial guess for each of S unrelated samples (a single guess would chain them)."""
    return np.tile(model.loops.q_ref, (S, 1))


def pallet_states(rng, k):
    """Random YAML-active states inside the limits (elbow = joint3 - joint2 within +-1.3 rad)."""
    q = np.column_stack([rng.uniform(-3, 3, k), rng.uniform(-0.5, 0.5, k), rng.uniform(-0.8, 0.8, k)])
    return q, rng.normal(size=(k, 3)), rng.normal(size=(k, 3))


# ----------------------------------------------------------------------------- model description
def test_model_attributes(fourbar, pallet):
    assert fourbar.joint_names == ("joint1", "joint2", "joint3")
    assert fourbar.active_joint_names == ("joint1",)
    assert fourbar.passive_joint_names == ("joint2", "joint3")
    assert fourbar.cut_joint_names == ("pin",)
    assert fourbar.is_closed_loop
    assert pallet.active_joint_names == ("joint1", "joint2", "joint3")
    assert pallet.passive_joint_names == ("elbow", "rod")
    urdf = rc.load_urdf(PALLET_URDF)
    assert urdf.active_joint_names == ("joint1", "joint2", "elbow")
    assert urdf.passive_joint_names == ("joint3", "rod") and urdf.cut_joint_names == ()
    assert urdf.is_closed_loop
    tree = rc.load_dh(ROOT / "config" / "puma560.yaml")
    assert not tree.is_closed_loop and tree.active_joint_names == tree.joint_names
    assert tree.passive_joint_names == () and tree.cut_joint_names == ()
    with pytest.raises((ValueError, AttributeError, TypeError)):
        fourbar.loops.cut[0, 0] = 1.0   # the loop description is immutable


def test_loop_workspace_layout_matches_the_kernels(fourbar, pallet):
    """The model layer sizes the loop kernel array; the kernels' offsets must fit it exactly."""
    from rne_control.dynamics.closed_loop.arrays import offsets
    for m in (fourbar, pallet, rc.load_urdf(PALLET_URDF)):
        LK = m.loops.LK
        assert offsets(LK)[-1] + m.nb + 2 == LK.shape[0]   # the dyn copy (nb + 2 rows) ends the array
    # the cut-type codes: one definition (model/layout.py), read by both layers
    from rne_control.dynamics.closed_loop import closure as kernel
    from rne_control.model import layout, loops
    for name in ("REVOLUTE_CUT", "PRISMATIC_CUT", "SPHERICAL_CUT", "PLANAR_CUT"):
        assert getattr(kernel, name) is getattr(loops, name) is getattr(layout, name), name


# ----------------------------------------------------------------------------- closure and G
def test_solve_loops_closes_the_four_bar(fourbar):
    t = np.linspace(0.0, 2 * np.pi, 73)
    Q = rc.solve_loops(fourbar, t[:, None])          # stacked: each sample warm-starts the next
    for ti, q in zip(t, Q):
        ref = fourbar_tree_q(ti)
        d = (q - ref + np.pi) % (2 * np.pi) - np.pi
        assert np.abs(d).max() < 1e-11
    # a warm start from a nearby solution, and a single sample
    q = rc.solve_loops(fourbar, [t[5] + 1e-3], Q[5])
    assert np.abs((q - fourbar_tree_q(t[5] + 1e-3) + np.pi) % (2 * np.pi) - np.pi).max() < 1e-11


def test_loop_jacobian_against_finite_differences(fourbar, pallet):
    rng = np.random.default_rng(3)
    for model, qa in ((fourbar, np.array([0.4])), (pallet, pallet_states(rng, 1)[0][0])):
        q = rc.solve_loops(model, qa)
        G = rc.loop_jacobian(model, q)
        N = len(qa)
        assert G.shape == (model.n, N)
        assert np.allclose(G[list(model.loops.active)], np.eye(N), atol=0)
        h = 1e-4   # the solves are exact to about 1e-12: truncation (h^2) and rounding (1e-12 / h) errors 1e-8
        for a in range(N):
            e = np.eye(N)[a] * h
            fd = (rc.solve_loops(model, qa + e, q) - rc.solve_loops(model, qa - e, q)) / (2 * h)
            assert np.abs(fd - G[:, a]).max() < 1e-6
    # the parallelogram's G is constant: elbow = joint3 - joint2, rod = joint2 - joint3
    Q = rc.solve_loops(pallet, pallet_states(rng, 20)[0], ref(pallet, 20))
    for G in rc.loop_jacobian(pallet, Q):
        assert np.abs(G - [[1, 0, 0], [0, 1, 0], [0, -1, 1], [0, 0, 1], [0, 1, -1]]).max() < 1e-12


def test_gdot_qd_against_finite_differences(fourbar):
    """The tree's qdd includes Gdot qd_a: along qa(t), the closed q(t) has q'' = G qa'' + Gdot qa'."""
    for t1, w, al in ((0.4, 1.3, 0.0), (2.0, -2.0, 0.7)):
        q0 = rc.solve_loops(fourbar, [t1])
        h = 1e-4
        traj = [rc.solve_loops(fourbar, [t1 + w * s + 0.5 * al * s * s], q0) for s in (-h, 0.0, h)]
        qdd_fd = (traj[0] - 2 * traj[1] + traj[2]) / h ** 2
        tau = rc.closed_loop_inverse_dynamics(fourbar, [t1], [w], [al])
        G = rc.loop_jacobian(fourbar, q0)
        tau_tree = rc.inverse_dynamics(fourbar, q0, G @ [w], qdd_fd)
        assert abs(tau[0] - (G.T @ tau_tree)[0]) < 1e-6 * max(1.0, abs(tau[0]))


# ----------------------------------------------------------------------------- closed forms
@pytest.mark.parametrize("t1", [0.0, 0.9, 2.2, 3.5, 5.1])
def test_four_bar_closed_form(fourbar, t1):
    """Virtual work (static) and Lagrange with the energy T = a(t1) qd^2 / 2 (dynamic)."""
    qd, qdd = 1.7, -2.3
    guess = fourbar_tree_q(t1) + 0.05
    tau, grav, vel, a = fourbar_closed_form(t1, qd, qdd)
    assert np.isclose(rc.closed_loop_inverse_dynamics(fourbar, [t1], [qd], [qdd], guess)[0], tau, rtol=1e-8, atol=1e-10)
    assert np.isclose(rc.closed_loop_gravity_torques(fourbar, [t1], guess)[0], grav, rtol=1e-8, atol=1e-10)
    assert np.isclose(rc.closed_loop_coriolis_torques(fourbar, [t1], [qd], guess)[0], vel, rtol=1e-8, atol=1e-10)
    assert np.isclose(rc.closed_loop_mass_matrix(fourbar, [t1], guess)[0, 0], a, rtol=1e-8)
    assert np.isclose(rc.closed_loop_forward_dynamics(fourbar, [t1], [qd], [tau], guess)[0], qdd, rtol=1e-7)


@pytest.mark.parametrize("t1", [0.3, 1.9, 4.0])
def test_slider_crank_with_a_prismatic_cut_joint(t1):
    model = rc.load_dh(slider_crank_doc())
    qd, qdd = 2.1, 0.8
    tau, tree_q = slider_crank_closed_form(t1, qd, qdd)
    q = rc.solve_loops(model, [t1], tree_q + 0.05)
    assert np.abs(q - tree_q).max() < 1e-10
    assert np.isclose(rc.closed_loop_inverse_dynamics(model, [t1], [qd], [qdd], q)[0], tau, rtol=1e-8, atol=1e-10)


def test_spherical_cut_on_a_planar_loop_is_the_revolute_one(fourbar):
    doc = yaml.safe_load(FOURBAR.read_text())
    doc["cut_joints"][0]["joint"] = "spherical"
    sph = rc.load_dh(doc)
    rng = np.random.default_rng(5)
    qa, qd, qdd = rng.uniform(0, 6, (8, 1)), rng.normal(size=(8, 1)), rng.normal(size=(8, 1))
    a = rc.closed_loop_inverse_dynamics(fourbar, qa, qd, qdd, ref(fourbar, 8))
    b = rc.closed_loop_inverse_dynamics(sph, qa, qd, qdd, ref(fourbar, 8))
    assert np.abs(a - b).max() < 1e-10



def test_planar_loops_keep_their_two_in_plane_conditions(fourbar, pallet, monkeypatch):
    """A revolute or spherical cut on a planar loop keeps D_x, D_y (model/loops.py): the three dropped
    conditions hold for every q, so closing, G and the torques are those of all five rows."""
    doc = _fourbar_doc()
    doc["cut_joints"][0]["joint"] = "spherical"
    for m in (fourbar, pallet, rc.load_dh(doc)):
        assert len(m.loops.cut_rows(0)) == 2 and m.loops.n_rows == 2
    tilted = _fourbar_doc()
    tilted["links"][2]["alpha"] = 0.2               # the rocker's axis tilted: a spatial loop
    assert len(rc.load_dh(tilted).loops.cut_rows(0)) == 5
    offset = _fourbar_doc()
    offset["cut_joints"][0]["r"] = 0.01             # R_k 1 cm off the plane: the loop can never close
    m = rc.load_dh(offset)
    assert len(m.loops.cut_rows(0)) == 5
    with pytest.raises(rc.LoopClosureError, match=r"'pin'.*residual"):
        rc.solve_loops(m, [0.7])
    monkeypatch.setattr("rne_control.model.loops.PLANAR_TOL", -1.0)   # no loop counts as planar
    rng = np.random.default_rng(11)
    for planar, path in ((fourbar, FOURBAR), (pallet, PALLET)):
        full = rc.load_dh(path)
        assert full.loops.n_rows == 5
        S, N = 6, planar.loops.n_active
        qa = 0.5 + rng.uniform(-0.5, 0.5, (S, N))
        qd, qdd = rng.normal(size=(S, N)), rng.normal(size=(S, N))
        Q = rc.solve_loops(planar, qa)
        assert np.abs(Q - rc.solve_loops(full, qa)).max() < 1e-12
        assert np.abs(rc.loop_jacobian(planar, Q) - rc.loop_jacobian(full, Q)).max() < 1e-12
        a, b = (rc.closed_loop_inverse_dynamics(m, qa, qd, qdd) for m in (planar, full))
        assert np.abs(a - b).max() < 1e-10 * max(1.0, np.abs(b).max())

# ----------------------------------------------------------------------------- identities
@pytest.mark.parametrize("which", ["fourbar", "pallet"])
def test_identities(which, fourbar, pallet):
    model = fourbar if which == "fourbar" else pallet
    rng = np.random.default_rng(11)
    if which == "fourbar":
        S = 12
        qa, qd, qdd = rng.uniform(0, 2 * np.pi, (S, 1)), rng.normal(size=(S, 1)), rng.normal(size=(S, 1))
    else:
        S = 12
        qa, qd, qdd = pallet_states(rng, S)
    guess = ref(model, S)
    tau = rc.closed_loop_inverse_dynamics(model, qa, qd, qdd, guess)
    for s in range(S):
        q = rc.solve_loops(model, qa[s])
        G = rc.loop_jacobian(model, q)
        qd_tr = G @ qd[s]
        # eq. 55 against an RNE call on the tree with the finite-difference Gdot qd_a
        h = 1e-5
        Gd = (rc.loop_jacobian(model, rc.solve_loops(model, qa[s] + h * qd[s], q))
              - rc.loop_jacobian(model, rc.solve_loops(model, qa[s] - h * qd[s], q))) / (2 * h)
        tau_tr = rc.inverse_dynamics(model, q, qd_tr, G @ qdd[s] + Gd @ qd[s])
        assert np.allclose(tau[s], G.T @ tau_tr, rtol=1e-6, atol=1e-8)
        # virtual power: Gamma_c . qd_a = Gamma_tr . qd_tr
        assert np.isclose(tau[s] @ qd[s], tau_tr @ qd_tr, rtol=1e-6, atol=1e-8)
        # A_c = G^T M G, symmetric positive definite
        A = rc.closed_loop_mass_matrix(model, qa[s])
        assert np.allclose(A, G.T @ rc.mass_matrix(model, q) @ G, rtol=1e-12, atol=1e-12)
        assert np.allclose(A, A.T, rtol=0, atol=1e-12) and np.linalg.eigvalsh(A).min() > 0
        # eq. 58: Gamma_c = A_c qdd_a + H_c, H_c = Coriolis + G^T g (no friction in these models)
        Hc = rc.closed_loop_coriolis_torques(model, qa[s], qd[s]) + rc.closed_loop_gravity_torques(model, qa[s])
        assert np.allclose(tau[s], A @ qdd[s] + Hc, rtol=1e-10, atol=1e-9)
    # FD(ID) round trip, single and stacked
    back = rc.closed_loop_forward_dynamics(model, qa, qd, tau, guess)
    assert np.abs(back - qdd).max() < 1e-9
    assert np.abs(rc.closed_loop_forward_dynamics(model, qa[0], qd[0], tau[0]) - qdd[0]).max() < 1e-9
    assert np.abs(rc.closed_loop_inverse_dynamics(model, qa[0], qd[0], qdd[0]) - tau[0]).max() < 1e-9


def test_friction_of_passive_joints_is_projected(fourbar):
    doc = yaml.safe_load(FOURBAR.read_text())
    doc["links"][1]["viscous"] = 0.02
    doc["links"][2]["coulomb"] = 0.05
    m = rc.load_dh(doc)
    q = rc.solve_loops(m, [1.0])
    G = rc.loop_jacobian(m, q)
    qd_tr = G @ [1.5]
    fr = np.array([0.0, 0.02 * qd_tr[1], 0.05 * np.sign(qd_tr[2])])
    diff = rc.closed_loop_inverse_dynamics(m, [1.0], [1.5], [0.3]) - rc.closed_loop_inverse_dynamics(
        m, [1.0], [1.5], [0.3], friction=False)
    assert np.allclose(diff, G.T @ fr, rtol=1e-12, atol=1e-14)
    qdd = rc.closed_loop_forward_dynamics(m, [1.0], [1.5], rc.closed_loop_inverse_dynamics(m, [1.0], [1.5], [0.3]))
    assert np.isclose(qdd[0], 0.3, rtol=1e-9)


def test_gravity_override(pallet):
    qa = np.array([0.2, 0.3, -0.1])
    g = [0.0, 0.0, -3.0]
    a = rc.closed_loop_gravity_torques(pallet, qa, gravity=g)
    assert np.allclose(a, rc.closed_loop_gravity_torques(pallet, qa) * 3.0 / 9.81, rtol=1e-12)
    t0 = rc.closed_loop_inverse_dynamics(pallet, qa, np.zeros(3), np.zeros(3), gravity=g)
    assert np.allclose(t0, a, rtol=1e-12)
    assert np.allclose(rc.closed_loop_forward_dynamics(pallet, qa, np.zeros(3), a, gravity=g), 0, atol=1e-10)


def test_energy_is_conserved_unforced(fourbar):
    """RK4 in active coordinates, 1 ms steps for 2 s, no torque: T + V stays put (closed forms of T, V)."""
    warm = rc.solve_loops(fourbar, [0.0])

    def f(t, y):
        qdd = rc.closed_loop_forward_dynamics(fourbar, y[:1], y[1:], np.zeros(1), warm, q_out=warm)
        return np.concatenate([y[1:], qdd])

    y = np.array([0.0, 12.0])   # the crank turns about 4 times in 2 s
    E0 = fourbar_energy(y[0], y[1])
    E, T = [E0], []
    for k in range(2000):
        y = rk4(f, k * 1e-3, y, 1e-3)
        E.append(fourbar_energy(y[0], y[1]))
        T.append(E[-1] - fourbar_energy(y[0], 0.0))
    assert y[0] > 4 * np.pi
    assert np.abs(np.array(E) - E0).max() / max(T) <= 1e-6


def test_energy_is_conserved_unforced_palletizer():
    """The same on the palletiser, in zero gravity (under gravity the unforced arm falls through its
    parallelogram's flat configuration within 2 s): its kinetic energy stays put."""
    model = rc.load_dh(PALLET)
    model.set_gravity([0.0, 0.0, 0.0])
    warm = rc.solve_loops(model, [0.0, 0.0, 0.0])

    def f(t, y):
        return np.concatenate([y[3:], rc.closed_loop_forward_dynamics(model, y[:3], y[3:], np.zeros(3), warm,
                                                                      q_out=warm)])

    def energy(y):
        return 0.5 * y[3:] @ rc.closed_loop_mass_matrix(model, y[:3], warm) @ y[3:]

    y = np.array([0.0, 0.1, 0.2, 0.5, 0.1, -0.1])
    E0 = energy(y)
    E = [E0]
    for k in range(2000):
        y = rk4(f, k * 1e-3, y, 1e-3)
        E.append(energy(y))
    assert abs(y[2] - y[1]) < 1.3 and abs(y[0]) > 0.5   # moved, and stayed on the regular branch
    assert np.abs(np.array(E) - E0).max() / E0 <= 1e-6


# ----------------------------------------------------------------------------- mimic joints
def test_mimic_joints_equal_a_hand_coupled_tree():
    text = PALLET_URDF.read_text()
    mimic = rc.load_urdf(text)
    tree = rc.load_urdf(re.sub(r"<mimic[^>]*/>", "", text))
    assert not tree.is_closed_loop
    assert mimic.joint_names == tree.joint_names == ("joint1", "joint2", "elbow", "joint3", "rod")
    G = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1], [0, 0, -1]])   # by hand from the <mimic> tags
    rng = np.random.default_rng(2)
    qa = np.column_stack([rng.uniform(-3, 3, 6), rng.uniform(-0.5, 0.5, 6), rng.uniform(-1.2, 1.2, 6)])
    qd, qdd = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    tau = rc.closed_loop_inverse_dynamics(mimic, qa, qd, qdd)
    for s in range(6):
        q = G @ qa[s]
        assert np.allclose(rc.solve_loops(mimic, qa[s]), q, atol=1e-14)
        assert np.allclose(rc.loop_jacobian(mimic, q), G, atol=1e-15)
        assert np.allclose(tau[s], G.T @ rc.inverse_dynamics(tree, q, G @ qd[s], G @ qdd[s]), rtol=1e-11, atol=1e-9)
        assert np.allclose(rc.closed_loop_mass_matrix(mimic, qa[s]), G.T @ rc.mass_matrix(tree, q) @ G, rtol=1e-12)
        assert np.allclose(rc.closed_loop_gravity_torques(mimic, qa[s]), G.T @ rc.gravity_torques(tree, q), rtol=1e-12)


GRIPPER = """<robot name="gripper">
  <link name="palm"><inertial><mass value="0.5"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="wrist"><inertial><origin xyz="0 0 0.05"/><mass value="0.3"/><inertia ixx="2e-4" iyy="2e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="left"><inertial><origin xyz="0.01 0 0.03"/><mass value="0.05"/><inertia ixx="1e-5" iyy="1e-5" izz="1e-6" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="right"><inertial><origin xyz="-0.01 0 0.03"/><mass value="0.05"/><inertia ixx="1e-5" iyy="1e-5" izz="1e-6" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="wrist_pitch" type="revolute"><parent link="palm"/><child link="wrist"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="2"/></joint>
  <joint name="left_finger" type="prismatic"><parent link="wrist"/><child link="left"/><origin xyz="0 0 0.1"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.04" effort="50" velocity="0.1"/></joint>
  <joint name="right_finger" type="prismatic"><parent link="wrist"/><child link="right"/><origin xyz="0 0 0.1"/>
    <axis xyz="1 0 0"/><limit lower="-0.04" upper="0" effort="50" velocity="0.1"/>
    <mimic joint="left_finger" multiplier="-0.8" offset="-0.005"/></joint>
</robot>"""


def test_mimic_gripper_with_offset_and_multiplier():
    g = rc.load_urdf(GRIPPER)
    tree = rc.load_urdf(GRIPPER.replace('<mimic joint="left_finger" multiplier="-0.8" offset="-0.005"/>', ""))
    assert g.active_joint_names == ("wrist_pitch", "left_finger") and g.passive_joint_names == ("right_finger",)
    qa, qd, qdd = np.array([0.4, 0.02]), np.array([0.3, -0.05]), np.array([1.0, 0.2])
    q = np.array([0.4, 0.02, -0.8 * 0.02 - 0.005])
    G = np.array([[1.0, 0], [0, 1], [0, -0.8]])
    assert np.allclose(rc.solve_loops(g, qa), q, atol=1e-15)
    assert np.allclose(rc.closed_loop_inverse_dynamics(g, qa, qd, qdd),
                       G.T @ rc.inverse_dynamics(tree, q, G @ qd, G @ qdd), rtol=1e-12, atol=1e-14)


def test_yaml_cut_joint_equals_urdf_mimic_palletizer():
    """The YAML's parallelogram (cut joint) and the URDF's (mimic joints) give the same dynamics in their
    own coordinates: tau_urdf = T^T tau_yaml for q_yaml = T q_urdf (rotor inertia left out: URDF has none)."""
    Y, U = pallet_no_rotor(), rc.load_urdf(PALLET_URDF)
    rng = np.random.default_rng(4)
    qu = np.column_stack([rng.uniform(-3, 3, 10), rng.uniform(-0.5, 0.5, 10), rng.uniform(-1.2, 1.2, 10)])
    qdu, qddu = rng.normal(size=(10, 3)), rng.normal(size=(10, 3))
    ty = rc.closed_loop_inverse_dynamics(Y, qu @ T_YU.T, qdu @ T_YU.T, qddu @ T_YU.T, ref(Y, 10))
    tu = rc.closed_loop_inverse_dynamics(U, qu, qdu, qddu)
    assert np.abs(tu - ty @ T_YU).max() < 1e-9 * np.abs(tu).max()
    for s in range(3):
        Ay, Au = rc.closed_loop_mass_matrix(Y, qu[s] @ T_YU.T), rc.closed_loop_mass_matrix(U, qu[s])
        assert np.allclose(Au, T_YU.T @ Ay @ T_YU, rtol=1e-12, atol=1e-10)


# ----------------------------------------------------------------------------- Pinocchio oracle
def test_pinocchio_kkt_four_bar(fourbar):
    pm, fa, fb = pin_fourbar()
    rng = np.random.default_rng(8)
    for t1 in rng.uniform(0, 2 * np.pi, 6):
        q = rc.solve_loops(fourbar, [t1], fourbar_tree_q(t1))
        qd_a, tau = rng.normal(size=1), rng.normal(size=1)
        G = rc.loop_jacobian(fourbar, q)
        qdd_pin, gap, _ = kkt_forward(pm, fa, fb, q, G @ qd_a, np.array([tau[0], 0.0, 0.0]),
                                      armature=np.array([FB_IA, 0.0, 0.0]))
        assert np.abs(gap).max() < 1e-12
        qdd = rc.closed_loop_forward_dynamics(fourbar, [t1], qd_a, tau, q)
        assert np.isclose(qdd[0], qdd_pin[0], rtol=1e-8, atol=1e-8)
        # the passive accelerations too: the tree's qdd = G qdd_a + Gdot qd_a
        tau_back = rc.closed_loop_inverse_dynamics(fourbar, [t1], qd_a, qdd_pin[:1], q)
        assert np.isclose(tau_back[0], tau[0], rtol=1e-8, atol=1e-8)


def test_pinocchio_kkt_palletizer():
    """Pinocchio closes the loop elsewhere (crank tip on the rod's end, on the URDF tree): same motion."""
    Y = pallet_no_rotor()
    pm, fa, fb = pin_palletizer()
    vi = {n: pm.joints[pm.getJointId(n)].idx_v for n in ("joint1", "joint2", "elbow", "joint3", "rod")}
    rng = np.random.default_rng(9)
    qa, qd, _ = pallet_states(rng, 6)
    tau = rng.normal(scale=300.0, size=(6, 3))
    for s in range(6):
        e, ed = qa[s, 2] - qa[s, 1], qd[s, 2] - qd[s, 1]
        qp, vp, tp = np.zeros(pm.nq), np.zeros(pm.nv), np.zeros(pm.nv)
        for name, x, xd in (("joint1", qa[s, 0], qd[s, 0]), ("joint2", qa[s, 1], qd[s, 1]), ("elbow", e, ed),
                            ("joint3", e, ed), ("rod", -e, -ed)):
            qp[vi[name]], vp[vi[name]] = x, xd
        # the crank motor acts between turret and crank: on the URDF tree's joint2 and joint3 (virtual work)
        tp[vi["joint1"]], tp[vi["joint2"]], tp[vi["joint3"]] = tau[s, 0], tau[s, 1] + tau[s, 2], tau[s, 2]
        qdd_pin, gap, _ = kkt_forward(pm, fa, fb, qp, vp, tp)
        assert np.abs(gap).max() < 1e-12
        want = np.array([qdd_pin[vi["joint1"]], qdd_pin[vi["joint2"]], qdd_pin[vi["joint2"]] + qdd_pin[vi["joint3"]]])
        got = rc.closed_loop_forward_dynamics(Y, qa[s], qd[s], tau[s])
        assert np.allclose(got, want, rtol=1e-8, atol=1e-8 * np.abs(want).max())


# ----------------------------------------------------------------------------- bad input
def _fourbar_doc():
    return yaml.safe_load(FOURBAR.read_text())


def test_unclosable_loop_raises_naming_the_loop():
    doc = _fourbar_doc()
    doc["links"][2]["d"] = 1.0                      # ground 1.0 m: coupler + rocker (0.55 m) cannot reach
    m = rc.load_dh(doc)
    with pytest.raises(rc.LoopClosureError, match=r"'pin'.*residual") as exc:
        rc.solve_loops(m, [0.0])
    assert isinstance(exc.value, ValueError)
    res = float(re.search(r"residual ([0-9.e+-]+)", str(exc.value)).group(1))
    assert res > 0.1
    with pytest.raises(rc.LoopClosureError, match="'pin'"):
        rc.closed_loop_inverse_dynamics(m, [0.0], [0.0], [0.0])
    doc["links"][2]["d"] = 0.6                      # closes only while the crank points at the rocker
    m = rc.load_dh(doc)
    rc.solve_loops(m, [0.0])
    with pytest.raises(rc.LoopClosureError, match=r"'pin'.*sample 1"):
        rc.closed_loop_gravity_torques(m, [[0.0], [np.pi]])


def test_singular_configuration_raises():
    # the palletiser's parallelogram flattens at elbow = -pi/2 (upper arm along the lower arm)
    m = rc.load_dh(PALLET)
    q = np.array([0.0, 0.5, -np.pi / 2, 0.5 - np.pi / 2, np.pi / 2])
    with pytest.raises(rc.LoopClosureError, match="'rod_pin'.*singular configuration.*G undefined"):
        rc.solve_loops(m, q[[0, 1, 3]], q)
    with pytest.raises(rc.LoopClosureError, match="'rod_pin'.*singular"):
        rc.loop_jacobian(m, q)


def test_loop_jacobian_of_an_open_configuration(fourbar):
    with pytest.raises(rc.LoopClosureError, match="'pin'.*at the given q"):
        rc.loop_jacobian(fourbar, [0.0, 0.0, 0.0])


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["cut_joints"][0].update(closes_on=7), r"cut_joints\[0\].*'closes_on'.*link"),
    (lambda d: d["cut_joints"][0].update(parent=-1), r"cut_joints\[0\].*'parent'"),
    (lambda d: d["cut_joints"][0].pop("closes_on"), r"cut joint 'pin'.*missing required field 'closes_on'"),
    (lambda d: d["cut_joints"][0].update(joint="universal"), r"cut joint 'pin'.*unknown cut joint type"),
    (lambda d: d["cut_joints"][0].update(lenght=0.3), r"cut joint 'pin'.*unknown key.*lenght"),
    (lambda d: d["cut_joints"][0].update(on_closes_on={"d": 0.25, "theta": 0.1}), r"'pin'.*theta = r = 0"),
    (lambda d: d["cut_joints"][0].update(name="joint2"), r"cut joint 'joint2'.*already used"),
    (lambda d: d["cut_joints"][0].update(closes_on=2), r"cut joint 'pin'.*same rigid body"),
    (lambda d: d.update(cut_joints={"name": "pin"}), r"'cut_joints' must be a list"),
    (lambda d: d["links"][0].update(actuated=False), r"loop of cut joint 'pin'.*no active joint.*G undefined"),
    (lambda d: d["links"][1].update(actuated="no"), r"'actuated' must be true or false"),
    (lambda d: d["links"].append({"name": "extra", "joint": "revolute", "parent": 3, "actuated": False}),
     r"passive joint 'joint4'.*on no loop.*G undefined"),
    (lambda d: (d["links"][1].update(actuated=True), d["links"][2].update(actuated=True)),
     r"loop of cut joint 'pin'.*no passive joint"),
])
def test_bad_cut_joint_entries(edit, message):
    doc = _fourbar_doc()
    edit(doc)
    with pytest.raises(rc.ModelError, match=message):
        rc.load_dh(doc)


def test_mimic_with_a_missing_leader():
    """A <mimic> whose leader is not in the document is warned about and its joint treated as an independent
    one (as MoveIt does); a kept mimic joint needs its leader; a mimic joint follows its leader, kept or
    locked."""
    bad = GRIPPER.replace('mimic joint="left_finger"', 'mimic joint="thumb"')
    with pytest.warns(UserWarning, match="mimic joint 'right_finger': its leader 'thumb' is not a movable joint"):
        m = rc.load_urdf(bad)
    assert not m.is_closed_loop and m.joint_names == ("wrist_pitch", "left_finger", "right_finger")
    with pytest.raises(rc.ModelError, match="mimic joint 'right_finger' is kept but its leader 'left_finger'"):
        rc.load_urdf(GRIPPER, joints=["wrist_pitch", "right_finger"])
    kept = rc.load_urdf(GRIPPER, joints=["wrist_pitch", "left_finger"])   # its leader kept: kept, passive
    assert kept.joint_names == ("wrist_pitch", "left_finger", "right_finger")
    assert kept.passive_joint_names == ("right_finger",)
    locked = rc.load_urdf(GRIPPER, joints=["wrist_pitch"], locked={"left_finger": 0.02})   # leader locked
    tree = rc.load_urdf(GRIPPER.replace('<mimic joint="left_finger" multiplier="-0.8" offset="-0.005"/>', ""))
    q = np.array([0.3, 0.02, -0.8 * 0.02 - 0.005])
    np.testing.assert_allclose(rc.gravity_torques(locked, q[:1]), rc.gravity_torques(tree, q)[:1], rtol=1e-13)
    cycle = GRIPPER.replace('<limit lower="0" upper="0.04" effort="50" velocity="0.1"/></joint>',
                            '<limit lower="0" upper="0.04" effort="50" velocity="0.1"/>'
                            '<mimic joint="right_finger"/></joint>')
    with pytest.raises(rc.ModelError, match="follow each other in a cycle"):
        rc.load_urdf(cycle)


def test_bad_call_arguments(fourbar):
    with pytest.raises(rc.InputError, match=r"'q_active' must have shape \(1,\)"):
        rc.solve_loops(fourbar, [0.0, 1.0])
    with pytest.raises(rc.InputError, match=r"'q_guess' must be a full tree configuration"):
        rc.solve_loops(fourbar, [0.0], [0.0, 1.0])
    with pytest.raises(rc.InputError, match=r"'qd_active' of joint 'joint1' is not finite"):
        rc.closed_loop_inverse_dynamics(fourbar, [0.0], [np.nan], [0.0])
    with pytest.raises(rc.InputError, match=r"'q_guess' of joint 'joint3' is not finite"):
        rc.closed_loop_mass_matrix(fourbar, [0.0], [0.0, 1.0, np.inf])
    with pytest.raises(rc.InputError, match=r"'tau_active' has 2 entries"):
        rc.closed_loop_forward_dynamics(fourbar, np.array([0.0]), np.array([0.0]), np.array([0.0, 1.0]))


def test_tree_models_reduce_to_the_tree_functions():
    """On a tree (no loop) G = 1: the closed-loop functions are the tree functions."""
    m = rc.load_dh(ROOT / "config" / "stanford.yaml")
    rng = np.random.default_rng(6)
    q, qd, qdd = rng.uniform(-1, 1, (3, m.n))
    q_out = np.empty(m.n)
    assert np.allclose(rc.closed_loop_inverse_dynamics(m, q, qd, qdd, q_out=q_out), rc.inverse_dynamics(m, q, qd, qdd),
                       rtol=1e-13, atol=1e-12)
    assert np.array_equal(q_out, q)
    assert np.allclose(rc.closed_loop_mass_matrix(m, q), rc.mass_matrix(m, q), rtol=1e-13, atol=1e-13)
    assert np.allclose(rc.closed_loop_gravity_torques(m, q), rc.gravity_torques(m, q), rtol=1e-13, atol=1e-12)
    assert np.allclose(rc.closed_loop_coriolis_torques(m, q, qd), rc.coriolis_torques(m, q, qd), rtol=1e-13, atol=1e-12)
    assert np.allclose(rc.loop_jacobian(m, q), np.eye(m.n))
