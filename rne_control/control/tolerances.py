"""Trajectory tolerances and goal monitoring with joint_trajectory_controller (JTC) semantics.

:class:`Tolerances` holds JTC's ``SegmentTolerances``: per joint a path tolerance (checked while the
trajectory runs) and a goal tolerance (checked after its last point) on position, velocity and
acceleration, and a goal time. A tolerance of 0 is not checked; a goal time of 0 waits without limit.

* :meth:`Tolerances.defaults` builds them from JTC's parameters: ``constraints.<joint>.trajectory``
  (path position), ``constraints.<joint>.goal`` (goal position), ``constraints.stopped_velocity_tolerance``
  (goal velocity, default 0.01) and ``constraints.goal_time``.
* :meth:`Tolerances.for_goal` applies a FollowJointTrajectory goal's own ``path_tolerance``,
  ``goal_tolerance`` and ``goal_time_tolerance`` with JTC's rule (:func:`resolve_tolerance`): a positive
  value replaces the default, 0 keeps it, -1 erases it (0: not checked), and any other negative value
  makes the goal invalid (:class:`~rne_control.control.trajectory.TrajectoryError`, which names the joint
  and field).

:class:`GoalTracker` follows one goal against the desired and measured states of each control cycle, as
JTC's update does: before the trajectory's last point (and on its first sample) every joint must stay
within its path tolerance, else PATH_TOLERANCE_VIOLATED; after the last point the goal succeeds once every
joint is within its goal tolerance, and fails with GOAL_TOLERANCE_VIOLATED when it is not within the goal
time after the end. Errors are desired minus measured; the acceleration error is not measured, so an
acceleration tolerance is never violated (as in JTC without acceleration state interfaces).
Units: rad or m, rad/s or m/s, rad/s² or m/s², s.
"""
from __future__ import annotations

import math
from bisect import bisect_right
from typing import Iterable, Mapping, Optional, Sequence, Tuple

import numpy as np

from .trajectory import TrajectoryError

# GoalTracker.status values (the FollowJointTrajectory result codes where one exists)
RUNNING = 1
SUCCEEDED = 0
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5

COMPONENTS = ("position", "velocity", "acceleration")
ERASE = -1.0
_F32_EPS = float(np.finfo(np.float32).eps)


def resolve_tolerance(default: float, value: float, what: str = "tolerance") -> float:
    """JTC's ``resolve_tolerance_source``: the tolerance that applies when a goal asks for ``value``.

    ``value`` > 0 replaces ``default``; 0 keeps it; -1 (within float32 epsilon) erases it (returns 0,
    not checked); any other negative or a non-finite value raises :class:`TrajectoryError`.
    """
    value = float(value)
    if math.isnan(value):
        raise TrajectoryError("%s is NaN" % what, what)
    if value > 0.0:
        return value
    if abs(value - ERASE) < _F32_EPS:
        return 0.0
    if value < 0.0:
        raise TrajectoryError("%s %g is invalid (0 keeps the default, -1 erases it, other negative values "
                              "are not allowed)" % (what, value), what)
    return float(default)


class Tolerances:
    """Path and goal tolerances, (n, 3) arrays of [position, velocity, acceleration] per joint in
    ``joint_names`` order (0: not checked), and ``goal_time`` in s (0: no limit)."""

    def __init__(self, joint_names: Sequence[str], path=None, goal=None, goal_time: float = 0.0):
        self.joint_names = tuple(joint_names)
        n = len(self.joint_names)
        self.path = np.zeros((n, 3)) if path is None else np.array(path, dtype=float).reshape(n, 3)
        self.goal = np.zeros((n, 3)) if goal is None else np.array(goal, dtype=float).reshape(n, 3)
        self.goal_time = float(goal_time)
        for name, arr in (("path", self.path), ("goal", self.goal)):
            if np.any(np.isnan(arr)) or np.any(arr < 0.0):
                raise TrajectoryError("%s tolerances must be >= 0 (0: not checked)" % name, name)
        if not (self.goal_time >= 0.0):
            raise TrajectoryError("goal_time must be >= 0 (0: no limit), got %r" % goal_time, "goal_time")

    @classmethod
    def defaults(cls, joint_names: Sequence[str], trajectory: Optional[Mapping[str, float]] = None,
                 goal: Optional[Mapping[str, float]] = None, stopped_velocity_tolerance: float = 0.01,
                 goal_time: float = 0.0) -> "Tolerances":
        """JTC's ``get_segment_tolerances(params)``: ``trajectory[j]`` and ``goal[j]`` are the position
        tolerances of joint j (missing: 0), ``stopped_velocity_tolerance`` the goal velocity tolerance of
        every joint."""
        names = tuple(joint_names)
        trajectory, goal = dict(trajectory or {}), dict(goal or {})
        for label, d in (("trajectory", trajectory), ("goal", goal)):
            unknown = [j for j in d if j not in names]
            if unknown:
                raise TrajectoryError("constraints for unknown joint(s) %s" % unknown, label, unknown[0])
        path = np.zeros((len(names), 3))
        gl = np.zeros((len(names), 3))
        for i, j in enumerate(names):
            path[i, 0] = trajectory.get(j, 0.0)
            gl[i, 0] = goal.get(j, 0.0)
            gl[i, 1] = stopped_velocity_tolerance
        return cls(names, path, gl, goal_time)

    def copy(self) -> "Tolerances":
        return Tolerances(self.joint_names, self.path.copy(), self.goal.copy(), self.goal_time)

    def for_goal(self, path_tolerance: Iterable[Tuple[str, float, float, float]] = (),
                 goal_tolerance: Iterable[Tuple[str, float, float, float]] = (),
                 goal_time_tolerance: float = 0.0) -> "Tolerances":
        """These defaults overridden by a goal's tolerances, given as (name, position, velocity,
        acceleration) tuples and a goal time in s; see :func:`resolve_tolerance`.

        Raises :class:`TrajectoryError` for an invalid value or a joint that is not controlled.
        """
        out = self.copy()
        out.goal_time = resolve_tolerance(self.goal_time, goal_time_tolerance, "goal_time_tolerance")
        index = {j: i for i, j in enumerate(self.joint_names)}
        for field, entries, src, dst in (("path_tolerance", path_tolerance, self.path, out.path),
                                         ("goal_tolerance", goal_tolerance, self.goal, out.goal)):
            for name, *values in field_items(entries):
                i = index.get(name)
                if i is None:
                    raise TrajectoryError("goal.%s names joint %r, which is not controlled (joints: %s)"
                                          % (field, name, ", ".join(self.joint_names)), field, name)
                for c, v in enumerate(values):
                    dst[i, c] = resolve_tolerance(src[i, c], v, "goal.%s of joint %r: %s"
                                                  % (field, name, COMPONENTS[c]))
        return out


