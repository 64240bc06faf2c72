"""Gravity torques g(q) by the simplified gravity-only RNE (Featherstone §5.3).

No velocity or acceleration pass: the forward pass carries only the transforms and the gravity vector
in body coordinates; the backward pass accumulates each subtree's mass m^c and first moment h^c, and
tau_i = S_i^T f_i with f_i = -(gravity wrench on the subtree) = [-(h^c x g_i); -m^c g_i].
"""

from .direct import NOT_DIRECT, arrays_ok, matrix, unmanaged, vector
from ..model.layout import REVOLUTE
from .primitives import (F_OUT, F_Q, NONFINITE, bad, body, entry, gravity_status, jit, joint_xform, length_status,
                         split, status)

WS = 19  # X_up 0:12, g_i 12:15, m^c 15, h^c 16:19


@jit
def gravity(tree, dyn, q, tau, ws):
    nb = tree.shape[0]
    st = length_status(q, nb, F_Q) or length_status(tau, nb, F_OUT)
    if st:
        return st
    st = gravity_status(dyn, nb)
    if st:
        return st
    a_g = dyn[nb + 1, 0:3]
    for i in range(nb):
        p, jtype, k = body(tree, i)
        if bad(q[k]):
            return status(NONFINITE, F_Q, k)
        X = ws[i, 0:12]
        joint_xform(tree[i], jtype, q[k], X)
        gp = a_g if p < 0 else ws[p, 12:15]
        for j in range(3):  # g_i = E g_parent
            ws[i, 12 + j] = X[3 * j] * gp[0] + X[3 * j + 1] * gp[1] + X[3 * j + 2] * gp[2]
        for j in range(4):  # m^c_i = m_i, h^c_i = h_i
            ws[i, 15 + j] = dyn[i, j]
    for i in range(nb - 1, -1, -1):
        p, jtype, k = body(tree, i)
        g0, g1, g2 = ws[i, 12], ws[i, 13], ws[i, 14]
        m, h0, h1, h2 = ws[i, 15], ws[i, 16], ws[i, 17], ws[i, 18]
        if jtype == REVOLUTE:
            tau[k] = -(h0 * g1 - h1 * g0)
        else:
            tau[k] = -m * g2
        if p >= 0:  # m^c_p += m^c_i;  h^c_p += E^T h^c_i + m^c_i r
            X = ws[i, 0:12]
            ws[p, 15] += m
            for j in range(3):
                ws[p, 16 + j] += X[j] * h0 + X[3 + j] * h1 + X[6 + j] * h2 + m * X[9 + j]
    return 0


@entry
def gravity_one(args, flags):
    """The direct call (see direct.py): ``args`` is the address of the tuple (ndarray, K, q, tau); no flags."""
    if not arrays_ok(args, 1, 1):
        return NOT_DIRECT
    tree, dyn, ws, _ = split(matrix(args, 1))
    return gravity(tree, dyn, vector(args, 2), vector(args, 3), ws)


@entry
def gravity_many(K, q, tau):
    tree, dyn, ws, _ = split(unmanaged(K))
    for s in range(q.shape[0]):
        st = gravity(tree, dyn, q[s], tau[s], ws)
        if st != 0:
            return st, s
    return 0, 0
