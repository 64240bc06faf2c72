"""Joint trajectory interpolation with joint_trajectory_controller semantics.

:class:`TrajectoryGenerator` turns a list of waypoints (``time_from_start``,
positions, optional velocities and accelerations) into desired joint
positions, velocities and accelerations at any time:

* Joint names are reordered to the generator's ``joint_names``; unknown,
  missing or duplicated joints are refused.
* Segments are quintic when the points carry accelerations (q, q', q''
  continuous), cubic when they carry velocities (q, q' continuous) and linear
  with positions only (q continuous).
* The first segment starts from the *current desired state* at the moment
  the trajectory becomes active (so a new trajectory replaces the running
  one without a jump) and ends at the first point.
* A trajectory with a start time in the future lets the running one go on
  until then. A start time in the past is allowed as long as the trajectory
  has not ended: points already in the past are dropped and the first segment
  goes from the current desired state to the first future point.
* After the last point the generator holds that point's position with zero
  velocity and acceleration. Before any trajectory it holds the position given
  to :meth:`TrajectoryGenerator.reset`.

Invalid input raises :class:`TrajectoryError` (a ``ValueError``) whose message
names the offending field and joint; the running trajectory is untouched.

:meth:`TrajectoryGenerator.sample` is allocation-free: it writes into the
preallocated arrays ``q``, ``qd`` and ``qdd``.
"""
from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from . import _kernels as K


class TrajectoryError(ValueError):
    """A trajectory was refused. ``field`` and ``joint`` name the culprit."""

    def __init__(self, message: str, field: str = "", joint: str = ""):
        super().__init__(message)
        self.field = field
        self.joint = joint


@dataclass
class PreparedTrajectory:
    """A validated trajectory in the generator's joint order."""

    times: np.ndarray                      # (m,) time_from_start, strictly increasing, >= 0
    positions: np.ndarray                  # (m, n)
    velocities: Optional[np.ndarray]       # (m, n) or None
    accelerations: Optional[np.ndarray]    # (m, n) or None

    @property
    def kind(self) -> str:
        if self.accelerations is not None:
            return "quintic"
        if self.velocities is not None:
            return "cubic"
        return "linear"


def quintic_coefficients(p0, v0, a0, p1, v1, a1, T):
    """Coefficients c0..c5 (last axis) of the quintic matching both end states."""
    p0, v0, a0, p1, v1, a1 = (np.asarray(x, dtype=float) for x in (p0, v0, a0, p1, v1, a1))
    h = p1 - p0
    c = np.zeros(p0.shape + (6,))
    c[..., 0] = p0
    c[..., 1] = v0
    c[..., 2] = 0.5 * a0
    c[..., 3] = (20.0 * h - (8.0 * v1 + 12.0 * v0) * T - (3.0 * a0 - a1) * T**2) / (2.0 * T**3)
    c[..., 4] = (-30.0 * h + (14.0 * v1 + 16.0 * v0) * T + (3.0 * a0 - 2.0 * a1) * T**2) / (2.0 * T**4)
    c[..., 5] = (12.0 * h - 6.0 * (v1 + v0) * T + (a1 - a0) * T**2) / (2.0 * T**5)
    return c


def cubic_coefficients(p0, v0, p1, v1, T):
    """Coefficients c0..c3 (c4 = c5 = 0) of the cubic matching positions and velocities."""
    p0, v0, p1, v1 = (np.asarray(x, dtype=float) for x in (p0, v0, p1, v1))
    h = p1 - p0
    c = np.zeros(p0.shape + (6,))
    c[..., 0] = p0
    c[..., 1] = v0
    c[..., 2] = (3.0 * h - (2.0 * v0 + v1) * T) / T**2
    c[..., 3] = (-2.0 * h + (v0 + v1) * T) / T**3
    return c


def linear_coefficients(p0, p1, T):
    p0, p1 = np.asarray(p0, dtype=float), np.asarray(p1, dtype=float)
    c = np.zeros(p0.shape + (6,))
    c[..., 0] = p0
    c[..., 1] = (p1 - p0) / T
    return c


