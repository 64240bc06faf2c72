"""The velocity-product term of the loop constraints, b = Phi' qd (the Gdot qd_a of eq. 56's derivative).

Along any motion that keeps the loops closed, e(q(t)) = 0, so e'' = Phi qdd + Phi' qd = 0. This computes
b = Phi' qd, the second derivative of the residual of loop_closure.py at qdd = 0. A forward pass gives
every body's angular velocity w, the velocity v of its origin, and, at qdd = 0, its angular acceleration
dw and the classical acceleration a of its origin (base frame; o = origin, z = joint axis, r = o_b - o_p):

    revolute:   w = w_p + z qd,   v = v_p + w_p x r,   dw = dw_p + w_p x z qd,
                a = a_p + dw_p x r + w_p x (w_p x r)
    prismatic:  w = w_p,   v = v_p + w_p x r + z qd,   dw = dw_p,
                a = a_p + dw_p x r + w_p x (w_p x r) + 2 w_p x z qd

Then, for each cut joint, with d = p_B - p_k, Omega = R_k^T w_i, W = R_k^T (w_j - w_i) and
D, u, x as in loop_closure.py (differentiating D = R_k^T d twice, R_k' = [w_i] R_k):

    D'' = R_k^T d'' - Omega x R_k^T d' - R_k^T dw_i x D - Omega x D'
    W'  = R_k^T (dw_j - dw_i) - Omega x W,     u'' = W' x u + W x (W x u)  (likewise x'')

The rows of [D'', u'', x''] that the cut type selects are b. Mimic rows are linear in q: b = 0.
Call :func:`rne_control.dynamics.loop_closure.closure` at the same q first (it leaves the poses).
"""
from .loop_arrays import (B_A, B_DW, B_P, B_R, B_V, B_W, B_X, C_BI, C_BJ, C_ROW, C_TYPE, V_TMP, V_X, V_Y,
                          add_cross, offsets, rot_t, sizes)
from .loop_closure import cut_frames, n_rows, pick
from .spatial import REVOLUTE, body, jit


@jit
def body_motion(tree, qd, bodies):
    """w, v, dw, a of every body origin at qdd = 0 (base frame), from the poses already in ``bodies``."""
    nb = tree.shape[0]
    for b in range(nb):
        par, jtype, k = body(tree, b)
        row = bodies[b]
        w, v, dw, a = row[B_W:B_W + 3], row[B_V:B_V + 3], row[B_DW:B_DW + 3], row[B_A:B_A + 3]
        if par < 0:
            for i in range(3):
                w[i] = v[i] = dw[i] = a[i] = 0.0
        else:
            pr = bodies[par]
            wp, dwp = pr[B_W:B_W + 3], pr[B_DW:B_DW + 3]
            r = row[B_X:B_X + 3]   # free scratch: X_up is not needed any more
            for i in range(3):
                r[i] = row[B_P + i] - pr[B_P + i]
                w[i], v[i], dw[i], a[i] = wp[i], pr[B_V + i], dwp[i], pr[B_A + i]
            add_cross(wp, r, 1.0, v)
            add_cross(dwp, r, 1.0, a)
            t = row[B_X + 3:B_X + 6]
            t[0] = t[1] = t[2] = 0.0
            add_cross(wp, r, 1.0, t)
            add_cross(wp, t, 1.0, a)
        z = row[B_X + 6:B_X + 9]
        for i in range(3):
            z[i] = row[B_R + 3 * i + 2] * qd[k]     # z qd
        if jtype == REVOLUTE:
            for i in range(3):
                w[i] += z[i]
            if par >= 0:
                add_cross(bodies[par][B_W:B_W + 3], z, 1.0, dw)
        else:
            for i in range(3):
                v[i] += z[i]
            if par >= 0:
                add_cross(bodies[par][B_W:B_W + 3], z, 2.0, a)


