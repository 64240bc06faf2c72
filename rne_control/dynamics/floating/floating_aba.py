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

from ..aba import NO_FEXT, aba_accelerations, aba_backward, aba_forward, params_to_matrix
from .base_body import F_BASE2, F_TWIST, SINGULAR_BASE, base_setup, check_vector, solve6, to_motion
from ..direct import unmanaged
from ..primitives import (F_TAU, add_cross_force, entry, inertia_mul, jit, lengths_status, split)

WS = 80  # as aba.WS (row nb = the base): X_up 0:12, v 12:18, c 18:24, p^A 24:30, U 30:36, I^A 36:72, a 72:78,
         # D 78, u 79
SCRATCH = 162  # aba's 120, then the Cholesky factor 120:156 and the right-hand side 156:162


@jit
def floating_aba(tree, dyn, q, qd, tau, twist, quat, wrench, flags, qdd, accel, ws, scratch):
    nb = tree.shape[0]
    st = (lengths_status(nb, q, qd, tau, F_TAU, qdd) or check_vector(twist, 6, F_TWIST)
          or check_vector(wrench, 6, F_BASE2))
    st = st or base_setup(dyn, quat, accel, ws)
    if st:
        return st
    b = ws[nb]
    g0, g1, g2 = b[9], b[10], b[11]
    tmp = scratch[72:78]
    v0, pA0 = b[12:18], b[24:30]
    to_motion(twist, v0)
    params_to_matrix(dyn[nb], b[36:72])
    inertia_mul(dyn[nb], v0, tmp)
    to_motion(wrench, pA0)                            # p^A_0 = v_0 x* I_0 v_0 - f_base
    for j in range(6):
        pA0[j] = -pA0[j]
    add_cross_force(v0, tmp, pA0)
    st = aba_forward(tree, dyn, q, qd, tau, NO_FEXT, ws, scratch)
    if st:
        return st
    st = aba_backward(tree, dyn, qd, tau, flags, ws, scratch, True)
    if st:
        return st
    a0, rhs = b[72:78], scratch[156:162]
    for j in range(6):
        rhs[j] = -pA0[j]
    if not solve6(b[36:72], rhs, a0, scratch[120:156]):  # a_0' = -(I^A_0)^-1 p^A_0
        return SINGULAR_BASE
    accel[0], accel[1], accel[2] = a0[3] + g0, a0[4] + g1, a0[5] + g2
    accel[3], accel[4], accel[5] = a0[0], a0[1], a0[2]
    aba_accelerations(tree, ws, qdd)
    return 0


@entry
def floating_aba_one(K, q, qd, tau, twist, quat, wrench, flags, qdd, accel):
    tree, dyn, ws, scratch = split(unmanaged(K))
    return floating_aba(tree, dyn, q, qd, tau, twist, quat, wrench, flags, qdd, accel,
                        ws, scratch)


@entry
def floating_aba_many(K, q, qd, tau, twist, quat, wrench, flags, qdd, accel):
    """Stacked samples: joint arrays (N, n), twist/wrench/accel (N, 6), quat (N, 4). Returns (status, sample)."""
    tree, dyn, ws, scratch = split(unmanaged(K))
    for s in range(q.shape[0]):
        st = floating_aba(tree, dyn, q[s], qd[s], tau[s], twist[s], quat[s], wrench[s], flags, qdd[s], accel[s],
                          ws, scratch)
        if st != 0:
            return st, s
    return 0, 0
