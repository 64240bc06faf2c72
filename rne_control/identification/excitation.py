"""Exciting trajectories: finite Fourier series (Swevers, Ganseman, Tukel, De Schutter & Van Brussel 1997)
optimised for the condition number of the base regressor (Gautier & Khalil 1992).

Joint j, fundamental w_f = 2 pi / period, L harmonics:

    q_j(t)   = q0_j + sum_l  a_jl / (w_f l) sin(w_f l t) - b_jl / (w_f l) cos(w_f l t)
    qd_j(t)  =        sum_l  a_jl cos(w_f l t) + b_jl sin(w_f l t)
    qdd_j(t) =        sum_l -a_jl w_f l sin(w_f l t) + b_jl w_f l cos(w_f l t)

Starting at rest at q_center fixes, per joint, sum_l a_jl = 0 (qd(0) = 0), sum_l l b_jl = 0 (qdd(0) = 0)
and q0_j = q_center_j + sum_l b_jl / (w_f l) (q(0) = q_center): the free parameters are a_j1..a_j(L-1)
and b_j1..b_j(L-1). Each joint's motion q - q_center, qd and qdd scale together with its coefficients,
so every candidate is scaled per joint to the largest factor that keeps it within the position,
velocity and (if given) acceleration limits, less a margin, checked on a dense grid (DENSE points per
period of the highest harmonic). The optimiser then minimises cond(Y_b with unit-norm columns) over
the trajectory's samples, unconstrained: from the best of several random starts, a (1+1) evolution
strategy with the 1/5th success rule (derivative-free: the per-joint scaling and the extreme singular
values make the objective non-smooth, which defeats gradient methods).
"""
import numpy as np

from ..model.errors import InputError
from .base_parameters import base_parameters

DENSE = 50


class Excitation:
    """A periodic exciting trajectory: call it with t (s, scalar or array) for (q, qd, qdd) of shapes
    (n,) or (len(t), n). ``coefficients`` = {"a", "b": (n, L) (rad/s), "q0": (n,) (rad)}, ``period`` (s),
    ``cond`` (condition number of Y_b with unit-norm columns over ``samples`` points of one period)."""

    def __init__(self, a, b, q0, period, cond, samples):
        self.a, self.b, self.q0, self.period, self.cond, self.samples = a, b, q0, period, cond, samples
        self.coefficients = {"a": a, "b": b, "q0": q0}

    def __call__(self, t):
        return _evaluate(self.a, self.b, self.q0, 2.0 * np.pi / self.period, t)


def _evaluate(a, b, q0, wf, t):
    t = np.asarray(t, float)
    tt = np.atleast_1d(t)[:, None]
    L = a.shape[1]
    wl = wf * np.arange(1, L + 1)
    S, C = np.sin(tt * wl), np.cos(tt * wl)          # (T, L)
    q = q0 + S @ (a / wl).T - C @ (b / wl).T
    qd = C @ a.T + S @ b.T
    qdd = -S @ (a * wl).T + C @ (b * wl).T
    if t.ndim == 0:
        return q[0], qd[0], qdd[0]
    return q, qd, qdd


def _complete(x, n, L, moving):
    """Full (a, b) from the free coefficients: a_jL = -sum a_jl, b_jL = -sum l b_jl / L."""
    free = x.reshape(2, n, L - 1)
    a, b = np.zeros((n, L)), np.zeros((n, L))
    a[:, :-1], b[:, :-1] = free[0], free[1]
    a[:, -1] = -a[:, :-1].sum(axis=1)
    b[:, -1] = -(b[:, :-1] * np.arange(1, L)).sum(axis=1) / L
    a[~moving], b[~moving] = 0.0, 0.0
    return a, b


def _scaled(a, b, wf, center, lo, hi, vmax, amax, grid):
    """(a, b, q0) scaled per joint to the largest motion within the limits (on the dense grid)."""
    L = a.shape[1]
    wl = wf * np.arange(1, L + 1)
    q0 = center + (b / wl).sum(axis=1)
    q, qd, qdd = _evaluate(a, b, q0, wf, grid)
    dq = q - center
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.minimum.reduce([np.where(dq.max(0) > 0, (hi - center) / dq.max(0), np.inf),
                               np.where(dq.min(0) < 0, (lo - center) / dq.min(0), np.inf),
                               vmax / np.abs(qd).max(0), amax / np.abs(qdd).max(0)])
    s = np.where(np.isfinite(s), s, 0.0)
    a, b = a * s[:, None], b * s[:, None]
    return a, b, center + (b / wl).sum(axis=1)


