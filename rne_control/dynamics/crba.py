"""Joint-space inertia matrix H(q) by the composite-rigid-body algorithm (Featherstone, Table 6.2).

O(n d), d the depth of the tree. Composite inertias are propagated in the 10-parameter form; the
rotor inertia Ia is added on the diagonal (Khalil §3.3.1).
"""
import numpy as np

from .spatial import (F_OUT, F_Q, LENGTH, NONFINITE, length_status, REVOLUTE, add_params_to_parent, add_xT_force, bad, inertia_mul, jit,
                      joint_xform, status)

WS = 34  # X_up 0:12, I^c 12:22, F 22:28, scratch 28:34


@jit
def crba(topo, kin, inertia, q, H, ws):
    nb = topo.shape[0]
    st = length_status(q, nb, F_Q)
    if st:
        return st
    if H.shape[0] != nb or H.shape[1] != nb:
        return status(LENGTH, F_OUT, H.shape[0])
    for i in range(nb):
        k = topo[i, 2]
        if bad(q[k]):
            return status(NONFINITE, F_Q, k)
        joint_xform(kin[i], topo[i, 1], q[k], ws[i, 0:12])
        ws[i, 12:22] = inertia[i]
    for i in range(nb - 1, -1, -1):  # I^c_p += X^T I^c_i X
        if topo[i, 0] >= 0:
            add_params_to_parent(ws[i, 0:12], ws[i, 12:22], ws[topo[i, 0], 12:22])
    H[:, :] = 0.0
    for i in range(nb):
        k, jtype = topo[i, 2], topo[i, 1]
        F, S = ws[i, 22:28], ws[i, 28:34]
        S[:] = 0.0
        S[2 if jtype == REVOLUTE else 5] = 1.0
        inertia_mul(ws[i, 12:22], S, F)  # F = I^c_i S_i
        H[k, k] = F[2 if jtype == REVOLUTE else 5] + kin[i, 12]
        j = i
        while topo[j, 0] >= 0:  # F = X_j^T F; j = parent(j); H_ij = H_ji = S_j^T F
            S[:] = 0.0
            add_xT_force(ws[j, 0:12], F, S)
            F[:] = S
            j = topo[j, 0]
            kj = topo[j, 2]
            H[k, kj] = F[2 if topo[j, 1] == REVOLUTE else 5]
            H[kj, k] = H[k, kj]
    return 0


@jit
def crba_one(topo, kin, inertia, q, H):
    return crba(topo, kin, inertia, q, H, np.empty((topo.shape[0], WS)))


@jit
def crba_many(topo, kin, inertia, q, H):
    ws = np.empty((topo.shape[0], WS))
    for s in range(q.shape[0]):
        st = crba(topo, kin, inertia, q[s], H[s], ws)
        if st != 0:
            return st, s
    return 0, 0
