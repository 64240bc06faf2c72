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


# ---------------------------------------------------------------- the compiled update against the checked path
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

from oracle import Oracle, erd, rel_err  # noqa: E402
from rne_control import dynamics as dyn  # noqa: E402
from rne_control.control import _observer  # noqa: E402
from rne_control.control.plants import make_plant  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FAST_TOL = 1e-12


def quiet_load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rc.load_model(path, **kw) if str(path).endswith(".yaml") else rc.load_urdf(str(path), **kw)


def stanford_with_friction():
    """The Stanford arm (a prismatic joint, rotor inertia on every joint) given viscous and Coulomb friction."""
    m = quiet_load(config("stanford.yaml"))
    tree = np.asarray(m.tree)
    rotor = np.zeros(m.n)
    rotor[tree[:, QIDX].astype(int)] = tree[:, IA]
    assert np.all(rotor > 0)
    return m.with_parameters(m.link_params, rotor, [1.5, 2.0, 40.0, 0.3, 0.3, 0.2], [2.0, 3.0, 15.0, 0.5, 0.4, 0.3])


FAST_MODELS = {
    "arm7": lambda: quiet_load(config("arm7.yaml")),
    "panda": lambda: quiet_load(erd("panda_description/urdf/panda.urdf")),   # with its hand (prismatic fingers)
    "ur5": lambda: quiet_load(erd("ur_description/urdf/ur5_robot.urdf")),
    "stanford with friction": stanford_with_friction,
    "puma560 with friction": puma_with_friction,
    "fourbar (closed loop, its spanning tree)": lambda: quiet_load(config("fourbar.yaml")),
    "arm7 with elastic joints": lambda: quiet_load(config("arm7_sea.yaml")),
}


def fast_only(obs):
    """``obs`` whose checked path fails the test: every sample must go through the compiled update."""
    def refuse(*args):
        raise AssertionError("the checked path was taken")
    obs._update_checked = refuse
    return obs


def expected_beta(obs, q, qd):
    """C^T qd - g - tau_f by the library's public functions (the checked path's terms)."""
    _, ctq = dyn.momentum_and_coriolis_transpose(obs.model, q, qd)
    return ctq - dyn.gravity_torques(obs.model, q, obs.gravity) - obs.friction_torques(qd)


def compare_paths(model, gravity=None, samples=25, seed=3, gain=40.0):
    """The compiled update against the checked path over random samples (1 ms apart, with jitter): r, and
    each sample's p and beta against the public functions, to FAST_TOL relative."""
    rng = np.random.default_rng(seed)
    fast = fast_only(MomentumObserver(model, gain, gravity=gravity))
    slow = MomentumObserver(model, gain, gravity=gravity)
    t = 0.0
    for _ in range(samples):
        q, qd = rng.uniform(-2.0, 2.0, model.n), rng.normal(size=model.n) * 2.0
        tau = rng.normal(size=model.n) * 20.0
        t += 1e-3 * rng.uniform(0.5, 1.5)
        r_fast = fast.update(t, q, qd, tau)
        r_slow = slow._update_checked(t, q, qd, tau)
        assert r_fast is fast.r
        assert rel_err(fast._p, dyn.generalized_momentum(model, q, qd)) < FAST_TOL
        assert rel_err(fast._beta, expected_beta(fast, q, qd)) < FAST_TOL
        assert rel_err(r_fast, r_slow) < FAST_TOL, rel_err(r_fast, r_slow)
    assert np.abs(fast.r).max() > 0 and fast.t == slow.t == t


@pytest.mark.parametrize("name", sorted(FAST_MODELS))
def test_compiled_update_agrees_with_checked_path(name):
    """arm7, the Panda with its hand, UR5, the Stanford arm (prismatic joint, rotor inertia, friction), the
    PUMA (rotor inertia, friction), a closed loop over its spanning tree and arm7 with elastic joints: the
    model's gravity and another one."""
    model = FAST_MODELS[name]()
    compare_paths(model)
    compare_paths(model, gravity=[1.5, -2.0, -4.0], seed=4)


def test_compiled_update_follows_run_time_gravity_and_payload():
    """model.set_gravity and model.set_payload after the observer is made: its next samples use them."""
    model = quiet_load(config("arm7.yaml"))
    obs = fast_only(MomentumObserver(model, 40.0))
    rng = np.random.default_rng(5)
    q, qd = rng.uniform(-1, 1, model.n), rng.normal(size=model.n)
    obs.update(0.0, q, qd, np.zeros(model.n))
    p0, beta0 = obs._p.copy(), obs._beta.copy()
    model.set_gravity([0.0, 3.0, -7.0])
    model.set_payload(model.link_names[-1], 2.5, (0.01, 0.02, 0.1), (0.01, 0.02, 0.03, 0.0, 0.0, 0.0))
    obs.update(1e-3, q, qd, np.zeros(model.n))
    assert rel_err(obs._p, dyn.generalized_momentum(model, q, qd)) < FAST_TOL
    assert rel_err(obs._beta, expected_beta(obs, q, qd)) < FAST_TOL
    assert rel_err(obs._p, p0) > 1e-3 and rel_err(obs._beta, beta0) > 1e-3


