"""The velocity-product term of the loop constraints, b = Phi' qd (the Gdot qd_a of eq. 56's derivative).

Along any motion that keeps the loops closed, e(q(t)) = 0, so e'' = Phi qdd + Phi' qd = 0. This computes
b = Phi' qd, the second derivative of the residual of closure.py at qdd = 0. A forward pass gives
every body's angular velocity w, the velocity v of its origin, and, at qdd = 0, its angular acceleration
dw and the classical acceleration a of its origin (base frame; o = origin, z = joint axis, r = o_b - o_p):

    revolute:   w = w_p + z qd,   v = v_p + w_p x r,   dw = dw_p + w_p x z qd,
                a = a_p + dw_p x r + w_p x (w_p x r)
    prismatic:  w = w_p,   v = v_p + w_p x r + z qd,   dw = dw_p,
                a = a_p + dw_p x r + w_p x (w_p x r) + 2 w_p x z qd

Then, for each cut joint, with d = p_B - p_k, Omega = R_k^T w_i, W = R_k^T (w_j - w_i) and
D, u, x as in closure.py (differentiating D = R_k^T d twice, R_k' = [w_i] R_k):

    D'' = R_k^T d'' - Omega x R_k^T d' - R_k^T dw_i x D - Omega x D'
    W'  = R_k^T (dw_j - dw_i) - Omega x W,     u'' = W' x u + W x (W x u)  (likewise x'')

The rows of [D'', u'', x''] that the cut type selects are b. Mimic rows are linear in q: b = 0.
Call :func:`rne_control.dynamics.closed_loop.closure.closure` at the same q first (it leaves the poses).
"""
from .arrays import V_TMP, V_X, ZERO3, add, cross, mat3, offsets, put, rot_t, scale, sizes, sub, vec3
from .closure import cut_frames, n_rows, pick
from ...model.layout import B_A, B_DW, B_P, B_R, B_V, B_W, C_BI, C_BJ, C_ROW, C_TYPE, PLANAR_CUT, REVOLUTE
from ..primitives import body, inline, jit


@jit
def body_motion(tree, qd, bodies):
    """w, v, dw, a of every body origin at qdd = 0 (base frame), from the poses already in ``bodies``."""
    for b in range(tree.shape[0]):
        par, jtype, k = body(tree, b)
        row = bodies[b]
        if par < 0:                                  # on the fixed base, which is at rest
            wp = vp = dwp = ap = r = ZERO3
        else:
            pr = bodies[par]
            wp, vp, dwp, ap = vec3(pr, B_W), vec3(pr, B_V), vec3(pr, B_DW), vec3(pr, B_A)
            r = sub(vec3(row, B_P), vec3(pr, B_P))   # r = o_b - o_p
        wr = cross(wp, r)
        w, v, dw = wp, add(vp, wr), dwp              # v = v_p + w_p x r
        a = add(ap, add(cross(dwp, r), cross(wp, wr)))   # a = a_p + dw_p x r + w_p x (w_p x r)
        zq = scale(qd[k], (row[B_R + 2], row[B_R + 5], row[B_R + 8]))   # z qd
        if jtype == REVOLUTE:
            w = add(w, zq)                           # w = w_p + z qd
            dw = add(dw, cross(wp, zq))              # dw = dw_p + w_p x z qd
        else:
            v = add(v, zq)                           # v = v_p + w_p x r + z qd
            a = add(a, scale(2.0, cross(wp, zq)))    # a = ... + 2 w_p x z qd
        put(row, B_W, w)
        put(row, B_V, v)
        put(row, B_DW, dw)
        put(row, B_A, a)


@inline
def point_motion(bodies, b, P):
    """(w, v_P, dw, a_P): the motion of the point P (base frame) fixed on body b (b < 0: the base)."""
    if b < 0:
        return ZERO3, ZERO3, ZERO3, ZERO3
    row = bodies[b]
    w, dw = vec3(row, B_W), vec3(row, B_DW)
    s = sub(P, vec3(row, B_P))
    ws = cross(w, s)
    return w, add(vec3(row, B_V), ws), dw, add(vec3(row, B_A), add(cross(dw, s), cross(w, ws)))


@jit
def constraint_bias(tree, LK, qd, bias):
    """b = Phi' qd (m,) at the configuration of the last ``closure`` call and the velocities qd (n,)."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    bodies = LK[o_body:o_body + nb]
    body_motion(tree, qd, bodies)
    F, out = LK[o_vec + V_TMP], LK[o_vec + V_X]
    for c in range(B):
        cr = LK[o_cut + c]
        ctype, r0 = int(cr[C_TYPE]), int(cr[C_ROW])
        cut_frames(LK, c, o_cut, bodies, F)
        Rk, p_k, p_B = mat3(F, 0), vec3(F, 9), vec3(F, 21)
        w_i, v_k, dw_i, a_k = point_motion(bodies, int(cr[C_BI]), p_k)   # link i at p_k
        w_j, v_B, dw_j, a_B = point_motion(bodies, int(cr[C_BJ]), p_B)   # link j at p_B
        D = rot_t(Rk, sub(p_B, p_k))
        Om, dOm = rot_t(Rk, w_i), rot_t(Rk, dw_i)
        Dw = rot_t(Rk, sub(v_B, v_k))                  # R_k^T d'
        Dd = sub(Dw, cross(Om, D))                     # D' = R_k^T d' - Omega x D
        # D'' = R_k^T d'' - Omega x R_k^T d' - dOmega x D - Omega x D'
        put(out, 0, sub(rot_t(Rk, sub(a_B, a_k)), add(add(cross(Om, Dw), cross(dOm, D)), cross(Om, Dd))))
        if ctype != PLANAR_CUT:                        # (a planar cut keeps no orientation row)
            W = rot_t(Rk, sub(w_j, w_i))               # W = R_k^T (w_j - w_i)
            dW = sub(rot_t(Rk, sub(dw_j, dw_i)), cross(Om, W))   # W' = R_k^T (dw_j - dw_i) - Omega x W
            u = rot_t(Rk, (F[14], F[17], F[20]))       # u = R_k^T z_B
            x = rot_t(Rk, (F[12], F[15], F[18]))       # x = R_k^T x_B
            put(out, 3, add(cross(dW, u), cross(W, cross(W, u))))   # u'' = W' x u + W x (W x u)
            put(out, 6, add(cross(dW, x), cross(W, cross(W, x))))   # likewise x''
        for r in range(n_rows(ctype)):
            bias[r0 + r] = out[pick(ctype, r)]
    for c in range(M):
        bias[m - M + c] = 0.0
