"""Effort limits: the published command never exceeds them and is never NaN or inf."""
from __future__ import annotations

import numpy as np

from . import _kernels as K


def model_limits(limits) -> np.ndarray:
    """A model's or plant's effort limits as the controller and rne_sim use them: a copy, +inf (none) where a
    limit is not > 0 (unset)."""
    a = np.array(limits, dtype=float).reshape(-1)
    return np.where(a > 0, a, np.inf)


def check_limits(limits, n: int) -> np.ndarray:
    """Validate effort limits: n positive values (inf allowed, NaN not). Returns a float array."""
    a = np.asarray(limits, dtype=float).reshape(-1)
    if a.shape != (n,):
        raise ValueError("effort_limits needs %d values, got %d" % (n, a.size))
    if np.any(np.isnan(a)):
        raise ValueError("effort_limits must not be NaN")
    if np.any(a <= 0.0):
        raise ValueError("effort_limits must be positive")
    return a.copy()


class EffortLimiter:
    """Clamp a torque vector to +-limits in place (allocation-free).

    Non-finite torques become 0 (and are counted in ``nonfinite``); ``saturated``
    is a per-joint uint8 flag of the last call (1 clamped, 2 non-finite).
    """

    def __init__(self, limits):
        lim = np.asarray(limits, dtype=float).reshape(-1)
        self.n = lim.size
        self.limits = check_limits(lim, self.n)
        self.saturated = np.zeros(self.n, dtype=np.uint8)
        self.saturated_cycles = 0   # cycles with at least one joint clamped
        self.nonfinite = 0          # cycles where a non-finite torque was replaced by 0

    def set_limits(self, limits) -> None:
        self.limits[:] = check_limits(limits, self.n)

    def apply(self, tau, out=None) -> int:
        """Clamp ``tau`` into ``out`` (default: in place). Returns the number of affected joints."""
        if out is None:
            out = tau
        count = K.clamp(tau, self.limits, out, self.saturated)
        if count:
            self.saturated_cycles += 1
            if np.any(self.saturated == 2):
                self.nonfinite += 1
        return count

    @property
    def any_finite(self) -> bool:
        return bool(np.all(np.isfinite(self.limits)))
