"""Inverse and forward dynamics of a Gough-Stewart platform by Khalil's method (Khalil 2010, §5):

    Gamma = J_p^T [ F_p + sum_i J_vi^T J_i^-T Gamma_i ]                                    (66)

F_p is the platform's Newton-Euler wrench (eq. 9) at its origin, Gamma_i the inverse dynamics of leg i
alone (its U-P chain, by the recursive Newton-Euler kernel of rnea.py, friction of the actuator included),
J_i^-T Gamma_i the force at B_i that stands for it, and J_vi = [I_3  -hat(P_i)] (eq. 65), so that
J_vi^T F = [F; P_i x F]. The bracket is the robot's dynamic model in the platform's Cartesian space,
W(accel) = Lambda accel + h; forward dynamics solves it for accel with Lambda built column by column.
Conventions and the kernel arrays: see kinematics.py. Wrenches are [force; moment] about the
platform origin, base coordinates.
"""
import numpy as np

from ...model.layout import N_LEGS, ROW_GRAVITY, ROW_PLATFORM
from ..direct import keep_alive, unmanaged
from .kinematics import (F_ACCEL, F_FEXT, F_POSE, F_Q, F_QD, F_QDD, F_TAU, F_TWIST, LENGTH, LEG_TOL, NONFINITE,
                         SCRATCH, SINGULAR_JP, SINGULAR_LEG, SINGULAR_MASS, ZERO_QUAT, carve, cross, finite_status,
                         inverse_jacobian, joint_to_cartesian, leg_motion, lu_solve, pose_rotation, scratch, st,
                         stroke_status)
from ..rnea import NO_FEXT, rnea
from ..primitives import entry, jit, split


@jit
def platform_wrench(PK, R, twist, accel, fext, W, t):
    """W = F_p - f_ext: Newton-Euler at the platform origin (Khalil eq. 9 moved to the origin), base
    coordinates, with h = R (m c) and I_O = R I_o R^T:
        f = m a + dw x h + w x (w x h) - m g,    n = I_O dw + w x (I_O w) + h x (a - g)."""
    par, g = PK[ROW_PLATFORM], PK[ROW_GRAVITY]
    m = par[0]
    h, Iw, Ia = t[0], t[1], t[2]
    for k in range(3):
        h[k] = R[k, 0] * par[1] + R[k, 1] * par[2] + R[k, 2] * par[3]
    w, dw = twist[3:6], accel[3:6]
    # I_O x = R I_o R^T x, with I_o = [[I00, I01, I02], [I01, I11, I12], [I02, I12, I22]] = par[4:10]
    for j, x in ((0, w), (1, dw)):
        y = t[3]
        for k in range(3):
            y[k] = R[0, k] * x[0] + R[1, k] * x[1] + R[2, k] * x[2]
        z0 = par[4] * y[0] + par[7] * y[1] + par[8] * y[2]
        z1 = par[7] * y[0] + par[5] * y[1] + par[9] * y[2]
        z2 = par[8] * y[0] + par[9] * y[1] + par[6] * y[2]
        out = Iw if j == 0 else Ia
        for k in range(3):
            out[k] = R[k, 0] * z0 + R[k, 1] * z1 + R[k, 2] * z2
    cross(dw, h, W[0:3])
    cross(w, h, t[3])
    cross(w, t[3], t[4])
    cross(w, Iw, W[3:6])
    for k in range(3):
        W[k] += m * (accel[k] - g[k]) + t[4][k] - fext[k]
        W[3 + k] += Ia[k] - fext[3 + k]
        t[3][k] = accel[k] - g[k]
    cross(h, t[3], t[4])
    for k in range(3):
        W[3 + k] += t[4][k]


@jit
def cartesian_wrench(PK, LK, pose, R, twist, accel, fext, flags, W, Jinv, qlen, U, P, lq, lqd, lqdd, gam, E, t):
    """The bracket of eq. (66): W = F_p + sum_i J_vi^T J_i^-T Gamma_i (base coordinates, about the platform
    origin), and J_p^-1 (Jinv) at the pose. Returns a status."""
    inverse_jacobian(PK, pose, R, Jinv, qlen, U, P)
    platform_wrench(PK, R, twist, accel, fext, W, t)
    F, m = t[0], t[1]
    for i in range(N_LEGS):
        q = qlen[i]
        alpha = leg_motion(PK, i, q, U[i], P[i], twist, accel, lq, lqd, lqdd, E)
        if abs(alpha) < LEG_TOL or q < LEG_TOL:
            return st(SINGULAR_LEG, i)
        tree, dyn, ws, _ = split(LK[i])
        code = rnea(tree, dyn, lq, lqd, lqdd, NO_FEXT, flags, gam, ws)   # Gamma_i, the leg alone
        if code:
            return st(NONFINITE, F_POSE)
        # F = J_i^-T Gamma_i in the leg frame [e1, e2, u] (J_i: see leg_motion)
        for k in range(3):
            F[k] = gam[1] / q * E[0, k] - gam[0] / (q * alpha) * E[1, k] + gam[2] * E[2, k]
            W[k] += F[k]
        cross(P[i], F, m)             # J_vi^T F = [F; P_i x F]   (eq. 65)
        for k in range(3):
            W[3 + k] += m[k]
    return 0


