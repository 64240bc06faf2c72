"""Joint-space inertia matrix H(q) by the composite-rigid-body algorithm (Featherstone, Table 6.2).

O(n d), d the depth of the tree. Composite inertias are propagated in the 10-parameter form; the
rotor inertia Ia is added on the diagonal (Khalil §3.3.1).
"""

from .direct import NOT_DIRECT, arrays_ok, matrix, unmanaged, vector
from ..model.layout import IA, PARENT, REVOLUTE
from .primitives import (entry, split, F_OUT, F_Q, LENGTH, NONFINITE, add_params_to_parent, bad, body, inertia_column,
                         jit, joint_xform, length_status, status, xT_force)

WS = 22  # X_up 0:12, I^c 12:22


@jit
def crba(tree, dyn, q, H, ws):
    nb = tree.shape[0]
    st = length_status(q, nb, F_Q)
    if st:
        return st
    if H.shape[0] != nb or H.shape[1] != nb:
        return status(LENGTH, F_OUT, H.shape[0])
    for i in range(nb):
        p, jtype, k = body(tree, i)
        if bad(q[k]):
            return status(NONFINITE, F_Q, k)
        joint_xform(tree[i], jtype, q[k], ws[i, 0:12])
        for j in range(10):  # element by element: numba's slice assignment costs more than the loop
            ws[i, 12 + j] = dyn[i, j]
    for i in range(nb - 1, -1, -1):  # I^c_p += X^T I^c_i X
        p = int(tree[i, PARENT])
        if p >= 0:
            add_params_to_parent(ws[i, 0:12], ws[i, 12:22], ws[p, 12:22])
    chain = True   # in a chain every pair of bodies is related, so the walk below writes all of H
    for i in range(nb):
        chain = chain and int(tree[i, PARENT]) == i - 1
    if not chain:
        for r in range(nb):
            for c in range(nb):
                H[r, c] = 0.0
    for i in range(nb):
        p, jtype, k = body(tree, i)
        f0, f1, f2, f3, f4, f5 = inertia_column(ws[i, 12:22], jtype)  # F = I^c_i S_i
        H[k, k] = (f2 if jtype == REVOLUTE else f5) + tree[i, IA]
        j, pj = i, p
        while pj >= 0:  # F = X_j^T F; j = parent(j); H_ij = H_ji = S_j^T F
            f0, f1, f2, f3, f4, f5 = xT_force(ws[j, 0:12], f0, f1, f2, f3, f4, f5)
            j = pj
            pj, jtype_j, kj = body(tree, j)
            H[k, kj] = H[kj, k] = f2 if jtype_j == REVOLUTE else f5
    return 0


@entry
def crba_one(args, flags):
    """The direct call (see direct.py): ``args`` is the address of the tuple (ndarray, K, q, H); no flags."""
    if not arrays_ok(args, 1, 2):
        return NOT_DIRECT
    tree, dyn, ws, _ = split(matrix(args, 1))
    return crba(tree, dyn, vector(args, 2), matrix(args, 3), ws)


@entry
def crba_many(K, q, H):
    tree, dyn, ws, _ = split(unmanaged(K))
    for s in range(q.shape[0]):
        st = crba(tree, dyn, q[s], H[s], ws)
        if st != 0:
            return st, s
    return 0, 0