def excitation_trajectory(model, period, harmonics, joints=None, q_center=None, seed=0, accel_limits=None,
                          margin=0.05, samples=None, restarts=8, maxiter=300, base=None):
    """An optimised finite-Fourier-series trajectory of ``period`` (s) with ``harmonics`` (L >= 2) for the
    joints named in ``joints`` (default all; the others stay at q_center): see the module docstring.

    ``q_center`` (n,) (rad, m) defaults to the middle of each joint's position limits (0 if unlimited);
    position limits default to +-pi around it where the model has none. ``accel_limits`` (n,) (rad/s^2)
    is optional; velocity limits are the model's. ``margin``: fraction of each range kept free.
    ``restarts`` random starts, then ``maxiter`` optimiser steps (one cost evaluation each).
    ``seed`` makes the result reproducible. Returns an :class:`Excitation`.
    """
    n, L = model.n, int(harmonics)
    if L < 2:
        raise InputError(f"'harmonics' must be at least 2 (one is spent on starting at rest), got {harmonics}")
    if not period > 0:
        raise InputError(f"'period' must be > 0 s, got {period}")
    moving = np.ones(n, bool)
    if joints is not None:
        moving[:] = False
        for j in joints:
            moving[model.joint_index(j)] = True
    lims = model.position_limits
    if q_center is None:
        finite = np.isfinite(lims).all(axis=1)
        center = np.zeros(n)
        center[finite] = lims[finite].mean(axis=1)
    else:
        center = np.asarray(q_center, float).reshape(-1)
        if center.shape != (n,) or not np.isfinite(center).all():
            raise InputError(f"'q_center' must be {n} finite numbers")
    lo = np.where(np.isfinite(lims[:, 0]), lims[:, 0], center - np.pi)
    hi = np.where(np.isfinite(lims[:, 1]), lims[:, 1], center + np.pi)
    for k in np.flatnonzero((center < lo) | (center > hi)):
        raise InputError(f"q_center of joint '{model.joint_names[k]}' = {center[k]} is outside its limits "
                         f"[{lo[k]}, {hi[k]}]")
    lo, hi = center - (1 - margin) * (center - lo), center + (1 - margin) * (hi - center)
    vmax = (1 - margin) * model.velocity_limits
    amax = np.full(n, np.inf) if accel_limits is None else (1 - margin) * np.asarray(accel_limits, float)
    wf = 2.0 * np.pi / period
    grid = np.linspace(0.0, period, DENSE * L + 1)
    bp = base or base_parameters(model, seed)
    count = samples or max(100, 4 * bp.b // max(1, int(moving.sum())))
    tk = np.linspace(0.0, period, count, endpoint=False)

    def cond_of(x):
        a, b, q0 = _scaled(*_complete(x, n, L, moving), wf, center, lo, hi, vmax, amax, grid)
        Yb = bp.regressor(*_evaluate(a, b, q0, wf, tk))
        norms = np.linalg.norm(Yb, axis=0)
        keep = norms > 1e-9 * max(norms.max(), 1e-300)
        Ys = Yb[:, keep] / norms[keep]
        ev = np.linalg.eigvalsh(Ys.T @ Ys)  # sigma^2 of Ys; much cheaper than an SVD of the tall Ys
        return 0.5 * np.log(ev[-1] / ev[0]) if ev[0] > 0 else 80.0

    rng = np.random.default_rng(seed)
    starts = [rng.standard_normal(2 * n * (L - 1)) for _ in range(max(1, restarts))]
    values = [cond_of(x) for x in starts]
    x, fx = starts[int(np.argmin(values))], min(values)
    step = 0.3
    for _ in range(maxiter):  # (1+1) evolution strategy with the 1/5th success rule (Rechenberg)
        y = x + step * rng.standard_normal(x.shape)
        fy = cond_of(y)
        if fy < fx:
            x, fx, step = y, fy, step * 1.5
        else:
            step *= 1.5 ** -0.25
    a, b, q0 = _scaled(*_complete(x, n, L, moving), wf, center, lo, hi, vmax, amax, grid)
    return Excitation(a, b, q0, period, float(np.exp(cond_of(x))), count)
