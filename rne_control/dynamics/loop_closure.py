"""Loop-closure residual e(q) and its exact Jacobian Phi = de/dq (Khalil 2010, §2.2, eqs. 3 and 4).

For cut joint k, frame R_k is fixed on link i = a(k) (at q_k = 0) and frame R_(k+B) on link j. With
both poses in the base frame, (R_k, p_k) and (R_B, p_B), the closure residual is written in frame R_k:

    D = R_k^T (p_B - p_k),   u = R_k^T z_B,   x = R_k^T x_B

and eq. (3), the two frames coinciding up to the cut joint's own motion, selects from [D, u, x]:

    revolute   (5): D_x, D_y, D_z, u_x, u_y        (origins equal, z axes equal; free about z)
    prismatic  (5): D_x, D_y, u_x, u_y, x_y        (same orientation, origin offset along z only)
    spherical  (3): D_x, D_y, D_z                  (origins equal)

Its time derivative is linear in qd (eq. 4, the screws of R_k and R_(k+B) are equal): with Omega the
angular velocity of link i and W = R_k^T (w_j - w_i),

    D' = R_k^T (v_B - v_k) - Omega x D,     u' = W x u,     x' = W x x,

where each joint on the path from the base to link j adds its screw to (w_j, v_B) and each joint on
the path to link i to (w_i, v_k); joints common to both paths cancel. A mimic coupling adds the row
e = q_f - multiplier q_leader - offset, with Jacobian row e_f - multiplier e_leader.
"""
from .loop_arrays import (B_P, B_R, B_X, C_BI, C_BJ, C_PI, C_PJ, C_RI, C_RJ, C_ROW, C_TYPE, V_TMP, V_X,
                          add_cross, cross, frame_pose, offsets, rot_t, sizes)
from .spatial import REVOLUTE, body, jit, joint_xform

REV_ROWS = (0, 1, 2, 3, 4)   # indices into [D, u, x] of each cut type's residual rows
PRI_ROWS = (0, 1, 3, 4, 7)
SPH_ROWS = (0, 1, 2)


@jit
def pick(ctype, r):
    """Index into the 9-vector [D, u, x] of residual row r of a cut joint of type ctype."""
    if ctype == 0:
        return REV_ROWS[r]
    if ctype == 1:
        return PRI_ROWS[r]
    return SPH_ROWS[r]


@jit
def n_rows(ctype):
    return 3 if ctype == 2 else 5


@jit
def body_poses(tree, q, bodies):
    """World (base-frame) pose of every body: R_0b = R_0p E^T, p_0b = p_0p + R_0p r, with X_up = rot(E) xlt(r)."""
    nb = tree.shape[0]
    for b in range(nb):
        par, jtype, k = body(tree, b)
        row = bodies[b]
        X = row[B_X:B_X + 12]
        joint_xform(tree[b], jtype, q[k], X)
        for i in range(3):
            for j in range(3):
                if par < 0:
                    row[B_R + 3 * i + j] = X[3 * j + i]
                else:
                    pr = bodies[par]
                    row[B_R + 3 * i + j] = (pr[B_R + 3 * i] * X[3 * j] + pr[B_R + 3 * i + 1] * X[3 * j + 1]
                                            + pr[B_R + 3 * i + 2] * X[3 * j + 2])
            if par < 0:
                row[B_P + i] = X[9 + i]
            else:
                pr = bodies[par]
                row[B_P + i] = (pr[B_P + i] + pr[B_R + 3 * i] * X[9] + pr[B_R + 3 * i + 1] * X[10]
                                + pr[B_R + 3 * i + 2] * X[11])


@jit
def cut_frames(LK, c, o_cut, bodies, F):
    """Poses of R_k and R_(k+B) of cut joint c into F: R_k 0:9, p_k 9:12, R_B 12:21, p_B 21:24."""
    cr = LK[o_cut + c]
    bi, bj = int(cr[C_BI]), int(cr[C_BJ])
    frame_pose(bodies[bi] if bi >= 0 else cr[0:0], cr[C_RI:C_RI + 9], cr[C_PI:C_PI + 3], F[0:9], F[9:12])
    frame_pose(bodies[bj] if bj >= 0 else cr[0:0], cr[C_RJ:C_RJ + 9], cr[C_PJ:C_PJ + 3], F[12:21], F[21:24])


@jit
def residual9(F, out):
    """[D, u, x] of eq. (3) from the frame poses F (see cut_frames) into out[0:9]; F[24:27] scratch."""
    d = F[24:27]
    for i in range(3):
        d[i] = F[21 + i] - F[9 + i]
    rot_t(F[0:9], d, out[0:3])
    for i in range(3):
        out[3 + i] = F[i] * F[14] + F[3 + i] * F[17] + F[6 + i] * F[20]   # R_k^T z_B
        out[6 + i] = F[i] * F[12] + F[3 + i] * F[15] + F[6 + i] * F[18]   # R_k^T x_B


@jit
def closure(tree, LK, q, e, Phi):
    """Residual e (m,) of every loop at the tree configuration q (n,), and its Jacobian Phi (m, n)."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    bodies = LK[o_body:o_body + nb]
    body_poses(tree, q, bodies)
    F, T = LK[o_vec + V_TMP], LK[o_vec + V_X]   # F: frames and [D, u, x] at 27:36; T: one column's terms
    for r in range(m):
        for k in range(n):
            Phi[r, k] = 0.0
    for c in range(B):
        cr = LK[o_cut + c]
        ctype, r0 = int(cr[C_TYPE]), int(cr[C_ROW])
        cut_frames(LK, c, o_cut, bodies, F)
        E9 = F[27:36]
        residual9(F, E9)
        for r in range(n_rows(ctype)):
            e[r0 + r] = E9[pick(ctype, r)]
        for side in range(2):   # 0: path to link j (sign +1, point p_B); 1: path to link i (sign -1, p_k)
            b = int(cr[C_BJ]) if side == 0 else int(cr[C_BI])
            s = 1.0 if side == 0 else -1.0
            P = F[21:24] if side == 0 else F[9:12]
            while b >= 0:
                par, jtype, k = body(tree, b)
                row = bodies[b]
                w, v, ww, vv, col = T[0:3], T[3:6], T[6:9], T[9:12], T[12:21]
                for i in range(3):
                    z = row[B_R + 3 * i + 2]
                    w[i] = z if jtype == REVOLUTE else 0.0
                    T[21 + i] = P[i] - row[B_P + i]
                if jtype == REVOLUTE:
                    cross(w, T[21:24], v)          # v = z x (P - o_b)
                else:
                    for i in range(3):
                        v[i] = row[B_R + 3 * i + 2]
                rot_t(F[0:9], w, ww)
                rot_t(F[0:9], v, vv)
                for i in range(3):                 # D' column
                    col[i] = s * vv[i]
                if side == 1:
                    add_cross(ww, E9[0:3], -1.0, col[0:3])   # - Omega x D
                for i in range(3):
                    col[3 + i] = 0.0
                    col[6 + i] = 0.0
                add_cross(ww, E9[3:6], s, col[3:6])          # u' = W x u
                add_cross(ww, E9[6:9], s, col[6:9])          # x' = W x x
                for r in range(n_rows(ctype)):
                    Phi[r0 + r, k] += col[pick(ctype, r)]
                b = par
    r0 = m - M
    for c in range(M):
        mr = LK[o_mim + c]
        f, ld, mult, off = int(mr[0]), int(mr[1]), mr[2], mr[3]
        e[r0 + c] = q[f] - mult * q[ld] - off
        Phi[r0 + c, f] += 1.0
        Phi[r0 + c, ld] -= mult
