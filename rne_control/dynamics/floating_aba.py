"""Forward dynamics of a floating-base system: qdd and the base acceleration (Khalil §7.3).

The articulated-body algorithm with a free root (Featherstone §7.3 / Table 7.1 with a floating base;
Khalil's recursive direct model, eqs. 101-112, in Featherstone's notation):

i)   forward: v_j = X_j v_i + S_j qd_j, c_j = v_j x S_j qd_j (Khalil's gamma_j, 101),
     I^A_j = I_j, p^A_j = v_j x* I_j v_j (-beta_j, 102); the base starts from its given twist, with
     p^A_0 = v_0 x* I_0 v_0 - f_base (the external wrench on the base).
ii)  backward, j = n..1: U_j = I^A_j S_j, D_j = S_j^T U_j + Ia_j (103), u_j = tau_j - S_j^T p^A_j
     (106), I^a = I^A_j - U_j U_j^T / D_j (104), p^a = p^A_j + I^a c_j + U_j u_j / D_j (107), and the
     parent (the base included) gains X_j^T I^a X_j (105) and X_j^T p^a (108).
iii) forward: the base acceleration a_0' = -(I^A_0)^-1 p^A_0 (109, a 6x6 Cholesky solve: I^A_0 is no
     longer a rigid-body inertia), then a'_j = X_j a_i + c_j, qdd_j = (u_j - U_j^T a'_j) / D_j (110),
     a_j = a'_j + S_j qdd_j (112).

Gravity enters as the fictitious acceleration a_0' = a_0 - a_g; the base acceleration returned is
a_0' + a_g (base coordinates, [vdot; wdot]).
"""

from .aba import add_xT_M_x, params_to_matrix
from .base import F_BASE2, F_TWIST, SINGULAR_BASE, base_gravity, check_vector, solve6, to_motion
from .spatial import (entry, split, F_OUT, F_Q, F_QD, F_TAU, FRICTION, FS, FV, IA, LENGTH, NONFINITE, REVOLUTE, SINGULAR,
                      add_cross_force, add_cross_motion_S, add_xT_force, bad, body, inertia_mul, jit, joint_xform,
                      length_status, sgn, status, x_motion)

WS = 80  # as aba.WS (row nb = the base): X_up 0:12, v 12:18, c 18:24, p^A 24:30, U 30:36, I^A 36:72, a 72:78,
         # D 78, u 79
SCRATCH = 162  # aba's 120, then the Cholesky factor 120:156 and the right-hand side 156:162