@jit
def cartesian_id(PK, LK, pose, twist, accel, fext, flags, out, R, W, Jinv, qlen, U, P, lq, lqd, lqdd, gam, E, t, M):
    """out = Gamma by eq. (66): solve (J_p^-1)^T Gamma = W."""
    code = cartesian_wrench(PK, LK, pose, R, twist, accel, fext, flags, W, Jinv, qlen, U, P, lq, lqd, lqdd, gam, E, t)
    if code:
        return code
    bad = lu_solve(Jinv, W, out, M, True)
    return st(SINGULAR_JP, bad) if bad >= 0 else 0


@jit
def cartesian_fd(PK, LK, pose, twist, tau, fext, flags, out, R, W, Jinv, qlen, U, P, lq, lqd, lqdd, gam, E, t, M,
                 Lam, h, e):
    """out = accel with Lambda accel + h = (J_p^-1)^T tau (the bracket of eq. 66 equal to the actuators'
    wrench J_p^-T tau). Lambda's columns are W(e_k) - h. Also leaves Lambda in Lam."""
    for k in range(6):
        e[k] = 0.0
    code = cartesian_wrench(PK, LK, pose, R, twist, e, fext, flags, h, Jinv, qlen, U, P, lq, lqd, lqdd, gam, E, t)
    if code:
        return code
    for c in range(6):
        e[c] = 1.0
        cartesian_wrench(PK, LK, pose, R, twist, e, fext, flags, W, Jinv, qlen, U, P, lq, lqd, lqdd, gam, E, t)
        e[c] = 0.0
        for r in range(6):
            Lam[r, c] = W[r] - h[r]
    for r in range(6):  # rhs = J_p^-T tau - h
        s = -h[r]
        for i in range(N_LEGS):
            s += Jinv[i, r] * tau[i]
        W[r] = s
    bad = lu_solve(Lam, W, out, M, False)
    return st(SINGULAR_MASS, bad) if bad >= 0 else 0


# ---------------------------------------------------------------------------- entry points (stacked)
@jit
def _id(PK, LK, pose, twist, accel, fext, flags, out, buf):
    R, W, Jinv, qlen, U, P, lq, lqd, lqdd, gam, E, t, M = scratch(buf)
    for s in range(pose.shape[0]):
        code = (finite_status(pose[s], F_POSE) or finite_status(twist[s], F_TWIST)
                or finite_status(accel[s], F_ACCEL) or finite_status(fext[s], F_FEXT))
        if not code:
            code = 0 if pose_rotation(pose[s], R) else st(ZERO_QUAT, 0)
        if not code:
            code = cartesian_id(PK, LK, pose[s], twist[s], accel[s], fext[s], flags, out[s], R, W, Jinv, qlen, U, P,
                                lq, lqd, lqdd, gam, E, t, M) or stroke_status(PK, qlen)
        if code:
            return code, s
    return 0, 0


@entry
def id_many(PK, LK, pose, twist, accel, fext, flags, out):
    """Gamma (N, 6) from pose (N, 7), twist (N, 6), accel (N, 6), fext (N, 6). Returns (status, sample)."""
    buf = np.empty(SCRATCH)
    return keep_alive(buf, _id(unmanaged(PK), unmanaged(LK), unmanaged(pose), unmanaged(twist), unmanaged(accel),
                               unmanaged(fext), flags, unmanaged(out), unmanaged(buf)))


@jit
def _fd(PK, LK, pose, twist, tau, fext, flags, out, buf):
    R, W, Jinv, qlen, U, P, lq, lqd, lqdd, gam, E, t, M = scratch(buf)
    Lam, h, e = carve(buf, SCRATCH, 6, 6), buf[SCRATCH + 36:SCRATCH + 42], buf[SCRATCH + 42:SCRATCH + 48]
    for s in range(pose.shape[0]):
        code = (finite_status(pose[s], F_POSE) or finite_status(twist[s], F_TWIST)
                or finite_status(tau[s], F_TAU) or finite_status(fext[s], F_FEXT))
        if not code:
            code = 0 if pose_rotation(pose[s], R) else st(ZERO_QUAT, 0)
        if not code:
            code = cartesian_fd(PK, LK, pose[s], twist[s], tau[s], fext[s], flags, out[s], R, W, Jinv, qlen, U, P,
                                lq, lqd, lqdd, gam, E, t, M, Lam, h, e) or stroke_status(PK, qlen)
        if code:
            return code, s
    return 0, 0