def field_items(entries) -> list:
    """(name, position, velocity, acceleration) tuples from tuples or JointTolerance-like objects."""
    out = []
    for e in entries:
        if hasattr(e, "name"):
            out.append((e.name, e.position, e.velocity, e.acceleration))
        else:
            name, p, v, a = e
            out.append((name, p, v, a))
    return out


def _limits(tol: np.ndarray) -> np.ndarray:
    """Tolerances as limits: 0 (not checked) becomes +inf, so a violation is simply |error| > limit."""
    return np.where(tol > 0.0, tol, np.inf)


class GoalTracker:
    """One goal's progress (see the module docstring).

    ``t_start``: absolute start time of the trajectory (s); ``times``: its points' time_from_start.
    :meth:`update` is called once per control cycle with that cycle's desired and measured states
    (``joint_names`` order) and allocates nothing while the goal runs.
    """

    def __init__(self, tolerances: Tolerances, t_start: float, times: Sequence[float]):
        self.tolerances = tolerances
        self.t_start = float(t_start)
        self.point_times = self.t_start + np.asarray(times, dtype=float)
        self.t_end = float(self.point_times[-1])
        self._abs_times = self.point_times.tolist()
        n = len(tolerances.joint_names)
        self._path_p = _limits(tolerances.path[:, 0])
        self._path_v = _limits(tolerances.path[:, 1])
        self._goal_p = _limits(tolerances.goal[:, 0])
        self._goal_v = _limits(tolerances.goal[:, 1])
        self.error_q = np.zeros(n)
        self.error_qd = np.zeros(n)
        self._abs = np.zeros(n)
        self._over = np.zeros(n, dtype=bool)
        self._first = True
        self.status = RUNNING
        self.message = ""
        self.t = -math.inf          # time of the last update

    def index(self, t: Optional[float] = None) -> int:
        """JTC's feedback ``index``: the index of the trajectory point being approached (the number of
        points whose time has come); ``len(points)`` after the last one."""
        return bisect_right(self._abs_times, self.t if t is None else t)

    def _violation(self, limit_p, limit_v) -> Optional[str]:
        a, over = self._abs, self._over
        np.abs(self.error_q, out=a)
        if np.greater(a, limit_p, out=over).any():
            i = int(np.argmax(a - limit_p))
            return "joint %r position error %.6g exceeds %.6g" % (self.tolerances.joint_names[i],
                                                                  self.error_q[i], limit_p[i])
        np.abs(self.error_qd, out=a)
        if np.greater(a, limit_v, out=over).any():
            i = int(np.argmax(a - limit_v))
            return "joint %r velocity error %.6g exceeds %.6g" % (self.tolerances.joint_names[i],
                                                                  self.error_qd[i], limit_v[i])
        return None

    def update(self, t: float, q_d, qd_d, q, qd) -> int:
        """Check the state of time ``t``; returns ``status`` (RUNNING until the goal ends)."""
        if self.status != RUNNING or t < self.t_start:
            return self.status
        self.t = t
        np.subtract(q_d, q, out=self.error_q)
        np.subtract(qd_d, qd, out=self.error_qd)
        before_last = t < self.t_end
        if before_last or self._first:
            self._first = False
            why = self._violation(self._path_p, self._path_v)
            if why is not None:
                self.status = PATH_TOLERANCE_VIOLATED
                self.message = "Aborted due to path tolerance violation: " + why
                return self.status
        if not before_last:
            why = self._violation(self._goal_p, self._goal_v)
            if why is None:
                self.status = SUCCEEDED
                self.message = "Goal successfully reached!"
            elif self.tolerances.goal_time != 0.0 and t - self.t_end > self.tolerances.goal_time:
                self.status = GOAL_TOLERANCE_VIOLATED
                self.message = ("Aborted due to goal_time_tolerance exceeding by %f seconds: %s"
                                % (t - self.t_end, why))
        return self.status
