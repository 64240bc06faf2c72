"""Primitives shared by the floating-base kernels: the base inputs and the base-body solves.

Public base vectors are [linear; angular] (twist [v; w], acceleration [vdot; wdot], wrench [f; n]),
the kernels use Featherstone's [angular; linear] order; these helpers convert at the boundary. The
base orientation is a unit quaternion (x, y, z, w), the rotation from the base frame to the world
frame; it only enters through gravity, which the model gives in the world frame.

The workspace of every floating-base kernel has one row more than the tree: row nb is the base body,
so a body whose parent is -1 reads its parent's state from row nb like from any other body.
"""
import math

from ..primitives import F_OUT, LENGTH, NONFINITE, SINGULAR, bad, inline, status

# Status fields of the base inputs (the joint fields 1-6 are those of primitives.py) and one more kind.
F_TWIST, F_BASE2, F_QUAT = 7, 8, 9  # F_BASE2: base_accel, base_wrench or momentum, per function
NOT_UNIT = 4
QUAT_TOL = 1e-6  # accepted | |quat| - 1 |


@inline
def check_vector(x, n, field):
    """0 if the 1-D array x has n finite entries, else a LENGTH or NONFINITE status."""
    if x.shape[0] != n:
        return status(LENGTH, field, x.shape[0])
    for k in range(n):
        if bad(x[k]):
            return status(NONFINITE, field, k)
    return 0


@inline
def base_rotation(quat, R):
    """R (9, row-major) = the base-to-world rotation of the quaternion (x, y, z, w), normalised.
    Returns a status: the quaternion must have 4 finite entries and unit norm within QUAT_TOL."""
    st = check_vector(quat, 4, F_QUAT)
    if st:
        return st
    x, y, z, w = quat[0], quat[1], quat[2], quat[3]
    nn = math.sqrt(x * x + y * y + z * z + w * w)
    if not abs(nn - 1.0) <= QUAT_TOL:
        return status(NOT_UNIT, F_QUAT, 0)
    x, y, z, w = x / nn, y / nn, z / nn, w / nn
    R[0], R[1], R[2] = 1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w)
    R[3], R[4], R[5] = 2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w)
    R[6], R[7], R[8] = 2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)
    return 0


@inline
def base_setup(dyn, quat, out6, ws):
    """Check that the base output has 6 entries, then fill the base row of the workspace (row nb): the
    base rotation R (columns 0:9) and gravity in base coordinates (9:12). Returns a status."""
    if out6.shape[0] != 6:
        return status(LENGTH, F_OUT, out6.shape[0])
    b = ws[ws.shape[0] - 1]
    return base_gravity(dyn, quat, b[0:9], b[9:12])


@inline
def base_gravity(dyn, quat, R, g):
    """g (3) = the model's gravity (world frame, row nb + 1 of dyn) in base coordinates, R^T g_world."""
    st = base_rotation(quat, R)
    if st:
        return st
    gw = dyn[dyn.shape[0] - 1]
    for k in range(3):
        if bad(gw[k]):
            return status(NONFINITE, 5, k)  # F_GRAVITY
    for k in range(3):
        g[k] = R[k] * gw[0] + R[3 + k] * gw[1] + R[6 + k] * gw[2]
    return 0


@inline
def to_motion(x, out):
    """out = [x[3:6]; x[0:3]]: a public [linear; angular] vector in the kernels' [angular; linear] order
    (the same swap converts back)."""
    out[0], out[1], out[2] = x[3], x[4], x[5]
    out[3], out[4], out[5] = x[0], x[1], x[2]


@inline
def solve_rigid(P, b, out):
    """out = I^-1 b for the spatial inertia of a rigid body with parameters P (a composite body is one):
    with c = h / m and I_c = I_o - m (|c|^2 1 - c c^T) the inertia about the COM,
    wdot = I_c^-1 (n - c x f) and a = f / m + c x wdot, for b = [n; f], out = [wdot; a]. Returns False if
    I is singular (no mass or a degenerate rotational inertia)."""
    m = P[0]
    if not m > 0.0:
        return False
    cx, cy, cz = P[1] / m, P[2] / m, P[3] / m
    cc = cx * cx + cy * cy + cz * cz
    a00 = P[4] - m * (cc - cx * cx)
    a11 = P[5] - m * (cc - cy * cy)
    a22 = P[6] - m * (cc - cz * cz)
    a01 = P[7] + m * cx * cy
    a02 = P[8] + m * cx * cz
    a12 = P[9] + m * cy * cz
    c00 = a11 * a22 - a12 * a12  # cofactors of the symmetric I_c
    c01 = a02 * a12 - a01 * a22
    c02 = a01 * a12 - a02 * a11
    det = a00 * c00 + a01 * c01 + a02 * c02
    if not det > 1e-300 or not det > 1e-14 * (a00 * a11 * a22):
        return False
    c11 = a00 * a22 - a02 * a02
    c12 = a01 * a02 - a00 * a12
    c22 = a00 * a11 - a01 * a01
    fx, fy, fz = b[3], b[4], b[5]
    nx = b[0] - (cy * fz - cz * fy)
    ny = b[1] - (cz * fx - cx * fz)
    nz = b[2] - (cx * fy - cy * fx)
    inv = 1.0 / det
    wx = (c00 * nx + c01 * ny + c02 * nz) * inv
    wy = (c01 * nx + c11 * ny + c12 * nz) * inv
    wz = (c02 * nx + c12 * ny + c22 * nz) * inv
    out[0], out[1], out[2] = wx, wy, wz
    out[3] = fx / m + (cy * wz - cz * wy)
    out[4] = fy / m + (cz * wx - cx * wz)
    out[5] = fz / m + (cx * wy - cy * wx)
    return True


@inline
def solve6(A, b, out, L):
    """out = A^-1 b for a symmetric positive definite 6x6 A (row-major, 36), by Cholesky into L (36).
    Returns False if A is not numerically positive definite."""
    scale = 0.0
    for i in range(6):
        scale = max(scale, abs(A[7 * i]))
    for i in range(6):
        for j in range(i + 1):
            s = A[6 * i + j]
            for k in range(j):
                s -= L[6 * i + k] * L[6 * j + k]
            if i == j:
                if not s > 1e-14 * scale:
                    return False
                L[7 * i] = math.sqrt(s)
            else:
                L[6 * i + j] = s / L[7 * j]
    for i in range(6):  # L y = b
        s = b[i]
        for k in range(i):
            s -= L[6 * i + k] * out[k]
        out[i] = s / L[7 * i]
    for i in range(5, -1, -1):  # L^T x = y
        s = out[i]
        for k in range(i + 1, 6):
            s -= L[6 * k + i] * out[k]
        out[i] = s / L[7 * i]
    return True


SINGULAR_BASE = status.py_func(SINGULAR, F_TWIST, 0)   # in Python: no kernel compiled at import
