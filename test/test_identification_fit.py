"""Issue 11: excitation, differentiation, estimation, the physical fit and the model files it writes.

The "true" robot is the nominal model with every link's parameters scaled by a random factor in
[0.7, 1.3] and friction on every joint; torques are simulated with our RNE (tested elsewhere against
Pinocchio), the estimate is compared with K pi_true.
"""
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import rne_control as rc
from rne_control.identification.parameters import consistency_problems, model_with_parameters, pseudo_inertia

ROOT = Path(__file__).parents[1]


def _load(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rc.load_model(str(ROOT / name))


def true_parameters(model, seed=0):
    rng = np.random.default_rng(seed)
    pi = rc.parameter_vector(model).copy()
    nl = len(model.link_names)
    for li in range(nl):
        pi[10 * li:10 * li + 10] *= rng.uniform(0.7, 1.3)  # a scaled link stays physically consistent
    pi[10 * nl:] = np.tile([0.05, 0.5, 0.8], model.n) * rng.uniform(0.5, 1.5, 3 * model.n)
    return pi


@lru_cache(maxsize=None)
def arm7_setup():
    model = _load("config/arm7.yaml")
    bp = rc.base_parameters(model)
    ex = rc.excitation_trajectory(model, 10.0, 5, seed=0, base=bp, maxiter=100)
    pi = true_parameters(model)
    return model, bp, ex, pi, model_with_parameters(model, pi)


def test_excitation_starts_at_rest_within_limits():
    model, bp, ex, _, _ = arm7_setup()
    q0, qd0, qdd0 = ex(0.0)
    lims = model.position_limits
    center = lims.mean(axis=1)
    assert np.allclose(q0, center, atol=1e-12) and np.allclose(qd0, 0, atol=1e-12) and np.allclose(qdd0, 0, atol=1e-12)
    t = np.linspace(0.0, ex.period, 200001)  # 80x denser than the optimiser's grid
    q, qd, qdd = ex(t)
    assert np.all(q >= lims[:, 0]) and np.all(q <= lims[:, 1])
    assert np.all(np.abs(qd) <= model.velocity_limits)
    assert np.allclose(ex(t + ex.period)[0], q, atol=1e-9)  # periodic
    # the reported condition number is that of Y_b (unit-norm columns) on its samples
    tk = np.linspace(0.0, ex.period, ex.samples, endpoint=False)
    Yb = bp.regressor(*ex(tk))
    assert np.linalg.cond(Yb / np.linalg.norm(Yb, axis=0)) == pytest.approx(ex.cond, rel=1e-6)
    assert ex.cond < 100
    # the optimiser improves on its best random start
    start = rc.excitation_trajectory(model, 10.0, 5, seed=0, base=bp, maxiter=0)
    assert ex.cond < 0.9 * start.cond
    # acceleration limits, when given, hold too
    amax = np.full(model.n, 2.0)
    ex2 = rc.excitation_trajectory(model, 10.0, 3, seed=1, base=bp, maxiter=0, restarts=2, accel_limits=amax)
    assert np.all(np.abs(ex2(t)[2]) <= amax)


def test_noise_free_recovery():
    """Analytic derivatives, exact torques: the base parameters to 1e-8 relative (OLS and WLS)."""
    model, bp, ex, pi, truth = arm7_setup()
    t = np.arange(0.0, 10.0, 0.01)
    q, qd, qdd = ex(t)
    tau = rc.inverse_dynamics(truth, q, qd, qdd)
    for method in ("ols", "wls"):
        res = rc.identify(model, q, qd, qdd, tau, method=method, base=bp)
        true_b = bp.K @ pi
        assert np.max(np.abs(res.estimate - true_b) / np.maximum(np.abs(true_b), 1e-3)) < 1e-8
        # result.model has exactly the estimated torques, and is the nominal moved the least distance
        assert np.allclose(rc.inverse_dynamics(res.model, q, qd, qdd), tau, rtol=0, atol=1e-8)
        assert np.allclose(bp.K @ res.pi, res.estimate, rtol=1e-12, atol=1e-12)
        pi0 = rc.parameter_vector(model)
        assert np.allclose(bp.K @ (res.pi - pi0) - (res.estimate - bp.K @ pi0), 0, atol=1e-9)
        # least distance: the correction lies in the row space of K
        dpi = res.pi - pi0
        assert np.allclose(bp.K.T @ np.linalg.lstsq(bp.K.T, dpi, rcond=None)[0], dpi, atol=1e-9)
        assert res.r2.min() > 1 - 1e-12


def _measure(truth, ex, T, seed):
    """1 kHz samples: 0.1 mrad encoder quantisation, torque noise of 1 % of each joint's RMS torque."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, T, 1e-3)
    q, qd, qdd = ex(t)
    tau = rc.inverse_dynamics(truth, q, qd, qdd)
    sigma = 0.01 * np.sqrt((tau ** 2).mean(axis=0))
    return t, q, qd, qdd, tau, np.round(q / 1e-4) * 1e-4, tau + sigma * rng.standard_normal(tau.shape)


def test_realistic_noise():
    model, bp, ex, pi, truth = arm7_setup()
    t, q, _, _, _, q_meas, tau_meas = _measure(truth, ex, 30.0, seed=1)
    # cut-off 30x the highest harmonic (0.5 Hz); decimated to 40 Hz; rows slower than 15 % of each
    # joint's peak speed left out (Coulomb friction near reversals)
    td, qf, qdf, qddf, tauf = rc.differentiate(t, q_meas, tau_meas, cutoff_hz=15.0, decimate=25)
    res = rc.identify(model, qf, qdf, qddf, tauf, base=bp, min_speed=0.15 * np.abs(qdf).max(axis=0))
    z = np.abs(res.estimate - bp.K @ pi) / res.std
    assert np.mean(z <= 3.0) >= 0.95
    # validation on another trajectory: the identified model predicts the measured torque to the noise
    ex2 = rc.excitation_trajectory(model, 8.0, 4, seed=7, base=bp, maxiter=0, restarts=1)
    _, q2, qd2, qdd2, tau2, _, tau2_meas = _measure(truth, ex2, 8.0, seed=2)
    noise_rms = np.sqrt(((tau2_meas - tau2) ** 2).mean(axis=0))
    err = np.sqrt(((rc.inverse_dynamics(res.model, q2, qd2, qdd2) - tau2_meas) ** 2).mean(axis=0))
    assert np.all(err <= 1.5 * noise_rms)
    nominal = np.sqrt(((rc.inverse_dynamics(model, q2, qd2, qdd2) - tau2_meas) ** 2).mean(axis=0))
    assert np.all(nominal > 5 * noise_rms)  # the mismatch is real


def test_physical_fit_is_consistent_and_fits_as_well():
    model, bp, ex, pi, truth = arm7_setup()
    assert not consistency_problems(model, pi)
    rng = np.random.default_rng(5)
    t = np.arange(0.0, 10.0, 0.01)
    q, qd, qdd = ex(t)
    tau = rc.inverse_dynamics(truth, q, qd, qdd)
    tau = tau + 0.01 * np.sqrt((tau ** 2).mean(axis=0)) * rng.standard_normal(tau.shape)
    free = rc.identify(model, q, qd, qdd, tau, base=bp)
    phys = rc.identify(model, q, qd, qdd, tau, base=bp, physical=True)
    assert phys.physically_consistent and not phys.problems
    for li, name in enumerate(model.link_names[1:], start=1):  # the base link is fixed
        assert np.linalg.eigvalsh(pseudo_inertia(phys.pi[10 * li:10 * li + 10]))[0] >= -1e-12
    assert np.all(phys.pi[10 * len(model.link_names):] >= 0)
    ratio = np.sqrt((phys.residual_rms ** 2).sum() / (free.residual_rms ** 2).sum())
    assert 1.0 - 1e-9 <= ratio < 1.10


def test_written_models_load_and_match(tmp_path):
    model, bp, ex, pi, truth = arm7_setup()
    q, qd, qdd = ex(np.arange(0.0, 10.0, 0.02))
    tau = rc.inverse_dynamics(truth, q, qd, qdd)
    for source in ("config/arm7.yaml", "urdf/arm7.urdf"):
        m = _load(source)
        res = rc.identify(m, q, qd, qdd, tau, physical=True)
        files = res.to_yaml(tmp_path / f"{Path(source).stem}_identified.yaml")
        loaded = rc.load_model(files[-1])
        assert loaded.joint_names == m.joint_names
        assert np.allclose(rc.inverse_dynamics(loaded, q, qd, qdd), rc.inverse_dynamics(res.model, q, qd, qdd),
                           rtol=1e-9, atol=1e-9)
        assert np.allclose(rc.inverse_dynamics(loaded, q, qd, qdd), tau, rtol=1e-6, atol=1e-6)
    assert [Path(f).suffix for f in files] == [".urdf", ".yaml"]  # URDF + sidecar
    # an inconsistent result is refused, with the reason
    puma = _load("config/puma560.yaml")  # link 3 breaks the triangle inequality as published
    qp, qdp, qddp = np.random.default_rng(0).uniform(-1, 1, (3, 300, 6))
    res = rc.identify(puma, qp, qdp, qddp, rc.inverse_dynamics(puma, qp, qdp, qddp))
    assert not res.physically_consistent
    with pytest.raises(rc.InputError, match="link3"):
        res.to_yaml(tmp_path / "puma_identified.yaml")


def test_differentiate_resamples_and_filters_alike():
    """Non-uniform stamps; a slow sine: derivatives to the analytic ones, and tau filtered like q."""
    rng = np.random.default_rng(0)
    t = np.cumsum(rng.uniform(0.8e-3, 1.2e-3, 20000))
    w = 2 * np.pi * 0.5
    q = np.column_stack([np.sin(w * t), 0.5 * np.cos(w * t)])
    td, qf, qd, qdd, tauf = rc.differentiate(t, q, q, cutoff_hz=10.0, decimate=10)
    inner = slice(100, -100)
    assert np.allclose(np.diff(td), 10 * np.median(np.diff(t)))
    assert np.allclose(qd[inner, 0], w * np.cos(w * td[inner]), atol=1e-4)
    assert np.allclose(qdd[inner, 0], -w * w * np.sin(w * td[inner]), atol=1e-3)
    assert np.array_equal(qf, tauf)  # the same filter on both


def test_bad_input_is_named():
    model, bp, ex, _, truth = arm7_setup()
    q, qd, qdd = ex(np.arange(0.0, 10.0, 0.05))
    tau = rc.inverse_dynamics(truth, q, qd, qdd)
    with pytest.raises(rc.InputError, match="too few samples"):
        rc.identify(model, q[:20], qd[:20], qdd[:20], tau[:20], base=bp)
    still = q.copy(), qd.copy(), qdd.copy()
    for a, v in zip(still, (0.3, 0.0, 0.0)):
        a[:, 3] = v
    with pytest.raises(rc.InputError, match="joint4.*never move"):
        rc.identify(model, *still, tau, base=bp)
    bad = tau.copy()
    bad[17, 2] = np.nan
    with pytest.raises(rc.InputError, match="'tau' of joint 'arm7_joint3'.*sample 17"):
        rc.identify(model, q, qd, qdd, bad, base=bp)
    with pytest.raises(rc.InputError, match="'qd' has 199 samples"):
        rc.identify(model, q, qd[:-1], qdd, tau, base=bp)
    t = np.arange(len(q)) * 0.05
    with pytest.raises(rc.InputError, match="'tau' has shape"):
        rc.differentiate(t, q, tau[:-1], 2.0, 1)
    with pytest.raises(rc.InputError, match="'q' contains NaN"):
        rc.differentiate(t, np.where(q > 10, 0, q) * np.nan, tau, 2.0, 1)
    with pytest.raises(rc.InputError, match="strictly increasing"):
        rc.differentiate(t[::-1], q, tau, 2.0, 1)
