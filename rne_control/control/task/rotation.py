"""Rotations for task-space control: the log and exp maps of SO(3) and the left Jacobian, compiled (they run
inside the task-space kernel) and callable from Python.

Conventions: rotation matrices are 3x3, row-major float64; a rotation vector phi = theta u (rad, |u| = 1)
stands for exp([phi]x) = I + sin(theta) [u]x + (1 - cos(theta)) [u]x^2 (Rodrigues). The pose error of the
task-space laws is log(R R_d^T), in base axes: the axis-angle of the rotation that takes the desired
orientation to the measured one. It is computed from the matrices, not from a quaternion's vector part
(which is sin(theta/2) u and halves the stiffness), so q and -q give the same error.

Beyond pi/2 the log map takes u from the symmetric part of R and signs it by the skew part. At theta = pi
the axis is only defined up to its sign: where sin(theta) <= SKEW_SIGN it makes u's largest component
positive.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...model.spatial import quat_to_matrix

SMALL_ANGLE = 1e-6     # rad: below it, series of the coefficients
SKEW_SIGN = 1e-12      # |sin(theta)| above which the skew part signs the axis


@njit(cache=True, nogil=True, error_model="numpy")
def rotation_log(R, out):
    """out (3,) = log(R): the rotation vector theta u of R (3x3), theta in [0, pi]. theta = atan2(sin, cos)
    from the skew and the trace parts (well conditioned at every angle); up to pi/2 u from the skew part,
    beyond from the symmetric part (R + R^T)/2 = cos I + (1 - cos) u u^T, signed by the skew part."""
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    sx, sy, sz = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]   # 2 sin(theta) u
    s = 0.5 * math.sqrt(sx * sx + sy * sy + sz * sz)
    theta = math.atan2(s, c)
    if theta <= 0.5 * math.pi:
        k = 0.5 + theta * theta / 12.0 if theta < SMALL_ANGLE else 0.5 * theta / s
        out[0], out[1], out[2] = k * sx, k * sy, k * sz
        return
    # u u^T = ((R + R^T)/2 - cos I) / (1 - cos): the column of the largest diagonal is the best conditioned
    d = 1.0 - c
    i = 0
    if R[1, 1] > R[i, i]:
        i = 1
    if R[2, 2] > R[i, i]:
        i = 2
    ux = (0.5 * (R[0, i] + R[i, 0]) - (c if i == 0 else 0.0)) / d
    uy = (0.5 * (R[1, i] + R[i, 1]) - (c if i == 1 else 0.0)) / d
    uz = (0.5 * (R[2, i] + R[i, 2]) - (c if i == 2 else 0.0)) / d
    nrm = math.sqrt(ux * ux + uy * uy + uz * uz)
    ux, uy, uz = ux / nrm, uy / nrm, uz / nrm
    if s > SKEW_SIGN:
        flip = ux * sx + uy * sy + uz * sz < 0.0
    else:   # theta = pi: u and -u are the same rotation; pick the one whose largest component is positive
        big = ux
        if abs(uy) > abs(big):
            big = uy
        if abs(uz) > abs(big):
            big = uz
        flip = big < 0.0
    if flip:
        ux, uy, uz = -ux, -uy, -uz
    out[0], out[1], out[2] = theta * ux, theta * uy, theta * uz


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def rotation_exp(phi, out):
    """out (3x3) = exp([phi]x) (Rodrigues)."""
    x, y, z = phi[0], phi[1], phi[2]
    t2 = x * x + y * y + z * z
    theta = math.sqrt(t2)
    if theta < SMALL_ANGLE:
        a, b = 1.0 - t2 / 6.0, 0.5 - t2 / 24.0
    else:
        a, b = math.sin(theta) / theta, (1.0 - math.cos(theta)) / t2
    out[0, 0] = 1.0 - b * (y * y + z * z)
    out[1, 1] = 1.0 - b * (x * x + z * z)
    out[2, 2] = 1.0 - b * (x * x + y * y)
    out[0, 1], out[1, 0] = b * x * y - a * z, b * x * y + a * z
    out[0, 2], out[2, 0] = b * x * z + a * y, b * x * z - a * y
    out[1, 2], out[2, 1] = b * y * z - a * x, b * y * z + a * x


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def left_jacobian_mul(phi, v, out):
    """out (3,) = J_l(phi) v, J_l = I + (1 - cos t)/t^2 [phi]x + (t - sin t)/t^3 [phi]x^2: the angular velocity
    (base axes) of R(t) = exp([phi(t)]x) R_0 for v = dphi/dt."""
    x, y, z = phi[0], phi[1], phi[2]
    t2 = x * x + y * y + z * z
    theta = math.sqrt(t2)
    if theta < SMALL_ANGLE:
        a, b = 0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0
    else:
        a, b = (1.0 - math.cos(theta)) / t2, (theta - math.sin(theta)) / (t2 * theta)
    cx, cy, cz = y * v[2] - z * v[1], z * v[0] - x * v[2], x * v[1] - y * v[0]          # phi x v
    ccx, ccy, ccz = y * cz - z * cy, z * cx - x * cz, x * cy - y * cx                   # phi x (phi x v)
    out[0] = v[0] + a * cx + b * ccx
    out[1] = v[1] + a * cy + b * ccy
    out[2] = v[2] + a * cz + b * ccz


@njit(cache=True, nogil=True, error_model="numpy")
def _log(R, out):
    rotation_log(R, out)


@njit(cache=True, nogil=True, error_model="numpy")
def _exp(phi, out):
    rotation_exp(phi, out)


def log(R) -> np.ndarray:
    """The rotation vector (3,) of the rotation matrix R (3x3), rad."""
    out = np.empty(3)
    _log(np.ascontiguousarray(R, dtype=float), out)
    return out


def exp(phi) -> np.ndarray:
    """The rotation matrix (3x3) of the rotation vector phi (3,), rad."""
    out = np.empty((3, 3))
    _exp(np.ascontiguousarray(phi, dtype=float), out)
    return out


def quaternion_matrix(x, y, z, w, what: str = "orientation") -> np.ndarray:
    """The rotation matrix of the quaternion (x, y, z, w), normalised; q and -q give the same matrix.
    ValueError naming ``what`` for a non-finite or zero quaternion."""
    qv = np.array([x, y, z, w], dtype=float)
    nrm = float(np.linalg.norm(qv))
    if not np.all(np.isfinite(qv)) or nrm < 1e-9:
        raise ValueError("%s must be a finite non-zero quaternion (got %s)" % (what, qv.tolist()))
    return quat_to_matrix(*(qv / nrm))


def matrix_quaternion(R) -> np.ndarray:
    """The unit quaternion (x, y, z, w), w >= 0, of the rotation matrix R (3x3)."""
    phi = log(R)
    theta = float(np.linalg.norm(phi))
    if theta < SMALL_ANGLE:
        return np.array([0.5 * phi[0], 0.5 * phi[1], 0.5 * phi[2], 1.0]) / math.sqrt(1.0 + 0.25 * theta * theta)
    u = phi / theta
    return np.r_[math.sin(0.5 * theta) * u, math.cos(0.5 * theta)]
