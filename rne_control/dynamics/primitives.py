"""Spatial-vector primitives for the JIT kernels (Featherstone's notation, body coordinates).

Motion vectors are [omega; v], force vectors [n; f] (Featherstone's order; the public API converts
wrenches from the [force; torque] order at the boundary). A Plücker transform from a parent frame to a
child frame is stored as 12 numbers: the 3x3 coordinate rotation E (row-major) and r, the child
origin in parent coordinates, so that X = rot(E) xlt(r) (Featherstone eq. 2.28):

    X m = [E w;  E (v - r x w)]            X^T f = [E^T n + r x E^T f;  E^T f]

Inertial parameters are the 10-vector [m, hx, hy, hz, Ixx, Iyy, Izz, Ixy, Ixz, Iyz] with h = m c and
I about the body origin, so the spatial inertia is I = [[I_o, h x], [-(h x), m 1]].
Joints are revolute about z (S = e_3) or prismatic along z (S = e_6) in body coordinates.
"""
import math

import numba as nb

from ..model.layout import JTYPE, PARENT, QIDX, REVOLUTE, TREE_W

# Kernel flags.
FRICTION = 1      # add Fv qd + Fs sign(qd)
CORIOLIS_ONLY = 2  # no gravity, qdd = 0, no rotor or friction: C(q, qd) qd
XUP_GIVEN = 32     # rnea: ws[i, 0:12] already holds X_up(q_i) (the caller has the joint transforms)
# fastmath "contract" only lets LLVM fuse a * b + c into one fused multiply-add (one rounding instead of
# two: no less accurate), where the CPU has it; it allows no reassociation and keeps NaN and inf
# semantics, so the kernels' finiteness checks hold (README "Speed": it brought the mass matrix under
# Pinocchio's time).
FASTMATH = {"contract"}
jit = nb.njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
# The entry points of the kernels hold the GIL (no nogil): they work in the model's own workspace, so
# calls on one model from several threads must not overlap.
entry = nb.njit(cache=True, error_model="numpy", fastmath=FASTMATH)
# numba-IR inlining of the kernels' small helpers saves their call overhead (single-call speed). The
# closed-loop kernels inline only their small helpers and call the large ones (closure, newton, the
# constraint bias) as plain functions (jit): inlining those too made compiling them tens of seconds
# slower and the calls no faster.
inline = nb.njit(cache=True, nogil=True, error_model="numpy", inline="always", fastmath=FASTMATH)


@inline
def joint_xform(kin, jtype, q, X):
    """X_up = X_J(q) X_tree: parent coordinates to body coordinates (Featherstone Table 5.1, line 3)."""
    if jtype == REVOLUTE:
        c, s = math.cos(q), math.sin(q)
        for k in range(3):  # E = rz(q)^T E_tree
            X[k] = c * kin[k] + s * kin[3 + k]
            X[3 + k] = -s * kin[k] + c * kin[3 + k]
            X[6 + k] = kin[6 + k]
            X[9 + k] = kin[9 + k]
    else:
        for k in range(9):
            X[k] = kin[k]
        for k in range(3):  # r = r_tree + E_tree^T (0, 0, q)
            X[9 + k] = kin[9 + k] + q * kin[6 + k]


@inline
def x_motion(X, m, out):
    """out = X m (motion vector from parent to body coordinates); out must not alias m."""
    vx = m[3] - (X[10] * m[2] - X[11] * m[1])
    vy = m[4] - (X[11] * m[0] - X[9] * m[2])
    vz = m[5] - (X[9] * m[1] - X[10] * m[0])
    for k in range(3):
        out[k] = X[3 * k] * m[0] + X[3 * k + 1] * m[1] + X[3 * k + 2] * m[2]
        out[3 + k] = X[3 * k] * vx + X[3 * k + 1] * vy + X[3 * k + 2] * vz


@inline
def add_xT_force(X, f, out):
    """out += X^T f (force vector from body to parent coordinates)."""
    fx = X[0] * f[3] + X[3] * f[4] + X[6] * f[5]
    fy = X[1] * f[3] + X[4] * f[4] + X[7] * f[5]
    fz = X[2] * f[3] + X[5] * f[4] + X[8] * f[5]
    out[0] += X[0] * f[0] + X[3] * f[1] + X[6] * f[2] + X[10] * fz - X[11] * fy
    out[1] += X[1] * f[0] + X[4] * f[1] + X[7] * f[2] + X[11] * fx - X[9] * fz
    out[2] += X[2] * f[0] + X[5] * f[1] + X[8] * f[2] + X[9] * fy - X[10] * fx
    out[3] += fx
    out[4] += fy
    out[5] += fz


