"""Generalized momentum p = M(q) qd and the Coriolis transpose C(q, qd)^T qd in one O(n) pass.

The velocity pass of the RNE (Featherstone, Table 5.1, lines 3-6), then a backward pass that gathers
the spatial momentum of each subtree in body coordinates (the momentum counterpart of the RNE's force
pass, Featherstone §2.15 and Table 6.2's composite quantities):

    v_i = X_up,i v_p + S_i qd_i                         (v_0 = 0: the base is fixed)
    h_i = I_i v_i + sum over children c of X_up,c^T h_c
    p_i = S_i^T h_i + Ia_i qd_i                          = (M qd)_i, rotor inertia included
    (C^T qd)_i = -S_i^T (v_i x* h_i)                     = dT/dq_i,  T = 1/2 qd^T M(q) qd

The last line: dT/dq_i = h_i . (dv/dq_i) summed over the subtree, and a joint's motion moves every
body of its subtree by S_i x (.); written in base coordinates, d(I_j v_j)/dq_i contributes the moving
inertia and the moving velocity, which together leave -(S_i x v_i)^T h_i = -S_i^T (v_i x* h_i). It holds
for every factorisation C with Mdot = C + C^T, since then C^T qd = Mdot qd - C qd = dT/dq (Pinocchio's
Christoffel C among them). Ia is constant, so it adds nothing to dT/dq.

:func:`momentum_coriolis_gravity` adds the gravity torques g(q) to the same two passes (the momentum
observer needs all three per sample): gravity enters as the base acceleration a_0 = -a_g, carried
forward as a_i = X_up,i a_p (a pure linear acceleration [0; a], which X_up keeps pure: a_i = E_i a_p),
and gathered backward exactly like h:

    f_i = I_i a_i + sum over children c of X_up,c^T f_c,   g_i = S_i^T f_i
"""
from .direct import NOT_DIRECT, arrays_ok, matrix, unmanaged, vector
from ..model.layout import IA, REVOLUTE
from .primitives import (F_GRAVITY, F_OUT, F_Q, F_QD, LENGTH, NONFINITE, add_cross_force, add_xT_force, bad, body,
                         entry, inertia_mul, inline, joint_xform, length_status, nonfinite_status, split, status,
                         x_motion)

WS = 30  # workspace columns per body: X_up 0:12, v 12:18, h 18:24, scratch 24:30
WS_G = 33  # momentum_coriolis_gravity's: X_up 0:12, v 12:18, h 18:24, a 24:27 (linear), f 27:33


@inline
def momentum_coriolis(tree, dyn, q, qd, p, ctq, ws):
    """p = M qd and ctq = C^T qd for one sample (p and ctq of length n). Returns a status (0 = ok)."""
    nb = tree.shape[0]
    st = (length_status(q, nb, F_Q) or length_status(qd, nb, F_QD) or length_status(p, nb, F_OUT)
          or length_status(ctq, nb, F_OUT))
    if st:
        return st
    for i in range(nb):
        par, jtype, k = body(tree, i)
        st = nonfinite_status(k, q, qd, qd, F_QD)
        if st:
            return st
        X, v, h = ws[i, 0:12], ws[i, 12:18], ws[i, 18:24]
        joint_xform(tree[i], jtype, q[k], X)
        if par < 0:
            for j in range(6):
                v[j] = 0.0
        else:
            x_motion(X, ws[par, 12:18], v)
        v[2 if jtype == REVOLUTE else 5] += qd[k]   # v_i = X v_p + S qd
        inertia_mul(dyn[i], v, h)                   # h_i = I_i v_i (children added below)
    for i in range(nb - 1, -1, -1):
        par, jtype, k = body(tree, i)
        v, h, vxh = ws[i, 12:18], ws[i, 18:24], ws[i, 24:30]
        s = 2 if jtype == REVOLUTE else 5
        p[k] = h[s] + tree[i, IA] * qd[k]           # p_i = S^T h_i + Ia qd
        for j in range(6):
            vxh[j] = 0.0
        add_cross_force(v, h, vxh)
        ctq[k] = -vxh[s]                            # (C^T qd)_i = -S^T (v_i x* h_i)
        if par >= 0:
            add_xT_force(ws[i, 0:12], h, ws[par, 18:24])   # h_p += X_up^T h_i
    return 0


