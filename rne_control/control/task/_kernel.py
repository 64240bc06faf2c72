"""The task-space laws in one compiled call on a tree plant on a fixed base (see law.py for the equations).

Per cycle: the measured state completed (tree_state.complete, as the plant's set_state), the end-effector
frame's pose, Jacobian J and
bias acceleration Jdot qd (frames.py), the inertia matrix M (crba.py), the operational-space inertia
Lambda, the shaped target (shaping.py), the pose error, the law, and one RNE (rnea.py). J and M are those
of the controlled joints, the uncontrolled ones held (zero acceleration), as in every plant.

Inputs ``P`` (parameters, float64, layout below), ``S`` (the target segment) and ``t`` (s); outputs the
torques ``tau`` (controlled joints, N m or N) and ``O`` (the task state, layout below), Lambda into ``Lam``.
Returns 0, or the status of the step that refused the state (the caller then takes the plant's set_state,
which raises the error that stands for it). The eigenvector of J J^T's smallest eigenvalue and those of the
double diagonalization persist between calls (``Y[18]``, ``E[2]``) and start the next call's eigensolvers
(``P[WARM]``, ``P[WARM_DD]`` 1).
Compiled with numpy's error model, as the library's kernels: a division by zero gives inf or NaN, which
the cycle's effort limiter replaces by 0 and counts, instead of raising on the cycle path.
"""
import math

from numba import njit

from ...dynamics.crba import crba
from ...dynamics.direct import unmanaged
from ...dynamics.frames import BIAS, JACOBIAN, POSE, frame_kinematics
from ...dynamics.primitives import FRICTION, split
from ...dynamics.rnea import NO_FEXT, rnea_call
from ._linalg import jacobi_eigh, smallest_eigenvalue, spd_inverse
from ..tree_state import NR, QDR, QR, complete
from .rotation import rotation_log
from .shaping import sample_segment

# P: the law's parameters. STIFF/DAMP: impedance K (N/m, N m/rad) and damping ratio, or operational-space
# K_P (1/s^2) and K_D (1/s); WRENCH: F_d (N, N m) at the frame origin, base axes; CLIP: error_clip (m, rad);
# EPS: singular_damping (sigma_min below which damping acts); SCALE: the feedback ramp (0..1); then flags; the
# effort-rate step (N m per cycle; <= 0: none); the null space per controlled joint: stiffness, damping
# ratio, posture
STIFF, DAMP, WRENCH, CLIP, EPS, SCALE, MODE, DESIGN, PROJECTOR, FLAGS, RATE_STEP, WARM, WARM_DD, NULL = (
    0, 6, 12, 18, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29)
IMPEDANCE, OPERATIONAL = 0, 1           # MODE
UNIT_MASS, DOUBLE_DIAGONAL = 0, 1       # DESIGN
DYNAMIC, KINEMATIC = 0, 1               # PROJECTOR

# O: the pose error e = [p - p_d; log(R R_d^T)] before the clip (m, rad); sigma_min(J); the flags (1.0 or
# 0.0): position clipped, rotation clipped, singular (damping acts); lambda^2; the twist xd = J qd; the shaped
# target: p_d, R_d (row-major), xd_d, xdd_d; the frame's pose p, R; the torques J^T F_d
(ERR, SIGMA, CLIPPED_P, CLIPPED_R, SINGULAR, LAMBDA2, TWIST, P_D, R_D, XD_D, XDD_D, P_EE, R_EE, FF) = (
    0, 6, 7, 8, 9, 10, 11, 17, 20, 29, 35, 41, 44, 53)
N_OUT = 53   # + the controlled joints (FF)
N_Z, N_Y = 20, 19   # the scratch's matrices and vectors
NOT_SPD = 900001   # status: M, Lambda^-1 or J J^T + lambda^2 I not positive definite (a non-finite state)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _clip(e, lo, limit, flag_at, O):
    """Scale e[lo:lo+3] down to the norm ``limit``, direction kept; O[flag_at] = 1 if it was."""
    n = math.sqrt(e[lo] ** 2 + e[lo + 1] ** 2 + e[lo + 2] ** 2)
    O[flag_at] = 0.0
    if n > limit:
        for i in range(lo, lo + 3):
            e[i] *= limit / n
        O[flag_at] = 1.0


