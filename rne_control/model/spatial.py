"""Load-time rigid-body helpers (numpy, not on the hot path).

Homogeneous transforms are 4x4 arrays T = [[R, p], [0, 1]] giving the pose of a child frame in a parent
frame: x_parent = R x_child + p. Inertial parameters of a body are packed as the 10-vector
``[m, hx, hy, hz, Ixx, Iyy, Izz, Ixy, Ixz, Iyz]`` with h = m c the first moment of mass and I the
rotational inertia about the *frame origin* (not the COM), all in that frame's coordinates (kg, kg m, kg m^2).
"""
import numpy as np

from .errors import ModelError


def rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rpy_matrix(rpy):
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def axis_angle(axis, angle):
    """Rotation by ``angle`` (rad) about the unit vector ``axis`` (Rodrigues)."""
    k = np.asarray(axis, float)
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * K @ K


def transform(R=None, p=None):
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    if p is not None:
        T[:3, 3] = p
    return T


def align_z(axis):
    """A rotation R with R e_z = axis, so a joint about/along ``axis`` becomes one about/along z."""
    u = np.asarray(axis, float)
    z = np.array([0.0, 0.0, 1.0])
    c = float(z @ u)
    if c > 1.0 - 1e-15:
        return np.eye(3)
    if c < -1.0 + 1e-15:
        return rot_x(np.pi)
    w = np.cross(z, u)
    return axis_angle(w / np.linalg.norm(w), np.arctan2(np.linalg.norm(w), c))


def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


INERTIA_KEYS = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")   # a rotational inertia in the model files, in this order


def inertia_matrix(ixx, iyy, izz, ixy, ixz, iyz):
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], float)


def check_inertia(mass, I_com, where):
    """Validate physical consistency; returns a warning text for a triangle-inequality breach, else None."""
    if not np.isfinite(mass) or not np.all(np.isfinite(I_com)):
        raise ModelError(f"{where}: mass and inertia must be finite")
    if mass < 0.0:
        raise ModelError(f"{where}: negative mass {mass}")
    eig = np.linalg.eigvalsh(0.5 * (I_com + I_com.T))
    tol = 1e-12 * max(1.0, float(np.max(np.abs(eig))))
    if eig[0] < -tol:
        raise ModelError(f"{where}: inertia has a negative eigenvalue {eig[0]:.6g} (not positive semidefinite)")
    if eig[0] + eig[1] < eig[2] - 1e-9 * max(1.0, eig[2]):
        return (f"{where}: principal moments {eig[0]:.6g}, {eig[1]:.6g}, {eig[2]:.6g} break the triangle "
                f"inequality (physically impossible for a real body); kept as given")
    return None


# Published descriptions carry placeholder inertias of tiny parts (an antenna of 1 mg) that are not positive
# semidefinite by amounts far below anything a dynamics computation resolves: these are projected onto the
# nearest positive-semidefinite matrix, with a warning, instead of refusing the whole robot.
NEGLIGIBLE_INERTIA = 1e-6  # kg m^2: 1 kg at 1 mm


def clip_negligible_inertia(I_com, where):
    """``(I_com, None)``, or for an inertia whose negative eigenvalues are all within NEGLIGIBLE_INERTIA of
    zero, its nearest positive-semidefinite matrix (negative eigenvalues set to 0) and a warning text. A
    larger negative eigenvalue is left for :func:`check_inertia` to refuse."""
    if not np.all(np.isfinite(I_com)):
        return I_com, None
    S = 0.5 * (I_com + I_com.T)
    eig, V = np.linalg.eigh(S)
    tol = 1e-12 * max(1.0, float(np.max(np.abs(eig))))
    if eig[0] >= -tol or eig[0] < -NEGLIGIBLE_INERTIA:
        return I_com, None
    fixed = V @ np.diag(np.maximum(eig, 0.0)) @ V.T
    return fixed, (f"{where}: inertia has a negative eigenvalue {eig[0]:.3g} kg m^2 (not positive semidefinite, "
                   f"but below {NEGLIGIBLE_INERTIA:g}): set to the nearest positive-semidefinite inertia")


def body_params(mass, com, I_com):
    """10-vector of inertial parameters about the frame origin from mass, COM and COM inertia."""
    c = np.asarray(com, float)
    h = mass * c
    I_o = I_com - mass * skew(c) @ skew(c)  # parallel-axis theorem
    return np.array([mass, h[0], h[1], h[2], I_o[0, 0], I_o[1, 1], I_o[2, 2], I_o[0, 1], I_o[0, 2], I_o[1, 2]])


def transform_params(par, T):
    """Express inertial parameters given in a child frame in the parent frame, T = pose of child in parent."""
    R, p = T[:3, :3], T[:3, 3]
    m = par[0]
    h = R @ par[1:4]
    I = R @ inertia_matrix(*par[4:10]) @ R.T
    S, H = skew(p), skew(h)
    I = I - m * S @ S - S @ H - H @ S
    h = h + m * p
    return np.array([m, h[0], h[1], h[2], I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])


def quat_to_matrix(qx, qy, qz, qw):
    """Rotation matrix of the unit quaternion (x, y, z, w)."""
    return np.array([
        [1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)],
        [2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)],
        [2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)],
    ])