@inline
def momentum_coriolis_gravity(tree, dyn, a_g, q, qd, p, ctq, g, ws):
    """p = M qd, ctq = C^T qd and g = g(q) for one sample (p, ctq, g of length n) under the gravity a_g
    (3,) (m/s^2, base frame), in one forward and one backward pass (module docstring). Returns a status
    (0 = ok)."""
    nb = tree.shape[0]
    st = (length_status(q, nb, F_Q) or length_status(qd, nb, F_QD) or length_status(p, nb, F_OUT)
          or length_status(ctq, nb, F_OUT) or length_status(g, nb, F_OUT))
    if st:
        return st
    for j in range(3):
        if bad(a_g[j]):
            return status(NONFINITE, F_GRAVITY, j)
    for i in range(nb):
        par, jtype, k = body(tree, i)
        st = nonfinite_status(k, q, qd, qd, F_QD)
        if st:
            return st
        X, v, h, a, f = ws[i, 0:12], ws[i, 12:18], ws[i, 18:24], ws[i, 24:27], ws[i, 27:33]
        joint_xform(tree[i], jtype, q[k], X)
        if par < 0:                                 # v_0 = 0, a_0 = -a_g
            for j in range(6):
                v[j] = 0.0
            ax, ay, az = -a_g[0], -a_g[1], -a_g[2]
        else:
            x_motion(X, ws[par, 12:18], v)
            ax, ay, az = ws[par, 24], ws[par, 25], ws[par, 26]
        v[2 if jtype == REVOLUTE else 5] += qd[k]   # v_i = X v_p + S qd
        inertia_mul(dyn[i], v, h)                   # h_i = I_i v_i (children added below)
        a0 = X[0] * ax + X[1] * ay + X[2] * az      # a_i = X_up a_p = [0; E a_p]
        a1 = X[3] * ax + X[4] * ay + X[5] * az
        a2 = X[6] * ax + X[7] * ay + X[8] * az
        a[0], a[1], a[2] = a0, a1, a2
        P = dyn[i]                                  # f_i = I_i a_i (children added below)
        f[0] = P[2] * a2 - P[3] * a1
        f[1] = P[3] * a0 - P[1] * a2
        f[2] = P[1] * a1 - P[2] * a0
        f[3], f[4], f[5] = P[0] * a0, P[0] * a1, P[0] * a2
    for i in range(nb - 1, -1, -1):
        par, jtype, k = body(tree, i)
        v, h, f = ws[i, 12:18], ws[i, 18:24], ws[i, 27:33]
        if jtype == REVOLUTE:                       # S = e_3
            p[k] = h[2] + tree[i, IA] * qd[k]       # p_i = S^T h_i + Ia qd
            ctq[k] = -(v[0] * h[1] - v[1] * h[0] + v[3] * h[4] - v[4] * h[3])   # -S^T (v_i x* h_i)
            g[k] = f[2]                             # g_i = S^T f_i
        else:                                       # S = e_6
            p[k] = h[5] + tree[i, IA] * qd[k]
            ctq[k] = -(v[0] * h[4] - v[1] * h[3])
            g[k] = f[5]
        if par >= 0:
            X = ws[i, 0:12]
            add_xT_force(X, h, ws[par, 18:24])      # h_p += X_up^T h_i
            add_xT_force(X, f, ws[par, 27:33])      # f_p += X_up^T f_i
    return 0


@entry
def momentum_coriolis_one(args, flags):
    """The direct call (see direct.py): ``args`` is the address of the tuple (ndarray, K, q, qd, out), out of
    shape (2, n): row 0 receives p, row 1 C^T qd; no flags."""
    if not arrays_ok(args, 2, 2):
        return NOT_DIRECT
    tree, dyn, ws, _ = split(matrix(args, 1))
    out = matrix(args, 4)
    if out.shape[0] != 2:
        return status(LENGTH, F_OUT, out.shape[0])
    return momentum_coriolis(tree, dyn, vector(args, 2), vector(args, 3), out[0], out[1], ws)


@entry
def momentum_coriolis_many(K, q, qd, out):
    """Stacked samples: q, qd are (N, n), out (N, 2, n). Returns (status, sample)."""
    tree, dyn, ws, _ = split(unmanaged(K))
    for s in range(q.shape[0]):
        st = momentum_coriolis(tree, dyn, q[s], qd[s], out[s, 0], out[s, 1], ws)
        if st != 0:
            return st, s
    return 0, 0
