"""Floating-base dynamics (issue 3) against independent truth: Pinocchio's free-flyer model (a
test-only oracle), conservation of momentum, and consistency between the four functions.

Pinocchio's free-flyer conventions match ours: q = [position; quaternion (x, y, z, w)], v = [v; w] of
the base origin in the base frame, a = dv/dt, and tau[:6] the wrench [f; n] on the base at its origin.
"""
import subprocess
import sys
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import rne_control as rc
from rne_control.dynamics.floating.api import centroidal_momentum
from rne_control.model.errors import InputError

import pinocchio as pin  # noqa: E402

ROOT = Path(__file__).parents[1]
ERD = next((p for p in Path(pin.__file__).parents if p.name == "cmeel.prefix"), Path("/nonexistent")) \
    / "share" / "example-robot-data" / "robots"
ROBOTS = {
    "ffsr": ROOT / "urdf" / "ffsr.urdf",
    "solo12": ERD / "solo_description" / "robots" / "solo12.urdf",        # quadruped, 12 revolute joints
    "talos": ERD / "talos_data" / "robots" / "talos_reduced.urdf",      # humanoid, 32 joints, branched tree
}
RTOL = 1e-8
N_STATES = 10


NAMES = list(ROBOTS)


def _load(name, gravity=(0.0, 0.0, -9.81), **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # published inertias that break the triangle inequality
        return rc.load_urdf(str(ROBOTS[name]), floating_base=True, friction=False, gravity=gravity, **kw)


@lru_cache(maxsize=None)
def _pin(name):
    pm = pin.buildModelFromUrdf(str(ROBOTS[name]), pin.JointModelFreeFlyer())
    return pm


def _pin_model(name, model):
    """Pinocchio model with our gravity, and the index of each of our joints in Pinocchio's v."""
    pm = _pin(name)
    pm.gravity.linear[:] = model.gravity
    idx = np.array([pm.joints[pm.getJointId(j)].idx_v for j in model.joint_names])
    assert pm.nq == 7 + model.n and pm.nv == 6 + model.n
    return pm, pm.createData(), idx


def _states(model, seed, n=N_STATES):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        quat = rng.standard_normal(4)
        yield dict(q=rng.uniform(-1.5, 1.5, model.n), qd=rng.standard_normal(model.n),
                   qdd=rng.standard_normal(model.n), tau=10 * rng.standard_normal(model.n),
                   twist=rng.standard_normal(6), accel=rng.standard_normal(6), wrench=50 * rng.standard_normal(6),
                   momentum=20 * rng.standard_normal(6), quat=quat / np.linalg.norm(quat),
                   pos=rng.standard_normal(3))


def _pin_q(s, idx):
    q = np.zeros(7 + len(idx))
    q[:3], q[3:7] = s["pos"], s["quat"]
    q[idx + 1] = s["q"]  # revolute joints: idx_q = idx_v + 1
    return q


def _pin_v(base, joint, idx):
    v = np.zeros(6 + len(idx))
    v[:6] = base
    v[idx] = joint
    return v


def _relerr(a, b):
    a, b = np.concatenate([np.ravel(x) for x in a]), np.concatenate([np.ravel(x) for x in b])
    return np.abs(a - b).max() / max(1.0, np.abs(b).max())


GRAVITIES = [(0.0, 0.0, -9.81), (0.3, -1.2, 4.0), (0.0, 0.0, 0.0)]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("g", GRAVITIES)
def test_moving_base_vs_pinocchio_rnea(name, g):
    model = _load(name, g)
    pm, pd, idx = _pin_model(name, model)
    for s in _states(model, 1):
        tau, wrench = rc.moving_base_inverse_dynamics(model, s["q"], s["qd"], s["qdd"], s["twist"], s["accel"],
                                                      s["quat"])
        ref = pin.rnea(pm, pd, _pin_q(s, idx), _pin_v(s["twist"], s["qd"], idx), _pin_v(s["accel"], s["qdd"], idx))
        assert _relerr((tau, wrench), (ref[idx], ref[:6])) < RTOL


def _pin_free_floating(pm, pd, idx, s):
    """crba + nonLinearEffects + a 6x6 solve for the base acceleration, then rnea for the torques."""
    Q, V = _pin_q(s, idx), _pin_v(s["twist"], s["qd"], idx)
    M = pin.crba(pm, pd, Q)
    M = np.triu(M) + np.triu(M, 1).T
    nle = pin.nonLinearEffects(pm, pd, Q, V)
    qdd = _pin_v(np.zeros(6), s["qdd"], idx)
    a_base = np.linalg.solve(M[:6, :6], -nle[:6] - M[:6, 6:] @ qdd[6:])
    full = pin.rnea(pm, pd, Q, V, _pin_v(a_base, s["qdd"], idx))
    assert np.abs(full[:6]).max() < 1e-8 * max(1.0, np.abs(full).max())
    return full[idx], a_base


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("g", GRAVITIES)
def test_free_floating_vs_pinocchio(name, g):
    model = _load(name, g)
    pm, pd, idx = _pin_model(name, model)
    for s in _states(model, 2):
        got = rc.free_floating_inverse_dynamics(model, s["q"], s["qd"], s["qdd"], s["twist"], s["quat"])
        assert _relerr(got, _pin_free_floating(pm, pd, idx, s)) < RTOL


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("g", GRAVITIES)
def test_forward_vs_pinocchio_aba(name, g):
    model = _load(name, g)
    pm, pd, idx = _pin_model(name, model)
    for s in _states(model, 3):
        qdd, accel = rc.floating_forward_dynamics(model, s["q"], s["qd"], s["tau"], s["twist"], s["quat"],
                                                  s["wrench"])
        ref = pin.aba(pm, pd, _pin_q(s, idx), _pin_v(s["twist"], s["qd"], idx), _pin_v(s["wrench"], s["tau"], idx))
        assert _relerr((qdd, accel), (ref[idx], ref[:6])) < RTOL
        # no base wrench: the default
        qdd0, accel0 = rc.floating_forward_dynamics(model, s["q"], s["qd"], s["tau"], s["twist"], s["quat"])
        ref = pin.aba(pm, pd, _pin_q(s, idx), _pin_v(s["twist"], s["qd"], idx), _pin_v(np.zeros(6), s["tau"], idx))
        assert _relerr((qdd0, accel0), (ref[idx], ref[:6])) < RTOL


@pytest.mark.parametrize("name", NAMES)
def test_momentum_vs_pinocchio(name):
    model = _load(name)
    pm, pd, idx = _pin_model(name, model)
    for s in _states(model, 4):
        for h in (s["momentum"], np.zeros(6)):
            twist = rc.base_twist_from_momentum(model, s["q"], s["qd"], h, s["quat"])
            Q, V = _pin_q(s, idx), _pin_v(twist, s["qd"], idx)
            pin.computeCentroidalMomentum(pm, pd, Q, V)
            hg = np.r_[pd.hg.linear, pd.hg.angular]
            ag = pin.computeCentroidalMap(pm, pd, Q)
            scale = max(1.0, np.abs(h).max(), float(np.abs(ag).max() * np.abs(V).max()))
            assert np.abs(hg - h).max() < RTOL * scale
        twist0 = rc.base_twist_from_momentum(model, s["q"], s["qd"], base_orientation=s["quat"])
        assert np.allclose(twist0, rc.base_twist_from_momentum(model, s["q"], s["qd"], np.zeros(6), s["quat"]),
                           rtol=0, atol=1e-14)
        # the converse (used by the example) against Pinocchio as well: momentum and COM
        h, com_b = centroidal_momentum(model, s["q"], s["qd"], s["twist"], s["quat"])
        Q, V = _pin_q(s, idx), _pin_v(s["twist"], s["qd"], idx)
        pin.computeCentroidalMomentum(pm, pd, Q, V)
        pin.centerOfMass(pm, pd, Q)
        assert _relerr((h,), (np.r_[pd.hg.linear, pd.hg.angular],)) < RTOL
        R = pin.Quaternion(s["quat"]).toRotationMatrix()
        assert np.abs(s["pos"] + R @ com_b - pd.com[0]).max() < 1e-12


def _pin_momentum_scale(pm, pd, Q, V):
    """sum_i (m_i |v_ci| + |I_i w_i|) over the bodies (I_i about the COM), from Pinocchio."""
    pin.forwardKinematics(pm, pd, Q, V)
    total = 0.0
    for i in range(1, pm.njoints):
        Y, v = pm.inertias[i], pd.v[i]
        w = v.angular
        total += Y.mass * np.linalg.norm(v.linear + np.cross(w, Y.lever)) + np.linalg.norm(Y.inertia @ w)
    return total


def test_zero_momentum_conserved_over_2s_rk4():
    """FFSR, 2 s at dt = 1 ms (RK4 with quaternion kinematics), joint torques driving a brisk motion:
    the centroidal momentum (Pinocchio) stays <= 1e-8 * max_t sum_i(m_i |v_ci| + |I_i w_i|), COM fixed."""
    from rne_control.dynamics.integrate import State, rk4_step

    model = _load("ffsr", (0.0, 0.0, 0.0))
    pm, pd, idx = _pin_model("ffsr", model)
    amp = np.array([60.0, 40.0, 15.0, 3.0, 1.0, 0.5])
    freq = np.array([1.3, 0.9, 1.7, 2.1, 2.9, 3.3])

    def torque(t, s):
        return amp * np.sin(2 * np.pi * freq * t)

    q0, qd0 = np.array([0.2, -0.5, 0.9, 0.1, 0.4, -0.3]), np.array([0.3, -0.2, 0.4, 0.5, -0.6, 0.7])
    quat0 = np.array([0.1, -0.2, 0.3, 0.9])
    quat0 /= np.linalg.norm(quat0)
    s = State(q0, qd0, np.array([1.0, 2.0, -0.5]), quat0, rc.base_twist_from_momentum(model, q0, qd0, None, quat0))

    def pin_state(s):
        return _pin_q(dict(pos=s.pos, quat=s.quat, q=s.q), idx), _pin_v(s.twist, s.qd, idx)

    Q, V = pin_state(s)
    com0 = pin.centerOfMass(pm, pd, Q).copy()
    worst_h, worst_c, scale, dt = 0.0, 0.0, 0.0, 1e-3
    for i in range(2000):
        s = rk4_step(model, s, i * dt, dt, torque)
        if i % 20 == 19:
            Q, V = pin_state(s)
            pin.computeCentroidalMomentum(pm, pd, Q, V)
            worst_h = max(worst_h, np.abs(np.r_[pd.hg.linear, pd.hg.angular]).max())
            worst_c = max(worst_c, np.abs(pin.centerOfMass(pm, pd, Q) - com0).max())
            scale = max(scale, _pin_momentum_scale(pm, pd, Q, V))
    assert scale > 10.0  # the motion is not trivial
    assert worst_h <= 1e-8 * scale, (worst_h, scale)
    assert worst_c <= 1e-9, worst_c
    assert np.abs(s.q - q0).max() > 0.2  # the joints did move


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("g", GRAVITIES[:2])
def test_inverse_forward_round_trip(name, g):
    model = _load(name, g)
    for s in _states(model, 5, 5):
        tau, accel = rc.free_floating_inverse_dynamics(model, s["q"], s["qd"], s["qdd"], s["twist"], s["quat"])
        qdd, accel2 = rc.floating_forward_dynamics(model, s["q"], s["qd"], tau, s["twist"], s["quat"])
        assert _relerr((qdd, accel2), (s["qdd"], accel)) < RTOL
        # the moving-base model with that base acceleration needs no base wrench and gives the same torques
        tau3, wrench = rc.moving_base_inverse_dynamics(model, s["q"], s["qd"], s["qdd"], s["twist"], accel, s["quat"])
        assert _relerr((tau3,), (tau,)) < RTOL
        scale = max(1.0, np.abs(rc.moving_base_inverse_dynamics(model, s["q"], s["qd"], s["qdd"], s["twist"],
                                                               np.zeros(6), s["quat"])[1]).max())
        assert np.abs(wrench).max() < RTOL * scale
        # forward dynamics with the moving-base wrench reproduces the prescribed base acceleration
        tau4, wrench4 = rc.moving_base_inverse_dynamics(model, s["q"], s["qd"], s["qdd"], s["twist"], s["accel"],
                                                        s["quat"])
        qdd5, accel5 = rc.floating_forward_dynamics(model, s["q"], s["qd"], tau4, s["twist"], s["quat"], wrench4)
        assert _relerr((qdd5, accel5), (s["qdd"], s["accel"])) < RTOL


def _ffsr_dict(scale=1.0):
    import yaml
    doc = yaml.safe_load((ROOT / "config" / "ffsr.yaml").read_text())
    doc["base_link"]["mass"] *= scale
    doc["base_link"]["inertia"] = {k: v * scale for k, v in doc["base_link"]["inertia"].items()}
    return doc


def _load_dh(doc, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rc.load_dh(doc, **kw)


def test_heavy_base_converges_to_fixed_base():
    """Zero gravity, base at rest: as the base mass and inertia grow, the free-floating torques tend to the
    fixed-base ones (error ~ 1/scale). With gravity the free-floating system is in free fall: its torques
    do not see gravity, so they differ from the fixed-base ones by the gravity torques."""
    rng = np.random.default_rng(6)
    q, qd, qdd = rng.uniform(-1, 1, 6), rng.standard_normal(6), rng.standard_normal(6)
    errs = []
    for scale in (1.0, 1e3, 1e6, 1e9):
        model = _load_dh(_ffsr_dict(scale))
        assert model.floating_base and np.all(model.gravity == 0.0)
        tau_ff, _ = rc.free_floating_inverse_dynamics(model, q, qd, qdd, np.zeros(6))
        tau_fixed = rc.inverse_dynamics(model, q, qd, qdd)
        errs.append(np.abs(tau_ff - tau_fixed).max() / np.abs(tau_fixed).max())
    assert errs[0] > 0.5  # a 250 kg base is far from fixed for this 2 m, 47 kg arm
    for a, b in zip(errs[1:], errs[2:]):  # then error ~ 1 / scale
        assert 0.5e-3 * a < b < 2e-3 * a
    assert errs[-1] < 1e-6
    # with gravity: free fall
    model = _load_dh(_ffsr_dict(1e9))
    model.set_gravity([0.0, 0.0, -9.81])
    quat = np.array([0.2, 0.1, -0.3, 0.9]) / np.linalg.norm([0.2, 0.1, -0.3, 0.9])
    tau_g, accel_g = rc.free_floating_inverse_dynamics(model, q, qd, qdd, np.zeros(6), quat)
    tau_fixed = rc.inverse_dynamics(model, q, qd, qdd)
    assert np.abs(tau_g - tau_fixed).max() > 0.1 * np.abs(rc.gravity_torques(model, q)).max()
    assert np.allclose(tau_g, tau_ff, rtol=1e-8, atol=1e-9)
    R = pin.Quaternion(quat).toRotationMatrix()
    assert np.allclose(accel_g[:3], R.T @ [0.0, 0.0, -9.81], atol=1e-7)  # the base falls with g


def test_yaml_and_urdf_ffsr_agree():
    m_yaml = _load_dh(ROOT / "config" / "ffsr.yaml")
    m_urdf = _load("ffsr", (0.0, 0.0, 0.0))
    assert m_yaml.floating_base and m_yaml.base_link == m_urdf.base_link == "satellite"
    assert m_yaml.joint_names == m_urdf.joint_names
    np.testing.assert_allclose(m_yaml.dyn, m_urdf.dyn, rtol=0, atol=1e-12)
    assert not _load_dh(ROOT / "config" / "ffsr.yaml", floating_base=False).floating_base
    for s in _states(m_yaml, 7, 5):
        a = rc.free_floating_inverse_dynamics(m_yaml, s["q"], s["qd"], s["qdd"], s["twist"], s["quat"])
        b = rc.free_floating_inverse_dynamics(m_urdf, s["q"], s["qd"], s["qdd"], s["twist"], s["quat"])
        assert _relerr(a, b) < 1e-10
        a = rc.floating_forward_dynamics(m_yaml, s["q"], s["qd"], s["tau"], s["twist"], s["quat"], s["wrench"])
        b = rc.floating_forward_dynamics(m_urdf, s["q"], s["qd"], s["tau"], s["twist"], s["quat"], s["wrench"])
        assert _relerr(a, b) < 1e-10


@pytest.mark.parametrize("name", NAMES)
def test_fixed_base_functions_on_floating_model(name):
    """The fixed-base functions hold the base fixed at the identity pose: they agree with the fixed-base
    model, with Pinocchio's fixed-base model, and with the moving-base model at rest."""
    m_float = _load(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m_fixed = rc.load_urdf(str(ROBOTS[name]), friction=False)
    pm = pin.buildModelFromUrdf(str(ROBOTS[name]))
    pd = pm.createData()
    idx = np.array([pm.joints[pm.getJointId(j)].idx_v for j in m_float.joint_names])
    ident = np.array([0.0, 0.0, 0.0, 1.0])
    for s in _states(m_float, 8, 4):
        tau = rc.inverse_dynamics(m_float, s["q"], s["qd"], s["qdd"])
        assert _relerr((tau,), (rc.inverse_dynamics(m_fixed, s["q"], s["qd"], s["qdd"]),)) < 1e-12
        Q, V, A = (np.zeros(pm.nq) for _ in range(3))
        Q[idx], V[idx], A[idx] = s["q"], s["qd"], s["qdd"]
        assert _relerr((tau,), (pin.rnea(pm, pd, Q, V, A)[idx],)) < RTOL
        tau_mb, _ = rc.moving_base_inverse_dynamics(m_float, s["q"], s["qd"], s["qdd"], np.zeros(6), np.zeros(6), ident)
        assert _relerr((tau_mb,), (tau,)) < 1e-12
        H = rc.mass_matrix(m_float, s["q"])
        assert _relerr((H,), (rc.mass_matrix(m_fixed, s["q"]),)) < 1e-12
        qdd = rc.forward_dynamics(m_float, s["q"], s["qd"], s["tau"])
        assert _relerr((qdd,), (rc.forward_dynamics(m_fixed, s["q"], s["qd"], s["tau"]),)) < 1e-10
        assert _relerr((rc.gravity_torques(m_float, s["q"]),), (rc.gravity_torques(m_fixed, s["q"]),)) < 1e-12


def test_stacked_inputs_broadcast():
    model = _load("solo12")
    states = list(_states(model, 9, 4))
    q = np.array([s["q"] for s in states])
    qd = np.array([s["qd"] for s in states])
    twist = np.array([s["twist"] for s in states])
    quat = np.array([s["quat"] for s in states])
    qdd1 = states[0]["qdd"]  # not stacked: broadcast
    tau, accel = rc.free_floating_inverse_dynamics(model, q, qd, qdd1, twist, quat)
    assert tau.shape == (4, model.n) and accel.shape == (4, 6)
    for i in range(4):
        t1, a1 = rc.free_floating_inverse_dynamics(model, q[i], qd[i], qdd1, twist[i], quat[i])
        np.testing.assert_array_equal(tau[i], t1)
        np.testing.assert_array_equal(accel[i], a1)
    tw_one = [0.1, 0.2, 0.3, 0.0, 0.0, 0.5]  # lists take the checked path
    tau2, wrench2 = rc.moving_base_inverse_dynamics(model, q, qd, qdd1, tw_one, np.zeros((4, 6)))
    assert tau2.shape == (4, model.n) and wrench2.shape == (4, 6)
    np.testing.assert_allclose(wrench2[2], rc.moving_base_inverse_dynamics(model, q[2], qd[2], qdd1, tw_one,
                                                                           [0.0] * 6)[1], rtol=0, atol=1e-12)
    tw = rc.base_twist_from_momentum(model, q, qd, np.ones(6), quat[0])
    assert tw.shape == (4, 6)
    np.testing.assert_allclose(tw[3], rc.base_twist_from_momentum(model, q[3], qd[3], np.ones(6), quat[0]), atol=1e-13)
    qdd, acc = rc.floating_forward_dynamics(model, q, qd, np.zeros(model.n), twist, quat, np.ones((4, 6)))
    assert qdd.shape == (4, model.n) and acc.shape == (4, 6)
    np.testing.assert_allclose(acc[1], rc.floating_forward_dynamics(model, q[1], qd[1], np.zeros(model.n), twist[1],
                                                                    quat[1], np.ones(6))[1], atol=1e-12)
    with pytest.raises(InputError, match="stacks"):
        rc.free_floating_inverse_dynamics(model, q, qd, qdd1, twist[:3], quat)


def test_bad_inputs():
    model = _load("ffsr", (0.0, 0.0, 0.0))
    q, z6 = np.zeros(6), np.zeros(6)
    ident = np.array([0.0, 0.0, 0.0, 1.0])
    with pytest.raises(InputError, match="unit quaternion"):
        rc.free_floating_inverse_dynamics(model, q, q, q, z6, np.array([0.0, 0.0, 0.0, 1.1]))
    with pytest.raises(InputError, match="unit quaternion"):
        rc.floating_forward_dynamics(model, q, q, q, z6, np.zeros(4))
    with pytest.raises(InputError, match="base_orientation"):
        rc.moving_base_inverse_dynamics(model, q, q, q, z6, z6, np.array([0.0, np.nan, 0.0, 1.0]))
    with pytest.raises(InputError, match="base_orientation"):
        rc.base_twist_from_momentum(model, q, q, None, np.array([0.0, 0.0, 1.0]))
    with pytest.raises(InputError, match="base_twist"):
        rc.free_floating_inverse_dynamics(model, q, q, q, np.zeros(5))
    with pytest.raises(InputError, match="base_twist"):
        rc.free_floating_inverse_dynamics(model, q, q, q, np.array([0.0, 0.0, np.inf, 0.0, 0.0, 0.0]))
    with pytest.raises(InputError, match="base_accel"):
        rc.moving_base_inverse_dynamics(model, q, q, q, z6, np.zeros(7))
    with pytest.raises(InputError, match="base_wrench"):
        rc.floating_forward_dynamics(model, q, q, q, z6, ident, np.zeros(3))
    with pytest.raises(InputError, match="momentum"):
        rc.base_twist_from_momentum(model, q, q, np.zeros(5))
    with pytest.raises(InputError, match="'q'"):
        rc.free_floating_inverse_dynamics(model, np.zeros(5), q, q, z6)
    with pytest.raises(InputError, match="qd.*joint1"):
        rc.free_floating_inverse_dynamics(model, q, np.array([np.nan, 0, 0, 0, 0, 0]), q, z6)
    fixed = _load_dh(ROOT / "config" / "ffsr.yaml", floating_base=False)
    for call in (lambda: rc.free_floating_inverse_dynamics(fixed, q, q, q, z6),
                 lambda: rc.moving_base_inverse_dynamics(fixed, q, q, q, z6, z6),
                 lambda: rc.base_twist_from_momentum(fixed, q, q),
                 lambda: rc.floating_forward_dynamics(fixed, q, q, q, z6)):
        with pytest.raises(ValueError, match="fixed base"):
            call()
    # a quaternion within the tolerance is accepted (and normalised)
    a = rc.free_floating_inverse_dynamics(model, q, q, q, z6, np.array([0.0, 0.0, 0.0, 1.0 + 5e-7]))
    assert np.all(np.isfinite(a[1]))


def test_ffsr_example(tmp_path):
    out = tmp_path / "ffsr.png"
    res = subprocess.run([sys.executable, "-m", "rne_control.examples.ffsr", "--duration", "1.0", "--plot", str(out)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert out.is_file() and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    last = [ln for ln in res.stdout.splitlines() if ln.startswith("max |linear momentum|")][0]
    nums = [float(w) for w in last.replace(",", " ").split() if w[0].isdigit()]
    # a 1 s manoeuvre moves the arm's 47 kg at up to ~1 m/s: momentum ~ 10-100, so 1e-7 is ~1e-9 relative
    assert len(nums) == 3 and max(nums[:2]) < 1e-7 and nums[2] < 1e-9, last
    assert len([ln for ln in res.stdout.splitlines() if ln[:5].strip().replace(".", "").isdigit()]) >= 5
