"""The control cycle without ROS (rne_control.control.cycle): merged joint states in, the clamped command
out, checked against the dynamics functions, the watchdog's on_stale paths, the ramps and the clamp."""
import math
import os

import numpy as np
import pytest

import rne_control as rc
from rne_control.control import make_plant
from rne_control.control.cycle import HOLD, LAW, STALE_OUTPUT, ControlCycle
from rne_control.control.laws import SPLIT_PARTS
from rne_control.control.settings import Settings

CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config")
NS = 1_000_000_000


@pytest.fixture(scope="module")
def puma():
    with pytest.warns(UserWarning, match="triangle inequality"):   # the classic PUMA data, as published
        return rc.load_dh(os.path.join(CONFIG, "puma560.yaml"))


def cycle_of(model, **settings):
    plant = make_plant(model)
    settings.setdefault("effort_limits", [1e6] * plant.n)
    return ControlCycle(plant, Settings.of(plant, **settings))


def feed(cycle, q, qd, t):
    """One joint-state message of every joint of the cycle's state, received at t (s)."""
    names = list(cycle.plant.state_names)
    return cycle.merge(names, np.asarray(q, float), np.asarray(qd, float), (), int(t * NS), int(t * NS), 0)


def test_no_state_no_command_then_computed_torque_equals_the_rne(puma):
    kp, kd = np.full(6, 49.0), np.full(6, 14.0)
    c = cycle_of(puma, kp=list(kp), kd=list(kd), ramp_time=0.0)
    assert c.update(0) is None and c.outcome is None
    rng = np.random.default_rng(0)
    q0, qd0 = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6)
    assert feed(c, q0, qd0, 0.0)
    cmd = c.update(int(0.001 * NS))
    assert c.outcome == LAW and c.active
    # activation holds the measured position: e = 0, e_dot = -qd
    np.testing.assert_allclose(cmd, rc.inverse_dynamics(puma, q0, qd0, kd * (0 - qd0)), rtol=1e-12, atol=1e-12)
    q1, qd1 = q0 + 0.1, rng.uniform(-1, 1, 6)
    feed(c, q1, qd1, 0.002)
    cmd = c.update(int(0.002 * NS))
    np.testing.assert_allclose(cmd, rc.inverse_dynamics(puma, q1, qd1, kp * (q0 - q1) - kd * qd1),
                               rtol=1e-12, atol=1e-12)


def test_feedback_ramps_in_and_a_mode_change_blends_without_a_step(puma):
    c = cycle_of(puma, ramp_time=0.1)
    q, qd = np.full(6, 0.3), np.full(6, 0.2)
    feed(c, q, qd, 0.0)
    c.update(0)
    # the feed-forward applies at once, the feedback (kd e_dot = -20 qd) is scaled by the activation ramp
    t = 0.05
    feed(c, q, qd, t)
    np.testing.assert_allclose(c.update(int(t * NS)), rc.inverse_dynamics(puma, q, qd, 0.5 * -20.0 * qd),
                               rtol=1e-9, atol=1e-9)
    feed(c, q, qd, 0.2)
    before = c.update(int(0.2 * NS)).copy()
    c.request(Settings.of(c.plant, mode="gravity", effort_limits=[1e6] * 6, ramp_time=0.1))
    feed(c, q, qd, 0.2)
    np.testing.assert_allclose(c.update(int(0.2 * NS)), before, rtol=1e-12, atol=1e-12)   # no step
    assert c.law.mode == "gravity"
    feed(c, q, qd, 0.35)
    np.testing.assert_allclose(c.update(int(0.35 * NS)), rc.gravity_torques(puma, q), rtol=1e-12, atol=1e-12)


def test_clamp_and_saturation(puma):
    c = cycle_of(puma, effort_limits=[1.0] * 6, mode="gravity")
    q = np.array([0.0, 0.7, -0.4, 0.0, 0.3, 0.0])
    feed(c, q, np.zeros(6), 0.0)
    cmd = c.update(0)
    g = rc.gravity_torques(puma, q)
    np.testing.assert_allclose(cmd, np.clip(g, -1.0, 1.0), rtol=0, atol=0)
    np.testing.assert_array_equal(c.saturated, np.abs(g) > 1.0)


@pytest.mark.parametrize("on_stale", ["hold", "zero", "stop"])
def test_stale_state_paths(puma, on_stale):
    c = cycle_of(puma, on_stale=on_stale, state_timeout=0.05, mode="gravity_coriolis")
    q, qd = np.array([0.1, 0.5, -0.3, 0.2, 0.1, 0.0]), np.full(6, 0.4)
    feed(c, q, qd, 0.0)
    assert c.update(int(0.01 * NS)) is not None and c.outcome == LAW
    out = c.update(int(0.2 * NS))
    if on_stale == "stop":
        assert out is None and c.stopped
    else:
        expected = rc.gravity_torques(puma, q) if on_stale == "hold" else np.zeros(6)
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
        assert c.outcome == STALE_OUTPUT
    # fresh again: the desired state holds the new measured position, the command ramps from the last one
    q2 = q + 0.2
    feed(c, q2, np.zeros(6), 0.3)
    out = c.update(int(0.3 * NS))
    assert c.outcome == LAW and c.watchdog.recoveries == 1
    np.testing.assert_array_equal(c.traj.q, q2)
    assert np.all(np.isfinite(out))