@jit
def point_motion(bodies, b, P, out):
    """w, v_P, dw, a_P (out[0:12]) of the point P (base frame) fixed on body b (b < 0: the base)."""
    for i in range(12):
        out[i] = 0.0
    if b < 0:
        return
    row = bodies[b]
    w, dw = row[B_W:B_W + 3], row[B_DW:B_DW + 3]
    s, t = out[12:15], out[15:18]
    for i in range(3):
        s[i] = P[i] - row[B_P + i]
        out[i], out[3 + i], out[6 + i], out[9 + i] = w[i], row[B_V + i], dw[i], row[B_A + i]
        t[i] = 0.0
    add_cross(w, s, 1.0, out[3:6])      # v_P = v_b + w x s
    add_cross(dw, s, 1.0, out[9:12])    # a_P = a_b + dw x s + w x (w x s)
    add_cross(w, s, 1.0, t)
    add_cross(w, t, 1.0, out[9:12])


@jit
def constraint_bias(tree, LK, qd, bias):
    """b = Phi' qd (m,) at the configuration of the last ``closure`` call and the velocities qd (n,)."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    bodies = LK[o_body:o_body + nb]
    body_motion(tree, qd, bodies)
    F, mk, mb = LK[o_vec + V_TMP], LK[o_vec + V_X], LK[o_vec + V_Y]
    for c in range(B):
        cr = LK[o_cut + c]
        ctype, r0 = int(cr[C_TYPE]), int(cr[C_ROW])
        cut_frames(LK, c, o_cut, bodies, F)
        point_motion(bodies, int(cr[C_BI]), F[9:12], mk)    # link i at p_k: w_i, v_k, dw_i, a_k
        point_motion(bodies, int(cr[C_BJ]), F[21:24], mb)   # link j at p_B: w_j, v_B, dw_j, a_B
        Rk = F[0:9]
        d, D, Dw, Dd, Om, dOm = mb[18:21], mb[21:24], mb[24:27], mb[27:30], mb[30:33], mb[33:36]
        W, dW, u, t, out = mk[18:21], mk[21:24], mk[24:27], mk[27:30], F[24:33]
        for i in range(3):
            d[i] = F[21 + i] - F[9 + i]
        rot_t(Rk, d, D)
        rot_t(Rk, mk[0:3], Om)
        rot_t(Rk, mk[6:9], dOm)
        for i in range(3):
            d[i] = mb[3 + i] - mk[3 + i]
        rot_t(Rk, d, Dw)                       # R_k^T d'
        for i in range(3):
            Dd[i] = Dw[i]
        add_cross(Om, D, -1.0, Dd)              # D' = R_k^T d' - Omega x D
        for i in range(3):
            d[i] = mb[9 + i] - mk[9 + i]
        rot_t(Rk, d, out[0:3])                 # D'' = R_k^T d'' - Omega x R_k^T d' - dOmega x D - Omega x D'
        add_cross(Om, Dw, -1.0, out[0:3])
        add_cross(dOm, D, -1.0, out[0:3])
        add_cross(Om, Dd, -1.0, out[0:3])
        for i in range(3):
            d[i] = mb[i] - mk[i]
        rot_t(Rk, d, W)                        # W = R_k^T (w_j - w_i)
        for i in range(3):
            d[i] = mb[6 + i] - mk[6 + i]
        rot_t(Rk, d, dW)
        add_cross(Om, W, -1.0, dW)             # W' = R_k^T (dw_j - dw_i) - Omega x W
        for axis in range(2):                  # u = R_k^T z_B, then x = R_k^T x_B
            col = 2 if axis == 0 else 0
            for i in range(3):
                u[i] = Rk[i] * F[12 + col] + Rk[3 + i] * F[15 + col] + Rk[6 + i] * F[18 + col]
                out[3 + 3 * axis + i] = 0.0
                t[i] = 0.0
            add_cross(dW, u, 1.0, out[3 + 3 * axis:6 + 3 * axis])   # W' x u + W x (W x u)
            add_cross(W, u, 1.0, t)
            add_cross(W, t, 1.0, out[3 + 3 * axis:6 + 3 * axis])
        for r in range(n_rows(ctype)):
            bias[r0 + r] = out[pick(ctype, r)]
    for c in range(M):
        bias[m - M + c] = 0.0
