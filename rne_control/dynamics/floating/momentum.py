"""The base twist that gives a floating-base system a prescribed momentum (seed 000, eqs. 27-31).

The spatial momentum of the whole system about the base origin, in base coordinates, is linear in the
base twist V_0:  h_0 = I^c_0 V_0 + h^q,  where I^c_0 is the composite inertia of all bodies and
h^q = sum_i X_0i^T I_i v^q_i is the momentum of the joint motion alone (v^q_i: the velocities with the
base at rest). One forward pass computes v^q_i, one backward pass accumulates I^c and h^q, and
V_0 = (I^c_0)^-1 (h_target - h^q). This is the seed's eq. (29) (its M_1, M_2, L_v, L_w for zero momentum),
moved from the system COM to the base origin: the seed's v_0 is the velocity of the COM (its eq. 5).

The target is the centroidal momentum [p; k] (linear; angular about the system COM) in world axes, the
conserved quantity; in base coordinates at the base origin it is [R^T k + c x R^T p; R^T p], c the COM.
"""
import numpy as np

from .base_body import F_BASE2, F_TWIST, SINGULAR_BASE, base_rotation, check_vector, solve_rigid, to_motion
from ..direct import unmanaged
from ...model.layout import PARENT, REVOLUTE
from ..primitives import (entry, split, F_OUT, F_Q, F_QD, LENGTH, NONFINITE, add_params_to_parent, add_xT_force, bad,
                          body, inertia_mul, inline, jit, joint_xform, length_status, status, x_motion)

WS = 34  # per body (row nb = the base): X_up 0:12, v^q 12:18, h 18:24, I^c 24:34


@inline
def composite_momentum(tree, dyn, q, qd, R, quat, ws):
    """The passes shared by both directions: R (9) = base rotation, and in row nb of ws the composite
    inertia I^c_0 (24:34) and the momentum of the joint motion h^q (18:24). Returns a status."""
    nb = tree.shape[0]
    st = base_rotation(quat, R)
    if st:
        return st
    b = ws[nb]
    for j in range(12, 24):
        b[j] = 0.0
    for i in range(nb):
        p, jtype, k = body(tree, i)
        if bad(q[k]):
            return status(NONFINITE, F_Q, k)
        if bad(qd[k]):
            return status(NONFINITE, F_QD, k)
        X, v = ws[i, 0:12], ws[i, 12:18]
        joint_xform(tree[i], jtype, q[k], X)
        x_motion(X, ws[p if p >= 0 else nb, 12:18], v)
        v[2 if jtype == REVOLUTE else 5] += qd[k]    # v^q_i = X v^q_p + S qd
        inertia_mul(dyn[i], v, ws[i, 18:24])        # h_i = I_i v^q_i
        ws[i, 24:34] = dyn[i]
    b[24:34] = dyn[nb]
    for i in range(nb - 1, -1, -1):
        p = int(tree[i, PARENT])
        pp = p if p >= 0 else nb
        add_xT_force(ws[i, 0:12], ws[i, 18:24], ws[pp, 18:24])
        add_params_to_parent(ws[i, 0:12], ws[i, 24:34], ws[pp, 24:34])
    if not b[24] > 0.0:
        return SINGULAR_BASE
    return 0


@jit
def momentum_twist(tree, dyn, q, qd, momentum, quat, twist, ws):
    """twist [v; w] of the base (base coordinates) for the centroidal momentum [p; k] (world axes)."""
    nb = tree.shape[0]
    st = (length_status(q, nb, F_Q) or length_status(qd, nb, F_QD) or check_vector(momentum, 6, F_BASE2))
    if st:
        return st
    if twist.shape[0] != 6:
        return status(LENGTH, F_TWIST, twist.shape[0])
    b = ws[nb]
    R = b[0:9]
    st = composite_momentum(tree, dyn, q, qd, R, quat, ws)
    if st:
        return st
    Ic, hq, rhs = b[24:34], b[18:24], b[12:18]
    m = Ic[0]
    cx, cy, cz = Ic[1] / m, Ic[2] / m, Ic[3] / m
    for j in range(3):   # R^T p, R^T k
        rhs[3 + j] = R[j] * momentum[0] + R[3 + j] * momentum[1] + R[6 + j] * momentum[2]
        rhs[j] = R[j] * momentum[3] + R[3 + j] * momentum[4] + R[6 + j] * momentum[5]
    rhs[0] += cy * rhs[5] - cz * rhs[4]              # k_o = k_c + c x p
    rhs[1] += cz * rhs[3] - cx * rhs[5]
    rhs[2] += cx * rhs[4] - cy * rhs[3]
    for j in range(6):
        rhs[j] -= hq[j]
    V = b[0:6]  # R is no longer needed
    if not solve_rigid(Ic, rhs, V):
        return SINGULAR_BASE
    to_motion(V, twist)
    return 0


@jit
def momentum_of(tree, dyn, q, qd, twist, quat, out):
    """The converse, for checks and reports: out (9) = the centroidal momentum [p; k] (world axes) of the
    state and the system COM in base coordinates, h_o = I^c_0 V_0 + h^q moved to the COM and rotated."""
    nb = tree.shape[0]
    ws = np.empty((nb + 1, WS))
    st = (length_status(q, nb, F_Q) or length_status(qd, nb, F_QD) or check_vector(twist, 6, F_TWIST))
    if st:
        return st
    if out.shape[0] != 9:
        return status(LENGTH, F_OUT, out.shape[0])
    b = ws[nb]
    R = b[0:9]
    st = composite_momentum(tree, dyn, q, qd, R, quat, ws)
    if st:
        return st
    Ic, h, V = b[24:34], b[18:24], b[12:18]
    to_motion(twist, V)
    tmp = np.empty(6)
    inertia_mul(Ic, V, tmp)
    m = Ic[0]
    c0, c1, c2 = Ic[1] / m, Ic[2] / m, Ic[3] / m
    p0, p1, p2 = h[3] + tmp[3], h[4] + tmp[4], h[5] + tmp[5]
    k0 = h[0] + tmp[0] - (c1 * p2 - c2 * p1)          # k_c = k_o - c x p
    k1 = h[1] + tmp[1] - (c2 * p0 - c0 * p2)
    k2 = h[2] + tmp[2] - (c0 * p1 - c1 * p0)
    for j in range(3):
        out[j] = R[3 * j] * p0 + R[3 * j + 1] * p1 + R[3 * j + 2] * p2
        out[3 + j] = R[3 * j] * k0 + R[3 * j + 1] * k1 + R[3 * j + 2] * k2
    out[6], out[7], out[8] = c0, c1, c2
    return 0


@entry
def momentum_one(K, q, qd, momentum, quat, twist):
    tree, dyn, ws, _ = split(unmanaged(K))
    return momentum_twist(tree, dyn, q, qd, momentum, quat, twist, ws)


@entry
def momentum_many(K, q, qd, momentum, quat, twist):
    """Stacked samples: joint arrays (N, n), momentum/twist (N, 6), quat (N, 4). Returns (status, sample)."""
    tree, dyn, ws, _ = split(unmanaged(K))
    for s in range(q.shape[0]):
        st = momentum_twist(tree, dyn, q[s], qd[s], momentum[s], quat[s], twist[s], ws)
        if st != 0:
            return st, s
    return 0, 0
