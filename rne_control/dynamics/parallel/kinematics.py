"""Kinematics of a Gough-Stewart platform with U-P-S legs (Khalil 2010, §5): inverse kinematics, the
inverse Jacobian J_p^-1, forward kinematics by Newton-Raphson, and each leg's joint motion.

Conventions (base coordinates throughout): a pose is [p; quat], p the platform origin, quat = [x, y, z, w]
taking platform to base; a twist is [v; w] of the platform origin; an acceleration is its classical time
derivative [a; dw]. P_i = R b_i is the platform point B_i relative to the platform origin, L_i = p + P_i - A_i
the leg vector, q_i = |L_i| the leg length and u_i = L_i / q_i.

The platform kernel array PK (see rne_control.model.parallel): row i < 6 holds A_i (0:3), b_i (3:6) and the
leg's reference axes x0 (6:9, the universal joint's first axis a1), y0 (9:12), z0 (12:15) and its stroke
[lower, upper] (15:17, m); row 6 the platform's inertial parameters [m, h, I_o] (platform frame); row 7
gravity (m/s^2, base frame).
"""
import math

import numpy as np

from ...model.layout import N_LEGS
from ..direct import keep_alive, unmanaged
from ..primitives import entry, inline, jit

# Status codes: kind * 100 + index (leg, or the input field of NONFINITE); decoded in api.py.
NONFINITE, SINGULAR_JP, SINGULAR_LEG, NO_CONVERGENCE, ZERO_QUAT, SINGULAR_MASS, LENGTH, OUT_OF_STROKE = range(1, 9)
F_POSE, F_TWIST, F_ACCEL, F_Q, F_QD, F_QDD, F_TAU, F_FEXT = 0, 1, 2, 3, 4, 5, 6, 7
PIVOT_TOL = 1e-10     # relative pivot below which a 6x6 matrix is singular
LEG_TOL = 1e-9        # |a1 . e1| (universal joint) or leg length (m) below which a leg is singular
FK_TOL = 1e-12        # m: forward kinematics converges when every leg-length residual is below this
FK_MAXIT = 60
FK_MAXSTEP = 0.25     # m or rad: a Newton step is scaled down to this, for far-away guesses


@inline
def st(kind, idx):
    return kind * 100 + idx


@inline
def finite_status(x, field):
    for k in range(x.shape[0]):
        if not math.isfinite(x[k]):
            return st(NONFINITE, field)
    return 0


