"""Trajectory generator: closed-form boundary conditions, continuity, validation."""
import math

import numpy as np
import pytest

from rne_control.control.trajectory import (TrajectoryError, TrajectoryGenerator, cubic_coefficients,
                                            quintic_coefficients)

J = ("a", "b", "c")


def _sample(gen, t):
    q, qd, qdd = gen.sample(t)
    return q.copy(), qd.copy(), qdd.copy()


def test_quintic_closed_form_boundaries():
    rng = np.random.default_rng(1)
    p0, v0, a0, p1, v1, a1 = rng.normal(size=(6, 4))
    T = 1.7
    c = quintic_coefficients(p0, v0, a0, p1, v1, a1, T)
    pw = T ** np.arange(6)
    q = c @ pw
    qd = c[:, 1:] @ (np.arange(1, 6) * T ** np.arange(5))
    qdd = c[:, 2:] @ (np.array([2, 6, 12, 20]) * T ** np.arange(4))
    np.testing.assert_allclose(c[:, 0], p0)
    np.testing.assert_allclose(c[:, 1], v0)
    np.testing.assert_allclose(2 * c[:, 2], a0)
    np.testing.assert_allclose(q, p1, atol=1e-12)
    np.testing.assert_allclose(qd, v1, atol=1e-12)
    np.testing.assert_allclose(qdd, a1, atol=1e-11)


def test_cubic_closed_form_boundaries():
    p0, v0, p1, v1, T = 0.3, -0.2, 1.1, 0.5, 0.8
    c = cubic_coefficients(p0, v0, p1, v1, T)
    assert c[0] == p0 and c[1] == v0 and c[4] == 0 and c[5] == 0
    assert math.isclose(c[0] + c[1] * T + c[2] * T**2 + c[3] * T**3, p1, abs_tol=1e-12)
    assert math.isclose(c[1] + 2 * c[2] * T + 3 * c[3] * T**2, v1, abs_tol=1e-12)


def test_holds_reset_position_before_any_trajectory():
    g = TrajectoryGenerator(J)
    g.reset([0.1, 0.2, 0.3])
    q, qd, qdd = _sample(g, 5.0)
    np.testing.assert_array_equal(q, [0.1, 0.2, 0.3])
    assert not qd.any() and not qdd.any()
    assert not g.running


def test_quintic_rest_to_rest_matches_minimum_jerk():
    g = TrajectoryGenerator(J)
    g.reset([0.0, 0.0, 0.0])
    T = 2.0
    g.set(J, [T], [[1.0, -2.0, 0.5]], [[0, 0, 0]], [[0, 0, 0]], now=10.0)
    for tau in np.linspace(0, T, 17):
        q, qd, qdd = _sample(g, 10.0 + tau)
        x = tau / T
        s = 10 * x**3 - 15 * x**4 + 6 * x**5
        sd = (30 * x**2 - 60 * x**3 + 30 * x**4) / T
        sdd = (60 * x - 180 * x**2 + 120 * x**3) / T**2
        np.testing.assert_allclose(q, s * np.array([1.0, -2.0, 0.5]), atol=1e-12)
        np.testing.assert_allclose(qd, sd * np.array([1.0, -2.0, 0.5]), atol=1e-12)
        np.testing.assert_allclose(qdd, sdd * np.array([1.0, -2.0, 0.5]), atol=1e-11)
    # after the end: hold the last point, zero velocity
    q, qd, qdd = _sample(g, 10.0 + T + 1.0)
    np.testing.assert_allclose(q, [1.0, -2.0, 0.5])
    assert not qd.any() and not qdd.any()
    assert not g.running