@njit(cache=True, nogil=True, error_model="numpy")
def _mul(A, B, out, transpose_b):
    """out = A B, or A B^T with ``transpose_b``."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            s = 0.0
            if transpose_b:
                for k in range(A.shape[1]):
                    s += A[i, k] * B[j, k]
            else:
                for k in range(A.shape[1]):
                    s += A[i, k] * B[k, j]
            out[i, j] = s


@njit(cache=True, nogil=True, error_model="numpy")
def _mv(A, x, out, transpose_a):
    """out = A x, or A^T x with ``transpose_a``."""
    for i in range(out.shape[0]):
        s = 0.0
        if transpose_a:
            for k in range(A.shape[0]):
                s += A[k, i] * x[k]
        else:
            for k in range(A.shape[1]):
                s += A[i, k] * x[k]
        out[i] = s


@njit(cache=True, nogil=True, error_model="numpy")
def _damping(P, LA, LAi, e6, U, D, k0, d0):
    """D (6x6) of the impedance: 2 zeta sqrt(K) (UNIT_MASS), or by double diagonalisation of Lambda and K
    (DOUBLE_DIAGONAL). With Lambda^-1 = L L^T (LA; LAi = L^-1), Lambda = Q_0 Q_0^T for Q_0 = L^-T, and K in
    that basis is C = L^T K L = U K_0 U^T: Q = L^-T U gives Lambda = Q Q^T, K = Q K_0 Q^T, and
    D = Q diag(2 zeta_i sqrt(k_0i)) Q^T, zeta_i the axes' ratios weighted by mode i's displacement (column i
    of Q^-T = L U). ``e6``: work matrices, k0 and d0 (6,) work vectors; U: the last call's modes (a warm
    start), then this call's."""
    if P[DESIGN] == UNIT_MASS:
        for i in range(6):
            for j in range(6):
                D[i, j] = 0.0
            D[i, i] = 2.0 * P[DAMP + i] * math.sqrt(P[STIFF + i])
        return
    C, T, Q = e6[0], e6[1], e6[2]
    for i in range(6):                       # C = L^T K L (L lower triangular)
        for j in range(i + 1):
            s = 0.0
            for k in range(i, 6):
                s += LA[k, i] * P[STIFF + k] * LA[k, j]
            C[i, j] = C[j, i] = s
    jacobi_eigh(C, k0, U, P[WARM_DD] == 1.0, T)
    P[WARM_DD] = 1.0
    for i in range(6):
        z, wsum = 0.0, 0.0
        for j in range(6):
            x = 0.0
            for k in range(j + 1):           # (L U)_ji
                x += LA[j, k] * U[k, i]
            z += x * x * P[DAMP + j]
            wsum += x * x
        d0[i] = 2.0 * (z / wsum) * math.sqrt(max(k0[i], 0.0))
        for r in range(6):                   # Q = L^-T U, column i
            s = 0.0
            for k in range(r, 6):
                s += LAi[k, r] * U[k, i]
            Q[r, i] = s
    for r in range(6):
        for c in range(r + 1):
            s = 0.0
            for i in range(6):
                s += Q[r, i] * d0[i] * Q[c, i]
            D[r, c] = D[c, r] = s


