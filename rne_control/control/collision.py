"""Collision detection and reaction on the momentum observer's residual r (rne_control.control.observer).

A collision is any joint whose |r_i + tau_ff,i| exceeds its threshold (N m or N), where tau_ff = J^T F_d are
the joint torques of a wrench the controller means the tool to exert (zero in joint space): pushing
on purpose is then not a collision. A detection latches until :meth:`CollisionMonitor.reset`, unless the
reaction is ``none`` (report only). The reactions, the torques that replace the law's while latched:

* ``none``: none (the law runs on; detections are reported);
* ``gravity``: tau = g(q), the arm floats;
* ``damp``: tau = g(q) - D qd, it floats and stops (``damping`` D, N m s/rad per joint);
* ``reflex``: tau = g(q) + K_R r, it yields to the contact (``reflex_gain`` K_R, per joint, >= 0).

A threshold of +inf is "off": that joint has no collision test (the default on a joint without a finite
effort limit, rne_control.control.settings). A NaN residual still counts as a detection on every joint, an
"off" one included: NaN is a broken observer, not a force, and a reaction that is set must not stay quiet
because the thresholds are off.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

REACTIONS = ("none", "gravity", "damp", "reflex")


class CollisionError(ValueError):
    """A bad collision setting (the message names the parameter)."""


def per_joint(name: str, value, n: int, positive: bool, off: bool = False) -> np.ndarray:
    """``value`` as n finite values (one is repeated), > 0 if ``positive`` else >= 0 (with ``off``, +inf
    too: none); CollisionError naming ``name`` otherwise."""
    x = np.asarray(value, dtype=float).reshape(-1)
    if x.size == 1:
        x = np.full(n, x[0])
    if x.shape != (n,):
        raise CollisionError(f"{name} must be one value or {n} (got {x.size})")
    if not np.all(np.isfinite(x) | (off & (x == np.inf))) or np.any(x <= 0 if positive else x < 0):
        raise CollisionError(f"{name} must be finite and {'> 0' if positive else '>= 0'} (got {x.tolist()})")
    return x


class CollisionMonitor:
    """Detection on n joints with ``thresholds`` (one or n values, > 0; +inf: no test on that joint) and a
    ``reaction`` of :data:`REACTIONS`, with its ``damping`` or ``reflex_gain`` (one or n values, >= 0; a
    ``damping`` of +inf means none, refused with ``damp``). ``latched``: a
    reaction is in force; ``joints``: the joint indices that crossed at the latching sample (or, with
    ``none``, at the last sample that detected); ``events``: the detections so far (latches, or with
    ``none`` the samples that went from clear to detected); ``detected``: the last sample detected one."""

    def __init__(self, n: int, thresholds, reaction: str = "none", damping=0.0, reflex_gain=0.0):
        if reaction not in REACTIONS:
            raise CollisionError(f"collision.reaction must be one of {', '.join(REACTIONS)} (got {reaction!r})")
        self.n = n
        self.thresholds = per_joint("collision.thresholds", thresholds, n, positive=True, off=True)
        self.reaction = reaction
        self.damping = per_joint("collision.damping", damping, n, positive=False, off=reaction != "damp")
        self.reflex_gain = per_joint("collision.reflex_gain", reflex_gain, n, positive=False)
        self.latched = False
        self.joints: list = []
        self.events = 0
        self.detected = False

    def check(self, r, tau_ff: Optional[np.ndarray] = None) -> bool:
        """Take one residual r (N m, N); True if a reaction is in force after it (latched now or before)."""
        if self.latched:
            return True
        return self.detect(int(np.count_nonzero(self._over(r, tau_ff))), r, tau_ff)

    def detect(self, hits: int, r, tau_ff: Optional[np.ndarray] = None) -> bool:
        """As :meth:`check`, given ``hits``, the number of joints over threshold the caller counted on r (the
        control cycle's compiled test)."""
        if self.latched:
            return True
        detected = hits > 0
        if detected:
            self.joints = np.flatnonzero(self._over(r, tau_ff)).tolist()
            if self.reaction != "none":
                self.latched = True
                self.events += 1
            elif not self.detected:
                self.events += 1
        self.detected = detected
        return self.latched

    def _over(self, r, tau_ff):
        """Per joint: |r + tau_ff| over its threshold (a NaN counts, on an "off" joint too)."""
        return ~(np.abs(r if tau_ff is None else r + tau_ff) <= self.thresholds)

    def reset(self) -> None:
        """Release a latched reaction (the caller then ramps back in, as after a stale state)."""
        self.latched = False
        self.detected = False
        self.joints = []

    def torque(self, g, qd, r) -> np.ndarray:
        """The reaction's torque (N m, N) from gravity torques ``g``, velocities ``qd`` and the residual ``r``."""
        if self.reaction == "damp":
            return g - self.damping * qd
        if self.reaction == "reflex":
            return g + self.reflex_gain * r
        return np.array(g, dtype=float)
