"""The shaped task-space target: a new target pose is approached along a smooth path no faster than
``max_cartesian_velocity``, and the laws take the path's pose, twist and acceleration.

A path is one segment from the shaped pose at the moment the target arrived, (p_0, R_0), moving with the
shaped twist and acceleration of that moment, to the new target (p_1, R_1), at rest at its end: per axis a
quintic x(tau) with x(0) = x_0, dx(0) = v_0, ddx(0) = a_0 and x(T) = x_1, dx(T) = ddx(T) = 0 (tau = t - t_0,
s). The axes are the position p (m) and the rotation vector phi (rad) of R(tau) = exp([phi(tau)]x) R_0, with
phi_1 = log(R_1 R_0^T): the shortest way round, whichever sign the target's quaternion has. The angular
velocity (base axes) is w = J_l(phi) dphi/dtau (rotation.py); the angular acceleration is its central
difference over +-DIFF_STEP. From rest that is the minimum-jerk path, whose peak speed is 15/8 of the mean.

The duration T is the shortest, from 15/8 distance / limit on (and at least MIN_DURATION), stretched by
STRETCH until the largest |dp| and |dphi| sampled along the segment are within the limits (|w| <= |dphi|:
J_l's singular values are at most 1). A limit of 0 turns shaping off: the target steps.

A segment is a float64 array (SEGMENT): t_0, T, the 6 x 6 coefficients (per axis, of tau^0 .. tau^5) and
R_0 (row-major). :func:`sample_segment` is compiled and runs inside the task-space kernel; :func:`plan`
runs in Python when a target arrives.
"""
from __future__ import annotations


import numpy as np
from numba import njit

from ..trajectory import quintic_coefficients
from .rotation import left_jacobian_mul, log, rotation_exp

T0, DURATION, COEF, ROT0 = 0, 1, 2, 38
SEGMENT = 47
MIN_DURATION = 0.1     # s: the shortest path (a 2 cm step then peaks at 2.9 m/s^2)
STRETCH = 1.1          # factor by which T grows until the path keeps to the limits
MAX_STRETCHES = 80
SAMPLES = 64           # points per segment at which its speeds are checked
DIFF_STEP = 1e-4       # s


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _poly(S, axis, tau, d):
    """The d-th derivative (0, 1, 2) of the segment's quintic on ``axis`` at tau."""
    c = S[COEF + 6 * axis:COEF + 6 * axis + 6]
    if d == 0:
        return c[0] + tau * (c[1] + tau * (c[2] + tau * (c[3] + tau * (c[4] + tau * c[5]))))
    if d == 1:
        return c[1] + tau * (2.0 * c[2] + tau * (3.0 * c[3] + tau * (4.0 * c[4] + tau * 5.0 * c[5])))
    return 2.0 * c[2] + tau * (6.0 * c[3] + tau * (12.0 * c[4] + tau * 20.0 * c[5]))


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _angular_velocity(S, tau, phi, dphi, w):
    for i in range(3):
        phi[i] = _poly(S, 3 + i, tau, 0)
        dphi[i] = _poly(S, 3 + i, tau, 1)
    left_jacobian_mul(phi, dphi, w)


@njit(cache=True, nogil=True, error_model="numpy")
def sample_segment(S, t, p, R, xd, xdd, V, E):
    """The shaped target at time t (s): position p (3,) m, rotation R (3x3), twist xd = [v; w] (6,) and
    acceleration xdd = [a; dw] (6,), base axes. Before t_0 the segment's start, after t_0 + T its end at rest.
    V (5, >= 3) and E (3x3): work arrays."""
    T = S[DURATION]
    tau = min(max(t - S[T0], 0.0), T)
    moving = tau < T
    phi, dphi, w, wp, wm = V[0, :3], V[1, :3], V[2, :3], V[3, :3], V[4, :3]
    for i in range(3):
        p[i] = _poly(S, i, tau, 0)
        xd[i] = _poly(S, i, tau, 1) if moving else 0.0
        xdd[i] = _poly(S, i, tau, 2) if moving else 0.0
    _angular_velocity(S, tau, phi, dphi, w)
    rotation_exp(phi, E)
    for r in range(3):
        for c in range(3):
            R[r, c] = E[r, 0] * S[ROT0 + c] + E[r, 1] * S[ROT0 + 3 + c] + E[r, 2] * S[ROT0 + 6 + c]
    if moving:
        _angular_velocity(S, tau + DIFF_STEP, phi, dphi, wp)
        _angular_velocity(S, tau - DIFF_STEP, phi, dphi, wm)
        for i in range(3):
            xd[3 + i] = w[i]
            xdd[3 + i] = (wp[i] - wm[i]) / (2.0 * DIFF_STEP)
    else:
        for i in range(3, 6):
            xd[i] = 0.0
            xdd[i] = 0.0


@njit(cache=True, nogil=True, error_model="numpy")
def sample(S, t, p, R, xd, xdd):
    """:func:`sample_segment`, callable from Python."""
    sample_segment(S, t, p, R, xd, xdd, np.empty((5, 3)), np.empty((3, 3)))


def hold(p, R, t=0.0) -> np.ndarray:
    """A segment that holds the pose (p, R) from time t."""
    S = np.zeros(SEGMENT)
    S[T0] = t
    S[COEF + np.arange(3) * 6] = p
    S[ROT0:] = np.asarray(R, float).reshape(9)
    return S


def _peaks(C, T):
    """The largest |dp| and |dphi| along coefficients C (6, 6) over [0, T]."""
    tau = np.linspace(0.0, T, SAMPLES)
    powers = np.vstack([np.zeros_like(tau)] + [k * tau ** (k - 1) for k in range(1, 6)])   # d/dtau tau^k
    v = C @ powers                                                                         # (6, SAMPLES)
    return float(np.max(np.linalg.norm(v[:3], axis=0))), float(np.max(np.linalg.norm(v[3:], axis=0)))


def plan(S, t, p1, R1, limits) -> np.ndarray:
    """The segment from the shaped target of segment S at time t (s), with its twist and acceleration, to the
    pose (p1 (3,) m, R1 (3x3)) at rest, within ``limits`` = (m/s, rad/s) (0: no shaping, the target steps)."""
    p0, R0, xd, xdd = np.empty(3), np.empty((3, 3)), np.empty(6), np.empty(6)
    sample(S, t, p0, R0, xd, xdd)
    v_max, w_max = float(limits[0]), float(limits[1])
    p1 = np.asarray(p1, float)
    R1 = np.asarray(R1, float)
    if v_max <= 0.0 or w_max <= 0.0:
        return hold(p1, R1, t)
    phi1 = log(R1 @ R0.T)
    x0, x1 = np.r_[p0, 0.0, 0.0, 0.0], np.r_[p1, phi1]
    d_lin, d_ang = float(np.linalg.norm(p1 - p0)), float(np.linalg.norm(phi1))
    if d_lin == 0.0 and d_ang == 0.0 and not np.any(xd) and not np.any(xdd):
        return hold(p1, R1, t)
    T = max(1.875 * d_lin / v_max, 1.875 * d_ang / w_max, MIN_DURATION)
    for _ in range(MAX_STRETCHES):
        C = quintic_coefficients(x0, xd, xdd, x1, 0.0, 0.0, T)
        v, w = _peaks(C, T)
        if v <= v_max * (1.0 + 1e-9) and w <= w_max * (1.0 + 1e-9):
            break
        T *= STRETCH
    S = np.zeros(SEGMENT)
    S[T0], S[DURATION] = t, T
    S[COEF:ROT0] = C.reshape(36)
    S[ROT0:] = R0.reshape(9)
    return S
