"""Inverse dynamics with a prescribed base motion (Khalil §7.1, first option; Featherstone Table 5.1).

The RNE starts from the base's own velocity v_0 and acceleration a_0 instead of zero (gravity enters
as the fictitious acceleration a_0 - a_g, a_g = R^T g_world in base coordinates), and the backward
pass continues to the base: f_0 = I_0 (a_0 - a_g) + v_0 x* I_0 v_0 + sum_children X^T f_i is the wrench
the base must receive from outside to move as prescribed, gravity included.
"""

from .base_body import F_BASE2, F_TWIST, base_setup, check_vector, to_motion
from ..direct import unmanaged
from ...model.layout import FS, FV, IA, REVOLUTE
from ..primitives import (F_QDD, FRICTION, add_cross_force, add_cross_motion_S, add_xT_force, body, entry, inertia_mul,
                          jit, joint_xform, lengths_status, nonfinite_status, sgn, split, x_motion)

WS = 36  # per body (and row nb = the base): X_up 0:12, v 12:18, a 18:24, f 24:30, scratch 30:36


@jit
def moving_base(tree, dyn, q, qd, qdd, twist, accel, quat, flags, tau, wrench, ws):
    """tau and the base wrench [f; n] for one sample; twist [v; w], accel [vdot; wdot] of the base in
    base coordinates, quat (x, y, z, w) base to world. Returns a status code (0 = ok)."""
    nb = tree.shape[0]
    st = (lengths_status(nb, q, qd, qdd, F_QDD, tau) or check_vector(twist, 6, F_TWIST)
          or check_vector(accel, 6, F_BASE2))
    st = st or base_setup(dyn, quat, wrench, ws)
    if st:
        return st
    b = ws[nb]
    v0, a0, f0 = b[12:18], b[18:24], b[24:30]
    to_motion(twist, v0)
    to_motion(accel, a0)
    for j in range(3):
        a0[3 + j] -= b[9 + j]                   # a_0 - a_g
    for i in range(nb):
        p, jtype, k = body(tree, i)
        st = nonfinite_status(k, q, qd, qdd, F_QDD)
        if st:
            return st
        pp = p if p >= 0 else nb
        X, v, a, f, tmp = ws[i, 0:12], ws[i, 12:18], ws[i, 18:24], ws[i, 24:30], ws[i, 30:36]
        joint_xform(tree[i], jtype, q[k], X)
        x_motion(X, ws[pp, 12:18], v)
        x_motion(X, ws[pp, 18:24], a)
        s = 2 if jtype == REVOLUTE else 5
        v[s] += qd[k]                          # v_i = X v_p + S qd
        a[s] += qdd[k]                         # a_i = X a_p + S qdd + v_i x S qd
        add_cross_motion_S(v, jtype, qd[k], a)
        inertia_mul(dyn[i], a, f)              # f_i = I a + v x* I v
        inertia_mul(dyn[i], v, tmp)
        add_cross_force(v, tmp, f)
    inertia_mul(dyn[nb], a0, f0)               # the base body itself
    inertia_mul(dyn[nb], v0, b[30:36])
    add_cross_force(v0, b[30:36], f0)
    for i in range(nb - 1, -1, -1):
        p, jtype, k = body(tree, i)
        f = ws[i, 24:30]
        t = f[2] if jtype == REVOLUTE else f[5]   # tau_i = S^T f_i + Ia qdd (+ friction)
        t += tree[i, IA] * qdd[k]
        if flags & FRICTION:
            t += tree[i, FV] * qd[k] + tree[i, FS] * sgn(qd[k])
        tau[k] = t
        add_xT_force(ws[i, 0:12], f, ws[p if p >= 0 else nb, 24:30])
    to_motion(f0, wrench)                      # [n; f] -> [f; n]
    return 0


@entry
def moving_base_one(K, q, qd, qdd, twist, accel, quat, flags, tau, wrench):
    tree, dyn, ws, _ = split(unmanaged(K))
    return moving_base(tree, dyn, q, qd, qdd, twist, accel, quat, flags, tau, wrench,
                       ws)


@entry
def moving_base_many(K, q, qd, qdd, twist, accel, quat, flags, tau, wrench):
    """Stacked samples: joint arrays (N, n), twist/accel/wrench (N, 6), quat (N, 4). Returns (status, sample)."""
    tree, dyn, ws, _ = split(unmanaged(K))
    for s in range(q.shape[0]):
        st = moving_base(tree, dyn, q[s], qd[s], qdd[s], twist[s], accel[s], quat[s], flags, tau[s], wrench[s], ws)
        if st != 0:
            return st, s
    return 0, 0
