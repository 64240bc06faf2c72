"""Recursive Newton-Euler inverse dynamics (Featherstone, Table 5.1; Khalil eq. 31 for Ia and friction).

Gravity enters as a fictitious base acceleration a_0 = -a_g (Featherstone §5.3). With the
CORIOLIS_ONLY flag, a_g = 0 and qdd = 0: the Coriolis-only variant C(q, qd) qd. With XUP_GIVEN, the
caller has already put X_up(q) in the workspace (the closed-loop kernels, whose loop closure computed it).
"""
import numpy as np

from .direct import NOT_DIRECT, arrays_ok, matrix, unmanaged, vector
from ..model.layout import FS, FV, IA, REVOLUTE
from .primitives import (CORIOLIS_ONLY, F_QDD, FRICTION, XUP_GIVEN, add_cross_force, add_cross_motion_S, add_xT_force,
                         body, entry, gravity_status, inertia_mul, inline, jit, joint_xform, lengths_status,
                         nonfinite_status, sgn, split, x_motion)

WS = 36  # workspace columns per body: X_up 0:12, v 12:18, a 18:24, f 24:30, scratch 30:36
NO_FEXT = np.empty((0, 6))


@inline  # inlined into both entry points: the hot path of the controller
def rnea(tree, dyn, q, qd, qdd, f_ext, flags, tau, ws):
    """tau = ID(q, qd, qdd) for one sample. f_ext (nb, 6): forces [n; f] on the bodies in body
    coordinates, or shape (0, 6) for none. Returns a status code (0 = ok)."""
    nb = tree.shape[0]
    st = lengths_status(nb, q, qd, qdd, F_QDD, tau) or gravity_status(dyn, nb)
    if st:
        return st
    coriolis = flags & CORIOLIS_ONLY
    a_g = dyn[nb + 1, 0:3]
    for i in range(nb):
        p, jtype, k = body(tree, i)
        qddk = 0.0 if coriolis else qdd[k]
        st = nonfinite_status(k, q, qd, qdd, F_QDD)
        if st:
            return st
        X, v, a, f, tmp = ws[i, 0:12], ws[i, 12:18], ws[i, 18:24], ws[i, 24:30], ws[i, 30:36]
        if not flags & XUP_GIVEN:
            joint_xform(tree[i], jtype, q[k], X)
        if p < 0:  # v_0 = 0, a_0 = -a_g
            for j in range(6):
                v[j] = 0.0
                tmp[j] = 0.0
            if not coriolis:
                tmp[3], tmp[4], tmp[5] = -a_g[0], -a_g[1], -a_g[2]
            x_motion(X, tmp, a)
        else:
            x_motion(X, ws[p, 12:18], v)
            x_motion(X, ws[p, 18:24], a)
        s = 2 if jtype == REVOLUTE else 5
        v[s] += qd[k]                          # v_i = X v_p + S qd
        a[s] += qddk                           # a_i = X a_p + S qdd + v_i x S qd
        add_cross_motion_S(v, jtype, qd[k], a)
        inertia_mul(dyn[i], a, f)              # f_i = I a + v x* I v - f_ext
        inertia_mul(dyn[i], v, tmp)
        add_cross_force(v, tmp, f)
        if f_ext.shape[0] > 0:
            for j in range(6):
                f[j] -= f_ext[i, j]
    for i in range(nb - 1, -1, -1):
        p, jtype, k = body(tree, i)
        f = ws[i, 24:30]
        t = f[2] if jtype == REVOLUTE else f[5]   # tau_i = S^T f_i
        if not coriolis:
            t += tree[i, IA] * qdd[k]             # rotor inertia Ia qdd
            if flags & FRICTION:                  # Fv qd + Fs sign(qd)
                t += tree[i, FV] * qd[k] + tree[i, FS] * sgn(qd[k])
        tau[k] = t
        if p >= 0:
            add_xT_force(ws[i, 0:12], f, ws[p, 24:30])
    return 0


@jit
def rnea_call(tree, dyn, q, qd, qdd, f_ext, flags, tau, ws):
    """:func:`rnea` compiled once as a function of its own, for the kernels that run it off the controller's
    hot path (the task-space step, the closed-loop and platform kernels): inlining it into each of them cost
    seconds of compile time per copy."""
    return rnea(tree, dyn, q, qd, qdd, f_ext, flags, tau, ws)


@entry
def rnea_one(args, flags):
    """The direct call (see direct.py): ``args`` is the address of the tuple (ndarray, K, q, qd, qdd, tau)."""
    if not arrays_ok(args, 3, 1):
        return NOT_DIRECT
    tree, dyn, ws, _ = split(matrix(args, 1))
    return rnea(tree, dyn, vector(args, 2), vector(args, 3), vector(args, 4), NO_FEXT, flags, vector(args, 5), ws)


@entry
def rnea_many(K, q, qd, qdd, f_ext, flags, tau):
    """Stacked samples: q, qd, qdd, tau are (N, n); f_ext is (N, nb, 6) or (0, 0, 6). Returns (status, sample)."""
    tree, dyn, ws, _ = split(unmanaged(K))
    for s in range(q.shape[0]):
        fe = f_ext[s] if f_ext.shape[0] > 0 else NO_FEXT
        st = rnea(tree, dyn, q[s], qd[s], qdd[s], fe, flags, tau[s], ws)
        if st != 0:
            return st, s
    return 0, 0
