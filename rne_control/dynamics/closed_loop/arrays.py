"""Layout of a model's loop kernel array ``LK`` (see rne_control.model.loops), and the loop kernels'
3-vector arithmetic on tuples (``vec3``, ``cross``, ``rot_t``...), which numba keeps in registers.

Rows of LK: 0 the header (B cut joints, M mimic couplings, N active, p passive, m constraint rows, n
joints, nb bodies); B cut-joint rows; M mimic rows; the active and the passive joint indices; then the
workspace: nb body rows (world pose R_0b, p_0b and the velocities w, v and q''=0 accelerations dw, a
of the body origin, base frame; X_up and the joint position it is for), the constraint Jacobian Phi
(m rows, n columns), VEC_ROWS vectors, the QR factors of Phi's passive columns (m rows; the
Householder scalars and the reciprocals of R's diagonal in vector rows), G_p (p rows, N columns), an
n x n matrix, an N x N matrix, and a copy of the model's ``dyn`` rows (nb + 2).
"""
from ...model.layout import B_P, B_R, VEC_ROWS
from ..primitives import inline

# vector rows, relative to the first one
# scratch use: closure V_TMP, V_X; constraint_bias V_TMP, V_X; newton V_E, V_RHS, V_DQ; the
# closed-loop kernels V_BIAS, V_QD, V_QDD, V_TAUTR, V_H, V_G, V_COL, V_UNIT, V_START, V_LAST
(V_E, V_BIAS, V_Q, V_QD, V_QDD, V_TAUTR, V_H, V_DQ, V_RHS, V_X, V_TMP, V_BETA, V_RINV, V_G, V_COL, V_UNIT,
 V_START, V_LAST) = range(VEC_ROWS)
H_LAST = 7   # header column: 1 when the G_p rows hold G at the closed configuration in row V_LAST


@inline
def sizes(LK):
    """(B, M, N, p, m, n, nb)."""
    h = LK[0]
    return int(h[0]), int(h[1]), int(h[2]), int(h[3]), int(h[4]), int(h[5]), int(h[6])


@inline
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


ZERO3 = (0.0, 0.0, 0.0)


@inline
def vec3(x, i):
    """x[i:i+3] as a 3-tuple (kept in registers by the kernels that take it)."""
    return (x[i], x[i + 1], x[i + 2])


@inline
def mat3(x, i):
    """The row-major 3x3 x[i:i+9] as a 9-tuple."""
    return (x[i], x[i + 1], x[i + 2], x[i + 3], x[i + 4], x[i + 5], x[i + 6], x[i + 7], x[i + 8])


@inline
def put(x, i, a):
    """x[i:i+3] = the 3-tuple a."""
    x[i], x[i + 1], x[i + 2] = a[0], a[1], a[2]


@inline
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@inline
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@inline
def scale(s, a):
    return (s * a[0], s * a[1], s * a[2])


@inline
def cross(a, b):
    """a x b of 3-tuples."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@inline
def rot_t(R, x):
    """R^T x for R the row-major 3x3 R[0:9] (an array or a 9-tuple) and a 3-tuple x."""
    return (R[0] * x[0] + R[3] * x[1] + R[6] * x[2], R[1] * x[0] + R[4] * x[1] + R[7] * x[2],
            R[2] * x[0] + R[5] * x[1] + R[8] * x[2])


@inline
def rot(R, x):
    """R x for R a 9-tuple (row-major 3x3) and a 3-tuple x."""
    return (R[0] * x[0] + R[1] * x[1] + R[2] * x[2], R[3] * x[0] + R[4] * x[1] + R[5] * x[2],
            R[6] * x[0] + R[7] * x[1] + R[8] * x[2])


@inline
def put_rot(x, i, R, E):
    """x[i:i+9] = R E^T (row-major 3x3; R, E 9-tuples): column j is R times row j of E."""
    for j in range(3):
        c = rot(R, (E[3 * j], E[3 * j + 1], E[3 * j + 2]))
        x[i + j], x[i + 3 + j], x[i + 6 + j] = c[0], c[1], c[2]


@inline
def frame_pose(bk, Rf, pf, R, p):
    """Pose (R, p) in the base frame (R into R[0:9], row-major; p into p[0:3]) of a frame fixed on a body
    whose body row is ``bk`` (an empty row: the base), given the frame's pose (Rf, pf) in body
    coordinates: R = R_0b Rf, p = p_0b + R_0b pf."""
    if bk.shape[0] == 0:
        for i in range(9):
            R[i] = Rf[i]
        for i in range(3):
            p[i] = pf[i]
        return
    Rb = mat3(bk, B_R)
    put(p, 0, add(vec3(bk, B_P), rot(Rb, vec3(pf, 0))))
    for j in range(3):   # column j of R = R_0b times column j of Rf
        c = rot(Rb, (Rf[j], Rf[3 + j], Rf[6 + j]))
        R[j], R[3 + j], R[6 + j] = c[0], c[1], c[2]
