"""Frame kinematics of a tree on a fixed base: the pose of a frame, its geometric Jacobian and its bias
acceleration Jdot qd (Featherstone §4.1, Table 5.1's velocity pass; Pinocchio's frames.hpp).

A frame is attached to body b (-1 = the base) at the pose T_bf (4x4, in body b's coordinates). Body poses
in the base frame, from the parent's (R_p, o_p) and X_up = rot(E) xlt(r) (E: parent to body coordinates,
r: the body's origin in parent coordinates):

    R_i = R_p E^T,  o_i = o_p + R_p r;     frame: R_f = R_b R_bf,  o_f = o_b + R_b p_bf

Jacobian at o_f, base axes, rows [linear; angular] (LOCAL_WORLD_ALIGNED), one column per joint between
the base and b, z_i = R_i e_3 the joint axis:

    revolute:  J_k = [z_i x (o_f - o_i); z_i]        prismatic:  J_k = [z_i; 0]

Bias acceleration at qdd = 0 (the base at rest): the RNE's velocity pass with a_0 = 0,
v_i = X_up v_p + S qd_i, a_i = X_up a_p + v_i x S qd_i, gives body b's spatial [w; v_o] and [dw; a_o]
in its coordinates; at the frame origin p = p_bf:

    v_P = v_o + w x p,   a_P = a_o + dw x p + w x v_P (classical),   Jdot qd = [R_b a_P; R_b dw]
"""
from ..model.layout import JTYPE, PARENT, QIDX, REVOLUTE
from .primitives import (F_Q, F_QD, add_cross_motion_S, body, entry, inline, jit, joint_xform, length_status,
                         nonfinite_status, split, x_motion)
from .direct import unmanaged

POSE, JACOBIAN, BIAS = 1, 2, 4   # flags: which outputs to compute (the pose always)
WS = 36  # workspace columns per body: X_up 0:12, R 12:21 (row-major), o 21:24, v 24:30, a 30:36


@inline
def body_pose(X, Rp, op, R, o):
    """R = Rp E^T and o = op + Rp r for X = rot(E) xlt(r); Rp, R row-major 3x3."""
    for r in range(3):
        for c in range(3):
            R[3 * r + c] = Rp[3 * r] * X[3 * c] + Rp[3 * r + 1] * X[3 * c + 1] + Rp[3 * r + 2] * X[3 * c + 2]
        o[r] = op[r] + Rp[3 * r] * X[9] + Rp[3 * r + 1] * X[10] + Rp[3 * r + 2] * X[11]


@jit
def frame_kinematics(tree, q, qd, b, Tbf, flags, pose, J, acc, ws):
    """One sample: pose (4, 4) always, J (6, n) with JACOBIAN, acc (6,) with BIAS. Returns a status (0 = ok)."""
    nb = tree.shape[0]
    base = ws[nb]   # the fixed base: identity pose, at rest
    st = length_status(q, nb, F_Q) or length_status(qd, nb, F_QD)
    if st:
        return st
    for j in range(36):
        base[j] = 0.0
    base[12] = base[16] = base[20] = 1.0   # R_0 = 1
    for i in range(nb):
        p, jtype, k = body(tree, i)
        st = nonfinite_status(k, q, qd, qd, F_QD) if flags & BIAS else nonfinite_status(k, q, q, q, F_Q)
        if st:
            return st
        X, v, a = ws[i, 0:12], ws[i, 24:30], ws[i, 30:36]
        wp = base if p < 0 else ws[p]
        joint_xform(tree[i], jtype, q[k], X)
        body_pose(X, wp[12:21], wp[21:24], ws[i, 12:21], ws[i, 21:24])
        if flags & BIAS:
            x_motion(X, wp[24:30], v)               # v_i = X v_p + S qd
            v[2 if jtype == REVOLUTE else 5] += qd[k]
            x_motion(X, wp[30:36], a)               # a_i = X a_p + v_i x S qd  (qdd = 0)
            add_cross_motion_S(v, jtype, qd[k], a)
    wb = base if b < 0 else ws[b]
    R, o = wb[12:21], wb[21:24]
    for r in range(3):  # R_f = R_b R_bf, o_f = o_b + R_b p_bf
        for c in range(4):
            pose[r, c] = R[3 * r] * Tbf[0, c] + R[3 * r + 1] * Tbf[1, c] + R[3 * r + 2] * Tbf[2, c]
        pose[r, 3] += o[r]
        pose[3, r] = 0.0
    pose[3, 3] = 1.0
    if flags & JACOBIAN:
        for r in range(6):
            for c in range(J.shape[1]):
                J[r, c] = 0.0
        i = b
        while i >= 0:  # the joints between the base and b
            jtype, k = int(tree[i, JTYPE]), int(tree[i, QIDX])
            Ri, oi = ws[i, 12:21], ws[i, 21:24]
            z0, z1, z2 = Ri[2], Ri[5], Ri[8]          # z_i = R_i e_3
            if jtype == REVOLUTE:
                d0, d1, d2 = pose[0, 3] - oi[0], pose[1, 3] - oi[1], pose[2, 3] - oi[2]
                J[0, k], J[1, k], J[2, k] = z1 * d2 - z2 * d1, z2 * d0 - z0 * d2, z0 * d1 - z1 * d0
                J[3, k], J[4, k], J[5, k] = z0, z1, z2
            else:
                J[0, k], J[1, k], J[2, k] = z0, z1, z2
            i = int(tree[i, PARENT])
    if flags & BIAS:
        w, vo, dw, ao = wb[24:27], wb[27:30], wb[30:33], wb[33:36]
        px, py, pz = Tbf[0, 3], Tbf[1, 3], Tbf[2, 3]
        vx = vo[0] + w[1] * pz - w[2] * py         # v_P = v_o + w x p
        vy = vo[1] + w[2] * px - w[0] * pz
        vz = vo[2] + w[0] * py - w[1] * px
        ax = ao[0] + dw[1] * pz - dw[2] * py + w[1] * vz - w[2] * vy   # a_P = a_o + dw x p + w x v_P
        ay = ao[1] + dw[2] * px - dw[0] * pz + w[2] * vx - w[0] * vz
        az = ao[2] + dw[0] * py - dw[1] * px + w[0] * vy - w[1] * vx
        for r in range(3):  # to base axes
            acc[r] = R[3 * r] * ax + R[3 * r + 1] * ay + R[3 * r + 2] * az
            acc[3 + r] = R[3 * r] * dw[0] + R[3 * r + 1] * dw[1] + R[3 * r + 2] * dw[2]
    return 0


@entry
def frame_many(K, q, qd, b, Tbf, flags, pose, J, acc):
    """Stacked samples: q, qd (N, n); pose (N, 4, 4), J (N, 6, n), acc (N, 6). Returns (status, sample)."""
    tree, _, ws, _ = split(unmanaged(K))
    for s in range(q.shape[0]):
        st = frame_kinematics(tree, q[s], qd[s], b, Tbf, flags, pose[s], J[s], acc[s], ws)
        if st != 0:
            return st, s
    return 0, 0
