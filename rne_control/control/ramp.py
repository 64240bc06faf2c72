"""Torque ramps: switch from one control law to another without a torque step.

:class:`Ramp` is a 0 -> 1 linear fraction over ``duration`` seconds.

:class:`OffsetRamp` blends the command linearly from the old law to the new
one: when a switch happens at time t0 (mode, base, gains, gravity, payload,
recovery from a stale state) it records ``offset = tau_old(t0) - tau_new(t0)``,
with ``tau_old(t0)`` the command last sent. It then outputs
``tau_new(t) + (1 - s(t)) * offset`` with ``s = (t - t0) / ramp_time``. At t0
the command is exactly the old one, and it reaches the new law at
t0 + ramp_time; the step per cycle that the ramp adds is at most
``|offset| * dt / ramp_time``. A switch during a ramp starts a new ramp from
the command actually sent, so ramps compose without a step. Only one law is
evaluated per cycle.
"""
from __future__ import annotations

import math

import numpy as np

from . import _kernels as K


class Ramp:
    """Linear fraction s(t) from 0 at ``start`` to 1 at ``start + duration``."""

    def __init__(self, duration: float = 0.5):
        self.duration = float(duration)
        self.t0 = -math.inf
        self.active = False

    def start(self, t: float) -> None:
        self.t0 = float(t)
        self.active = self.duration > 0.0

    def fraction(self, t: float) -> float:
        if not self.active:
            return 1.0
        s = (t - self.t0) / self.duration
        if s >= 1.0:
            self.active = False
            return 1.0
        return s if s > 0.0 else 0.0


class OffsetRamp(Ramp):
    """Linear blend from the last command to a new law (see the module docstring)."""

    def __init__(self, n: int, duration: float = 0.5):
        super().__init__(duration)
        self.offset = np.zeros(n)

    def start_blend(self, t: float, old_command, new_command) -> None:
        """Begin a blend at time t from ``old_command`` (sent) to the new law's ``new_command``."""
        np.subtract(old_command, new_command, out=self.offset)
        if not np.all(np.isfinite(self.offset)):
            self.offset.fill(0.0)
        self.start(t)

    def apply(self, t: float, tau, out=None):
        """tau + (1 - s(t)) * offset into ``out`` (default: in place); returns the blended array, which is
        ``tau`` itself, untouched, when no blend is in progress."""
        if self.active:
            s = self.fraction(t)
            if s < 1.0:
                if out is None:
                    out = tau
                elif out is not tau:
                    np.copyto(out, tau)
                K.blend_offset(out, self.offset, 1.0 - s)
                return out
        return tau

    def max_step(self, dt: float) -> float:
        """Largest per-joint change the ramp itself adds over dt."""
        if self.duration <= 0.0:
            return float(np.max(np.abs(self.offset))) if self.offset.size else 0.0
        return float(np.max(np.abs(self.offset))) * dt / self.duration if self.offset.size else 0.0