@pytest.mark.parametrize("robot", ["arm7", "baxter left arm"])
def test_observer_on_a_tree_plant_sees_its_payload(robot):
    """The observer on a TreePlant's dynamics model (``plant._dm``: Baxter's without the right arm and head)
    fed the plant's state views, as the cycle calls it: after plant.set_payload its p and g (in beta) include
    the payload, as the library's functions give them on that model and on the whole robot's model with the
    payload."""
    path = str(ROOT / "urdf/arm7.urdf") if robot == "arm7" else erd("baxter_description/urdf/baxter.urdf")
    whole = quiet_load(path)
    if robot == "arm7":
        joints, link = None, whole.link_names[-1]
    else:
        joints, link = [j for j in whole.joint_names if j.startswith("left_")], "left_gripper"
    plant = make_plant(whole, joints)
    m, state = plant._dm, plant._state
    assert (m is whole) == (robot == "arm7")
    obs = fast_only(MomentumObserver(m, 40.0))
    rng = np.random.default_rng(6)
    ns = len(plant.state_names)
    payload = (link, 3.0, (0.02, -0.01, 0.08), (0.02, 0.03, 0.01, 0.0, 0.0, 0.0))
    ref = quiet_load(path)
    ref.set_payload(*payload)
    idx = [ref.joint_names.index(j) for j in m.joint_names]
    plant.set_state(rng.uniform(-1, 1, ns), rng.normal(size=ns))
    obs.update(0.0, state.q, state.qd, np.zeros(m.n))
    p_bare, beta_bare = obs._p.copy(), obs._beta.copy()
    plant.set_payload(*payload)
    for k in range(1, 4):
        if k > 1:
            plant.set_state(rng.uniform(-1, 1, ns), rng.normal(size=ns))
        obs.update(k * 1e-3, state.q, state.qd, np.zeros(m.n))
        q, qd = state.q.copy(), state.qd.copy()
        qr, qdr = np.zeros(ref.n), np.zeros(ref.n)
        qr[idx], qdr[idx] = q, qd
        assert rel_err(obs._p, dyn.generalized_momentum(m, q, qd)) < FAST_TOL
        assert rel_err(obs._beta, expected_beta(obs, q, qd)) < FAST_TOL
        assert rel_err(obs._p, dyn.generalized_momentum(ref, qr, qdr)[idx]) < FAST_TOL
        _, ctq = dyn.momentum_and_coriolis_transpose(ref, qr, qdr)
        g = dyn.gravity_torques(ref, qr)
        assert rel_err(obs._beta, (ctq - g)[idx] - obs.friction_torques(qd)) < FAST_TOL
        if k == 1:   # the same state as before the payload: it makes a difference
            assert rel_err(obs._p, p_bare) > 1e-3 and rel_err(obs._beta, beta_bare) > 1e-3


@pytest.mark.parametrize("name", ["arm7", "panda", "ur5"])
def test_compiled_update_against_pinocchio(name):
    """Each sample's p = M qd and beta = C^T qd - g (no friction) against Pinocchio's crba, Christoffel
    Coriolis matrix and generalized gravity."""
    path = {"arm7": str(ROOT / "urdf/arm7.urdf"), "panda": erd("panda_description/urdf/panda.urdf"),
            "ur5": erd("ur_description/urdf/ur5_robot.urdf")}[name]
    import pinocchio as pin
    model = quiet_load(path, friction=False)
    o = Oracle(path, model)
    obs = fast_only(MomentumObserver(model, 40.0, friction=False))
    rng = np.random.default_rng(7)
    for k in range(4):
        q, qd = rng.uniform(-2, 2, model.n), rng.normal(size=model.n) * 2
        obs.update(k * 1e-3, q, qd, np.zeros(model.n))
        C = pin.computeCoriolisMatrix(o.pm, o.pd, o.q(q), o.v(qd))
        assert rel_err(obs._p, o.mass_matrix(q) @ qd) < 1e-9
        assert rel_err(obs._beta, (C.T @ o.v(qd))[o.iv] - o.gravity(q)) < 1e-9


