"""Layout of a model's loop kernel array ``LK`` (see rne_control.model.loops) and 3-vector helpers for
the loop kernels.

Rows of LK: 0 the header (B cut joints, M mimic couplings, N active, p passive, m constraint rows, n
joints, nb bodies); B cut-joint rows; M mimic rows; the active and the passive joint indices; then the
workspace: nb body rows (world pose R_0b, p_0b and the velocities w, v and q''=0 accelerations dw, a
of the body origin, base frame), the constraint Jacobian Phi (m rows, n columns), VEC_ROWS vectors, the
QR factors of Phi's passive columns (m rows; Householder scalars and R's diagonal in the last vector
rows), G_p (p rows, N columns), an n x n matrix, an N x N matrix, and a copy of the model's ``dyn``
rows (nb + 2).
"""
from .spatial import jit

# vector rows, relative to the first one
# scratch use: closure V_TMP, V_X; constraint_bias V_TMP, V_X, V_Y; newton V_E, V_RHS, V_DQ; the
# closed-loop kernels V_BIAS, V_QD, V_QDD, V_TAUTR, V_H, V_G, V_COL, V_UNIT, V_START, V_LAST
(V_E, V_BIAS, V_Q, V_QD, V_QDD, V_TAUTR, V_H, V_DQ, V_RHS, V_X, V_Y, V_TMP, V_BETA, V_RDIAG, V_G, V_COL,
 V_UNIT, V_START, V_LAST) = range(19)
VEC_ROWS = 19
H_LAST = 7   # header column: 1 when the G_p rows hold G at the closed configuration in row V_LAST
# columns of a body row
B_R, B_P, B_W, B_V, B_DW, B_A, B_X = 0, 9, 12, 15, 18, 21, 24
# columns of a cut-joint row
C_TYPE, C_BI, C_BJ, C_RI, C_PI, C_RJ, C_PJ, C_ROW = 0, 1, 2, 3, 12, 15, 24, 27


@jit
def sizes(LK):
    """(B, M, N, p, m, n, nb)."""
    h = LK[0]
    return int(h[0]), int(h[1]), int(h[2]), int(h[3]), int(h[4]), int(h[5]), int(h[6])


@jit
def offsets(LK):
    """First rows of: cut joints, mimic, active indices, bodies, Phi, vectors, QR, G_p, n x n matrix,
    N x N matrix, dyn copy."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act = 1, 1 + B, 1 + B + M
    o_body = o_act + 2
    o_phi = o_body + nb
    o_vec = o_phi + m
    o_qr = o_vec + VEC_ROWS
    o_g = o_qr + m
    o_mat = o_g + p
    o_ac = o_mat + n
    o_dyn = o_ac + N
    return o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn


@jit
def cross(a, b, out):
    """out = a x b (3-vectors; out must not alias a or b)."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@jit
def add_cross(a, b, s, out):
    """out += s (a x b)."""
    out[0] += s * (a[1] * b[2] - a[2] * b[1])
    out[1] += s * (a[2] * b[0] - a[0] * b[2])
    out[2] += s * (a[0] * b[1] - a[1] * b[0])


@jit
def rot_t(R, x, out):
    """out = R^T x for a row-major 3x3 R."""
    for i in range(3):
        out[i] = R[i] * x[0] + R[3 + i] * x[1] + R[6 + i] * x[2]


@jit
def frame_pose(bk, Rf, pf, R, p):
    """Pose (R, p) in the base frame of a frame fixed on a body whose body row is ``bk`` (None-like empty
    row = the base), given the frame's pose (Rf, pf) in body coordinates."""
    if bk.shape[0] == 0:
        for i in range(9):
            R[i] = Rf[i]
        for i in range(3):
            p[i] = pf[i]
        return
    for i in range(3):
        p[i] = bk[B_P + i]
        for j in range(3):
            p[i] += bk[B_R + 3 * i + j] * pf[j]
            R[3 * i + j] = (bk[B_R + 3 * i] * Rf[j] + bk[B_R + 3 * i + 1] * Rf[3 + j]
                            + bk[B_R + 3 * i + 2] * Rf[6 + j])
