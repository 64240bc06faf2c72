"""Forward dynamics qdd = FD(q, qd, tau) by the articulated-body algorithm (Featherstone, Table 7.1).

O(n), the same recursion as Nasser's hinge-acceleration algorithm (seed 002) and Khalil's recursive
direct model (§3.3.2). The rotor inertia Ia adds to D_i = S_i^T U_i; friction is subtracted from tau.
A joint whose D_i vanishes (a massless chain end) makes the mass matrix singular: status SINGULAR.
"""
import numpy as np

from .direct import NOT_DIRECT, arrays_ok, matrix, unmanaged, vector
from ..model.layout import FS, FV, IA, REVOLUTE
from .primitives import (F_TAU, FRICTION, SINGULAR, add_cross_force, add_cross_motion_S, add_xT_force, body, entry,
                         gravity_status, inertia_mul, inline, jit, joint_xform, lengths_status, nonfinite_status, sgn,
                         split, status, x_motion)

NO_FEXT = np.empty((0, 6))
WS = 80  # per body and the base (row nb): X_up 0:12, v 12:18, c 18:24, p^A 24:30, U 30:36, I^A 36:72 (6x6),
         # a 72:78, D 78, u 79


@inline
def params_to_matrix(P, M):
    """The 6x6 spatial inertia [[I_o, h x], [-(h x), m 1]] from parameters P (row-major into M)."""
    for j in range(36):
        M[j] = 0.0
    M[0], M[7], M[14] = P[4], P[5], P[6]
    M[1] = M[6] = P[7]
    M[2] = M[12] = P[8]
    M[8] = M[13] = P[9]
    M[21], M[28], M[35] = P[0], P[0], P[0]
    hx, hy, hz = P[1], P[2], P[3]
    M[4], M[5], M[9], M[11], M[15], M[16] = -hz, hy, hz, -hx, -hy, hx          # top-right: h x
    M[19], M[20], M[24], M[26], M[30], M[31] = hz, -hy, -hz, hx, hy, -hx      # bottom-left: -(h x)


@inline
def add_xT_M_x(X, M, out, scratch):
    """out += X^T M X for a symmetric 6x6 row-major M = [[A, B], [B^T, C]] (articulated inertia to parent
    coordinates). X = rot(E) xlt(r): first rotate each block, A' = E^T A E (likewise B', C'), then shift
    by r:  [[A' + r x B'^T - (B' + r x C') r x,  B' + r x C'], [(B' + r x C')^T,  C']]."""
    R = scratch[0:27]  # A', B', C' as three row-major 3x3 blocks
    T = scratch[27:36]
    for blk in range(3):
        r0, c0 = (0, 0) if blk == 0 else ((0, 3) if blk == 1 else (3, 3))
        for i in range(3):      # T = M_blk E
            for j in range(3):
                T[3 * i + j] = (M[6 * (r0 + i) + c0] * X[j] + M[6 * (r0 + i) + c0 + 1] * X[3 + j]
                                + M[6 * (r0 + i) + c0 + 2] * X[6 + j])
        for i in range(3):      # R_blk = E^T T
            for j in range(3):
                R[9 * blk + 3 * i + j] = X[i] * T[j] + X[3 + i] * T[3 + j] + X[6 + i] * T[6 + j]
    r = (X[9], X[10], X[11])
    Ap, Bp, Cp = R[0:9], R[9:18], R[18:27]
    for j in range(3):          # T = B' + r x C' (column j: B'[:, j] + r x C'[:, j])
        c_0, c_1, c_2 = Cp[j], Cp[3 + j], Cp[6 + j]
        T[j] = Bp[j] + r[1] * c_2 - r[2] * c_1
        T[3 + j] = Bp[3 + j] + r[2] * c_0 - r[0] * c_2
        T[6 + j] = Bp[6 + j] + r[0] * c_1 - r[1] * c_0
    for i in range(3):
        # (T r x)[i, :] = row_i(T) x ... : (T [r]x)_{ij} = sum_k T_ik [r]x_kj, [r]x row-major
        t0, t1, t2 = T[3 * i], T[3 * i + 1], T[3 * i + 2]
        Trx = (t1 * r[2] - t2 * r[1], t2 * r[0] - t0 * r[2], t0 * r[1] - t1 * r[0])
        for j in range(3):
            # (r x B'^T)_{ij} = (r x col_j(B'^T))_i = (r x row_j(B'))_i
            b0, b1, b2 = Bp[3 * j], Bp[3 * j + 1], Bp[3 * j + 2]
            rxb = (r[1] * b2 - r[2] * b1) if i == 0 else ((r[2] * b0 - r[0] * b2) if i == 1 else (r[0] * b1 - r[1] * b0))
            out[6 * i + j] += Ap[3 * i + j] + rxb - Trx[j]
            out[6 * i + 3 + j] += T[3 * i + j]
            out[6 * (3 + j) + i] += T[3 * i + j]
            out[6 * (3 + i) + 3 + j] += Cp[3 * i + j]