@inline
def xT_force(X, f0, f1, f2, f3, f4, f5):
    """X^T f for the force vector f = [n; f] given by its six components (body to parent coordinates),
    as six numbers: lets a loop carry f in registers."""
    fx = X[0] * f3 + X[3] * f4 + X[6] * f5
    fy = X[1] * f3 + X[4] * f4 + X[7] * f5
    fz = X[2] * f3 + X[5] * f4 + X[8] * f5
    n0 = X[0] * f0 + X[3] * f1 + X[6] * f2 + X[10] * fz - X[11] * fy
    n1 = X[1] * f0 + X[4] * f1 + X[7] * f2 + X[11] * fx - X[9] * fz
    n2 = X[2] * f0 + X[5] * f1 + X[8] * f2 + X[9] * fy - X[10] * fx
    return n0, n1, n2, fx, fy, fz



@inline
def inertia_mul(P, m, out):
    """out = I m for the spatial inertia with parameters P."""
    out[0] = P[4] * m[0] + P[7] * m[1] + P[8] * m[2] + P[2] * m[5] - P[3] * m[4]
    out[1] = P[7] * m[0] + P[5] * m[1] + P[9] * m[2] + P[3] * m[3] - P[1] * m[5]
    out[2] = P[8] * m[0] + P[9] * m[1] + P[6] * m[2] + P[1] * m[4] - P[2] * m[3]
    out[3] = P[0] * m[3] - (P[2] * m[2] - P[3] * m[1])
    out[4] = P[0] * m[4] - (P[3] * m[0] - P[1] * m[2])
    out[5] = P[0] * m[5] - (P[1] * m[1] - P[2] * m[0])


@inline
def inertia_column(P, jtype):
    """I S for the spatial inertia with parameters P and the motion subspace S of a z joint (e_3 revolute,
    e_6 prismatic): a column of I, as six numbers (inertia_mul with the zeros of S left out)."""
    if jtype == REVOLUTE:
        return P[8], P[9], P[6], -P[2], P[1], 0.0
    return P[2], -P[1], 0.0, 0.0, 0.0, P[0]


@inline
def add_cross_force(v, f, out):
    """out += v x* f = [w x n + v x f; w x f]."""
    out[0] += v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4]
    out[1] += v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5]
    out[2] += v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3]
    out[3] += v[1] * f[5] - v[2] * f[4]
    out[4] += v[2] * f[3] - v[0] * f[5]
    out[5] += v[0] * f[4] - v[1] * f[3]


@inline
def add_cross_motion_S(v, jtype, qd, out):
    """out += v x (S qd), the velocity-product acceleration of a z joint."""
    if jtype == REVOLUTE:  # S qd = (0, 0, qd, 0, 0, 0)
        out[0] += v[1] * qd
        out[1] -= v[0] * qd
        out[3] += v[4] * qd
        out[4] -= v[3] * qd
    else:  # S qd = (0, 0, 0, 0, 0, qd)
        out[3] += v[1] * qd
        out[4] -= v[0] * qd