def _multi_point(gen, kind, now=0.0):
    times = [0.5, 1.0, 1.8, 2.5]
    P = [[0.2, 0.1, -0.1], [0.5, -0.3, 0.0], [0.1, 0.4, 0.3], [0.0, 0.0, 0.0]]
    V = [[0.4, 0.0, 0.1], [-0.2, 0.3, 0.2], [-0.3, -0.1, 0.0], [0, 0, 0]]
    A = [[0.1, 0.2, 0.0], [0.0, -0.5, 0.3], [0.2, 0.0, -0.1], [0, 0, 0]]
    if kind == "quintic":
        gen.set(J, times, P, V, A, now=now)
    elif kind == "cubic":
        gen.set(J, times, P, V, now=now)
    else:
        gen.set(J, times, P, now=now)
    return times, P, V, A


@pytest.mark.parametrize("kind", ["quintic", "cubic", "linear"])
def test_passes_through_points_and_continuity_at_joins(kind):
    g = TrajectoryGenerator(J)
    g.reset([0.0, 0.0, 0.0])
    times, P, V, A = _multi_point(g, kind)
    eps = 1e-8
    for k, t in enumerate(times):
        q, qd, qdd = _sample(g, t)
        np.testing.assert_allclose(q, P[k], atol=1e-12)
        if kind != "linear":
            np.testing.assert_allclose(qd, V[k], atol=1e-9)
        if kind == "quintic":
            np.testing.assert_allclose(qdd, A[k], atol=1e-8)
        if k == len(times) - 1:
            break
        qa, qda, qdda = _sample(g, t - eps)
        qb, qdb, qddb = _sample(g, t + eps)
        np.testing.assert_allclose(qa, qb, atol=1e-5)               # q continuous always
        if kind != "linear":
            np.testing.assert_allclose(qda, qdb, atol=1e-5)         # qd continuous (cubic, quintic)
        if kind == "quintic":
            np.testing.assert_allclose(qdda, qddb, atol=1e-5)       # qdd continuous (quintic)


def test_names_are_reordered():
    g = TrajectoryGenerator(J)
    g.reset([0, 0, 0])
    g.set(("c", "a", "b"), [1.0], [[3.0, 1.0, 2.0]], now=0.0)
    q, _, _ = _sample(g, 1.0)
    np.testing.assert_allclose(q, [1.0, 2.0, 3.0])


def test_first_segment_starts_at_current_desired_state():
    g = TrajectoryGenerator(J)
    g.reset([0.5, -0.5, 1.0])
    g.set(J, [1.0], [[1.0, 1.0, 1.0]], [[0, 0, 0]], [[0, 0, 0]], now=3.0)
    q, qd, qdd = _sample(g, 3.0)
    np.testing.assert_allclose(q, [0.5, -0.5, 1.0])
    assert not qd.any() and not qdd.any()


def test_replacement_mid_trajectory_has_no_jump():
    g = TrajectoryGenerator(J)
    g.reset([0, 0, 0])
    _multi_point(g, "quintic")
    t_switch = 1.3
    before = _sample(g, t_switch)
    g.set(J, [1.0, 2.0], [[1, 1, 1], [0, 0, 0]], [[0, 0, 0]] * 2, [[0, 0, 0]] * 2, now=t_switch)
    after = _sample(g, t_switch)
    for b, a in zip(before, after):
        np.testing.assert_allclose(a, b, atol=1e-12)
    # and continuity just after the switch (quintic start matches the full state)
    later = _sample(g, t_switch + 1e-6)
    for b, a in zip(before, later):
        np.testing.assert_allclose(a, b, atol=1e-4)


def test_future_start_keeps_running_trajectory_until_start():
    g = TrajectoryGenerator(J)
    g.reset([0, 0, 0])
    g.set(J, [2.0], [[1, 1, 1]], [[0, 0, 0]], [[0, 0, 0]], now=0.0)
    ref = TrajectoryGenerator(J)
    ref.reset([0, 0, 0])
    ref.set(J, [2.0], [[1, 1, 1]], [[0, 0, 0]], [[0, 0, 0]], now=0.0)
    g.set(J, [1.0], [[-1, -1, -1]], [[0, 0, 0]], [[0, 0, 0]], now=0.5, start_time=1.0)
    for t in (0.5, 0.8, 0.99):
        np.testing.assert_allclose(_sample(g, t)[0], _sample(ref, t)[0])
    at1 = _sample(ref, 1.0)
    got = _sample(g, 1.0)
    for a, b in zip(at1, got):
        np.testing.assert_allclose(a, b, atol=1e-12)
    np.testing.assert_allclose(_sample(g, 2.0)[0], [-1, -1, -1])


