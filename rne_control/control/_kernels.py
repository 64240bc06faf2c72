"""Small compiled kernels for the control hot path (no allocation per call).

Each kernel works in place on preallocated float64 arrays. They are compiled
lazily by numba on first use (``cache=True``); the controller node calls
:func:`warm_up` once at start so no compilation happens inside the loop.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def poly_eval(coef, k, tau, q, qd, qdd):
    """Evaluate segment ``k`` of a (m, n, 6) polynomial table at local time tau.

    q(tau) = sum_j coef[k, i, j] tau^j, written with its first two derivatives.
    """
    n = q.shape[0]
    for i in range(n):
        c0 = coef[k, i, 0]
        c1 = coef[k, i, 1]
        c2 = coef[k, i, 2]
        c3 = coef[k, i, 3]
        c4 = coef[k, i, 4]
        c5 = coef[k, i, 5]
        q[i] = c0 + tau * (c1 + tau * (c2 + tau * (c3 + tau * (c4 + tau * c5))))
        qd[i] = c1 + tau * (2.0 * c2 + tau * (3.0 * c3 + tau * (4.0 * c4 + tau * 5.0 * c5)))
        qdd[i] = 2.0 * c2 + tau * (6.0 * c3 + tau * (12.0 * c4 + tau * 20.0 * c5))


@njit(cache=True, nogil=True)
def hold_fill(p, q, qd, qdd):
    """q = p, qd = qdd = 0."""
    for i in range(q.shape[0]):
        q[i] = p[i]
        qd[i] = 0.0
        qdd[i] = 0.0


@njit(cache=True, nogil=True, inline="always")
def ct_accel(qdd_d, qd_d, qd, q_d, q, kp, kd, scale, out):
    """The computed-torque acceleration: out = qdd_d + scale * (kd (qd_d - qd) + kp (q_d - q))."""
    for i in range(out.shape[0]):
        out[i] = qdd_d[i] + scale * (kd[i] * (qd_d[i] - qd[i]) + kp[i] * (q_d[i] - q[i]))


@njit(cache=True, nogil=True, inline="always")
def lengths_are(n, arrays):
    """True if every array of the tuple ``arrays`` has n entries (numba does not check bounds)."""
    for v in arrays:
        if v.shape[0] != n:
            return False
    return True


@njit(cache=True, nogil=True)
def ct_reference(qdd_d, qd_d, qd, q_d, q, kp, kd, scale, out):
    """out = qdd_d + scale * (kd (qd_d - qd) + kp (q_d - q)) (:func:`ct_accel`); ValueError if the lengths
    differ."""
    if not lengths_are(out.shape[0], (qdd_d, qd_d, qd, q_d, q, kp, kd)):
        raise ValueError("computed torque: qdd_d, qd_d, q_d, the state, kp and kd need one entry per "
                         "controlled joint")
    ct_accel(qdd_d, qd_d, qd, q_d, q, kp, kd, scale, out)


@njit(cache=True, nogil=True)
def add_pd(q_d, q, qd_d, qd, kp, kd, scale, out):
    """out += scale * (kp (q_d - q) + kd (qd_d - qd))."""
    for i in range(out.shape[0]):
        out[i] += scale * (kp[i] * (q_d[i] - q[i]) + kd[i] * (qd_d[i] - qd[i]))


@njit(cache=True, nogil=True)
def clamp(tau, limit, out, saturated):
    """Clamp tau to [-limit, limit] into out; non-finite entries become 0.

    ``saturated`` (uint8) is set per joint (1 = clamped, 2 = non-finite).
    Returns the number of joints that were clamped or non-finite.
    """
    count = 0
    for i in range(tau.shape[0]):
        x = tau[i]
        lim = limit[i]
        s = 0
        if not math.isfinite(x):
            x = 0.0
            s = 2
        elif x > lim:
            x = lim
            s = 1
        elif x < -lim:
            x = -lim
            s = 1
        out[i] = x
        saturated[i] = s
        if s != 0:
            count += 1
    return count


@njit(cache=True, nogil=True)
def blend_offset(tau, offset, weight):
    """tau += weight * offset."""
    for i in range(tau.shape[0]):
        tau[i] += weight * offset[i]


@njit(cache=True, nogil=True)
def gather(src, src_idx, dst, dst_idx):
    """dst[dst_idx[j]] = src[src_idx[j]]; returns False if any value is non-finite."""
    ok = True
    for j in range(src_idx.shape[0]):
        x = src[src_idx[j]]
        if not math.isfinite(x):
            ok = False
        dst[dst_idx[j]] = x
    return ok


@njit(cache=True, nogil=True)
def merge_measured(pos, vel, src, dst, q, qd, times, t):
    """For each j: q[dst[j]] = pos[src[j]], qd[dst[j]] = vel[src[j]] and times[:, dst[j]] = t, only if all
    these values are finite. Returns -1, or the first j whose position (j) or velocity (m + j, m =
    len(src)) is not finite, with nothing written."""
    m = src.shape[0]
    for j in range(m):
        if not math.isfinite(pos[src[j]]):
            return j
    for j in range(m):
        if not math.isfinite(vel[src[j]]):
            return m + j
    for j in range(m):
        i = dst[j]
        q[i] = pos[src[j]]
        qd[i] = vel[src[j]]
        for r in range(times.shape[0]):
            times[r, i] = t
    return -1


@njit(cache=True, nogil=True)
def first_nonfinite(q, qd, n):
    """The first i < n with q[i] or qd[i] not finite, or -1."""
    for i in range(n):
        if not (math.isfinite(q[i]) and math.isfinite(qd[i])):
            return i
    return -1


@njit(cache=True, nogil=True)
def loop_guess(q, qd, n_active, passive, q_last, guess):
    """A closed-loop state (active joints first, then the passive ones, NaN where not measured): guess =
    q_last with each measured passive joint put in at index passive[j]. Returns -1 - i if active joint i's
    position or velocity is not finite, else the number of passive joints measured."""
    i = first_nonfinite(q, qd, n_active)
    if i >= 0:
        return -1 - i
    for k in range(q_last.shape[0]):
        guess[k] = q_last[k]
    measured = 0
    for j in range(passive.shape[0]):
        x = q[n_active + j]
        if math.isfinite(x):
            guess[passive[j]] = x
            measured += 1
    return measured


@njit(cache=True, nogil=True)
def passive_gap(q, n_active, passive, q_tree, revolute, tolerance):
    """The first measured passive joint j (q[n_active + j], finite) farther than ``tolerance`` from its
    closed value q_tree[passive[j]] (revolute joints modulo 2 pi), or -1."""
    for j in range(passive.shape[0]):
        x = q[n_active + j]
        if math.isfinite(x):
            k = passive[j]
            d = x - q_tree[k]
            if revolute[k]:
                d = (d + math.pi) % (2.0 * math.pi) - math.pi
            if abs(d) > tolerance:
                return j
    return -1


@njit(cache=True, nogil=True)
def take(src, idx, out):
    """out[j] = src[idx[j]]."""
    for j in range(idx.shape[0]):
        out[j] = src[idx[j]]


@njit(cache=True, nogil=True)
def put(src, idx, out):
    """out[idx[j]] = src[j]."""
    for j in range(idx.shape[0]):
        out[idx[j]] = src[j]


def warm_up() -> None:
    """Compile (or load from cache) every kernel once."""
    n = 2
    z = np.zeros(n)
    o = np.ones(n)
    coef = np.zeros((1, n, 6))
    idx = np.arange(n, dtype=np.int64)
    sat = np.zeros(n, dtype=np.uint8)
    poly_eval(coef, 0, 0.1, z.copy(), z.copy(), z.copy())
    hold_fill(z, z.copy(), z.copy(), z.copy())
    ct_reference(z, z, z, z, z, o, o, 1.0, z.copy())
    add_pd(z, z, z, z, o, o, 1.0, z.copy())
    clamp(z, o, z.copy(), sat)
    blend_offset(z.copy(), z, 0.5)
    gather(z, idx, z.copy(), idx)
    gather_finite(z, idx, z.copy(), idx)
    merge_measured(z, z, idx, idx, z.copy(), z.copy(), np.zeros((2, n)), 0.0)
    take(z, idx, z.copy())
    first_nonfinite(z, z, n)
    loop_guess(z, z, 1, idx[1:], z, z.copy())
    passive_gap(z, 1, idx[1:], z, np.zeros(n, dtype=np.bool_), 0.01)
    put(z, idx, z.copy())
    add_friction(z, z, z, z.copy())
    residual_check(z, idx, np.ones((4, n)))


@njit(cache=True, nogil=True)
def add_friction(qd, fs, fv, out):
    """out += Fs sign(qd) + Fv qd."""
    for i in range(out.shape[0]):
        v = qd[i]
        s = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)
        out[i] += fs[i] * s + fv[i] * v


@njit(cache=True, nogil=True)
def gather_finite(src, src_idx, dst, dst_idx):
    """dst[dst_idx[j]] = src[src_idx[j]] where that value is finite (others keep their value)."""
    for j in range(src_idx.shape[0]):
        x = src[src_idx[j]]
        if math.isfinite(x):
            dst[dst_idx[j]] = x


@njit(cache=True, nogil=True)
def residual_check(r, idx, C):
    """The collision test on the observer's residual, on the rows of C (4, n): threshold, feed-forward ff, the
    residual at the controlled joints and its peak. C[2, j] = r[idx[j]]; C[3, j] = max(C[3, j], |C[2, j]|);
    returns how many j have |C[2, j] + ff[j]| > threshold[j] (a NaN residual counts, also where the threshold
    is +inf, "off": see rne_control.control.collision)."""
    hits = 0
    for j in range(idx.shape[0]):
        x = r[idx[j]]
        C[2, j] = x
        a = abs(x)
        if a > C[3, j]:
            C[3, j] = a
        if not abs(x + C[1, j]) <= C[0, j]:
            hits += 1
    return hits
