"""Loop-closure residual e(q) and its exact Jacobian Phi = de/dq (Khalil 2010, §2.2, eqs. 3 and 4).

For cut joint k, frame R_k is fixed on link i = a(k) (at q_k = 0) and frame R_(k+B) on link j. With
both poses in the base frame, (R_k, p_k) and (R_B, p_B), the closure residual is written in frame R_k:

    D = R_k^T (p_B - p_k),   u = R_k^T z_B,   x = R_k^T x_B

and eq. (3), the two frames coinciding up to the cut joint's own motion, selects from [D, u, x]:

    revolute   (5): D_x, D_y, D_z, u_x, u_y        (origins equal, z axes equal; free about z)
    prismatic  (5): D_x, D_y, u_x, u_y, x_y        (same orientation, origin offset along z only)
    spherical  (3): D_x, D_y, D_z                  (origins equal)
    planar     (2): D_x, D_y                       (a revolute or spherical cut on a planar loop, whose
                                                    other conditions hold for every q: model/loops.py)

Its time derivative is linear in qd (eq. 4, the screws of R_k and R_(k+B) are equal): with Omega the
angular velocity of link i and W = R_k^T (w_j - w_i),

    D' = R_k^T (v_B - v_k) - Omega x D,     u' = W x u,     x' = W x x,

where each joint on the path from the base to link j adds its screw to (w_j, v_B) and each joint on
the path to link i to (w_i, v_k); joints common to both paths cancel. A mimic coupling adds the row
e = q_f - multiplier q_leader - offset, with Jacobian row e_f - multiplier e_leader.
"""
from .arrays import (V_TMP, V_X, ZERO3, add, cross, frame_pose, mat3, offsets, put, put_rot, rot, rot_t, scale, sizes,
                     sub, vec3)
from ...model.layout import (B_MOVED, B_P, B_QX, B_R, B_X, C_BI, C_BJ, C_PI, C_PJ, C_RI, C_RJ, C_ROW, C_TYPE, PLANAR_CUT,
                             PRISMATIC_CUT, REVOLUTE, REVOLUTE_CUT, SPHERICAL_CUT)
from ..primitives import body, inline, jit, joint_xform

REV_ROWS = (0, 1, 2, 3, 4)   # indices into [D, u, x] of each cut type's residual rows
PRI_ROWS = (0, 1, 3, 4, 7)
SPH_ROWS = (0, 1, 2)
PLA_ROWS = (0, 1)            # a revolute or spherical cut on a planar loop: the in-plane D_x, D_y


@inline
def pick(ctype, r):
    """Index into the 9-vector [D, u, x] of residual row r of a cut joint of type ctype."""
    if ctype == REVOLUTE_CUT:
        return REV_ROWS[r]
    if ctype == PRISMATIC_CUT:
        return PRI_ROWS[r]
    if ctype == SPHERICAL_CUT:
        return SPH_ROWS[r]
    return PLA_ROWS[r]


@inline
def n_rows(ctype):
    return 3 if ctype == SPHERICAL_CUT else 2 if ctype == PLANAR_CUT else 5


IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


@jit
def body_poses(tree, q, bodies):
    """World (base-frame) pose of every body: R_0b = R_0p E^T, p_0b = p_0p + R_0p r, with X_up = rot(E) xlt(r)
    (kept in the body row: rnea takes it from there). A body whose joint and ancestors' joints have not
    moved since the last call keeps its row (a Newton step moves only the passive joints)."""
    for b in range(tree.shape[0]):
        par, jtype, k = body(tree, b)
        row = bodies[b]
        moved = q[k] != row[B_QX] or (par >= 0 and bodies[par, B_MOVED] != 0.0)
        row[B_MOVED] = 1.0 if moved else 0.0
        if not moved:
            continue
        row[B_QX] = q[k]
        X = row[B_X:B_X + 12]
        joint_xform(tree[b], jtype, q[k], X)
        if par < 0:
            R_p, p_p = IDENTITY, ZERO3
        else:
            R_p, p_p = mat3(bodies[par], B_R), vec3(bodies[par], B_P)
        put_rot(row, B_R, R_p, mat3(X, 0))
        put(row, B_P, add(p_p, rot(R_p, vec3(X, 9))))


@inline
def cut_frames(LK, c, o_cut, bodies, F):
    """Poses of R_k and R_(k+B) of cut joint c into F: R_k 0:9, p_k 9:12, R_B 12:21, p_B 21:24."""
    cr = LK[o_cut + c]
    bi, bj = int(cr[C_BI]), int(cr[C_BJ])
    frame_pose(bodies[bi] if bi >= 0 else cr[0:0], cr[C_RI:C_RI + 9], cr[C_PI:C_PI + 3], F[0:9], F[9:12])
    frame_pose(bodies[bj] if bj >= 0 else cr[0:0], cr[C_RJ:C_RJ + 9], cr[C_PJ:C_PJ + 3], F[12:21], F[21:24])


@inline
def residual9(F, out):
    """[D, u, x] of eq. (3) from the frame poses F (see cut_frames) into out[0:9]."""
    Rk = mat3(F, 0)
    put(out, 0, rot_t(Rk, sub(vec3(F, 21), vec3(F, 9))))   # D = R_k^T (p_B - p_k)
    put(out, 3, rot_t(Rk, (F[14], F[17], F[20])))          # u = R_k^T z_B
    put(out, 6, rot_t(Rk, (F[12], F[15], F[18])))          # x = R_k^T x_B


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
        Rk, D, u, x = mat3(F, 0), vec3(E9, 0), vec3(E9, 3), vec3(E9, 6)
        for side in range(2):   # 0: path to link j (sign +1, point p_B); 1: path to link i (sign -1, p_k)
            b = int(cr[C_BJ]) if side == 0 else int(cr[C_BI])
            s = 1.0 if side == 0 else -1.0
            P = vec3(F, 21) if side == 0 else vec3(F, 9)
            while b >= 0:
                par, jtype, k = body(tree, b)
                row = bodies[b]
                z = (row[B_R + 2], row[B_R + 5], row[B_R + 8])       # the joint axis (base frame)
                if jtype == REVOLUTE:        # the joint's screw at P: w = z, v = z x (P - o_b)
                    W, v = rot_t(Rk, z), cross(z, sub(P, vec3(row, B_P)))
                else:                        # w = 0, v = z
                    W, v = ZERO3, z
                Dd = scale(s, rot_t(Rk, v))                          # D' column: R_k^T v ...
                if side == 1:
                    Dd = sub(Dd, cross(W, D))                        # ... - Omega x D
                put(T, 0, Dd)
                if ctype != PLANAR_CUT:      # (a planar cut keeps no orientation row)
                    put(T, 3, scale(s, cross(W, u)))                 # u' = W x u  (W = R_k^T w)
                    put(T, 6, scale(s, cross(W, x)))                 # x' = W x x
                for r in range(n_rows(ctype)):
                    Phi[r0 + r, k] += T[pick(ctype, r)]
                b = par
    r0 = m - M
    for c in range(M):
        mr = LK[o_mim + c]
        f, ld, mult, off = int(mr[0]), int(mr[1]), mr[2], mr[3]
        e[r0 + c] = q[f] - mult * q[ld] - off
        Phi[r0 + c, f] += 1.0
        Phi[r0 + c, ld] -= mult
