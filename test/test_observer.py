"""The momentum observer (rne_control.control.observer) against a simulation it does not share code with:
the arm integrated by RK4 on the library's forward dynamics (the articulated-body algorithm, not the
RNE's momentum pass the observer uses), torques held per 1-ms sample as a controller's are, and an
external wrench whose joint torques J^T F are the truth."""
import math

import numpy as np
import pytest

import rne_control as rc
from rne_control.model.layout import IA, QIDX
from rne_control.control.observer import MomentumObserver, ObserverError, check_gain, estimate_wrench
from ros_util import config

DT, SUB = 1e-3, 10     # observer sample, RK4 substeps per sample
GAIN = 50.0


@pytest.fixture(scope="module")
def arm():
    return rc.load_model(config("arm7.yaml"))


def puma_with_friction():
    """The PUMA 560 (rotor inertia) given viscous and Coulomb friction on every joint."""
    m = rc.load_model(config("puma560.yaml"))
    tree = np.asarray(m.tree)
    rotor = np.zeros(m.n)
    rotor[tree[:, QIDX].astype(int)] = tree[:, IA]
    return m.with_parameters(m.link_params, rotor, [1.5, 2.0, 1.0, 0.3, 0.3, 0.3], [2.0, 3.0, 1.5, 0.5, 0.5, 0.5])


def simulate(model, seconds, wrench_at=None, frame=None, wrench=None, motion=None, q0=None, kp=100.0, kd=20.0):
    """(times, q, qd, applied tau, external tau) per 1-ms sample. The controller holds q0 (or follows
    ``motion(t) -> (q, qd, qdd)``) by computed torque (kp, kd), its torque held over each sample. From
    ``wrench_at`` s, ``wrench`` (base axes, at ``frame``'s origin) pushes: tau_ext = J(q)^T wrench, J taken at
    each sample."""
    n = model.n
    q = np.array(q0 if q0 is not None else np.full(n, 0.3), dtype=float)
    qd = np.zeros(n)
    hold = q.copy()
    out = []
    h = DT / SUB
    for k in range(int(round(seconds / DT)) + 1):
        t = k * DT
        qr, qdr, qddr = (hold, np.zeros(n), np.zeros(n)) if motion is None else motion(t)
        tau = rc.inverse_dynamics(model, q, qd, qddr + kp * (qr - q) + kd * (qdr - qd))
        ext = (rc.frame_jacobian(model, q, frame).T @ wrench if wrench_at is not None and t >= wrench_at
               else np.zeros(n))
        out.append((t, q.copy(), qd.copy(), tau, ext))

        def f(q_, qd_):
            return qd_, rc.forward_dynamics(model, q_, qd_, tau + ext)
        for _ in range(SUB):
            k1 = f(q, qd)
            k2 = f(q + h / 2 * k1[0], qd + h / 2 * k1[1])
            k3 = f(q + h / 2 * k2[0], qd + h / 2 * k2[1])
            k4 = f(q + h * k3[0], qd + h * k3[1])
            q = q + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            qd = qd + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    return out


def run_observer(model, samples, gain=GAIN):
    obs = MomentumObserver(model, gain)
    rs, prev_tau = [], np.zeros(model.n)
    for t, q, qd, tau, _ in samples:
        rs.append(obs.update(t, q, qd, prev_tau).copy())
        prev_tau = tau
    return np.array(rs)


