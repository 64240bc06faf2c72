"""Integrating the equations of motion in time: classical RK4 and semi-implicit Euler steps, for fixed
and floating bases (numpy, on top of the forward-dynamics kernels).

A :class:`State` holds the joint positions ``q`` (rad, m) and velocities ``qd``; for a floating base
also the base position ``pos`` (m, world frame), its orientation ``quat`` (x, y, z, w; base to world)
and its twist ``twist`` = [v; w] (m/s, rad/s; base frame). RK4 integrates the orientation through
quat' = quat (x) [w/2; 0] and renormalises it after the step; the semi-implicit step uses the
exponential map. ``damping`` (N m s/rad, per joint or scalar) is extra viscous joint damping, for
simulating a mismatch with the model.
"""
import numpy as np

from ..model.spatial import quat_to_matrix
from .api import forward_dynamics
from .floating.api import floating_forward_dynamics


def quat_mul(a, b):
    """Hamilton product of quaternions (x, y, z, w)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz])


def quat_exp(w, h):
    """The unit quaternion of the rotation by the angular velocity w (rad/s) over h seconds."""
    w = np.asarray(w, float)
    n = float(np.linalg.norm(w))
    if n * h < 1e-12:
        q = np.array([0.5 * h * w[0], 0.5 * h * w[1], 0.5 * h * w[2], 1.0])
        return q / np.linalg.norm(q)
    s = np.sin(0.5 * n * h) / n
    return np.array([w[0] * s, w[1] * s, w[2] * s, np.cos(0.5 * n * h)])


class State:
    """Robot state; ``pos``, ``quat`` and ``twist`` are None for a fixed base."""

    __slots__ = ("pos", "quat", "q", "twist", "qd")

    def __init__(self, q, qd, pos=None, quat=None, twist=None):
        self.q, self.qd, self.pos, self.quat, self.twist = q, qd, pos, quat, twist

    @property
    def floating(self):
        return self.quat is not None


def derivative(model, s, tau, friction=False, damping=0.0, gravity=None, acceleration=None):
    """d/dt of the state under joint torques tau: (q', qd', pos', quat', twist') =
    (qd, qdd, R v, quat (x) [w/2; 0], base_accel). ``gravity`` overrides the model's (fixed base only).
    ``acceleration(q, qd, tau)``, if given, replaces forward dynamics (fixed base; e.g. a Plant's
    ``sim_acceleration``, whose tau may be shorter than q); ``friction``, ``damping`` and ``gravity``
    then do not apply."""
    if acceleration is not None:
        return State(s.qd, acceleration(s.q, s.qd, tau))
    t = tau - damping * s.qd
    if not s.floating:
        return State(s.qd, forward_dynamics(model, s.q, s.qd, t, friction=friction, gravity=gravity))
    quat = s.quat / np.linalg.norm(s.quat)
    qdd, accel = floating_forward_dynamics(model, s.q, s.qd, t, s.twist, quat, friction=friction)
    v, w = s.twist[:3], s.twist[3:]
    return State(s.qd, qdd, quat_to_matrix(*quat) @ v, 0.5 * quat_mul(s.quat, np.r_[w, 0.0]), accel)


def _pack(s):
    parts = (s.q, s.qd) if not s.floating else (s.q, s.qd, s.pos, s.quat, s.twist)
    return np.concatenate(parts)


def _unpack(y, n, floating):
    if not floating:
        return State(y[:n], y[n:2 * n])
    return State(y[:n], y[n:2 * n], y[2 * n:2 * n + 3], y[2 * n + 3:2 * n + 7], y[2 * n + 7:2 * n + 13])


def rk4(f, t, y, h):
    """One classical RK4 step of y' = f(t, y) (y a 1-D array) of length h from time t."""
    k1 = f(t, y)
    k2 = f(t + h / 2, y + (h / 2) * k1)
    k3 = f(t + h / 2, y + (h / 2) * k2)
    k4 = f(t + h, y + h * k3)
    return y + (h / 6) * (k1 + 2 * (k2 + k3) + k4)


def rk4_step(model, s, t, h, torque, **kw):
    """One classical RK4 step of length h (s) from time t; ``torque(t, state)`` gives the joint torques
    at each stage (a constant for a zero-order hold). ``kw`` as in :func:`derivative`. The stages work
    on the state packed into one vector, to keep the number of numpy operations per step small."""
    n, floating = len(s.q), s.floating

    def f(t_, y_):
        x = _unpack(y_, n, floating)
        return _pack(derivative(model, x, torque(t_, x), **kw))

    out = _unpack(rk4(f, t, _pack(s), h), n, floating)
    if floating:
        out.quat = out.quat / np.linalg.norm(out.quat)
    return out


def semi_implicit_step(model, s, h, tau, **kw):
    """One semi-implicit (symplectic) Euler step: velocities first, then positions with the new velocities;
    the orientation by the exponential map of the new angular velocity."""
    d = derivative(model, s, tau, **kw)
    qd = s.qd + h * d.qd
    if not s.floating:
        return State(s.q + h * qd, qd)
    twist = s.twist + h * d.twist
    quat = quat_mul(s.quat, quat_exp(twist[3:], h))
    return State(s.q + h * qd, qd, s.pos + h * (quat_to_matrix(*(s.quat / np.linalg.norm(s.quat))) @ twist[:3]),
                 quat / np.linalg.norm(quat), twist)