@inline
def pose_rotation(pose, R):
    """R (3, 3) of the quaternion pose[3:7] = [x, y, z, w] (normalised here; it is written back
    normalised); returns False for a zero quaternion."""
    n = math.sqrt(pose[3] ** 2 + pose[4] ** 2 + pose[5] ** 2 + pose[6] ** 2)
    if not n > 1e-12:
        return False
    x, y, z, w = pose[3] / n, pose[4] / n, pose[5] / n, pose[6] / n
    pose[3], pose[4], pose[5], pose[6] = x, y, z, w
    R[0, 0], R[0, 1], R[0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
    R[1, 0], R[1, 1], R[1, 2] = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
    R[2, 0], R[2, 1], R[2, 2] = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
    return True


@inline
def cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@inline
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def inverse_jacobian(PK, pose, R, Jinv, qlen, U, P):
    """Leg lengths q_i, unit leg vectors u_i (U), P_i = R b_i (P) and the rows [u_i^T, (P_i x u_i)^T] of
    J_p^-1, so that qd = J_p^-1 [v; w] (Khalil §5: qd_i = u_i . (v + w x P_i))."""
    for i in range(N_LEGS):
        for k in range(3):
            P[i, k] = R[k, 0] * PK[i, 3] + R[k, 1] * PK[i, 4] + R[k, 2] * PK[i, 5]
            U[i, k] = pose[k] + P[i, k] - PK[i, k]
        q = math.sqrt(dot(U[i], U[i]))
        qlen[i] = q
        for k in range(3):
            U[i, k] /= q
            Jinv[i, k] = U[i, k]
        cross(P[i], U[i], Jinv[i, 3:6])


@jit
def stroke_status(PK, qlen):
    """OUT_OF_STROKE status of the first leg whose length (of the last inverse_jacobian) is outside its
    stroke, or 0: the pose is unreachable."""
    for i in range(N_LEGS):
        if qlen[i] < PK[i, 15] or qlen[i] > PK[i, 16]:
            return OUT_OF_STROKE * 100 + i
    return 0


@jit
def lu_solve(A, b, x, M, transpose):
    """x = A^-1 b (or A^-T b) for an n x n A by Gaussian elimination with partial pivoting, on the
    scratch M (n, n + 1). Returns -1, or the elimination step whose pivot is below PIVOT_TOL max|A|."""
    n = A.shape[0]
    scale = 0.0
    for r in range(n):
        for c in range(n):
            M[r, c] = A[c, r] if transpose else A[r, c]
            scale = max(scale, abs(M[r, c]))
        M[r, n] = b[r]
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(M[r, c]) > abs(M[piv, c]):
                piv = r
        if not abs(M[piv, c]) > PIVOT_TOL * scale:
            return c
        if piv != c:
            for k in range(c, n + 1):
                M[c, k], M[piv, k] = M[piv, k], M[c, k]
        for r in range(c + 1, n):
            f = M[r, c] / M[c, c]
            if f != 0.0:
                for k in range(c, n + 1):
                    M[r, k] -= f * M[c, k]
    for r in range(n - 1, -1, -1):
        s = M[r, n]
        for k in range(r + 1, n):
            s -= M[r, k] * x[k]
        x[r] = s / M[r, r]
    return -1


@inline
def rotate_quat_left(pose, dphi):
    """quat <- exp(dphi) (x) quat: rotate the platform by the small rotation vector dphi (base frame)."""
    a = math.sqrt(dot(dphi, dphi))
    if a < 1e-300:
        return
    s = math.sin(0.5 * a) / a
    bx, by, bz, bw = dphi[0] * s, dphi[1] * s, dphi[2] * s, math.cos(0.5 * a)
    x, y, z, w = pose[3], pose[4], pose[5], pose[6]
    pose[3] = bw * x + bx * w + by * z - bz * y
    pose[4] = bw * y - bx * z + by * w + bz * x
    pose[5] = bw * z + bx * y - by * x + bz * w
    pose[6] = bw * w - bx * x - by * y - bz * z


@jit
def forward_kinematics(PK, q, pose, R, Jinv, qlen, U, P, f, dx, M):
    """Newton-Raphson on the leg-length residual f = q(pose) - q, whose Jacobian with respect to
    [dp; dphi] (dphi a base-frame rotation) is J_p^-1. pose holds the guess and receives the solution
    (R, Jinv, qlen, U, P at it). Returns a status (0 = every |f_i| <= FK_TOL)."""
    for it in range(FK_MAXIT + 1):
        if not pose_rotation(pose, R):
            return st(ZERO_QUAT, 0)
        inverse_jacobian(PK, pose, R, Jinv, qlen, U, P)
        err = 0.0
        for i in range(N_LEGS):
            f[i] = q[i] - qlen[i]
            err = max(err, abs(f[i]))
        if err <= FK_TOL:
            return 0
        if it == FK_MAXIT or not math.isfinite(err):
            break
        bad = lu_solve(Jinv, f, dx, M, False)
        if bad >= 0:
            return st(SINGULAR_JP, bad)
        size = 0.0
        for k in range(6):
            size = max(size, abs(dx[k]))
        if size > FK_MAXSTEP:
            for k in range(6):
                dx[k] *= FK_MAXSTEP / size
        for k in range(3):
            pose[k] += dx[k]
        rotate_quat_left(pose, dx[3:6])
    return st(NO_CONVERGENCE, 0)


@jit
def leg_motion(PK, i, q, u, P, twist, accel, lq, lqd, lqdd, E):
    """Joint positions lq, rates lqd and accelerations lqdd (theta1, theta2, q_i) of leg i from the
    platform's motion, and the leg frame E = [e1; e2; u] (rows, base coordinates), e2 the universal
    joint's second axis a2. Returns a1 . e1 (zero at the universal joint's singularity).

    B_i moves with v_B = v + w x P_i, a_B = a + dw x P_i + w x (w x P_i). The leg's angular velocity is
    w_L = thd1 a1 + thd2 a2 and v_B = J_i [thd1, thd2, qd] = qd u + q w_L x u, with a1 x u = -(a1.e1) e2
    and a2 x u = e1, so J_i^-1 is read off in the frame [e1, e2, u]. Differentiating once more (a2 turns
    with thd1 a1), a_B = J_i qdd_i + 2 qd w_L x u + q thd1 thd2 (a1 x a2) x u + q w_L x (w_L x u)."""
    a1 = PK[i, 6:9]
    u0x, u0y, u0z = dot(u, PK[i, 6:9]), dot(u, PK[i, 9:12]), dot(u, PK[i, 12:15])
    th2 = math.asin(min(1.0, max(-1.0, u0x)))
    th1 = math.atan2(-u0y, u0z)
    c1, s1 = math.cos(th1), math.sin(th1)
    e1, e2 = E[0], E[1]
    for k in range(3):
        e2[k] = c1 * PK[i, 9 + k] + s1 * PK[i, 12 + k]   # a2 = R0 Rx(theta1) e_y
        E[2, k] = u[k]
    cross(e2, u, e1)
    alpha = dot(a1, e1)
    lq[0], lq[1], lq[2] = th1, th2, q
    if abs(alpha) < LEG_TOL or q < LEG_TOL:
        return alpha
    w = twist[3:6]
    vB = E[3]
    cross(w, P, vB)
    for k in range(3):
        vB[k] += twist[k]
    thd1, thd2, qd = -dot(vB, e2) / (q * alpha), dot(vB, e1) / q, dot(vB, u)
    lqd[0], lqd[1], lqd[2] = thd1, thd2, qd
    # a_B
    r, t = E[4], E[5]
    cross(accel[3:6], P, r)
    cross(w, P, t)
    cross(w, t, vB)
    for k in range(3):
        r[k] += accel[k] + vB[k]
    # r = a_B - (terms without joint accelerations)
    wL = vB
    for k in range(3):
        wL[k] = thd1 * a1[k] + thd2 * e2[k]
    cross(wL, u, t)                  # w_L x u
    for k in range(3):
        r[k] -= 2.0 * qd * t[k]
    cross(wL, t, E[6])               # w_L x (w_L x u)
    for k in range(3):
        r[k] -= q * E[6, k]
    cross(a1, e2, t)                 # (a1 x a2) x u
    cross(t, u, E[6])
    for k in range(3):
        r[k] -= q * thd1 * thd2 * E[6, k]
    lqdd[0], lqdd[1], lqdd[2] = -dot(r, e2) / (q * alpha), dot(r, e1) / q, dot(r, u)
    return alpha


@jit
def joint_to_cartesian(PK, q, qd, qdd, pose, twist, accel, R, Jinv, qlen, U, P, f, dx, M, lq, lqd, lqdd, E):
    """Actuator coordinates to the platform's pose (forward kinematics from the guess in pose), twist
    (J_p^-1 twist = qd) and acceleration (J_p^-1 accel = qdd - the legs' velocity-product qdd_i at zero
    platform acceleration). Returns a status."""
    s = forward_kinematics(PK, q, pose, R, Jinv, qlen, U, P, f, dx, M)
    if s:
        return s
    bad = lu_solve(Jinv, qd, twist, M, False)
    if bad >= 0:
        return st(SINGULAR_JP, bad)
    for k in range(6):
        accel[k] = 0.0
    for i in range(N_LEGS):
        alpha = leg_motion(PK, i, qlen[i], U[i], P[i], twist, accel, lq, lqd, lqdd, E)
        if abs(alpha) < LEG_TOL or qlen[i] < LEG_TOL:
            return st(SINGULAR_LEG, i)
        f[i] = qdd[i] - lqdd[2]
    bad = lu_solve(Jinv, f, accel, M, False)
    if bad >= 0:
        return st(SINGULAR_JP, bad)
    return 0


# ---------------------------------------------------------------------------- scratch
@inline
def carve(buf, k, r, c):
    """A C-contiguous (r, c) view of the scratch buffer at offset k."""
    return buf[k:k + r * c].reshape((r, c))


@inline
def scratch(buf):
    """The kernels' scratch arrays, carved from one allocation (R, W, Jinv, qlen, U, P, lq, lqd, lqdd,
    gam, E, t, M); buf needs SCRATCH entries (an entry point may append its own after them)."""
    return (carve(buf, 0, 3, 3), buf[9:15], carve(buf, 15, 6, 6), buf[51:57], carve(buf, 57, 6, 3),
            carve(buf, 75, 6, 3), buf[93:96], buf[96:99], buf[99:102], buf[102:105], carve(buf, 105, 7, 3),
            carve(buf, 126, 5, 3), carve(buf, 141, 6, 7))


SCRATCH = 183
# The entry points pass their arrays and one scratch allocation to the kernels below as unmanaged views
# (direct.unmanaged): the many small views the kernels take then cost no reference counting.


# ---------------------------------------------------------------------------- entry points (stacked)
@jit
def _ik(PK, pose, q, legq, buf):
    R, W, Jinv, qlen, U, P, lq, lqd, lqdd, gam, E, t, M = scratch(buf)
    z6 = buf[SCRATCH:SCRATCH + 6]
    z6[:] = 0.0
    for s in range(pose.shape[0]):
        x = pose[s]
        if finite_status(x, F_POSE):
            return st(NONFINITE, F_POSE), s
        if not pose_rotation(x, R):
            return st(ZERO_QUAT, 0), s
        inverse_jacobian(PK, x, R, Jinv, q[s], U, P)
        for i in range(N_LEGS):
            alpha = leg_motion(PK, i, q[s, i], U[i], P[i], z6, z6, legq[s, i], lqd, lqdd, E)
            if abs(alpha) < LEG_TOL or q[s, i] < LEG_TOL:
                return st(SINGULAR_LEG, i), s
    return 0, 0


@entry
def ik_many(PK, pose, q, legq):
    """q (N, 6) leg lengths and legq (N, 6, 3) [theta1, theta2, q_i] of each leg, from pose (N, 7).
    Returns (status, sample)."""
    buf = np.empty(SCRATCH + 6)
    return keep_alive(buf, _ik(unmanaged(PK), unmanaged(pose), unmanaged(q), unmanaged(legq), unmanaged(buf)))


@jit
def _jacobian(PK, pose, J, buf):
    R, W, Jinv, qlen, U, P, lq, lqd, lqdd, gam, E, t, M = scratch(buf)
    e, col = buf[SCRATCH:SCRATCH + 6], buf[SCRATCH + 6:SCRATCH + 12]
    for s in range(pose.shape[0]):
        x = pose[s]
        if finite_status(x, F_POSE):
            return st(NONFINITE, F_POSE), s
        if not pose_rotation(x, R):
            return st(ZERO_QUAT, 0), s
        inverse_jacobian(PK, x, R, Jinv, qlen, U, P)
        for c in range(6):
            e[:] = 0.0
            e[c] = 1.0
            bad = lu_solve(Jinv, e, col, M, False)
            if bad >= 0:
                return st(SINGULAR_JP, bad), s
            J[s, :, c] = col
    return 0, 0


@entry
def jacobian_many(PK, pose, J):
    """J_p (N, 6, 6) = (J_p^-1)^-1 at pose (N, 7): twist = J_p qd. Returns (status, sample)."""
    buf = np.empty(SCRATCH + 12)
    return keep_alive(buf, _jacobian(unmanaged(PK), unmanaged(pose), unmanaged(J), unmanaged(buf)))


@jit
def _fk(PK, q, pose, buf):
    R, W, Jinv, qlen, U, P, lq, lqd, lqdd, gam, E, t, M = scratch(buf)
    f, dx = buf[SCRATCH:SCRATCH + 6], buf[SCRATCH + 6:SCRATCH + 12]
    if q.shape[1] != N_LEGS or pose.shape[0] != q.shape[0] or pose.shape[1] != 7:
        return st(LENGTH, 0), 0
    if finite_status(pose[0], F_POSE):
        return st(NONFINITE, F_POSE), 0
    for s in range(q.shape[0]):
        if finite_status(q[s], F_Q):
            return st(NONFINITE, F_Q), s
        if s > 0:
            pose[s] = pose[s - 1]
        code = forward_kinematics(PK, q[s], pose[s], R, Jinv, qlen, U, P, f, dx, M)
        if code:
            return code, s
    return 0, 0


@entry
def fk_many(PK, q, pose):
    """pose (N, 7): the guess in pose[0] on entry; each sample warm-starts from the previous solution.
    Returns (status, sample); on failure pose[sample] holds the last iterate."""
    buf = np.empty(SCRATCH + 12)
    return keep_alive(buf, _fk(unmanaged(PK), unmanaged(q), unmanaged(pose), unmanaged(buf)))