@entry
def fd_many(PK, LK, pose, twist, tau, fext, flags, out):
    """accel (N, 6) from pose (N, 7), twist (N, 6), tau (N, 6), fext (N, 6). Returns (status, sample)."""
    buf = np.empty(SCRATCH + 48)
    return keep_alive(buf, _fd(unmanaged(PK), unmanaged(LK), unmanaged(pose), unmanaged(twist), unmanaged(tau),
                               unmanaged(fext), flags, unmanaged(out), unmanaged(buf)))


@jit
def _joint(PK, LK, q, qd, x, flags, mode, pose, out, buf):
    R, W, Jinv, qlen, U, P, lq, lqd, lqdd, gam, E, t, M = scratch(buf)
    k = SCRATCH
    Lam, Jp = carve(buf, k, 6, 6), carve(buf, k + 36, 6, 6)
    h, e, f, dx = buf[k + 72:k + 78], buf[k + 78:k + 84], buf[k + 84:k + 90], buf[k + 90:k + 96]
    twist, accel, fext, z6 = buf[k + 96:k + 102], buf[k + 102:k + 108], buf[k + 108:k + 114], buf[k + 114:k + 120]
    res, col = buf[k + 120:k + 126], buf[k + 126:k + 132]
    fext[:] = 0.0
    z6[:] = 0.0
    N = q.shape[0]
    if (q.shape[1] != N_LEGS or qd.shape != q.shape or x.shape != q.shape or pose.shape[0] != N or pose.shape[1] != 7
            or out.shape[0] != N or out.shape[1] != (36 if mode == 2 else N_LEGS)):
        return st(LENGTH, 0), 0
    xf = F_QDD if mode == 0 else F_TAU
    if finite_status(pose[0], F_POSE):
        return st(NONFINITE, F_POSE), 0
    for s in range(q.shape[0]):
        code = finite_status(q[s], F_Q) or finite_status(qd[s], F_QD) or finite_status(x[s], xf)
        if code:
            return code, s
        if s > 0:
            pose[s] = pose[s - 1]
        code = joint_to_cartesian(PK, q[s], qd[s], x[s] if mode == 0 else z6, pose[s], twist, accel, R, Jinv, qlen,
                                  U, P, f, dx, M, lq, lqd, lqdd, E)
        if code:
            return code, s
        if mode == 0:
            code = cartesian_id(PK, LK, pose[s], twist, accel, fext, flags, out[s], R, W, Jinv, qlen, U, P, lq, lqd,
                                lqdd, gam, E, t, M)
        else:
            code = cartesian_fd(PK, LK, pose[s], twist, x[s] if mode == 1 else z6, fext, flags, res, R, W, Jinv, qlen,
                                U, P, lq, lqd, lqdd, gam, E, t, M, Lam, h, e)
        if code:
            return code, s
        if mode == 1:  # qdd = J_p^-1 accel + the legs' velocity-product qdd_i
            for i in range(N_LEGS):
                leg_motion(PK, i, qlen[i], U[i], P[i], twist, res, lq, lqd, lqdd, E)
                out[s, i] = lqdd[2]
        elif mode == 2:  # J_p^T Lambda J_p, with J_p column by column
            for c in range(6):
                for k in range(6):
                    f[k] = 1.0 if k == c else 0.0
                bad = lu_solve(Jinv, f, col, M, False)
                if bad >= 0:
                    return st(SINGULAR_JP, bad), s
                for k in range(6):
                    Jp[k, c] = col[k]
            for r in range(6):
                for c in range(6):
                    acc = 0.0
                    for a in range(6):
                        for b in range(6):
                            acc += Jp[a, r] * Lam[a, b] * Jp[b, c]
                    out[s, 6 * r + c] = acc
    return 0, 0


@entry
def joint_many(PK, LK, q, qd, x, flags, mode, pose, out):
    """Actuator coordinates, N samples; pose (N, 7) holds the forward-kinematics guess in row 0 and receives
    every sample's pose (each sample warm-starts from the previous one). mode 0: inverse dynamics, x = qdd,
    out (N, 6) = Gamma; mode 1: forward dynamics, x = tau, out (N, 6) = qdd; mode 2: out (N, 36) = the mass
    matrix J_p^T Lambda J_p, row-major (x unused). Returns (status, sample)."""
    buf = np.empty(SCRATCH + 144)
    return keep_alive(buf, _joint(unmanaged(PK), unmanaged(LK), unmanaged(q), unmanaged(qd), unmanaged(x), flags,
                                  mode, unmanaged(pose), unmanaged(out), unmanaged(buf)))
