"""Inverse dynamics of a free-floating base: joint torques and the base acceleration (Khalil §7.2).

The base is unactuated and no external wrench acts on it, so its acceleration is an unknown of the
inverse model. Three passes, O(n) apart from one solve with the base's composite inertia:

i)   forward, j = 1..n: velocities v_j = X_j v_i + a_j qd_j from the known base twist; the parts of the
     accelerations and link wrenches that do not depend on the base acceleration,
         zeta_j = gamma_j + a_j qdd_j = v_j x a_j qd_j + a_j qdd_j          (89)
         beta_j = -v_j x* I_j v_j                                          (90)
     so that a_j = X_j a_i + zeta_j and f_j = I_j a_j - beta_j + sum_k X_k^T f_k           (91)
ii)  backward, j = n..0: composite inertias and wrenches with f_j = I^c_j a_j - beta^c_j     (94)
         I^c_j    = I_j + sum_k X_k^T I^c_k X_k                                      (95)
         beta^c_j = beta_j + sum_k X_k^T (beta^c_k - I^c_k zeta_k)                   (96)
     (Khalil's printed (96) has both signs of the sum wrong; this form follows from substituting
     a_k = X_k a_j + zeta_k in (91) and is checked against Pinocchio in the tests.) At the base
     f_0 = 0, so a_0 = (I^c_0)^-1 beta^c_0 (97), a 6x6 solve with a rigid-body inertia (solve_rigid).
iii) forward, j = 1..n: a_j = X_j a_i + zeta_j (98), f_j = I^c_j a_j - beta^c_j (99) and
     tau_j = S_j^T f_j + Ia_j qdd_j (+ friction) (100).

Gravity enters as the fictitious acceleration a_0' = a_0 - a_g (a_g = R^T g_world), so the base
acceleration returned is a_0' + a_g. Composite inertias use the 10-parameter form (primitives.py).
"""

from .base_body import F_TWIST, SINGULAR_BASE, base_setup, check_vector, solve_rigid, to_motion
from ..direct import unmanaged
from ...model.layout import FS, FV, IA, PARENT, REVOLUTE
from ..primitives import (F_QDD, FRICTION, add_cross_force, add_params_to_parent, add_xT_force, body, entry,
                          inertia_mul, inline, jit, joint_xform, lengths_status, nonfinite_status, sgn, split,
                          x_motion)

WS = 46  # per body (row nb = the base): X_up 0:12, v 12:18, zeta / a 18:24, beta^c 24:30, I^c 30:40, tmp 40:46


@inline
def joint_force(P, m, jtype):
    """S^T (I m) for the spatial inertia with parameters P: row 2 (revolute) or 5 (prismatic) of inertia_mul."""
    if jtype == REVOLUTE:
        return P[8] * m[0] + P[9] * m[1] + P[6] * m[2] + P[1] * m[4] - P[2] * m[3]
    return P[0] * m[5] - (P[1] * m[1] - P[2] * m[0])