def test_constant_wrench_is_estimated_with_its_bandwidth(arm):
    """A wrench on link 4 from 0.1 s, the arm held stiffly (computed torque at 50 rad/s): r is the first-order
    filter of the true tau_ext at bandwidth K_O to 0.1 % (half of it at ln 2 / K_O), within 2 % of tau_ext
    from 5 / K_O on; the joints beyond the loaded link read |r| <= 1 % of their effort limit."""
    frame = arm.link_names[4]
    F = np.array([15.0, -10.0, 20.0, 1.0, 2.0, -1.5])
    t_on = 0.1
    samples = simulate(arm, 0.4, t_on, frame, F, kp=2500.0, kd=100.0)
    r = run_observer(arm, samples)
    times = np.array([s[0] for s in samples])
    # the truth: the torque the wrench applied over the interval before each sample
    ext = np.array([np.zeros(arm.n)] + [s[4] for s in samples[:-1]])
    loaded = np.abs(ext).max(axis=0) > 1e-9
    assert loaded.sum() >= 3 and not loaded[-1]
    scale = np.abs(ext).max()
    filtered = np.zeros_like(r)        # dr/dt = K_O (tau_ext - r), one step per sample
    for k in range(1, len(r)):
        filtered[k] = (1.0 - GAIN * DT) * filtered[k - 1] + GAIN * DT * ext[k]
    assert np.abs(r - filtered).max() <= 1e-3 * scale, np.abs(r - filtered).max() / scale
    settled = times >= t_on + DT + 5.0 / GAIN
    assert np.abs(r[settled] - ext[settled]).max() <= 0.02 * scale, np.abs(r[settled] - ext[settled]).max() / scale
    limits = np.asarray(arm.effort_limits, dtype=float)
    assert np.all(np.abs(r[:, ~loaded]) <= 0.01 * limits[~loaded])
    k_half = int(round((t_on + math.log(2) / GAIN) / DT)) + 1
    half = r[k_half] / ext[k_half]
    assert np.all(np.abs(half[loaded] - 0.5) < 0.05), half[loaded]


@pytest.mark.parametrize("robot", ["arm7", "puma560 with friction"])
def test_free_motion_reads_no_external_torque(arm, robot):
    """Computed torque on a 1 Hz sinusoid of every joint, no contact: |r| <= 2 % of the effort limits (the
    residual's discretisation error only), also with rotor inertia and friction (the simulation feels the
    friction, the observer subtracts the model's)."""
    arm = arm if robot == "arm7" else puma_with_friction()
    q0 = np.full(arm.n, 0.2)
    w = 2 * np.pi

    def motion(t):
        return q0 + 0.3 * np.sin(w * t), 0.3 * w * np.cos(w * t) * np.ones(arm.n), -0.3 * w * w * np.sin(w * t) * np.ones(arm.n)
    samples = simulate(arm, 1.0, motion=motion, q0=q0)
    r = run_observer(arm, samples)
    limits = np.asarray(arm.effort_limits, dtype=float)
    assert np.abs(r).max(axis=0).max() > 0          # it does read something
    assert np.all(np.abs(r) <= 0.02 * limits), (np.abs(r).max(axis=0) / limits)


def test_wrench_from_joint_torques_at_the_frame(arm):
    """estimate_wrench inverts tau = J_f^T F for a wrench in the frame's own axes (7 joints, full rank)."""
    rng = np.random.default_rng(2)
    frame = arm.link_names[-1]
    for _ in range(5):
        q = rng.uniform(-1.5, 1.5, arm.n)
        F = rng.normal(size=6) * 10
        R = rc.frame_pose(arm, q, frame)[:3, :3]
        F_base = np.r_[R @ F[:3], R @ F[3:]]
        tau = rc.frame_jacobian(arm, q, frame).T @ F_base
        np.testing.assert_allclose(estimate_wrench(arm, q, tau, frame, damping=1e-8), F, rtol=1e-6, atol=1e-6)


def test_bad_settings_and_samples_are_refused(arm):
    n = arm.n
    for gain, why in ((0.0, "> 0"), (-1.0, "> 0"), (float("nan"), "finite"), ([1.0, 2.0], "one value or")):
        with pytest.raises(ObserverError, match=why):
            check_gain(gain, n)
    obs = MomentumObserver(arm, 600.0)
    z = np.zeros(n)
    obs.update(0.0, z, z, z)
    with pytest.raises(ObserverError, match="sample interval"):
        obs.update(0.002, z, z, z)                  # 600 * 0.002 >= 1
    with pytest.raises(ObserverError, match="not after"):
        obs.update(0.0, z, z, z)
    with pytest.raises(ObserverError, match="tau"):
        obs.update(0.001, z, z, z[:3])
    with pytest.raises(rc.InputError if hasattr(rc, "InputError") else ValueError):
        obs.update(0.001, z[:3], z, z)              # the library's named error for a wrong length
    obs.reset()
    assert np.all(obs.update(1.0, z, z, z) == 0.0)  # a fresh start reads 0