@jit
def floating_aba(tree, dyn, q, qd, tau, twist, quat, wrench, flags, qdd, accel, ws, scratch):
    nb = tree.shape[0]
    st = (length_status(q, nb, F_Q) or length_status(qd, nb, F_QD) or length_status(tau, nb, F_TAU)
          or length_status(qdd, nb, F_OUT) or check_vector(twist, 6, F_TWIST) or check_vector(wrench, 6, F_BASE2))
    if st:
        return st
    if accel.shape[0] != 6:
        return status(LENGTH, F_OUT, accel.shape[0])
    b = ws[nb]
    st = base_gravity(dyn, quat, b[0:9], b[9:12])
    if st:
        return st
    g0, g1, g2 = b[9], b[10], b[11]
    scale = 1.0
    for i in range(nb + 1):
        scale += dyn[i, 0] + dyn[i, 4] + dyn[i, 5] + dyn[i, 6] + (tree[i, IA] if i < nb else 0.0)
    tmp = scratch[72:78]
    v0, pA0 = b[12:18], b[24:30]
    to_motion(twist, v0)
    params_to_matrix(dyn[nb], b[36:72])
    inertia_mul(dyn[nb], v0, tmp)
    to_motion(wrench, pA0)                            # p^A_0 = v_0 x* I_0 v_0 - f_base
    for j in range(6):
        pA0[j] = -pA0[j]
    add_cross_force(v0, tmp, pA0)
    for i in range(nb):
        p, jtype, k = body(tree, i)
        if bad(q[k]):
            return status(NONFINITE, F_Q, k)
        if bad(qd[k]):
            return status(NONFINITE, F_QD, k)
        if bad(tau[k]):
            return status(NONFINITE, F_TAU, k)
        X, v, c, pA = ws[i, 0:12], ws[i, 12:18], ws[i, 18:24], ws[i, 24:30]
        joint_xform(tree[i], jtype, q[k], X)
        x_motion(X, ws[p if p >= 0 else nb, 12:18], v)
        v[2 if jtype == REVOLUTE else 5] += qd[k]     # v_i = X v_p + S qd
        c[:] = 0.0
        add_cross_motion_S(v, jtype, qd[k], c)        # c_i = v_i x S qd
        params_to_matrix(dyn[i], ws[i, 36:72])        # I^A_i = I_i
        inertia_mul(dyn[i], v, tmp)                   # p^A_i = v x* I v
        pA[:] = 0.0
        add_cross_force(v, tmp, pA)
    for i in range(nb - 1, -1, -1):
        p, jtype, k = body(tree, i)
        pp = p if p >= 0 else nb
        s = 2 if jtype == REVOLUTE else 5
        I_A, U, pA, c = ws[i, 36:72], ws[i, 30:36], ws[i, 24:30], ws[i, 18:24]
        for j in range(6):
            U[j] = I_A[6 * j + s]                     # U_i = I^A_i S_i
        D = U[s] + tree[i, IA]                        # D_i = S^T U_i + Ia
        if not D > 1e-14 * scale:
            return status(SINGULAR, 0, k)
        u = tau[k] - pA[s]                            # u_i = tau_i - S^T p^A_i
        if flags & FRICTION:
            u -= tree[i, FV] * qd[k] + tree[i, FS] * sgn(qd[k])
        ws[i, 78], ws[i, 79] = D, u
        I_a, pa = scratch[78:114], scratch[114:120]
        for r in range(6):                            # I^a = I^A - U U^T / D
            for cc in range(6):
                I_a[6 * r + cc] = I_A[6 * r + cc] - U[r] * U[cc] / D
        for r in range(6):                            # p^a = p^A + I^a c + U u / D
            acc = pA[r] + U[r] * u / D
            for cc in range(6):
                acc += I_a[6 * r + cc] * c[cc]
            pa[r] = acc
        add_xT_M_x(ws[i, 0:12], I_a, ws[pp, 36:72], scratch)
        add_xT_force(ws[i, 0:12], pa, ws[pp, 24:30])
    a0, rhs = b[72:78], scratch[156:162]
    for j in range(6):
        rhs[j] = -pA0[j]
    if not solve6(b[36:72], rhs, a0, scratch[120:156]):  # a_0' = -(I^A_0)^-1 p^A_0
        return SINGULAR_BASE
    accel[0], accel[1], accel[2] = a0[3] + g0, a0[4] + g1, a0[5] + g2
    accel[3], accel[4], accel[5] = a0[0], a0[1], a0[2]
    for i in range(nb):
        p, jtype, k = body(tree, i)
        a = ws[i, 72:78]
        x_motion(ws[i, 0:12], ws[p if p >= 0 else nb, 72:78], a)
        for j in range(6):                            # a'_i = X a_p + c_i
            a[j] += ws[i, 18 + j]
        U = ws[i, 30:36]
        acc = ws[i, 79]
        for j in range(6):
            acc -= U[j] * a[j]
        qdd[k] = acc / ws[i, 78]                      # qdd_i = (u_i - U_i^T a'_i) / D_i
        a[2 if jtype == REVOLUTE else 5] += qdd[k]    # a_i = a'_i + S qdd_i
    return 0


@entry
def floating_aba_one(K, q, qd, tau, twist, quat, wrench, flags, qdd, accel):
    tree, dyn, ws, scratch = split(K)
    return floating_aba(tree, dyn, q, qd, tau, twist, quat, wrench, flags, qdd, accel,
                        ws, scratch)


@entry
def floating_aba_many(K, q, qd, tau, twist, quat, wrench, flags, qdd, accel):
    """Stacked samples: joint arrays (N, n), twist/wrench/accel (N, 6), quat (N, 4). Returns (status, sample)."""
    tree, dyn, ws, scratch = split(K)
    for s in range(q.shape[0]):
        st = floating_aba(tree, dyn, q[s], qd[s], tau[s], twist[s], quat[s], wrench[s], flags, qdd[s], accel[s],
                          ws, scratch)
        if st != 0:
            return st, s
    return 0, 0