@inline
def aba_forward(tree, dyn, q, qd, tau, f_ext, ws, scratch):
    """Pass 1: v_i = X v_p + S qd, c_i = v_i x S qd, I^A_i = I_i, p^A_i = v_i x* I_i v_i - f_ext_i.
    The base is row nb of the workspace: its velocity in columns 12:18."""
    nb = tree.shape[0]
    for i in range(nb):
        p, jtype, k = body(tree, i)
        st = nonfinite_status(k, q, qd, tau, F_TAU)
        if st:
            return st
        X, v, c, pA, tmp = ws[i, 0:12], ws[i, 12:18], ws[i, 18:24], ws[i, 24:30], scratch[72:78]
        joint_xform(tree[i], jtype, q[k], X)
        x_motion(X, ws[p if p >= 0 else nb, 12:18], v)
        v[2 if jtype == REVOLUTE else 5] += qd[k]
        c[:] = 0.0
        add_cross_motion_S(v, jtype, qd[k], c)
        params_to_matrix(dyn[i], ws[i, 36:72])
        inertia_mul(dyn[i], v, tmp)
        pA[:] = 0.0
        add_cross_force(v, tmp, pA)
        if f_ext.shape[0] > 0:
            for j in range(6):
                pA[j] -= f_ext[i, j]
    return 0


@inline
def aba_backward(tree, dyn, qd, tau, flags, ws, scratch, to_base):
    """Pass 2, leaves to root: U_i = I^A_i S_i, D_i = S^T U_i + Ia, u_i = tau_i - S^T p^A_i (- friction);
    the parent gains X^T I^a X and X^T p^a with I^a = I^A - U U^T / D, p^a = p^A + I^a c + U u / D.
    Joints on the base hand these on to the base row nb only when ``to_base`` (a floating base)."""
    nb = tree.shape[0]
    scale = 1.0
    for i in range(nb + 1 if to_base else nb):
        scale += dyn[i, 0] + dyn[i, 4] + dyn[i, 5] + dyn[i, 6] + (tree[i, IA] if i < nb else 0.0)
    for i in range(nb - 1, -1, -1):
        p, jtype, k = body(tree, i)
        s = 2 if jtype == REVOLUTE else 5
        I_A, U, pA, c = ws[i, 36:72], ws[i, 30:36], ws[i, 24:30], ws[i, 18:24]
        for j in range(6):
            U[j] = I_A[6 * j + s]
        D = U[s] + tree[i, IA]
        if not D > 1e-14 * scale:
            return status(SINGULAR, 0, k)
        u = tau[k] - pA[s]
        if flags & FRICTION:
            u -= tree[i, FV] * qd[k] + tree[i, FS] * sgn(qd[k])
        ws[i, 78], ws[i, 79] = D, u
        pp = p if p >= 0 else (nb if to_base else -1)
        if pp >= 0:
            I_a, pa = scratch[78:114], scratch[114:120]
            invD = 1.0 / D
            for r in range(6):
                Ur = U[r] * invD
                for cc in range(6):
                    I_a[6 * r + cc] = I_A[6 * r + cc] - Ur * U[cc]
            for r in range(6):
                acc = pA[r] + U[r] * u * invD
                for cc in range(6):
                    acc += I_a[6 * r + cc] * c[cc]
                pa[r] = acc
            add_xT_M_x(ws[i, 0:12], I_a, ws[pp, 36:72], scratch)
            add_xT_force(ws[i, 0:12], pa, ws[pp, 24:30])
    return 0


@inline
def aba_accelerations(tree, ws, qdd):
    """Pass 3, root to leaves: a'_i = X a_p + c_i, qdd_i = (u_i - U_i^T a'_i) / D_i, a_i = a'_i + S qdd_i.
    The base's acceleration is in row nb, columns 72:78."""
    nb = tree.shape[0]
    for i in range(nb):
        p, jtype, k = body(tree, i)
        a, U = ws[i, 72:78], ws[i, 30:36]
        x_motion(ws[i, 0:12], ws[p if p >= 0 else nb, 72:78], a)
        acc = ws[i, 79]
        for j in range(6):
            a[j] += ws[i, 18 + j]
            acc -= U[j] * a[j]
        qdd[k] = acc / ws[i, 78]
        a[2 if jtype == REVOLUTE else 5] += qdd[k]


@jit
def aba(tree, dyn, q, qd, tau, f_ext, flags, qdd, ws, scratch):
    """qdd for one sample of a fixed-base tree: the base row holds v_0 = 0 and a_0 = -a_g."""
    nb = tree.shape[0]
    st = lengths_status(nb, q, qd, tau, F_TAU, qdd) or gravity_status(dyn, nb)
    if st:
        return st
    a_g = dyn[nb + 1, 0:3]
    base = ws[nb]
    base[12:18] = 0.0
    base[72:75] = 0.0
    for j in range(3):
        base[75 + j] = -a_g[j]
    st = aba_forward(tree, dyn, q, qd, tau, f_ext, ws, scratch)
    if st:
        return st
    st = aba_backward(tree, dyn, qd, tau, flags, ws, scratch, False)
    if st:
        return st
    aba_accelerations(tree, ws, qdd)
    return 0


@entry
def aba_one(args, flags):
    """The direct call (see direct.py): ``args`` is the address of the tuple (ndarray, K, q, qd, tau, qdd)."""
    if not arrays_ok(args, 3, 1):
        return NOT_DIRECT
    tree, dyn, ws, scratch = split(matrix(args, 1))
    return aba(tree, dyn, vector(args, 2), vector(args, 3), vector(args, 4), NO_FEXT, flags, vector(args, 5), ws,
               scratch)


@entry
def aba_many(K, q, qd, tau, f_ext, flags, qdd):
    tree, dyn, ws, scratch = split(unmanaged(K))
    for s in range(q.shape[0]):
        fe = f_ext[s] if f_ext.shape[0] > 0 else NO_FEXT
        st = aba(tree, dyn, q[s], qd[s], tau[s], fe, flags, qdd[s], ws, scratch)
        if st != 0:
            return st, s
    return 0, 0
