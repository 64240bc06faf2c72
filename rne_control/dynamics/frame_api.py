"""Frame kinematics of a tree on a fixed base: frame_pose, frame_jacobian, frame_bias_acceleration.

A frame is any name in ``model.link_frames``: a link, or a URDF frame folded into a body by a fixed
joint. Results are in the base frame (on a floating-base model, the base held at the identity, as in
api.py); joint-space columns in ``model.joint_names`` order. q (rad, m) and qd (rad/s, m/s) are single
samples (n,) or stacks (N, n); stacked inputs give stacked outputs. The equations: frames.py.
"""
import numpy as np

from . import frames
from .api import not_a_tree
from .calls import FLAGS, MODEL, arr, check, close, joint_arrays, prepare
from ..model.errors import InputError

KERNELS = {"frames": (frames.frame_many, (*MODEL, arr(2), arr(2), FLAGS, arr(2), FLAGS, arr(3), arr(3), arr(2)))}
close(frames.frame_many)


def frame_of(model, frame):
    """(body index, 4x4 pose in that body's frame) of the frame named ``frame``; InputError if unknown."""
    link_frames = getattr(model, "link_frames", None)
    if link_frames is None or not hasattr(model, "_K"):
        raise not_a_tree(model)
    try:
        return link_frames[frame]
    except (KeyError, TypeError):
        names = list(link_frames)
        shown = ", ".join(names[:12]) + (f", ... ({len(names)} in all)" if len(names) > 12 else "")
        raise InputError(f"unknown frame '{frame}' of model '{model.name}' (frames: {shown})") from None


def _frame_call(model, q, qd, frame, flags):
    """Run the frame kernel on single or stacked (q, qd); returns (pose, J, acc), stacked or not."""
    b, T = frame_of(model, frame)
    kernel, sig = KERNELS["frames"]
    prepare(kernel, [sig])
    arrays, N = joint_arrays(model, q=q) if qd is None else joint_arrays(model, q=q, qd=qd)
    single = N is None
    if single:
        arrays, N = [a[None] for a in arrays], 1
    qa, qda = arrays[0], arrays[-1]
    n = model.n if flags & frames.JACOBIAN else 0
    pose, J = np.empty((N, 4, 4)), np.empty((N, 6, n))
    acc = np.empty((N, 6 if flags & frames.BIAS else 0))
    st, s = kernel(model._K, qa, qda, b, np.array(T, dtype=float, order="C"), flags, pose, J, acc)
    check(model, st, None if single else s)
    return (pose[0], J[0], acc[0]) if single else (pose, J, acc)


def frame_pose(model, q, frame):
    """The 4x4 homogeneous pose T_0f of ``frame`` in the base frame (rotation, position in m): R_f = R_b R_bf,
    o_f = o_b + R_b p_bf, with (R_b, o_b) the pose of the frame's body by forward kinematics and T_bf the
    frame's fixed pose on it. (4, 4), or (N, 4, 4) when stacked."""
    return _frame_call(model, q, None, frame, frames.POSE)[0]


def frame_jacobian(model, q, frame):
    """The 6 x n geometric Jacobian of ``frame`` at its origin, rows [linear (m/s); angular (rad/s)] per unit
    joint rate, base-frame axes (Pinocchio's LOCAL_WORLD_ALIGNED): for joint k of body i between the base
    and the frame, axis z_i in the base frame through o_i, J_k = [z_i x (o_f - o_i); z_i] (revolute) or
    [z_i; 0] (prismatic); zero columns for the other joints. (6, n), or (N, 6, n) when stacked."""
    return _frame_call(model, q, None, frame, frames.POSE | frames.JACOBIAN)[1]


def frame_bias_acceleration(model, q, qd, frame):
    """Jdot qd: the classical acceleration [linear (m/s^2); angular (rad/s^2)] of ``frame``'s origin at
    qdd = 0, the base at rest, base-frame axes (Pinocchio's getFrameClassicalAcceleration, LOCAL_WORLD_ALIGNED,
    after forwardKinematics(q, qd, 0)): with body b's spatial velocity [w; v_o] and acceleration [dw; a_o]
    from the RNE's velocity pass (a_0 = 0) and the frame origin p in b's coordinates,
    a_P = a_o + dw x p + w x (v_o + w x p), and Jdot qd = [R_b a_P; R_b dw]. (6,), or (N, 6) when stacked."""
    return _frame_call(model, q, qd, frame, frames.POSE | frames.BIAS)[2]
