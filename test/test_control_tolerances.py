"""Tolerances and goal monitoring with joint_trajectory_controller's rules (no ROS).

The expected values are JTC's rules written out by hand: tolerances.hpp (resolve_tolerance_source,
get_segment_tolerances, check_state_tolerance_per_joint) and the goal checks of its update().
"""
import math

import numpy as np
import pytest

from rne_control.control.tolerances import (GOAL_TOLERANCE_VIOLATED, PATH_TOLERANCE_VIOLATED, RUNNING, SUCCEEDED,
                                            GoalTracker, Tolerances, resolve_tolerance)
from rne_control.control.trajectory import TrajectoryError

J = ("a", "b", "c")


def test_resolve_tolerance_rules():
    assert resolve_tolerance(0.3, 0.1) == 0.1            # positive: replaces the default
    assert resolve_tolerance(0.3, 0.0) == 0.3            # 0: keeps the default
    assert resolve_tolerance(0.3, -1.0) == 0.0           # -1: erases it (not checked)
    assert resolve_tolerance(0.3, -1.0 + 1e-8) == 0.0    # within float32 epsilon of -1, as JTC compares
    assert resolve_tolerance(0.3, math.inf) == math.inf
    for bad in (-2.0, -0.5, -1.001, -1e-9, math.nan):
        with pytest.raises(TrajectoryError):
            resolve_tolerance(0.3, bad)


def test_defaults_from_parameters():
    t = Tolerances.defaults(J, trajectory={"b": 0.05}, goal={"c": 0.02}, stopped_velocity_tolerance=0.01,
                            goal_time=0.5)
    np.testing.assert_array_equal(t.path, [[0, 0, 0], [0.05, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(t.goal, [[0, 0.01, 0], [0, 0.01, 0], [0.02, 0.01, 0]])
    assert t.goal_time == 0.5
    with pytest.raises(TrajectoryError, match="unknown"):
        Tolerances.defaults(J, trajectory={"x": 0.1})
    with pytest.raises(TrajectoryError):
        Tolerances.defaults(J, goal={"a": -0.1})


def test_goal_overrides():
    d = Tolerances.defaults(J, trajectory={"a": 0.1, "b": 0.1}, goal={"a": 0.2}, goal_time=1.0)
    g = d.for_goal(path_tolerance=[("a", 0.0, 0.5, 0.0), ("b", -1.0, 0.0, 2.0)],
                   goal_tolerance=[("a", -1.0, -1.0, 0.0), ("c", 0.03, 0.0, 0.0)], goal_time_tolerance=0.0)
    np.testing.assert_array_equal(g.path, [[0.1, 0.5, 0], [0.0, 0, 2.0], [0, 0, 0]])
    np.testing.assert_array_equal(g.goal, [[0.0, 0.0, 0], [0, 0.01, 0], [0.03, 0.01, 0]])
    assert g.goal_time == 1.0                                         # 0 keeps the default
    assert d.for_goal(goal_time_tolerance=-1.0).goal_time == 0.0       # erased: no limit
    assert d.for_goal(goal_time_tolerance=2.5).goal_time == 2.5
    np.testing.assert_array_equal(d.path, [[0.1, 0, 0], [0.1, 0, 0], [0, 0, 0]])   # defaults untouched
    with pytest.raises(TrajectoryError, match="'b'.*velocity"):
        d.for_goal(path_tolerance=[("b", 0.0, -3.0, 0.0)])
    with pytest.raises(TrajectoryError, match="goal_time_tolerance"):
        d.for_goal(goal_time_tolerance=-0.5)
    with pytest.raises(TrajectoryError, match="'z'.*not controlled"):
        d.for_goal(goal_tolerance=[("z", 0.1, 0.0, 0.0)])


def _tracker(tol, t0=10.0, times=(0.5, 1.0)):
    return GoalTracker(tol, t0, times)


def test_tracker_path_violation_names_joint_and_checks_first_sample():
    tol = Tolerances.defaults(J, trajectory={"b": 0.05})
    tr = _tracker(tol)
    z = np.zeros(3)
    assert tr.update(9.0, z, z, z, z) == RUNNING              # before the start: not checked
    assert tr.index(9.0) == 0
    assert tr.update(10.2, z, z, np.array([0.0, 0.04, 0.0]), z) == RUNNING
    assert tr.index() == 0                                      # approaching point 0
    assert tr.update(10.6, z, z, np.array([0.3, -0.051, 0.0]), z) == PATH_TOLERANCE_VIOLATED
    assert tr.index() == 1
    assert "path tolerance" in tr.message and "'b'" in tr.message
    np.testing.assert_allclose(tr.error_q, [-0.3, 0.051, 0.0])     # desired - measured
    # a trajectory whose first sample is already past its end is still checked against the path tolerance
    tr = _tracker(tol, t0=0.0, times=(0.1,))
    assert tr.update(5.0, z, z, np.array([0.0, 0.2, 0.0]), z) == PATH_TOLERANCE_VIOLATED


def test_tracker_goal_success_and_goal_time():
    tol = Tolerances.defaults(J, goal={"a": 0.01}, stopped_velocity_tolerance=0.01, goal_time=0.5)
    z = np.zeros(3)
    tr = _tracker(tol)
    assert tr.update(10.9, z, z, np.array([0.5, 0, 0]), z) == RUNNING      # no path tolerance set
    assert tr.update(11.0, z, z, np.array([0.02, 0, 0]), z) == RUNNING     # at the end, outside the goal
    assert tr.index() == 2
    assert tr.update(11.4, z, z, z, np.array([0, 0.02, 0])) == RUNNING      # moving: not stopped yet
    assert tr.update(11.45, z, z, np.array([0.009, 0, 0]), np.array([0, 0.009, 0])) == SUCCEEDED
    assert tr.message == "Goal successfully reached!"
    assert tr.update(12.0, z, z, np.ones(3), z) == SUCCEEDED               # final
    tr = _tracker(tol)
    assert tr.update(11.5, z, z, np.array([0.02, 0, 0]), z) == RUNNING      # 0.5 s after the end: not yet
    assert tr.update(11.51, z, z, np.array([0.02, 0, 0]), z) == GOAL_TOLERANCE_VIOLATED
    assert "goal_time_tolerance" in tr.message and "'a'" in tr.message
    # goal_time 0: waits without limit
    tr = _tracker(Tolerances.defaults(J, goal={"a": 0.01}))
    assert tr.update(1e6, z, z, np.array([0.02, 0, 0]), z) == RUNNING