@jit
def free_floating(tree, dyn, q, qd, qdd, twist, quat, flags, tau, accel, ws):
    """tau and the base acceleration [vdot; wdot] (base coordinates) for one sample. Returns a status."""
    nb = tree.shape[0]
    st = lengths_status(nb, q, qd, qdd, F_QDD, tau) or check_vector(twist, 6, F_TWIST)
    st = st or base_setup(dyn, quat, accel, ws)
    if st:
        return st
    b = ws[nb]
    v0 = b[12:18]
    to_motion(twist, v0)
    # i) forward: v_j, zeta_j, beta_j, I^c_j = I_j
    for i in range(nb):
        p, jtype, k = body(tree, i)
        st = nonfinite_status(k, q, qd, qdd, F_QDD)
        if st:
            return st
        X, v, z, beta, tmp = ws[i, 0:12], ws[i, 12:18], ws[i, 18:24], ws[i, 24:30], ws[i, 40:46]
        joint_xform(tree[i], jtype, q[k], X)
        x_motion(X, ws[p if p >= 0 else nb, 12:18], v)
        s = 2 if jtype == REVOLUTE else 5
        qdk = qd[k]
        v[s] += qdk                                   # v_j = X v_i + a_j qd_j
        for j in range(6):
            z[j] = 0.0
            beta[j] = 0.0
        z[s] = qdd[k]                                 # zeta_j = a_j qdd_j + v_j x a_j qd_j
        if jtype == REVOLUTE:
            z[0], z[1], z[3], z[4] = v[1] * qdk, -v[0] * qdk, v[4] * qdk, -v[3] * qdk
        else:
            z[3], z[4] = v[1] * qdk, -v[0] * qdk
        inertia_mul(dyn[i], v, tmp)                   # beta_j = -v_j x* I_j v_j
        add_cross_force(v, tmp, beta)
        for j in range(6):
            beta[j] = -beta[j]
        ws[i, 30:40] = dyn[i]
    tmp = b[40:46]
    beta0 = b[24:30]
    inertia_mul(dyn[nb], v0, tmp)
    for j in range(6):
        beta0[j] = 0.0
    add_cross_force(v0, tmp, beta0)
    for j in range(6):
        beta0[j] = -beta0[j]
    b[30:40] = dyn[nb]
    # ii) backward: I^c_i += X_j^T I^c_j X_j, beta^c_i += X_j^T (beta^c_j - I^c_j zeta_j)
    for i in range(nb - 1, -1, -1):
        p = int(tree[i, PARENT])
        pp = p if p >= 0 else nb
        X, z, beta, Ic, tmp = ws[i, 0:12], ws[i, 18:24], ws[i, 24:30], ws[i, 30:40], ws[i, 40:46]
        inertia_mul(Ic, z, tmp)
        for j in range(6):
            tmp[j] = beta[j] - tmp[j]
        add_xT_force(X, tmp, ws[pp, 24:30])
        add_params_to_parent(X, Ic, ws[pp, 30:40])
    # (97): a_0' = (I^c_0)^-1 beta^c_0
    a0 = b[18:24]
    if not solve_rigid(b[30:40], beta0, a0):
        return SINGULAR_BASE
    accel[0], accel[1], accel[2] = a0[3] + b[9], a0[4] + b[10], a0[5] + b[11]   # + a_g
    accel[3], accel[4], accel[5] = a0[0], a0[1], a0[2]
    # iii) forward: a_j = X_j a_i + zeta_j, tau_j = S^T (I^c_j a_j - beta^c_j) + Ia qdd (+ friction)
    for i in range(nb):
        p, jtype, k = body(tree, i)
        X, a, beta, Ic, tmp = ws[i, 0:12], ws[i, 18:24], ws[i, 24:30], ws[i, 30:40], ws[i, 40:46]
        x_motion(X, ws[p if p >= 0 else nb, 18:24], tmp)
        for j in range(6):
            a[j] += tmp[j]
        t = joint_force(Ic, a, jtype) - (beta[2] if jtype == REVOLUTE else beta[5])
        t += tree[i, IA] * qdd[k]
        if flags & FRICTION:
            t += tree[i, FV] * qd[k] + tree[i, FS] * sgn(qd[k])
        tau[k] = t
    return 0


@entry
def free_floating_one(K, q, qd, qdd, twist, quat, flags, tau, accel):
    tree, dyn, ws, _ = split(unmanaged(K))
    return free_floating(tree, dyn, q, qd, qdd, twist, quat, flags, tau, accel, ws)


@entry
def free_floating_many(K, q, qd, qdd, twist, quat, flags, tau, accel):
    """Stacked samples: joint arrays (N, n), twist/accel (N, 6), quat (N, 4). Returns (status, sample)."""
    tree, dyn, ws, _ = split(unmanaged(K))
    for s in range(q.shape[0]):
        st = free_floating(tree, dyn, q[s], qd[s], qdd[s], twist[s], quat[s], flags, tau[s], accel[s], ws)
        if st != 0:
            return st, s
    return 0, 0