@inline
def add_params_to_parent(X, P, out):
    """out += the inertial parameters P (body coordinates) expressed in parent coordinates (I^c += X^T I X)."""
    m = P[0]
    r0, r1, r2 = X[9], X[10], X[11]
    # y = E^T h
    y0 = X[0] * P[1] + X[3] * P[2] + X[6] * P[3]
    y1 = X[1] * P[1] + X[4] * P[2] + X[7] * P[3]
    y2 = X[2] * P[1] + X[5] * P[2] + X[8] * P[3]
    # A = E^T I E with I symmetric from P[4:10]; B = I E column by column
    I00, I11, I22, I01, I02, I12 = P[4], P[5], P[6], P[7], P[8], P[9]
    E00, E01, E02, E10, E11, E12, E20, E21, E22 = X[0], X[1], X[2], X[3], X[4], X[5], X[6], X[7], X[8]
    B00 = I00 * E00 + I01 * E10 + I02 * E20
    B10 = I01 * E00 + I11 * E10 + I12 * E20
    B20 = I02 * E00 + I12 * E10 + I22 * E20
    B01 = I00 * E01 + I01 * E11 + I02 * E21
    B11 = I01 * E01 + I11 * E11 + I12 * E21
    B21 = I02 * E01 + I12 * E11 + I22 * E21
    B02 = I00 * E02 + I01 * E12 + I02 * E22
    B12 = I01 * E02 + I11 * E12 + I12 * E22
    B22 = I02 * E02 + I12 * E12 + I22 * E22
    A00 = E00 * B00 + E10 * B10 + E20 * B20
    A11 = E01 * B01 + E11 * B11 + E21 * B21
    A22 = E02 * B02 + E12 * B12 + E22 * B22
    A01 = E00 * B01 + E10 * B11 + E20 * B21
    A02 = E00 * B02 + E10 * B12 + E20 * B22
    A12 = E01 * B02 + E11 * B12 + E21 * B22
    rr = r0 * r0 + r1 * r1 + r2 * r2
    ry = r0 * y0 + r1 * y1 + r2 * y2
    # I_p = E^T I E + m(|r|^2 1 - r r^T) + 2 (r.y) 1 - y r^T - r y^T  (parallel-axis with first moment)
    out[0] += m
    out[1] += y0 + m * r0
    out[2] += y1 + m * r1
    out[3] += y2 + m * r2
    out[4] += A00 + m * (rr - r0 * r0) + 2.0 * (ry - r0 * y0)
    out[5] += A11 + m * (rr - r1 * r1) + 2.0 * (ry - r1 * y1)
    out[6] += A22 + m * (rr - r2 * r2) + 2.0 * (ry - r2 * y2)
    out[7] += A01 - m * r0 * r1 - (y0 * r1 + r0 * y1)
    out[8] += A02 - m * r0 * r2 - (y0 * r2 + r0 * y2)
    out[9] += A12 - m * r1 * r2 - (y1 * r2 + r1 * y2)


# Status codes returned by the kernels, decoded by rne_control.dynamics.calls.
# status = (kind * 10 + field) * 100000 + joint index
NONFINITE, LENGTH, SINGULAR = 1, 2, 3
F_Q, F_QD, F_QDD, F_TAU, F_GRAVITY, F_OUT, F_BASE = 1, 2, 3, 4, 5, 6, 7


@inline
def body(tree, i):
    """parent, joint type and joint index of body i."""
    return int(tree[i, PARENT]), int(tree[i, JTYPE]), int(tree[i, QIDX])


@inline
def sgn(x):
    return math.copysign(1.0, x) if x != 0.0 else 0.0


@inline
def status(kind, field, k):
    return (kind * 10 + field) * 100000 + k


@inline
def bad(x):
    return not math.isfinite(x)


@inline
def lengths_status(nb, q, qd, x, x_field, out):
    """A LENGTH status for the first of q, qd, x (field x_field) and out that has not nb entries, else 0."""
    return (length_status(q, nb, F_Q) or length_status(qd, nb, F_QD) or length_status(x, nb, x_field)
            or length_status(out, nb, F_OUT))


@inline
def gravity_status(dyn, nb):
    """A NONFINITE status if the gravity row of dyn has NaN or inf, else 0."""
    for k in range(3):
        if bad(dyn[nb + 1, k]):
            return status(NONFINITE, F_GRAVITY, k)
    return 0


@inline
def nonfinite_status(k, q, qd, x, x_field):
    """A NONFINITE status for the first of q[k], qd[k], x[k] that is NaN or inf, else 0."""
    if bad(q[k]):
        return status(NONFINITE, F_Q, k)
    if bad(qd[k]):
        return status(NONFINITE, F_QD, k)
    if bad(x[k]):
        return status(NONFINITE, x_field, k)
    return 0


@inline
def length_status(x, n, field):
    """0 if the 1-D array x has n entries, else a LENGTH status carrying its actual length."""
    return 0 if x.shape[0] == n else status(LENGTH, field, x.shape[0])


@inline
def split(K):
    """Views of a model's kernel array K (see rne_control.model.model): tree (nb, TREE_W), dyn (nb + 2, 10),
    the workspace (nb + 1 rows, one per body and the base) and a scratch row."""
    nb = (K.shape[0] - 4) // 3
    return K[0:nb, 0:TREE_W], K[nb:2 * nb + 2, 0:10], K[2 * nb + 2:3 * nb + 3], K[3 * nb + 3]
