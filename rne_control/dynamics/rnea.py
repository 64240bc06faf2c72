"""Recursive Newton-Euler inverse dynamics (Featherstone, Table 5.1; Khalil eq. 31 for Ia and friction).

Gravity enters as a fictitious base acceleration a_0 = -a_g (Featherstone §5.3). Setting qdd = 0 and
a_g = 0 gives the Coriolis-only variant C(q, qd) qd.
"""
import math

import numpy as np

from .spatial import (F_GRAVITY, F_OUT, F_QD, F_QDD, F_Q, NONFINITE, length_status, REVOLUTE, add_cross_force, add_cross_motion_S,
                      add_xT_force, bad, inertia_mul, jit, joint_xform, status, x_motion)

WS = 36  # workspace columns per body: X_up 0:12, v 12:18, a 18:24, f 24:30, scratch 30:36


@jit
def rnea(topo, kin, inertia, a_g, q, qd, qdd, f_ext, friction, tau, ws):
    """tau = ID(q, qd, qdd): one sample. f_ext (nb, 6) is [n; f] on each body in body coordinates,
    or shape (0, 6) for none. Returns a status code (0 = ok)."""
    nb = topo.shape[0]
    st = (length_status(q, nb, F_Q) or length_status(qd, nb, F_QD) or length_status(qdd, nb, F_QDD)
          or length_status(tau, nb, F_OUT))
    if st:
        return st
    for k in range(3):
        if bad(a_g[k]):
            return status(NONFINITE, F_GRAVITY, k)
    for i in range(nb):
        p, jtype, k = topo[i, 0], topo[i, 1], topo[i, 2]
        if bad(q[k]):
            return status(NONFINITE, F_Q, k)
        if bad(qd[k]):
            return status(NONFINITE, F_QD, k)
        if bad(qdd[k]):
            return status(NONFINITE, F_QDD, k)
        X, v, a, f, tmp = ws[i, 0:12], ws[i, 12:18], ws[i, 18:24], ws[i, 24:30], ws[i, 30:36]
        joint_xform(kin[i], jtype, q[k], X)
        if p < 0:  # v_0 = 0, a_0 = -a_g
            for j in range(6):
                v[j] = 0.0
                tmp[j] = 0.0
            tmp[3], tmp[4], tmp[5] = -a_g[0], -a_g[1], -a_g[2]
            x_motion(X, tmp, a)
        else:
            x_motion(X, ws[p, 12:18], v)
            x_motion(X, ws[p, 18:24], a)
        s = 2 if jtype == REVOLUTE else 5
        v[s] += qd[k]                          # v_i = X v_p + S qd
        a[s] += qdd[k]                         # a_i = X a_p + S qdd + v_i x S qd
        add_cross_motion_S(v, jtype, qd[k], a)
        inertia_mul(inertia[i], a, f)          # f_i = I a + v x* I v - f_ext
        inertia_mul(inertia[i], v, tmp)
        add_cross_force(v, tmp, f)
        if f_ext.shape[0] > 0:
            for j in range(6):
                f[j] -= f_ext[i, j]
    for i in range(nb - 1, -1, -1):
        p, jtype, k = topo[i, 0], topo[i, 1], topo[i, 2]
        f = ws[i, 24:30]
        t = f[2] if jtype == REVOLUTE else f[5]   # tau_i = S^T f_i
        t += kin[i, 12] * qdd[k]                 # rotor inertia Ia qdd
        if friction:                             # Fv qd + Fs sign(qd)
            t += kin[i, 13] * qd[k] + kin[i, 14] * (math.copysign(1.0, qd[k]) if qd[k] != 0.0 else 0.0)
        tau[k] = t
        if p >= 0:
            add_xT_force(ws[i, 0:12], f, ws[p, 24:30])
    return 0


@jit
def rnea_one(topo, kin, inertia, a_g, q, qd, qdd, f_ext, friction, tau):
    return rnea(topo, kin, inertia, a_g, q, qd, qdd, f_ext, friction, tau, np.empty((topo.shape[0], WS)))


@jit
def rnea_many(topo, kin, inertia, a_g, q, qd, qdd, f_ext, friction, tau):
    """Stacked samples: q, qd, qdd, tau are (N, n); f_ext is (N, nb, 6) or (0, 0, 6)."""
    ws = np.empty((topo.shape[0], WS))
    none = np.empty((0, 6))
    for s in range(q.shape[0]):
        fe = f_ext[s] if f_ext.shape[0] > 0 else none
        st = rnea(topo, kin, inertia, a_g, q[s], qd[s], qdd[s], fe, friction, tau[s], ws)
        if st != 0:
            return st, s
    return 0, 0