class TrajectoryGenerator:
    """Desired joint state from joint trajectories (see the module docstring)."""

    def __init__(self, joint_names: Sequence[str]):
        self.joint_names = tuple(joint_names)
        if len(set(self.joint_names)) != len(self.joint_names):
            raise ValueError("duplicate joint names")
        self.n = n = len(self.joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        # outputs (read them after sample())
        self.q = np.zeros(n)
        self.qd = np.zeros(n)
        self.qdd = np.zeros(n)
        self.t_sampled = -math.inf        # time (s) of the desired state in q, qd, qdd
        # active trajectory: knots t[0..m], coefficients (capacity, n, 6)
        self._knots: list = []
        self._coef = np.zeros((8, n, 6))
        self._nseg = 0
        self._hold = np.zeros(n)          # held position (before / after a trajectory)
        self._pending = None              # (t_start, PreparedTrajectory)
        self._tmp = (np.zeros(n), np.zeros(n), np.zeros(n))
        self.active_since = -math.inf     # start time of the running trajectory
        self.generation = 0               # counts reset() and set_trajectory() calls

    # ------------------------------------------------------------------ state
    def reset(self, q) -> None:
        """Drop any trajectory and hold position ``q`` (zero velocity)."""
        q = np.asarray(q, dtype=float)
        if q.shape != (self.n,) or not np.all(np.isfinite(q)):
            raise TrajectoryError("hold position must be %d finite values" % self.n, "positions")
        self._hold[:] = q
        self._nseg = 0
        self._knots = []
        self._pending = None
        self.generation += 1
        K.hold_fill(self._hold, self.q, self.qd, self.qdd)

    @property
    def running(self) -> bool:
        """True while a trajectory is being followed (not holding)."""
        return self._nseg > 0 or self._pending is not None

    @property
    def end_time(self) -> float:
        if self._pending is not None:
            t0, prep = self._pending
            return t0 + float(prep.times[-1])
        return self._knots[-1] if self._nseg else -math.inf

    # ------------------------------------------------------------- validation
    def prepare(self, names, times, positions, velocities=None, accelerations=None) -> PreparedTrajectory:
        """Validate and reorder a trajectory; raises :class:`TrajectoryError`.

        ``positions``/``velocities``/``accelerations`` are sequences with one
        entry per point, each a sequence with one value per name in ``names``.
        An empty or ``None`` velocities/accelerations entry means "not given";
        they must be given for all points or for none.
        """
        names = list(names)
        n = self.n
        if len(names) == 0:
            raise TrajectoryError("joint_names is empty", "joint_names")
        seen = set()
        for name in names:
            if name in seen:
                raise TrajectoryError("joint_names lists joint %r twice" % name, "joint_names", name)
            seen.add(name)
            if name not in self._index:
                raise TrajectoryError("unknown joint %r in joint_names (controlled joints: %s)"
                                      % (name, ", ".join(self.joint_names)), "joint_names", name)
        for name in self.joint_names:
            if name not in seen:
                raise TrajectoryError("joint %r is missing from joint_names" % name, "joint_names", name)
        m = len(positions)
        if m == 0:
            raise TrajectoryError("trajectory has no points", "points")
        times = [float(t) for t in times]
        if len(times) != m:
            raise TrajectoryError("%d time_from_start values for %d points" % (len(times), m),
                                  "time_from_start")
        for k, t in enumerate(times):
            if not math.isfinite(t):
                raise TrajectoryError("points[%d].time_from_start is not finite" % k, "time_from_start")
            if t < 0.0:
                raise TrajectoryError("points[%d].time_from_start is negative (%g s)" % (k, t),
                                      "time_from_start")
            if k > 0 and not t > times[k - 1]:
                raise TrajectoryError(
                    "time_from_start must increase strictly: points[%d] at %g s after points[%d] at %g s"
                    % (k, t, k - 1, times[k - 1]), "time_from_start")

        perm = np.array([self._index[name] for name in names], dtype=np.int64)

        def field(rows, fname, optional):
            if rows is None:
                rows = [None] * m
            if len(rows) != m:
                raise TrajectoryError("%s given for %d of %d points" % (fname, len(rows), m), fname)
            given = [r is not None and len(r) > 0 for r in rows]
            if optional and not any(given):
                return None
            if not all(given):
                k = given.index(False)
                raise TrajectoryError("points[%d].%s is empty but other points have %s (mismatched lengths)"
                                      % (k, fname, fname), fname)
            out = np.empty((m, n))
            for k, r in enumerate(rows):
                if len(r) != len(names):
                    raise TrajectoryError("points[%d].%s has %d values for %d joint_names (mismatched lengths)"
                                          % (k, fname, len(r), len(names)), fname)
                a = np.asarray(r, dtype=float)
                bad = np.flatnonzero(~np.isfinite(a))
                if bad.size:
                    j = names[int(bad[0])]
                    raise TrajectoryError("points[%d].%s of joint %r is not finite (%r)"
                                          % (k, fname, j, float(a[bad[0]])), fname, j)
                out[k, perm] = a
            return out

        P = field(positions, "positions", optional=False)
        V = field(velocities, "velocities", optional=True)
        A = field(accelerations, "accelerations", optional=True)
        if A is not None and V is None:
            raise TrajectoryError("accelerations given without velocities", "velocities")
        return PreparedTrajectory(np.asarray(times, dtype=float), P, V, A)

    # --------------------------------------------------------------- commands
    def set_trajectory(self, prepared: PreparedTrajectory, now: float, start_time: Optional[float] = None) -> None:
        """Accept a prepared trajectory starting at ``start_time`` (``None``: now).

        Raises :class:`TrajectoryError` if it would end in the past.
        """
        t0 = self.check_start(prepared, now, start_time)
        self.generation += 1
        if t0 > now:
            self._pending = (t0, prepared)
        else:
            self._pending = None
            self._activate(prepared, t0, float(now))

    @staticmethod
    def check_start(prepared: PreparedTrajectory, now: float, start_time: Optional[float] = None) -> float:
        """The start time (s) a trajectory would get at time ``now`` (``start_time``, or ``now`` if
        ``None``); raises :class:`TrajectoryError` if it would end in the past."""
        t0 = float(now) if start_time is None else float(start_time)
        if not math.isfinite(t0):
            raise TrajectoryError("start time is not finite", "header.stamp")
        t_end = t0 + float(prepared.times[-1])
        if t_end <= now:
            raise TrajectoryError("trajectory ends in the past (%.6f s before now)" % (now - t_end),
                                  "header.stamp")
        return t0

    def set(self, names, times, positions, velocities=None, accelerations=None, *, now: float,
            start_time: Optional[float] = None) -> PreparedTrajectory:
        """Shortcut for :meth:`prepare` + :meth:`set_trajectory`."""
        prep = self.prepare(names, times, positions, velocities, accelerations)
        self.set_trajectory(prep, now, start_time)
        return prep

    def _activate(self, prep: PreparedTrajectory, t0: float, t_act: float) -> None:
        """Replace the running trajectory at time t_act (>= t0)."""
        q0, qd0, qdd0 = self._tmp
        self._eval(t_act, q0, qd0, qdd0)
        q0 = q0.copy()
        qd0 = qd0.copy()
        qdd0 = qdd0.copy()
        abs_t = t0 + prep.times
        keep = np.flatnonzero(abs_t > t_act)
        m = keep.size
        if m == 0:  # cannot happen after the check in set_trajectory, but be safe
            self.reset(q0)
            return
        if self._coef.shape[0] < m:
            self._coef = np.zeros((max(m, 2 * self._coef.shape[0]), self.n, 6))
        coef = self._coef
        knots = [t_act] + [float(t) for t in abs_t[keep]]
        P = prep.positions[keep]
        V = prep.velocities[keep] if prep.velocities is not None else None
        A = prep.accelerations[keep] if prep.accelerations is not None else None
        for s in range(m):
            T = knots[s + 1] - knots[s]
            if s == 0:
                p0, v0, a0 = q0, qd0, qdd0
            else:
                p0 = P[s - 1]
                v0 = V[s - 1] if V is not None else None
                a0 = A[s - 1] if A is not None else None
            if A is not None:
                coef[s] = quintic_coefficients(p0, v0, a0, P[s], V[s], A[s], T)
            elif V is not None:
                coef[s] = cubic_coefficients(p0, v0, P[s], V[s], T)
            else:
                coef[s] = linear_coefficients(p0, P[s], T)
        self._hold[:] = P[-1]
        self._knots = knots
        self._nseg = m
        self.active_since = t_act

    # --------------------------------------------------------------- sampling
    def _eval(self, t: float, q, qd, qdd) -> None:
        nseg = self._nseg
        if nseg == 0 or t >= self._knots[nseg]:
            if nseg and t >= self._knots[nseg]:
                self._nseg = 0  # finished: hold the last point from now on
            K.hold_fill(self._hold, q, qd, qdd)
            return
        k = bisect_right(self._knots, t) - 1
        if k < 0:
            k = 0
        elif k >= nseg:
            k = nseg - 1
        K.poly_eval(self._coef, k, t - self._knots[k], q, qd, qdd)

    def sample(self, t: float):
        """Desired state at time ``t`` into ``self.q``, ``self.qd``, ``self.qdd`` (returned)."""
        if self._pending is not None and t >= self._pending[0]:
            t0, prep = self._pending
            self._pending = None
            self._activate(prep, t0, t0)
        self._eval(t, self.q, self.qd, self.qdd)
        self.t_sampled = t
        return self.q, self.qd, self.qdd