def test_start_in_the_past_drops_past_points():
    g = TrajectoryGenerator(J)
    g.reset([0, 0, 0])
    g.set(J, [1.0, 3.0], [[5, 5, 5], [2, 2, 2]], now=10.0, start_time=8.5)   # first point at 9.5 is past
    q, _, _ = _sample(g, 10.0)
    np.testing.assert_allclose(q, [0, 0, 0])
    np.testing.assert_allclose(_sample(g, 10.75)[0], [1, 1, 1])
    np.testing.assert_allclose(_sample(g, 11.5)[0], [2, 2, 2])


@pytest.mark.parametrize("args, field, joint", [
    (dict(names=J, times=[1.0, 0.5], positions=[[0, 0, 0], [1, 1, 1]]), "time_from_start", ""),
    (dict(names=J, times=[1.0, 1.0], positions=[[0, 0, 0], [1, 1, 1]]), "time_from_start", ""),
    (dict(names=J, times=[], positions=[]), "points", ""),
    (dict(names=J, times=[1.0], positions=[[0, 0]]), "positions", ""),
    (dict(names=J, times=[1.0], positions=[[0, 0, 0]], velocities=[[0, 0]]), "velocities", ""),
    (dict(names=J, times=[1.0, 2.0], positions=[[0, 0, 0], [0, 0, 0]], velocities=[[0, 0, 0], []]),
     "velocities", ""),
    (dict(names=("a", "b", "x"), times=[1.0], positions=[[0, 0, 0]]), "joint_names", "x"),
    (dict(names=("a", "b"), times=[1.0], positions=[[0, 0]]), "joint_names", "c"),
    (dict(names=("a", "b", "b"), times=[1.0], positions=[[0, 0, 0]]), "joint_names", "b"),
    (dict(names=J, times=[1.0], positions=[[0, float("nan"), 0]]), "positions", "b"),
    (dict(names=J, times=[1.0], positions=[[0, 0, 0]], velocities=[[0, 0, float("inf")]]), "velocities", "c"),
    (dict(names=J, times=[float("nan")], positions=[[0, 0, 0]]), "time_from_start", ""),
])
def test_validation_names_field_and_joint(args, field, joint):
    g = TrajectoryGenerator(J)
    g.reset([0, 0, 0])
    with pytest.raises(TrajectoryError) as ei:
        g.prepare(args["names"], args["times"], args["positions"], args.get("velocities"),
                  args.get("accelerations"))
    assert isinstance(ei.value, ValueError)
    assert ei.value.field == field
    assert ei.value.joint == joint
    if joint:
        assert repr(joint) in str(ei.value)


def test_rejected_trajectory_keeps_running_one():
    g = TrajectoryGenerator(J)
    g.reset([0, 0, 0])
    g.set(J, [2.0], [[1, 1, 1]], [[0, 0, 0]], [[0, 0, 0]], now=0.0)
    ref = _sample(g, 0.7)
    with pytest.raises(TrajectoryError, match="past"):
        g.set(J, [1.0], [[2, 2, 2]], now=0.7, start_time=-5.0)   # ends at -4 < now
    with pytest.raises(TrajectoryError):
        g.set(J, [1.0, 0.5], [[2, 2, 2], [3, 3, 3]], now=0.7)
    for a, b in zip(ref, _sample(g, 0.7)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(_sample(g, 2.0)[0], [1, 1, 1])


def test_sample_is_allocation_free_and_returns_same_buffers():
    g = TrajectoryGenerator(J)
    g.reset([0, 0, 0])
    _multi_point(g, "quintic")
    q1, _, _ = g.sample(0.3)
    q2, _, _ = g.sample(0.9)
    assert q1 is q2 is g.q