@njit(cache=True, error_model="numpy")  # holds the GIL: it works in the model's workspace
def task_step(K, q, qd, plan, work, ctrl, b, Tbf, P, S, t, tau, O, Jf, Mf, pose, acc, E, prev, V, Z, Y):
    """The task-space law of ``P[MODE]`` at the measured state q, qd (the plant's ``state_names`` order,
    completed by ``plan`` into ``work``: tree_state) into ``tau`` (the controlled joints ``ctrl``, indices into
    the joints of K, the plant's restricted model); see the module docstring. ``b``, ``Tbf``: the end-effector
    frame's body and pose on it; Jf (6, nr), Mf (nr, nr), pose (4, 4), acc (6,) and V (2, nr) work arrays;
    E (3, 6, 6): Lambda (out), the eigenvectors of J J^T (a cold start), the damping's modes (kept);
    ``prev``: the last torques, for the effort-rate limit (updated); Z (N_Z, m, m) and Y (N_Y, m), m =
    max(6, nc): scratch, so that a call allocates nothing."""
    st = complete(q, qd, plan, work)
    if st != 0:
        return st
    nc, nr = ctrl.shape[0], plan[NR]
    qr, qdr = work[QR][:nr], work[QDR][:nr]
    Lam = E[0]
    tree, dyn, ws, _ = split(unmanaged(K))
    qdd_r, h = V[0], V[1]                                # the RNE's acceleration and torques, K's joints
    st = frame_kinematics(tree, qr, qdr, b, Tbf, POSE | JACOBIAN | BIAS, pose, Jf, acc, ws)
    if st != 0:
        return st
    st = crba(tree, dyn, qr, Mf, ws)
    if st != 0:
        return st
    q_c, qd_c = Y[0, :nc], Y[1, :nc]
    J, M, Minv, Lc = Z[0, :6, :nc], Z[1, :nc, :nc], Z[2, :nc, :nc], Z[3, :nc, :nc]
    for c in range(nc):
        q_c[c], qd_c[c] = qr[ctrl[c]], qdr[ctrl[c]]
        for r in range(6):
            J[r, c] = Jf[r, ctrl[c]]
        for r in range(nc):
            M[r, c] = Mf[ctrl[r], ctrl[c]]
    if not spd_inverse(M, Lc, Z[4, :nc, :nc], Minv):
        return NOT_SPD
    MJt = Z[5, :nc, :6]
    _mul(Minv, J, MJt, True)                             # M^-1 J^T
    e6 = Z[6:14, :6, :6]
    JJt, A, W = e6[4], Z[14, :6, :6], Z[15, :6, :6]
    _mul(J, J, JJt, True)
    w6 = Y[2, :6]
    # sigma_min(J)^2, the smallest eigenvalue of J J^T: inverse iteration from the last cycle's eigenvector,
    # else (the first cycle, or J J^T singular) Jacobi's full eigensolver, which also gives that vector
    v = Y[18, :6]                                        # kept between calls
    lam_min = smallest_eigenvalue(JJt, v, W, 2) if P[WARM] == 1.0 else math.nan
    if not lam_min == lam_min:
        for i in range(6):
            for j in range(6):
                A[i, j] = JJt[i, j]
        jacobi_eigh(A, w6, E[1], False, W)
        lam_min = w6[0]
        for i in range(6):
            v[i] = E[1][i, 0]
    # the damping of the damped least squares (Nakamura; Chiaverini): lambda^2 = eps^2 - sigma_min^2 below
    # eps, else 0
    sigma = math.sqrt(max(lam_min, 0.0))
    eps = P[EPS]
    lam2 = eps * eps - sigma * sigma if sigma < eps else 0.0
    O[SIGMA], O[SINGULAR], O[LAMBDA2] = sigma, 1.0 if lam2 > 0.0 else 0.0, lam2
    # Lambda = (J M^-1 J^T + lambda^2 mean(diag M^-1) I)^-1: the damping acts on J M^-1 J^T as lambda^2 on J J^T
    _mul(J, MJt, A, False)
    m_inv = 0.0
    for i in range(nc):
        m_inv += Minv[i, i]
    for i in range(6):
        A[i, i] += lam2 * m_inv / nc
    LA, LAi = e6[6], e6[7]                               # Lambda^-1 = LA LA^T, LAi = LA^-1
    if not spd_inverse(A, LA, LAi, Lam):
        return NOT_SPD
    # the shaped target and the pose error
    p_d, R_d, xd_d, xdd_d = O[P_D:P_D + 3], Z[17, :3, :3], O[XD_D:XD_D + 6], O[XDD_D:XDD_D + 6]
    sample_segment(S, t, p_d, R_d, xd_d, xdd_d, Y[13:18], Z[19, :3, :3])
    RRt = Z[18, :3, :3]
    for i in range(3):
        O[P_EE + i] = pose[i, 3]
        for j in range(3):
            O[R_D + 3 * i + j] = R_d[i, j]
            O[R_EE + 3 * i + j] = pose[i, j]
            RRt[i, j] = pose[i, 0] * R_d[j, 0] + pose[i, 1] * R_d[j, 1] + pose[i, 2] * R_d[j, 2]   # R R_d^T
    e = O[ERR:ERR + 6]
    for i in range(3):
        e[i] = pose[i, 3] - p_d[i]
    rotation_log(RRt, e[3:])
    e = Y[12, :6]                                        # O keeps the error before the clip
    for i in range(6):
        e[i] = O[ERR + i]
    _clip(e, 0, P[CLIP], CLIPPED_P, O)
    _clip(e, 3, P[CLIP + 1], CLIPPED_R, O)
    xd = O[TWIST:TWIST + 6]
    _mv(J, qd_c, xd, False)                              # xd = J qd
    s = P[SCALE]
    flags = int(P[FLAGS]) & FRICTION
    kn, zn, qn = P[NULL:NULL + nc], P[NULL + nc:NULL + 2 * nc], P[NULL + 2 * nc:NULL + 3 * nc]
    _mv(J, P[WRENCH:WRENCH + 6], O[FF:FF + nc], True)    # J^T F_d
    kinematic = P[PROJECTOR] == KINEMATIC
    Jp = e6[5]
    if kinematic:                                        # (J J^T + lambda^2 I)^-1 of the damped pseudo-inverse
        for i in range(6):
            JJt[i, i] += lam2
        if not spd_inverse(JJt, W, e6[0], Jp):
            return NOT_SPD
    x6, y6, xc, yc = Y[3, :6], Y[4, :6], Y[5, :nc], Y[6, :nc]
    impedance = P[MODE] == IMPEDANCE
    tau0 = Y[7, :nc]      # impedance: the posture torque tau_0; operational space: the acceleration qdd_0
    a = Y[8, :6]          # operational space: a* - Jdot qd
    for r in range(nr):
        qdd_r[r] = 0.0    # the RNE's acceleration: 0 (h = C qd + g), or the operational-space law's
    if impedance:
        # tau_0 = K_n (q_n - q) - D_n qd, D_n = 2 zeta_n sqrt(K_n M_ii)
        for i in range(nc):
            tau0[i] = s * (kn[i] * (qn[i] - q_c[i]) - 2.0 * zn[i] * math.sqrt(kn[i] * M[i, i]) * qd_c[i])
    else:
        # a* = xdd_d + K_D (xd_d - xd) - K_P e;  qdd_0 = K_n (q_n - q) - 2 zeta_n sqrt(K_n) qd (1/s^2, 1/s)
        for i in range(6):
            a[i] = xdd_d[i] + s * (P[DAMP + i] * (xd_d[i] - xd[i]) - P[STIFF + i] * e[i]) - acc[i]
        for i in range(nc):
            tau0[i] = s * (kn[i] * (qn[i] - q_c[i]) - 2.0 * zn[i] * math.sqrt(kn[i]) * qd_c[i])
        if not kinematic:
            # tau = RNE(q, qd, Jbar (a* - Jdot qd) + Nbar qdd_0) = RNE(q, qd, qdd_0 + Jbar (a* - Jdot qd - J qdd_0)),
            # Jbar = M^-1 J^T Lambda: Khatib's J^T (Lambda a* + mu + p) + Nbar^T (M qdd_0 + C qd + g)
            _mv(J, tau0, y6, False)
            for i in range(6):
                y6[i] = a[i] - y6[i]
            _mv(Lam, y6, x6, False)
            _mv(MJt, x6, xc, False)
            for c in range(nc):
                qdd_r[ctrl[c]] = tau0[c] + xc[c]      # the uncontrolled joints held
    st = rnea_call(tree, dyn, qr, qdr, qdd_r, NO_FEXT, flags, h, ws)
    if st != 0:
        return st
    hc = Y[9, :nc]
    for c in range(nc):
        hc[c] = h[ctrl[c]]
    if impedance:
        # F = -K e - D (xd - xd_d) + F_d;  tau = h + J^T F + Nbar^T tau_0, with Nbar^T tau_0 = tau_0 -
        # J^T Lambda J M^-1 tau_0 (or N^T tau_0 = tau_0 - J^T (J J^T + lambda^2 I)^-1 J tau_0)
        D = Z[16, :6, :6]
        _damping(P, LA, LAi, e6, E[2], D, Y[10, :6], Y[11, :6])
        for i in range(6):
            x6[i] = xd[i] - xd_d[i]
        _mv(D, x6, y6, False)
        for i in range(6):
            x6[i] = P[WRENCH + i] - s * (P[STIFF + i] * e[i] + y6[i])       # F
        if kinematic:
            _mv(J, tau0, y6, False)
            _mv(Jp, y6, w6, False)
        else:
            _mv(Minv, tau0, xc, False)
            _mv(J, xc, y6, False)
            _mv(Lam, y6, w6, False)
        for i in range(6):
            x6[i] -= w6[i]                               # J^T F and the projection in one product
        _mv(J, x6, yc, True)
        for c in range(nc):
            tau[c] = hc[c] + yc[c] + tau0[c]
    elif not kinematic:
        for c in range(nc):
            tau[c] = hc[c]
    else:
        # composed: J^T Lambda (a* - Jdot qd + J M^-1 h) + N^T x, x = M qdd_0 + h
        _mv(MJt, hc, y6, True)                           # J M^-1 h
        for i in range(6):
            y6[i] += a[i]
        _mv(Lam, y6, x6, False)
        _mv(M, tau0, xc, False)
        for c in range(nc):
            xc[c] += hc[c]                               # x
        _mv(J, xc, y6, False)
        _mv(Jp, y6, w6, False)
        for i in range(6):
            x6[i] -= w6[i]
        _mv(J, x6, yc, True)
        for c in range(nc):
            tau[c] = yc[c] + xc[c]
    step = P[RATE_STEP]
    if step > 0.0:                                       # the effort-rate limit, from the last torques
        for i in range(nc):
            tau[i] = min(max(tau[i], prev[i] - step), prev[i] + step)
    for i in range(nc):
        prev[i] = tau[i]
    P[WARM] = 1.0
    return 0