def test_refused_samples_leave_the_observer_as_it_was(arm):
    """A sample the compiled update refuses (bad time, gain times interval, tau, q) changes nothing: the next
    good sample gives what an observer that never saw it gives. Inputs that are not float64 vectors (lists,
    a strided view, float32) take the checked path and give the same r."""
    rng = np.random.default_rng(8)
    n = arm.n
    a, b = MomentumObserver(arm, 100.0), MomentumObserver(arm, 100.0)
    q, qd, tau = rng.uniform(-1, 1, (3, n))
    for obs in (a, b):
        obs.update(0.0, q, qd, tau)
        obs.update(1e-3, q + 1e-3, qd, tau)
    bad = [(1e-3, q, qd, tau, "not after"), (0.5, q, qd, tau, "sample interval"),
           (2e-3, q, qd, tau[:3], "tau"), (2e-3, q, qd, np.full(n, np.nan), "tau"),
           (2e-3, q, qd, np.r_[tau[:-1], np.inf], "tau")]
    for t, q_, qd_, tau_, why in bad:
        with pytest.raises(ObserverError, match=why):
            a.update(t, q_, qd_, tau_)
    for q_ in (q[:3], np.r_[q[:-1], np.nan]):
        with pytest.raises(rc.InputError, match="'q'"):
            a.update(2e-3, q_, qd, tau)
    with pytest.raises(rc.InputError, match="'qd'"):
        a.update(2e-3, q, np.r_[qd[:-1], np.inf], tau)
    with pytest.raises(ObserverError, match="one sample"):
        a.update(2e-3, np.stack([q, q]), np.stack([qd, qd]), tau)
    assert a.t == b.t == 1e-3
    np.testing.assert_array_equal(a.r, b.r)
    np.testing.assert_array_equal(a.update(2e-3, q, qd, tau), b.update(2e-3, q, qd, tau))
    wide = np.zeros((n, 2))
    wide[:, 0] = qd
    for k, (q_, qd_, tau_) in enumerate([(list(q), qd, tau), (q, wide[:, 0], tau), (q, qd, tau.astype(np.float32)),
                                         (q, qd, list(tau))]):
        t = 3e-3 + k * 1e-3
        r_a = a.update(t, q_, qd_, tau_)
        r_b = b.update(t, q, qd, np.asarray(tau_, dtype=float))
        assert rel_err(r_a, r_b) < FAST_TOL


def test_own_gravity_and_gain_settings(arm):
    """set_gravity (resets r) with a bad vector is refused by the checked path at the next sample, naming
    gravity; set_gain validates and keeps r; the gain property sets it too."""
    obs = MomentumObserver(arm, 50.0)
    z, q = np.zeros(arm.n), np.full(arm.n, 0.4)
    obs.update(0.0, q, z, z)
    obs.update(1e-3, q, z, np.ones(arm.n))
    r = obs.r.copy()
    assert np.abs(r).max() > 0
    obs.set_gain([20.0] * arm.n)
    np.testing.assert_array_equal(obs.r, r)
    np.testing.assert_array_equal(obs.gain, 20.0)
    with pytest.raises(ObserverError, match="gain"):
        obs.set_gain(-1.0)
    np.testing.assert_array_equal(obs.gain, 20.0)
    obs.gain = 30.0
    np.testing.assert_array_equal(obs.gain, 30.0)
    obs.update(2e-3, q, z, np.ones(arm.n))
    # 1 - 30e-3 on the old r plus the gain times the momentum balance
    assert rel_err(obs.r, (1 - 30.0 * 1e-3) * r + 30.0 * (0 - 1e-3 * (np.ones(arm.n) + expected_beta(obs, q, z)))) < 1e-12
    for bad, why in (([0.0, 0.0, np.nan], "gravity"), ([0.0, 9.81], "gravity")):
        obs.set_gravity(bad)
        assert obs.t is None and not obs.r.any()
        with pytest.raises(rc.InputError, match=why):
            obs.update(0.0, q, z, z)
    obs.set_gravity(None)
    obs.update(0.0, q, z, z)
    assert rel_err(obs._beta, -dyn.gravity_torques(arm, q)) < 1e-12


def test_warm_up_leaves_nothing_to_compile(arm):
    """After MomentumObserver.warm_up, samples (taken and refused) compile and load nothing."""
    from rne_control.control.warmup import CompileMonitor
    obs = MomentumObserver(arm, 50.0)
    obs.warm_up()
    mon = CompileMonitor()
    mon.start()
    try:
        z = np.zeros(arm.n)
        obs.update(0.0, z, z, z)
        obs.update(1e-3, z, z, z)
        with pytest.raises(ObserverError):
            obs.update(1e-3, z, z, z)
        with pytest.raises(rc.InputError):
            obs.update(2e-3, z[:2], z, z)
        assert mon.compiles == [] and mon.new_signatures() == {}
    finally:
        mon.stop()
    assert _observer.ready() is obs._update_one


def test_rne_compile_warms_the_observer(monkeypatch):
    """rne_compile's tree group runs each plant's cycle warm-up, whose core steps include the observer's (the
    compiled update and its checked path)."""
    from rne_control import compile as rc_compile
    from rne_control.control.warmup import CORE, cycle_steps
    seen = []
    monkeypatch.setattr(rc_compile, "_cycle_and_sim", lambda plant, groups: seen.append((plant, groups)))
    rc_compile._group("tree")
    assert len(seen) == 2 and all(CORE in groups for _, groups in seen)
    from rne_control.control.cycle import ControlCycle
    from rne_control.control.settings import Settings
    plant = seen[0][0]
    labels = [label for label, _ in cycle_steps(ControlCycle(plant, Settings.of(plant)), (CORE,))]
    assert "the momentum observer" in labels, labels