"""Time profiles of point-to-point motions (numpy, no ROS).

:func:`min_jerk` is the minimum-jerk (quintic) rest-to-rest move, the one profile that the demo, the
identification recorder, the examples and the benchmarks send: s(x) = 10 x^3 - 15 x^4 + 6 x^5 with
x = t / T clipped to [0, 1], so the move starts and ends with zero velocity and acceleration and holds
its end points outside [0, T].
"""
from __future__ import annotations

import numpy as np


def min_jerk(t, T, q0=0.0, q1=1.0):
    """Position, velocity and acceleration at time ``t`` (s) of the minimum-jerk move from ``q0`` (held for
    t <= 0) to ``q1`` (held for t >= T) in ``T`` (s) > 0.

    ``q0`` and ``q1`` are positions of any shape (rad or m; by default 0 and 1, which gives the normalised
    profile s, ds/dt, d^2s/dt^2); ``t`` a scalar or an array of times. Returns (q, qd, qdd) of shape
    ``shape(t) + shape(q1 - q0)``, in the units of q, per s and per s^2.
    """
    q0 = np.asarray(q0, dtype=float)
    d = np.asarray(q1, dtype=float) - q0
    x = np.clip(np.asarray(t, dtype=float) / T, 0.0, 1.0)
    x = x.reshape(x.shape + (1,) * d.ndim)
    x2 = x * x
    s = x2 * x * (10.0 + x * (-15.0 + 6.0 * x))
    sd = x2 * (30.0 + x * (-60.0 + 30.0 * x)) / T
    sdd = x * (60.0 + x * (-180.0 + 120.0 * x)) / (T * T)
    return q0 + d * s, d * sd, d * sdd


__all__ = ["min_jerk"]