def test_bad_messages_are_rejected_and_never_reach_the_output(puma):
    c = cycle_of(puma, mode="gravity")
    q = np.full(6, 0.2)
    feed(c, q, np.zeros(6), 0.0)
    bad = q.copy()
    bad[2] = np.nan
    assert not feed(c, bad, np.zeros(6), 0.001)
    assert c.rejected_states == 1
    cmd = c.update(int(0.001 * NS))
    np.testing.assert_allclose(cmd, rc.gravity_torques(puma, q), rtol=1e-12)
    # a message without any required joint is ignored, not rejected
    assert not c.merge(["not_a_joint"], np.zeros(1), np.zeros(1), (), NS, NS, 0)
    assert c.ignored_states == 1 and c.rejected_states == 1


def test_a_non_finite_reference_holds_the_measured_position(puma):
    c = cycle_of(puma, mode="computed_torque")
    q = np.full(6, 0.2)
    feed(c, q, np.zeros(6), 0.0)
    c.update(0)
    c.traj._hold[:] = np.nan     # what a corrupted desired state would be
    feed(c, q, np.zeros(6), 0.001)
    cmd = c.update(int(0.001 * NS))
    assert c.outcome == HOLD
    np.testing.assert_allclose(cmd, rc.gravity_torques(puma, q), rtol=1e-12)
    np.testing.assert_array_equal(c.traj.q, q)


def test_split_of_the_published_law_equals_a_fresh_split(puma):
    """~/controller_state's parts come from the law's own torque, without evaluating the law again: they
    equal ControlLaw.split's at the same arguments (the previous node computed that) to 1e-12."""
    c = cycle_of(puma, ramp_time=0.2, friction_compensation=True)
    rng = np.random.default_rng(4)
    q, qd = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6)
    feed(c, q, qd, 0.0)
    c.update(0)
    c.accept_trajectory(list(c.joints), [0.5], [list(q + 0.3)], None, None, None, 0.0)
    for k in range(1, 6):
        q, qd = q + 0.01, rng.uniform(-1, 1, 6)
        feed(c, q, qd, 0.02 * k)
        c.update(int(0.02 * k * NS))
        parts = {p: v.copy() for p, v in c.split().items()}
        fresh = c.law.split(q, qd, c.q_d, c.qd_d, c.qdd_d, c.feedback_scale)
        for p in SPLIT_PARTS:
            np.testing.assert_allclose(parts[p], fresh[p], rtol=1e-12, atol=1e-12)
        total = c.law.compute(q, qd, c.q_d, c.qd_d, c.qdd_d, c.feedback_scale)
        np.testing.assert_allclose(sum(parts.values()), total, rtol=1e-12, atol=1e-12)


def test_due_only_for_a_new_fresh_state_of_the_trigger_joints(puma):
    plant = make_plant(puma)
    c = ControlCycle(plant, Settings.of(plant), trigger_joints=[plant.state_names[0]])
    assert not c.due(0)
    names = list(plant.state_names)
    c.merge(names[1:], np.zeros(5), np.zeros(5), (), 0, 0, 0)          # not a trigger joint
    assert not c.due(0)
    c.merge(names[:1], np.zeros(1), np.zeros(1), (), 0, 0, 0)
    assert c.due(int(0.01 * NS)) and not c.due(int(0.2 * NS))            # fresh within state_timeout only
    c.update(int(0.01 * NS))
    assert not c.due(int(0.01 * NS))                                      # answered


def test_settings_name_the_bad_value(puma):
    plant = make_plant(puma)
    with pytest.raises(ValueError, match="kp"):
        Settings.of(plant, kp=[1.0] * 5)
    with pytest.raises(ValueError, match="payload_link"):
        Settings.of(plant, payload_link="nowhere", payload_mass=1.0)
    with pytest.raises(ValueError, match="unknown setting"):
        Settings.of(plant, stiffness=3.0)
    with pytest.raises(ValueError, match="trigger_joints .*'elbow'"):
        ControlCycle(plant, Settings.of(plant), trigger_joints=["elbow"])
    lim = np.asarray(plant.effort_limits, float)
    np.testing.assert_array_equal(Settings.of(plant).effort_limits, np.where(lim > 0, lim, math.inf))
